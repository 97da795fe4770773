// One thread per output element (batch, query, head, channel): for every level and sampling
// point, read the value map of that level bilinearly at the point (coordinates in [0, 1], pixel
// centres at half-integers, zero outside the map) and add it, weighted, to the output.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

namespace {

template <typename T>
__device__ T sample(const T* map, int height, int width, int heads, int channels, int head, int channel, T y, T x) {
    // map: (height * width, heads, channels) of one level and one batch item
    int y0 = static_cast<int>(floor(y)), x0 = static_cast<int>(floor(x));
    T dy = y - y0, dx = x - x0;
    T out = 0;
    for (int oy = 0; oy < 2; ++oy)
        for (int ox = 0; ox < 2; ++ox) {
            int yy = y0 + oy, xx = x0 + ox;
            if (yy < 0 || xx < 0 || yy >= height || xx >= width) continue;
            T w = (oy ? dy : 1 - dy) * (ox ? dx : 1 - dx);
            out += w * map[(static_cast<long>(yy) * width + xx) * heads * channels + head * channels + channel];
        }
    return out;
}

template <typename T>
__global__ void msda_forward_kernel(const T* value, const int64_t* shapes, const int64_t* starts, const T* locations,
                                    const T* weights, T* out, int batch, int keys, int queries, int heads, int channels,
                                    int levels, int points) {
    long index = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
    long total = static_cast<long>(batch) * queries * heads * channels;
    if (index >= total) return;
    int channel = index % channels;
    int head = (index / channels) % heads;
    int query = (index / channels / heads) % queries;
    int b = index / channels / heads / queries;
    T acc = 0;
    for (int level = 0; level < levels; ++level) {
        int height = static_cast<int>(shapes[level * 2]), width = static_cast<int>(shapes[level * 2 + 1]);
        const T* map = value + (static_cast<long>(b) * keys + starts[level]) * heads * channels;
        for (int p = 0; p < points; ++p) {
            long at = ((((static_cast<long>(b) * queries + query) * heads + head) * levels + level) * points + p);
            T x = locations[at * 2] * width - T(0.5), y = locations[at * 2 + 1] * height - T(0.5);
            acc += weights[at] * sample(map, height, width, heads, channels, head, channel, y, x);
        }
    }
    out[index] = acc;
}

}  // namespace

torch::Tensor msda_forward_cuda(const torch::Tensor& value, const torch::Tensor& shapes, const torch::Tensor& starts,
                                const torch::Tensor& locations, const torch::Tensor& weights) {
    const int batch = value.size(0), keys = value.size(1), heads = value.size(2), channels = value.size(3);
    const int queries = locations.size(1), levels = locations.size(3), points = locations.size(4);
    auto out = torch::zeros({batch, queries, heads, channels}, value.options());
    long total = static_cast<long>(batch) * queries * heads * channels;
    const int threads = 256;
    const int blocks = static_cast<int>((total + threads - 1) / threads);
    AT_DISPATCH_FLOATING_TYPES(value.scalar_type(), "msda_forward", [&] {
        msda_forward_kernel<scalar_t><<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
            value.data_ptr<scalar_t>(), shapes.data_ptr<int64_t>(), starts.data_ptr<int64_t>(),
            locations.data_ptr<scalar_t>(), weights.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), batch, keys, queries,
            heads, channels, levels, points);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out.view({batch, queries, heads * channels});
}
