#include "resolver/specs/cuda_build.hpp"

#include <cctype>
#include <regex>

namespace envlock {

namespace {

bool all_digits(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

// "cu111" inside a larger text, at a word boundary: followed by a non-digit or the end.
std::optional<std::string> find_variant(const std::string& text) {
    static const std::regex re("(^|[^a-z0-9])cu([0-9]{2,3})([^0-9]|$)");
    std::smatch m;
    if (std::regex_search(text, m, re)) return "cu" + m[2].str();
    return std::nullopt;
}

}  // namespace

std::optional<std::string> cuda_runtime_of_variant(const std::string& variant) {
    if (variant.size() < 4 || variant.compare(0, 2, "cu") != 0) return std::nullopt;
    std::string digits = variant.substr(2);
    if (!all_digits(digits) || digits.size() > 3) return std::nullopt;
    // Two digits are major+minor ("cu92"); three are 2-digit major + minor ("cu111", "cu128").
    std::string major = digits.size() == 2 ? digits.substr(0, 1) : digits.substr(0, 2);
    std::string minor = digits.substr(major.size());
    return major + "." + minor;
}

std::string variant_of_cuda_runtime(const std::string& runtime) {
    std::string out = "cu";
    for (char c : runtime)
        if (c != '.') out.push_back(c);
    return out;
}

std::optional<CudaBuild> cuda_build_of(const IndexRecord& record, const std::string& pypi_default_variant) {
    CudaBuild build;
    if (record.ecosystem == Ecosystem::conda) {
        // pytorch: py3.8_cuda11.1_cudnn8.0.5_0; torchvision: py38_cu111; cpu builds say cpu.
        static const std::regex cuda_re("cuda([0-9]+)\\.([0-9]+)");
        std::smatch m;
        if (std::regex_search(record.build, m, cuda_re)) {
            build.runtime = m[1].str() + "." + m[2].str();
        } else if (auto v = find_variant(record.build)) {
            build.runtime = *cuda_runtime_of_variant(*v);
        } else {
            return std::nullopt;
        }
        build.variant = variant_of_cuda_runtime(build.runtime);
        return build;
    }
    if (record.ecosystem != Ecosystem::pypi) return std::nullopt;

    auto plus = record.version.find('+');
    if (plus != std::string::npos) {
        std::string local = record.version.substr(plus + 1);
        auto runtime = cuda_runtime_of_variant(local);
        if (!runtime) return std::nullopt;   // +cpu, +rocm4.0.1
        build.variant = local;
        build.runtime = *runtime;
        return build;
    }
    // An openmmlab page names CUDA and torch in its path: …/dist/cu111/torch1.9.0/index.html.
    static const std::regex page_re("/(cu[0-9]{2,3})/torch([0-9]+)\\.([0-9]+)");
    std::smatch m;
    for (const std::string* where : {&record.index, &record.url}) {
        if (std::regex_search(*where, m, page_re)) {
            build.variant = m[1].str();
            build.runtime = *cuda_runtime_of_variant(build.variant);
            build.torch_series = m[2].str() + "." + m[3].str();
            return build;
        }
    }
    if (!pypi_default_variant.empty()) {
        if (auto runtime = cuda_runtime_of_variant(pypi_default_variant)) {
            build.variant = pypi_default_variant;
            build.runtime = *runtime;
            return build;
        }
    }
    return std::nullopt;
}

std::optional<CudaPlaceholder> cuda_placeholder(const std::string& normalized_name) {
    static const std::regex re("^(.*-cu(da)?)([0-9]*)(x+)$");
    std::smatch m;
    if (!std::regex_match(normalized_name, m, re)) return std::nullopt;
    bool cuda = m[2].matched && m[2].length() > 0;
    std::string digits = m[3].str();
    if (digits.size() > (cuda ? 1u : 2u)) return std::nullopt;
    if (digits.size() + static_cast<size_t>(m[4].length()) < 2) return std::nullopt;   // "-cux": too short for a variant
    return CudaPlaceholder{m[1].str(), digits};
}

std::optional<std::string> fills_cuda_placeholder(const CudaPlaceholder& p, const std::string& normalized_name) {
    if (normalized_name.size() <= p.stem.size() || normalized_name.compare(0, p.stem.size(), p.stem) != 0) return std::nullopt;
    std::string rest = normalized_name.substr(p.stem.size());
    if (!all_digits(rest) || rest.size() < 2 || rest.size() > 3 || rest.compare(0, p.digits.size(), p.digits) != 0)
        return std::nullopt;
    return cuda_runtime_of_variant("cu" + rest);
}

}  // namespace envlock
