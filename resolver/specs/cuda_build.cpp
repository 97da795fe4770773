#include "resolver/specs/cuda_build.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <string_view>
#include <utility>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock {

namespace {

bool all_digits(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
}

bool digit(char c) { return c >= '0' && c <= '9'; }

// The digits starting at `at` ("" when none).
std::string_view digits_at(std::string_view text, std::size_t at) {
    std::size_t end = at;
    while (end < text.size() && digit(text[end])) ++end;
    return text.substr(at, end - at);
}

// The matchers below are hand-written for the solve's hot loops (a regex search per record
// was most of reading builds); each says the regular expression it stands for, and
// tests/unit/pypi/cuda_build_test.cpp holds them to std::regex on the snapshots' builds and URLs.

// "cu111" inside a larger text, at a word boundary: (^|[^a-z0-9])cu([0-9]{2,3})([^0-9]|$).
std::optional<std::string> find_variant(std::string_view text) {
    for (std::size_t at = text.find("cu"); at != std::string_view::npos; at = text.find("cu", at + 1)) {
        if (at > 0 && ((text[at - 1] >= 'a' && text[at - 1] <= 'z') || digit(text[at - 1]))) continue;
        auto d = digits_at(text, at + 2);
        if (d.size() == 2 || d.size() == 3) return "cu" + std::string(d);
    }
    return std::nullopt;
}

// "cuda11.1" inside a larger text: cuda([0-9]+)\.([0-9]+) -> "11.1".
std::optional<std::string> find_cuda_dotted(std::string_view text) {
    for (std::size_t at = text.find("cuda"); at != std::string_view::npos; at = text.find("cuda", at + 1)) {
        auto major = digits_at(text, at + 4);
        std::size_t dot = at + 4 + major.size();
        if (major.empty() || dot >= text.size() || text[dot] != '.') continue;
        auto minor = digits_at(text, dot + 1);
        if (!minor.empty()) return std::string(major) + "." + std::string(minor);
    }
    return std::nullopt;
}

// An openmmlab page path: /(cu[0-9]{2,3})/torch([0-9]+)\.([0-9]+) -> {"cu111", "1.9"}.
std::optional<std::pair<std::string, std::string>> find_page_build(std::string_view text) {
    for (std::size_t at = text.find("/cu"); at != std::string_view::npos; at = text.find("/cu", at + 1)) {
        auto d = digits_at(text, at + 3);
        std::size_t slash = at + 3 + d.size();
        if ((d.size() != 2 && d.size() != 3) || text.compare(slash, 6, "/torch") != 0) continue;
        auto major = digits_at(text, slash + 6);
        std::size_t dot = slash + 6 + major.size();
        if (major.empty() || dot >= text.size() || text[dot] != '.') continue;
        auto minor = digits_at(text, dot + 1);
        if (!minor.empty()) return std::make_pair("cu" + std::string(d), std::string(major) + "." + std::string(minor));
    }
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
        if (auto dotted = find_cuda_dotted(record.build)) {
            build.runtime = *dotted;
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
    for (const std::string* where : {&record.index, &record.url}) {
        if (auto page = find_page_build(*where)) {
            build.variant = page->first;
            build.runtime = *cuda_runtime_of_variant(build.variant);
            build.torch_series = page->second;
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

namespace envlock {

std::string cuda_variant_pinned_by(const std::vector<std::string>& requires_dist) {
    // The runtime package of CUDA 11/12 (`nvidia-cuda-runtime-cu12`), of CUDA 13 (unsuffixed
    // `nvidia-cuda-runtime`), or NVIDIA's meta-package (`cuda-toolkit[...]`, CUDA 13 torch), each
    // pinned with ==; its first two numbers are the CUDA release.
    for (const auto& line : requires_dist) {
        std::optional<pep508::Requirement> req;
        try {
            req = pep508::Requirement::parse(line);
        } catch (const InputError&) {
            continue;
        }
        const std::string& name = req->normalized_name;
        if (name != "nvidia-cuda-runtime-cu11" && name != "nvidia-cuda-runtime-cu12" && name != "nvidia-cuda-runtime" &&
            name != "cuda-toolkit")
            continue;
        for (const auto& clause : req->specifier.specifiers()) {
            if (clause.op() != pep440::Specifier::Op::equal) continue;
            auto v = pep440::Version::try_parse(clause.version_text());
            if (!v || v->release().size() < 2 || v->release()[0] > 99 || v->release()[1] > 9) continue;
            return variant_of_cuda_runtime(std::to_string(v->release()[0]) + "." + std::to_string(v->release()[1]));
        }
    }
    return "";
}

}  // namespace envlock
