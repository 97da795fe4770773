// Python binding of the forward pass; shapes are checked here so a wrong call fails with a
// message, not a kernel fault.
#include <torch/extension.h>

torch::Tensor msda_forward_cuda(const torch::Tensor& value, const torch::Tensor& shapes, const torch::Tensor& starts,
                                const torch::Tensor& locations, const torch::Tensor& weights);

torch::Tensor msda_forward(const torch::Tensor& value, const torch::Tensor& shapes, const torch::Tensor& starts,
                           const torch::Tensor& locations, const torch::Tensor& weights) {
    TORCH_CHECK(value.is_cuda(), "msda: value must be a CUDA tensor");
    TORCH_CHECK(value.dim() == 4, "msda: value is (batch, keys, heads, channels)");
    TORCH_CHECK(shapes.dim() == 2 && shapes.size(1) == 2, "msda: shapes is (levels, 2) holding (height, width)");
    TORCH_CHECK(locations.dim() == 6 && locations.size(5) == 2, "msda: locations is (batch, queries, heads, levels, points, 2)");
    TORCH_CHECK(weights.dim() == 5, "msda: weights is (batch, queries, heads, levels, points)");
    return msda_forward_cuda(value.contiguous(), shapes.contiguous(), starts.contiguous(), locations.contiguous(),
                             weights.contiguous());
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("forward", &msda_forward, "multi-scale deformable attention, forward (CUDA)");
}
