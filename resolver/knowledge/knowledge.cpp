// Lookups over the loaded knowledge tables (knowledge_load.cpp fills them).
#include "resolver/knowledge/knowledge.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>

#include "resolver/specs/close_names.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::knowledge {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string trim(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
}

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool looks_like_version(std::string_view s) {
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s.front()))) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

std::string public_version(std::string_view v) {
    auto plus = v.find('+');
    return trim(v.substr(0, plus));
}

std::string local_label(std::string_view v) {
    auto plus = v.find('+');
    return plus == std::string_view::npos ? std::string() : trim(v.substr(plus + 1));
}

// "1.9" covers "1.9", "1.9.1"; "1.8.1" covers "1.8.1" only; "2.1.x" covers "2.1.*".
bool series_matches(std::string_view entry, std::string_view version) {
    std::string e(entry);
    if (e.size() > 2 && e.substr(e.size() - 2) == ".x") e = e.substr(0, e.size() - 2);
    if (version == e) return true;
    return version.size() > e.size() && version.substr(0, e.size()) == e && version[e.size()] == '.';
}

// "cu111", "11.1", "cuda 11.1", "cuda11.1", "CPU" -> "cu111" / "cpu"; rocm* kept.
std::string normalize_variant(std::string_view variant) {
    std::string v = lower(trim(variant));
    if (v.rfind("cuda", 0) == 0) v = trim(v.substr(4));
    if (v == "cpu" || v.rfind("cu", 0) == 0 || v.rfind("rocm", 0) == 0) return v;
    if (looks_like_version(v)) {
        std::string mm = major_minor(v), out = "cu";
        for (char c : mm) if (c != '.') out += c;
        return out;
    }
    return v;
}

// GPU names as token lists: lowercase, split on space/-/_, vendor words and "(…)" asides dropped.
std::vector<std::string> gpu_tokens(std::string_view name) {
    std::string s;
    int paren = 0;
    for (char c : name) {
        if (c == '(') ++paren;
        else if (c == ')') paren = std::max(0, paren - 1);
        else if (!paren) s += (c == '-' || c == '_' || c == ',') ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string t; in >> t;)
        if (t != "nvidia" && t != "geforce" && t != "tesla") out.push_back(t);
    return out;
}

// What drivers and clouds append to a model's name without making it another product: memory
// ("80GB"), memory kind ("HBM3"), form factor ("SXM4", "PCIe", "NVL"), "Ada Generation",
// "Laptop GPU", "with Max-Q Design". "Ti" and "SUPER" are not among them: they are other chips.
bool name_qualifier(std::string_view t) {
    auto digits = [](std::string_view v) {   // "" counts: "SXM" and "HBM" alone qualify too
        return std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    static const char* words[] = {"pcie", "nvl", "generation", "laptop", "gpu", "mobile", "with", "max", "q", "design"};
    for (const char* w : words)
        if (t == w) return true;
    if (t.size() > 2 && t.substr(t.size() - 2) == "gb") return digits(t.substr(0, t.size() - 2));
    if (t.rfind("sxm", 0) == 0) return digits(t.substr(3));
    if (t.rfind("hbm", 0) == 0) {
        t.remove_prefix(3);
        if (!t.empty() && t.back() == 'e') t.remove_suffix(1);
        return digits(t);
    }
    return false;
}

// A name as one key: its words joined, so "RTX3090", "rtx 3090" and "GeForce RTX 3090" agree.
std::string gpu_key(const std::vector<std::string>& tokens) {
    std::string out;
    for (const auto& t : tokens) out += t;
    return out;
}

// The key without the qualifiers a driver appends ("A100-SXM4-80GB" -> "a100").
std::string gpu_model_key(std::vector<std::string> tokens) {
    while (!tokens.empty() && name_qualifier(tokens.back())) tokens.pop_back();
    return gpu_key(tokens);
}

}  // namespace

// ---------------------------------------------------------------- versions

int compare_dotted(std::string_view a, std::string_view b) {
    auto parts = [](std::string_view s) {
        std::vector<long> out;
        std::size_t i = 0;
        while (i < s.size()) {
            std::size_t j = i;
            while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
            if (j == i) break;
            out.push_back(std::stol(std::string(s.substr(i, j - i))));
            if (j >= s.size() || s[j] != '.') break;
            i = j + 1;
        }
        return out;
    };
    auto pa = parts(a), pb = parts(b);
    std::size_t n = std::max(pa.size(), pb.size());
    for (std::size_t i = 0; i < n; ++i) {
        long x = i < pa.size() ? pa[i] : 0, y = i < pb.size() ? pb[i] : 0;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

std::string major_minor(std::string_view version) {
    std::string v = trim(version);
    auto first = v.find('.');
    if (first == std::string::npos) return v;
    auto second = v.find('.', first + 1);
    return second == std::string::npos ? v : v.substr(0, second);
}

// ---------------------------------------------------------------- arch rules

std::optional<int> parse_sm(std::string_view text) {
    std::string s = lower(trim(text));
    for (const char* prefix : {"sm_", "sm", "compute_"})
        if (s.rfind(prefix, 0) == 0) { s = s.substr(std::string(prefix).size()); break; }
    if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) s.pop_back();
    int major = 0, minor = 0;
    auto dot = s.find('.');
    if (dot != std::string::npos) {
        std::string ma = s.substr(0, dot), mi = s.substr(dot + 1);
        if (!all_digits(ma) || mi.size() != 1 || !all_digits(mi) || ma.size() > 2) return std::nullopt;
        major = std::stoi(ma);
        minor = std::stoi(mi);
    } else {
        if (!all_digits(s) || s.size() < 2 || s.size() > 3) return std::nullopt;
        int n = std::stoi(s);
        major = n / 10;
        minor = n % 10;
    }
    if (major < 1 || major > 30) return std::nullopt;
    return major * 10 + minor;
}

std::string sm_name(int sm) { return "sm_" + std::to_string(sm); }
std::string cc_name(int sm) { return std::to_string(sm / 10) + "." + std::to_string(sm % 10); }

ArchList parse_arch_list(std::string_view text) {
    ArchList out;
    std::string s(text);
    for (auto& c : s) if (c == ',' || c == ' ') c = ';';
    std::istringstream in(s);
    for (std::string entry; std::getline(in, entry, ';');) {
        if (entry.empty()) continue;
        bool ptx = false;
        std::string e = entry;
        if (auto p = lower(e).find("+ptx"); p != std::string::npos && p + 4 == e.size()) {
            ptx = true;
            e = e.substr(0, p);
        }
        if (e.find('.') == std::string::npos) throw InputError("arch list entry '" + entry + "': expected X.Y or X.Y+PTX");
        auto sm = parse_sm(e);
        if (!sm) throw InputError("arch list entry '" + entry + "': expected X.Y or X.Y+PTX");
        if (std::find(out.sass.begin(), out.sass.end(), *sm) == out.sass.end()) out.sass.push_back(*sm);
        if (ptx && std::find(out.ptx.begin(), out.ptx.end(), *sm) == out.ptx.end()) out.ptx.push_back(*sm);
    }
    std::sort(out.sass.begin(), out.sass.end());
    std::sort(out.ptx.begin(), out.ptx.end());
    return out;
}

bool sass_runs_on(int built_sm, int gpu_sm) { return built_sm / 10 == gpu_sm / 10 && built_sm % 10 <= gpu_sm % 10; }

bool arch_list_runs_on(const ArchList& list, int sm) {
    for (int s : list.sass) if (sass_runs_on(s, sm)) return true;
    for (int p : list.ptx) if (p <= sm) return true;
    return false;
}

std::string describe(const ArchList& list) {
    std::string out;
    for (int s : list.sass) out += (out.empty() ? "" : " ") + sm_name(s);
    for (int p : list.ptx) out += (out.empty() ? "" : " ") + ("compute_" + std::to_string(p));
    return out;
}

// ---------------------------------------------------------------- driver

std::optional<std::string> driver_max_cuda(const Knowledge& k, std::string_view driver, bool windows) {
    std::string d = trim(driver);
    if (!looks_like_version(d)) return std::nullopt;
    const CudaDriverRow* best = nullptr;
    for (const auto& row : k.cuda_drivers) {
        const std::string& min = windows ? row.windows_driver : row.linux_driver;
        if (!min.empty() && compare_dotted(min, d) <= 0 && (!best || compare_dotted(best->cuda, row.cuda) < 0)) best = &row;
    }
    if (!best) return std::nullopt;
    return major_minor(best->cuda);
}

std::optional<std::string> driver_max_cuda(const Knowledge& k, std::string_view driver) {
    return driver_max_cuda(k, driver, false);
}

std::optional<std::string> min_driver_for_cuda(const Knowledge& k, std::string_view cuda, bool windows) {
    std::string c = trim(cuda), mm = major_minor(c);
    auto pick = [&](const CudaDriverRow& r) { return windows ? r.windows_driver : r.linux_driver; };
    for (const auto& row : k.cuda_drivers)   // exact release first ("11.1.1")
        if (row.cuda == c && !pick(row).empty()) return pick(row);
    std::optional<std::string> best;
    for (const auto& row : k.cuda_drivers) {
        if (major_minor(row.cuda) != mm || pick(row).empty()) continue;
        if (row.label.find("RC") != std::string::npos) continue;   // release candidates are not the release
        if (!best || compare_dotted(pick(row), *best) < 0) best = pick(row);
    }
    return best;
}

std::vector<const CudaDriverRow*> unknown_driver_rows(const Knowledge& k, std::string_view cuda) {
    std::string mm = major_minor(trim(cuda));
    std::vector<const CudaDriverRow*> out;
    for (const auto& row : k.cuda_drivers)
        if (row.unknown && major_minor(row.cuda) == mm) out.push_back(&row);
    return out;
}

std::vector<const CudaDriverRow*> unknown_driver_rows_after(const Knowledge& k, std::string_view cuda) {
    std::string mm = major_minor(trim(cuda));
    std::vector<const CudaDriverRow*> out;
    for (const auto& row : k.cuda_drivers)
        if (row.unknown && compare_dotted(major_minor(row.cuda), mm) > 0) out.push_back(&row);
    return out;
}

const MinorVersionRule* minor_version_rule(const Knowledge& k, std::string_view cuda) {
    std::string c = trim(cuda);
    if (!looks_like_version(c)) return nullptr;
    int major = std::stoi(c);
    for (const auto& r : k.minor_version_rules)
        if (r.cuda_major == major) return &r;
    return nullptr;
}

bool driver_runs_cuda_fully(const Knowledge& k, std::string_view driver, std::string_view cuda) {
    auto min = min_driver_for_cuda(k, cuda);
    return min && looks_like_version(trim(driver)) && compare_dotted(trim(driver), *min) >= 0;
}

bool driver_runs_cuda(const Knowledge& k, std::string_view driver, std::string_view cuda) {
    if (driver_runs_cuda_fully(k, driver, cuda)) return true;
    const MinorVersionRule* rule = minor_version_rule(k, cuda);
    return rule && looks_like_version(trim(driver)) && compare_dotted(trim(driver), rule->min_driver) >= 0;
}

// ---------------------------------------------------------------- GPUs, nvcc, compilers

// A name matches a row when their keys are equal, or failing that when the name without its
// driver qualifiers equals the row's key: never by prefix, so "RTX 3090 Ti" is not "RTX 3090".
// A verified row wins over an unverified one with the same key.
const GpuRow* find_gpu(const Knowledge& k, std::string_view name) {
    auto tokens = gpu_tokens(name);
    if (tokens.empty()) return nullptr;
    for (const std::string& key : {gpu_key(tokens), gpu_model_key(tokens)}) {
        if (key.empty()) continue;
        const GpuRow* unverified = nullptr;
        for (const auto& row : k.gpus) {
            if (gpu_key(gpu_tokens(row.name)) != key) continue;
            if (!row.unverified) return &row;
            if (!unverified) unverified = &row;
        }
        if (unverified) return unverified;
    }
    return nullptr;
}

std::vector<std::string> gpu_names_near(const Knowledge& k, std::string_view name, std::size_t limit) {
    std::string key = gpu_model_key(gpu_tokens(name));
    if (key.empty()) return {};
    std::vector<std::string> keys, names;
    for (const auto& row : k.gpus) {
        std::string rk = gpu_key(gpu_tokens(row.name));
        if (rk.empty() || std::find(keys.begin(), keys.end(), rk) != keys.end()) continue;
        keys.push_back(rk);
        names.push_back(row.name);
    }
    auto name_of = [&](const std::string& rk) { return names[std::find(keys.begin(), keys.end(), rk) - keys.begin()]; };
    std::vector<std::string> out;
    auto add = [&](const std::string& n) {
        if (out.size() < limit && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    };
    // A model number typed without its series ("3090", "a6000") is inside the names that carry it,
    // shortest first: "GeForce RTX 3090" before "GeForce RTX 3090 Ti". Those are the answer when
    // there are any.
    if (key.size() >= 3) {
        std::vector<std::string> inside;
        for (const auto& rk : keys)
            if (rk.find(key) != std::string::npos) inside.push_back(rk);
        std::stable_sort(inside.begin(), inside.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
        for (const auto& rk : inside) add(name_of(rk));
    }
    if (!out.empty()) return out;
    // A known name followed by something unknown ("RTX 3060 Tii", "RTX 4080 SUPER"): that name,
    // longest first, then the names a few edits away.
    std::vector<std::string> starts;
    for (const auto& rk : keys)
        if (rk.size() >= 3 && key.rfind(rk, 0) == 0) starts.push_back(rk);
    std::stable_sort(starts.begin(), starts.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    for (const auto& rk : starts) add(name_of(rk));
    for (const auto& rk : close_names(key, keys, limit)) add(name_of(rk));
    return out;
}

std::string unknown_gpu_message(const Knowledge& k, std::string_view name) {
    std::string msg = "unknown GPU '" + std::string(name) + "'";
    auto near = gpu_names_near(k, name);
    if (!near.empty()) {
        msg += "; did you mean ";
        for (std::size_t i = 0; i < near.size(); ++i) msg += (i ? (i + 1 == near.size() ? " or '" : ", '") : "'") + near[i] + "'";
        msg += "?";
    }
    return msg;
}

std::optional<std::pair<int, int>> gpu_compute_capability(const Knowledge& k, std::string_view gpu_name) {
    if (auto sm = parse_sm(gpu_name)) return std::make_pair(*sm / 10, *sm % 10);
    if (const GpuRow* row = find_gpu(k, gpu_name)) return std::make_pair(row->major, row->minor);
    return std::nullopt;
}

const NvccTargetsRow* nvcc_targets_row(const Knowledge& k, std::string_view cuda) {
    std::string mm = major_minor(cuda);
    for (const auto& row : k.nvcc_targets)
        if (major_minor(row.cuda) == mm) return &row;
    return nullptr;
}

std::vector<int> nvcc_sm_targets(const Knowledge& k, std::string_view cuda) {
    std::vector<int> out;
    if (const NvccTargetsRow* row = nvcc_targets_row(k, cuda))
        for (const auto& name : row->sm) {
            char last = name.back();
            if (last == 'a' || last == 'f') continue;   // arch-/family-specific variants of a plain target
            if (auto sm = parse_sm(name)) out.push_back(*sm);
        }
    return out;
}

std::optional<HostCompilerLimit> host_compiler_limit(const Knowledge& k, std::string_view cuda) {
    std::string mm = major_minor(cuda);
    for (int pass = 0; pass < 2; ++pass)
        for (const auto& row : k.host_compilers)
            if (row.unverified == (pass == 1) && major_minor(row.cuda) == mm) return row;
    return std::nullopt;
}

std::optional<int> newest_gcc_major(const Knowledge& k, std::string_view cuda) {
    if (auto h = host_compiler_limit(k, cuda)) return h->gcc_max;
    return std::nullopt;
}

std::optional<int> newest_clang_major(const Knowledge& k, std::string_view cuda) {
    if (auto h = host_compiler_limit(k, cuda)) return h->clang_max;
    return std::nullopt;
}

// ---------------------------------------------------------------- torch

const TorchArchRow* torch_arch_row(const Knowledge& k, std::string_view torch_version, std::string_view variant,
                                   std::string_view kind) {
    std::string v = public_version(torch_version);
    std::string var = normalize_variant(variant.empty() ? std::string_view(local_label(torch_version)) : variant);
    std::string kd = kind.empty() ? "pip" : lower(kind);
    for (int pass = 0; pass < 2; ++pass)
        for (const auto& row : k.torch_arch_lists) {
            if (row.unverified != (pass == 1) || row.kind != kd) continue;
            if (std::find(row.variants.begin(), row.variants.end(), var) == row.variants.end()) continue;
            for (const auto& entry : row.torch)
                if (series_matches(entry, v)) return &row;
        }
    return nullptr;
}

std::optional<ArchList> torch_arch_list(const Knowledge& k, std::string_view torch_version, std::string_view variant,
                                        std::string_view kind) {
    std::string var = normalize_variant(variant.empty() ? std::string_view(local_label(torch_version)) : variant);
    if (var == "cpu") return ArchList{};
    if (const TorchArchRow* row = torch_arch_row(k, torch_version, variant, kind)) return row->archs;
    return std::nullopt;
}

std::optional<TorchRelease> torch_release(const Knowledge& k, std::string_view torch_version) {
    std::string v = public_version(torch_version);
    for (const auto& r : k.torch_releases)
        if (r.version == v) return r;
    for (const auto& r : k.torch_releases)
        if (r.version.size() > 2 && r.version.substr(r.version.size() - 2) == ".x" && series_matches(r.version, v)) return r;
    // A series ("2.7"): its newest patch release.
    const TorchRelease* newest = nullptr;
    for (const auto& r : k.torch_releases)
        if (series_matches(v, r.version) && (!newest || compare_dotted(newest->version, r.version) < 0)) newest = &r;
    if (newest) return *newest;
    return std::nullopt;
}

std::vector<std::string> torch_series_releases(const Knowledge& k, std::string_view series) {
    std::string v = public_version(series);
    std::vector<std::string> out;
    for (const auto& r : k.torch_releases)
        if (series_matches(v, r.version) || r.version == v) out.push_back(r.version);
    return out;
}

const CppExtensionRow* torch_cpp_extension_row(const Knowledge& k, std::string_view torch_version) {
    std::string v = public_version(torch_version);
    for (const auto& row : k.cpp_extension)
        for (const auto& entry : row.torch)
            if (series_matches(entry, v)) return &row;
    return nullptr;
}

std::vector<std::string> torch_cpp_extension_archs(const Knowledge& k, std::string_view torch_version) {
    if (const CppExtensionRow* row = torch_cpp_extension_row(k, torch_version)) return row->arches;
    return {};
}

std::string cpp_extension_cuda_check(const Knowledge& k, std::string_view torch_cuda, std::string_view nvcc_cuda) {
    std::string a = major_minor(torch_cuda), b = major_minor(nvcc_cuda);
    if (a == b) return "ok";
    auto major = [](const std::string& v) { return v.substr(0, v.find('.')); };
    const auto& rules = k.cpp_extension_rules;
    std::string verdict = major(a) != major(b) ? rules.nvcc_major_mismatch : rules.nvcc_minor_mismatch;
    return verdict == "ignored" || verdict.empty() ? "ok" : verdict;
}

// ---------------------------------------------------------------- OpenMMLab, numba, advisories

std::vector<MmcvWheel> mmcv_wheels(const Knowledge& k, std::string_view package) {
    std::string p = lower(trim(package));
    for (auto& c : p) if (c == '_') c = '-';
    std::vector<MmcvWheel> out;
    for (const auto& w : k.mmcv_wheels)
        if (w.package == p) out.push_back(w);
    return out;
}

std::vector<Gate> gates(const Knowledge& k) { return k.gates; }
std::vector<Advisory> advisories(const Knowledge& k) { return k.advisories; }

std::vector<std::string> gate_requirements(const Knowledge& k, std::string_view package, std::string_view version) {
    std::vector<std::string> out;
    std::string name = pep508::normalize_name(package);
    std::optional<pep440::Version> v;   // parsed only once a gate names the package
    for (const auto& gate : k.gates) {
        if (gate.kind == "doc-table" || !pep508::has_normalized_name(gate.package, name)) continue;
        if (!v && !(v = pep440::Version::try_parse(version))) return out;
        try {
            if (gate.version_spec.empty() || pep440::SpecifierSet::parse(gate.version_spec).contains(*v, true))
                out.push_back(gate.requires_spec);
        } catch (const InputError&) {
        }
    }
    return out;
}
std::vector<NumbaRelease> numba_releases(const Knowledge& k) { return k.numba; }
std::vector<NumbaCudaLimit> numba_cuda_limits(const Knowledge& k) { return k.numba_cuda; }

std::optional<NumbaRelease> numba_release(const Knowledge& k, std::string_view version) {
    std::string v = public_version(version);
    for (const auto& r : k.numba)
        if (r.version == v || compare_dotted(r.version, v) == 0) return r;
    return std::nullopt;
}

std::string pypi_nvcc_home(std::string_view project, std::string_view version) {
    // Read from the wheels themselves (PyPI, 2026-11): `nvidia-cuda-nvcc` 13.0.48 … 13.5.37 hold
    // nvidia/cu13/bin/{nvcc,cudafe++,fatbinary,nvlink,ptxas} beside include/, lib/ and nvvm/;
    // `nvidia-cuda-nvcc-cu11` 11.7–11.8 and `-cu12` 12.1–12.9 hold nvidia/cuda_nvcc/bin/ptxas only.
    if (project != "nvidia-cuda-nvcc") return "";
    size_t dot = version.find('.');
    std::string_view major = version.substr(0, dot);
    if (major.empty() || major.find_first_not_of("0123456789") != std::string_view::npos || major.size() > 3) return "";
    int m = std::stoi(std::string(major));
    return m >= 13 ? "nvidia/cu" + std::to_string(m) : "";
}

}  // namespace envlock::knowledge
