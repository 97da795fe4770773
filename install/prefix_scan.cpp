#include "install/prefix_scan.hpp"
#include "install/wheel_install.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "install/elf.hpp"
#include "install/record.hpp"
#include "resolver/specs/conda_dist.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::install {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return "";
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string trim(std::string_view s) {
    size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return "";
    size_t e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

bool present(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

// Core metadata (METADATA, PKG-INFO) with its field names lowercased, since core metadata
// field names are case-insensitive.
std::multimap<std::string, std::string> metadata_headers(std::string_view text) {
    std::multimap<std::string, std::string> out;
    for (const auto& [name, value] : parse_headers(text)) {
        std::string key = name;
        std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
        out.emplace(std::move(key), value);
    }
    return out;
}

std::string first(const std::multimap<std::string, std::string>& h, const std::string& key) {
    auto it = h.find(key);
    return it == h.end() ? "" : it->second;
}

std::string first_line(const fs::path& p) {
    std::string t = slurp(p);
    return trim(t.substr(0, t.find('\n')));
}

// The prefix-relative form of an absolute path under the prefix; the absolute path otherwise.
std::string relative_to(const fs::path& p, const fs::path& prefix) {
    fs::path n = p.lexically_normal();
    fs::path r = n.lexically_relative(prefix);
    if (r.empty() || *r.begin() == "..") return n.generic_string();
    return r.generic_string();
}

// "name-version" from a metadata directory's own name, for metadata that lacks Name/Version.
std::pair<std::string, std::string> name_version_from_dir(std::string stem) {
    size_t dash = stem.find('-');
    if (dash == std::string::npos) return {stem, ""};
    std::string version = stem.substr(dash + 1);
    size_t py = version.find("-py");
    if (py != std::string::npos) version = version.substr(0, py);
    return {stem.substr(0, dash), version};
}

// Python versions whose lib/pythonX.Y exists under the prefix, newest first.
std::vector<std::string> lib_python_versions(const fs::path& prefix) {
    std::vector<std::pair<int, std::string>> found;
    std::error_code ec;
    static const std::regex re(R"(python(3)\.(\d+))");
    for (const auto& e : fs::directory_iterator(prefix / "lib", ec)) {
        std::smatch m;
        std::string n = e.path().filename().string();
        if (!e.is_directory() || !std::regex_match(n, m, re)) continue;
        found.push_back({std::stoi(m[2]), m[1].str() + "." + m[2].str()});
    }
    std::sort(found.rbegin(), found.rend());
    std::vector<std::string> out;
    for (auto& f : found) out.push_back(f.second);
    return out;
}

void read_conda_meta(const fs::path& prefix, PrefixScan& scan) {
    std::error_code ec;
    fs::path dir = prefix / "conda-meta";
    std::vector<fs::path> jsons;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".json" && e.is_regular_file()) jsons.push_back(e.path());
    std::sort(jsons.begin(), jsons.end());
    for (const auto& p : jsons) {
        CondaMetaRecord r;
        r.json = relative_to(p, prefix);
        try {
            auto j = nlohmann::json::parse(slurp(p));
            if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || !j.contains("version"))
                throw std::runtime_error("expected an object with name and version");
            r.name = j["name"].get<std::string>();
            r.version = j["version"].is_string() ? j["version"].get<std::string>() : j["version"].dump();
            r.build = j.value("build", "");
            r.channel = j.contains("channel") && j["channel"].is_string() ? j["channel"].get<std::string>() : "";
            if (j.contains("depends") && j["depends"].is_array())
                for (const auto& d : j["depends"])
                    if (d.is_string()) r.depends.push_back(d.get<std::string>());
            if (j.contains("files") && j["files"].is_array())
                for (const auto& f : j["files"])
                    if (f.is_string()) r.files.push_back(f.get<std::string>());
            for (const auto& f : r.files)
                if (fs::path(f).filename() == kStandInMarker) r.stand_in = true;
        } catch (const std::exception& e) {
            scan.unreadable.push_back(r.json + ": not a conda-meta record (" + e.what() + ")");
            continue;
        }
        scan.conda_records.push_back(std::move(r));
    }
}

// The interpreter's version: conda's python record, pyvenv.cfg, else lib/pythonX.Y.
void find_python(const fs::path& prefix, PrefixScan& scan) {
    for (const auto& r : scan.conda_records)
        if (r.name == "python") {
            scan.python_version = r.version;
            scan.python_from = r.json;
            return;
        }
    fs::path cfg = prefix / "pyvenv.cfg";
    if (present(cfg)) {
        std::string text = slurp(cfg);
        static const std::regex re(R"((?:^|\n)\s*version(?:_info)?\s*=\s*(\d+\.\d+(?:\.\d+)?))");
        std::smatch m;
        if (std::regex_search(text, m, re)) {
            scan.python_version = m[1];
            scan.python_from = "pyvenv.cfg";
            return;
        }
    }
    auto versions = lib_python_versions(prefix);
    for (const auto& v : versions)
        if (present(prefix / "lib" / ("python" + v) / "os.py") || present(prefix / "bin" / ("python" + v))) {
            scan.python_version = v;
            scan.python_from = "lib/python" + v;
            return;
        }
    if (!versions.empty()) {
        scan.python_version = versions.front();
        scan.python_from = "lib/python" + versions.front();
    }
}

void find_site_dirs(const fs::path& prefix, PrefixScan& scan) {
    std::vector<fs::path> candidates;
    for (const auto& r : scan.conda_records)
        if (r.name == "python") {
            // CEP 17: python_site_packages_path in the python record moves site-packages.
            auto j = nlohmann::json::parse(slurp(prefix / r.json), nullptr, false);
            if (j.is_object() && j.contains("python_site_packages_path") && j["python_site_packages_path"].is_string())
                candidates.push_back(prefix / j["python_site_packages_path"].get<std::string>());
        }
    std::vector<std::string> versions = lib_python_versions(prefix);
    for (const auto& v : versions) {
        candidates.push_back(prefix / "lib" / ("python" + v) / "site-packages");
        candidates.push_back(prefix / "lib" / ("python" + v) / "dist-packages");
    }
    candidates.push_back(prefix / "lib/python3/dist-packages");   // Debian's python3-* packages
    std::set<std::string> seen;
    for (const auto& c : candidates) {
        std::error_code ec;
        if (!fs::is_directory(c, ec)) continue;
        std::string canon = fs::weakly_canonical(c, ec).string();
        if (!seen.insert(canon).second) continue;
        scan.site_dirs.push_back(c.lexically_normal().string());
    }
}

PythonDist read_metadata_dir(const fs::path& meta, const fs::path& prefix, PrefixScan& scan) {
    PythonDist d;
    d.metadata = relative_to(meta, prefix);
    std::string fname = meta.filename().string();
    bool dist_info = fname.ends_with(".dist-info");
    d.format = dist_info ? "dist-info" : "egg-info";
    std::error_code ec;
    fs::path headers_file = dist_info ? meta / "METADATA" : (fs::is_directory(meta, ec) ? meta / "PKG-INFO" : meta);
    auto h = metadata_headers(slurp(headers_file));
    auto [dir_name, dir_version] = name_version_from_dir(meta.stem().string());
    d.name = first(h, "name");
    d.version = first(h, "version");
    if (d.name.empty() || !present(headers_file)) {
        scan.unreadable.push_back(relative_to(headers_file, prefix) + ": missing or without a Name field; named from its directory");
        if (d.name.empty()) d.name = dir_name;
        if (d.version.empty()) d.version = dir_version;
    }
    d.normalized = pep508::normalize_name(d.name);
    d.stand_in = fs::is_directory(meta, ec) && present(meta / kStandInMarker);
    if (dist_info) {
        for (auto [it, end] = h.equal_range("requires-dist"); it != end; ++it) d.requires_dist.push_back(it->second);
        if (present(meta / "INSTALLER")) d.installer = first_line(meta / "INSTALLER");
        fs::path record = meta / "RECORD";
        if (present(record)) {
            d.has_record = true;
            try {
                for (auto& row : parse_record(slurp(record), record.string()))
                    d.files.push_back(relative_to(meta.parent_path() / row.path, prefix));
            } catch (const Error& e) {
                scan.unreadable.push_back(relative_to(record, prefix) + ": " + e.what());
            }
        }
        fs::path direct = meta / "direct_url.json";
        if (present(direct)) {
            auto j = nlohmann::json::parse(slurp(direct), nullptr, false);
            if (j.is_object() && j.contains("dir_info") && j["dir_info"].is_object() && j["dir_info"].value("editable", false)) {
                d.editable = true;
                d.editable_location = j.value("url", "");
            }
        }
    } else if (fs::is_directory(meta, ec)) {
        if (present(meta / "requires.txt")) d.requires_dist = requires_txt_to_pep508(slurp(meta / "requires.txt"));
        if (present(meta / "INSTALLER")) d.installer = first_line(meta / "INSTALLER");
    }
    return d;
}

void read_site_dir(const fs::path& site, const fs::path& prefix, PrefixScan& scan) {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(site, ec)) entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());
    for (const auto& p : entries) {
        std::string n = p.filename().string();
        if (n.ends_with(".dist-info") || n.ends_with(".egg-info")) {
            scan.dists.push_back(read_metadata_dir(p, prefix, scan));
        } else if (n.ends_with(".egg-link")) {
            // `setup.py develop`: the first line is the project directory holding its .egg-info.
            fs::path project = first_line(p);
            if (project.is_relative()) project = site / project;
            bool found = false;
            for (const auto& e : fs::directory_iterator(project, ec)) {
                if (!e.path().filename().string().ends_with(".egg-info")) continue;
                PythonDist d = read_metadata_dir(e.path(), prefix, scan);
                d.editable = true;
                d.editable_location = project.lexically_normal().string();
                scan.dists.push_back(std::move(d));
                found = true;
            }
            if (!found) scan.unreadable.push_back(relative_to(p, prefix) + ": points to " + project.string() + ", which holds no .egg-info");
        }
    }
}

// torch's CUDA from torch/version.py (`cuda = '11.1'` / `cuda: Optional[str] = '11.1'`), else
// the conda build string (py3.8_cuda11.1_cudnn8.0.5_0), else the local label (+cu111).
void find_torch(const fs::path& prefix, PrefixScan& scan) {
    const PythonDist* dist = nullptr;
    for (const auto& d : scan.dists)
        if (d.normalized == "torch") dist = &d;
    const CondaMetaRecord* conda = nullptr;
    for (const auto& r : scan.conda_records)
        if (r.name == "pytorch") conda = &r;
    if (!dist && !conda) return;
    scan.torch.version = dist ? dist->version : conda->version;
    for (const auto& site : scan.site_dirs) {
        fs::path vp = fs::path(site) / "torch/version.py";
        if (!present(vp)) continue;
        static const std::regex re(R"re((?:^|\n)cuda\s*(?::[^=\n]*)?=\s*(?:'([^']*)'|"([^"]*)"|None))re");
        std::smatch m;
        std::string text = slurp(vp);
        if (std::regex_search(text, m, re)) {
            scan.torch.cuda = m[1].matched ? m[1].str() : m[2].str();
            scan.torch.cuda_from = relative_to(vp, prefix);
            return;
        }
    }
    static const std::regex build_re(R"(cuda(\d+)\.(\d+))");
    std::smatch m;
    if (conda && std::regex_search(conda->build, m, build_re)) {
        scan.torch.cuda = m[1].str() + "." + m[2].str();
        scan.torch.cuda_from = "conda build string " + conda->build;
        return;
    }
    static const std::regex local_re(R"(\+cu(\d+)(\d)$)");
    if (std::regex_search(scan.torch.version, m, local_re)) {
        scan.torch.cuda = m[1].str() + "." + m[2].str();
        scan.torch.cuda_from = "local version label";
    }
}

// torch's libraries, by the names extensions link them under (libc10.so, libtorch_cuda.so,
// Debian's libtorch_cpu.so.1.13).
bool torch_library(const std::string& soname) {
    static const std::regex re(R"(^lib(c10|c10_cuda|torch|torch_cpu|torch_cuda|torch_cuda_cpp|torch_cuda_cu|torch_python|torch_global_deps|shm|caffe2_nvrtc)\.so(\.[0-9.]+)?$)");
    return std::regex_match(soname, re);
}

// Where torch's libraries are: the wheel's and conda's torch/lib, else (Debian) the prefix's
// lib directories, where python3-torch puts them.
std::vector<fs::path> torch_lib_dirs(const fs::path& prefix, const PrefixScan& scan) {
    std::vector<fs::path> dirs;
    for (const auto& site : scan.site_dirs) dirs.push_back(fs::path(site) / "torch/lib");
    dirs.push_back(prefix / "lib");
    std::error_code ec;
    for (auto it = fs::directory_iterator(prefix / "lib", ec); !ec && it != fs::directory_iterator(); it.increment(ec))
        if (it->path().filename().string().ends_with("-linux-gnu")) dirs.push_back(it->path());
    return dirs;
}

// Everything torch's libraries in `dir` export (each file read once, symlinks followed).
const std::unordered_set<std::string>& torch_exports(const fs::path& dir, std::map<std::string, std::unordered_set<std::string>>& cache) {
    auto [it, fresh] = cache.try_emplace(dir.string());
    if (!fresh) return it->second;
    std::set<fs::path> files;
    std::error_code ec;
    for (auto e = fs::directory_iterator(dir, ec); !ec && e != fs::directory_iterator(); e.increment(ec)) {
        if (!torch_library(e->path().filename().string())) continue;
        fs::path real = fs::canonical(e->path(), ec);
        if (!ec) files.insert(real);
        ec.clear();
    }
    for (const auto& f : files)
        if (auto syms = elf_dynamic_symbols(f.string()))
            for (auto& d : syms->defined) it->second.insert(std::move(d));
    return it->second;
}

void check_torch_symbols(CompiledExtension& x, const fs::path& file, const std::vector<fs::path>& dirs,
                         std::map<std::string, std::unordered_set<std::string>>& cache) {
    fs::path dir;
    std::error_code ec;
    for (const auto& d : dirs)
        for (const auto& lib : x.torch_libs)
            if (dir.empty() && fs::exists(d / lib, ec)) dir = d;
    if (dir.empty()) return;
    auto syms = elf_dynamic_symbols(file.string(), false);
    if (!syms) return;
    const auto& exported = torch_exports(dir, cache);
    if (exported.empty()) return;
    x.torch_checked = true;
    x.torch_lib_dir = dir.lexically_normal().string();
    for (const auto& u : syms->undefined) {
        if (!torch_symbol(u)) continue;
        ++x.torch_symbols;
        if (!exported.count(u)) x.missing_torch_symbols.push_back(u);
    }
    std::sort(x.missing_torch_symbols.begin(), x.missing_torch_symbols.end());
}

void find_extensions(const fs::path& prefix, PrefixScan& scan) {
    std::map<std::string, std::string> owner;   // prefix-relative file -> dist
    for (const auto& d : scan.dists)
        for (const auto& f : d.files) owner.emplace(f, d.normalized);
    const auto lib_dirs = torch_lib_dirs(prefix, scan);
    std::map<std::string, std::unordered_set<std::string>> exports;
    for (const auto& site : scan.site_dirs) {
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(site, fs::directory_options::skip_permission_denied, ec);
             it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (ec) break;
            const fs::path& p = it->path();
            std::string n = p.filename().string();
            if (!(n.ends_with(".so") || n.find(".so.") != std::string::npos) || !it->is_regular_file(ec)) continue;
            auto needed = elf_needed(p.string());
            if (!needed) continue;
            CompiledExtension x;
            for (const auto& lib : *needed) {
                if (x.cudart.empty()) x.cudart = cudart_soname_version(lib);
                if (torch_library(lib)) x.torch_libs.push_back(lib);
            }
            x.path = relative_to(p, prefix);
            auto o = owner.find(x.path);
            if (o != owner.end()) x.dist = o->second;
            // torch's own modules and libraries, and NVIDIA's wheels of CUDA libraries, agree with
            // themselves: neither their (large) fat binaries nor their symbols are read.
            std::string in_site = fs::path(p).lexically_relative(site).string();
            bool torchs_own = x.dist == "torch" || x.dist.starts_with("nvidia-") || in_site.starts_with("torch/") || in_site.starts_with("nvidia/");
            if (!torchs_own) {
                // A module with device code but the CUDA runtime linked in statically (nvcc's
                // default) names no libcudart: its fat binary says it is one.
                if (auto archs = elf_fatbin_archs(p.string())) {
                    x.fatbin = true;
                    x.sass = std::move(archs->sass);
                    x.ptx = std::move(archs->ptx);
                }
                if (!x.torch_libs.empty()) check_torch_symbols(x, p, lib_dirs, exports);
            }
            if (x.cudart.empty() && x.torch_libs.empty() && !x.fatbin) continue;
            scan.extensions.push_back(std::move(x));
        }
    }
    std::sort(scan.extensions.begin(), scan.extensions.end(),
              [](const CompiledExtension& a, const CompiledExtension& b) { return a.path < b.path; });
}

}  // namespace

bool torch_symbol(const std::string& m) {
    // _Z, then a special name's prefix (TV vtable, TI typeinfo, TS its name), then a nested
    // name N with its cv/ref qualifiers, then the outermost namespace as <length><name>.
    if (m.rfind("_Z", 0) != 0) return false;
    size_t i = 2;
    if (i + 1 < m.size() && m[i] == 'T' && (m[i + 1] == 'V' || m[i + 1] == 'I' || m[i + 1] == 'S')) i += 2;
    if (i >= m.size() || m[i] != 'N') return false;
    ++i;
    while (i < m.size() && (m[i] == 'K' || m[i] == 'V' || m[i] == 'r' || m[i] == 'R' || m[i] == 'O')) ++i;
    for (const char* ns : {"3c10", "2at", "5torch", "6caffe2"})
        if (m.compare(i, std::strlen(ns), ns) == 0) return true;
    return false;
}

std::vector<std::string> requires_txt_to_pep508(const std::string& text) {
    std::vector<std::string> out;
    std::string marker;   // of the current section
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string line = trim(std::string_view(text).substr(pos, end - pos));
        pos = end + 1;
        if (line.empty() || line[0] == '#') continue;
        if (line.front() == '[' && line.back() == ']') {
            std::string section = trim(line.substr(1, line.size() - 2));
            size_t colon = section.find(':');
            std::string extra = trim(section.substr(0, colon));
            std::string m = colon == std::string::npos ? "" : trim(section.substr(colon + 1));
            marker.clear();
            if (!extra.empty()) marker = "extra == \"" + extra + "\"";
            if (!m.empty()) marker = marker.empty() ? m : "(" + m + ") and " + marker;
            continue;
        }
        out.push_back(marker.empty() ? line : line + "; " + marker);
    }
    return out;
}

std::vector<CondaMetaRecord> read_conda_records(const std::string& prefix, std::vector<std::string>* unreadable) {
    PrefixScan scan;
    read_conda_meta(fs::absolute(prefix).lexically_normal(), scan);
    if (unreadable) *unreadable = scan.unreadable;
    return std::move(scan.conda_records);
}

PrefixScan scan_prefix(const std::string& prefix_text) {
    std::error_code ec;
    fs::path prefix = fs::absolute(prefix_text, ec).lexically_normal();
    if (prefix.has_filename() == false && prefix != prefix.root_path()) prefix = prefix.parent_path();
    if (!fs::is_directory(prefix, ec)) throw InputError(prefix_text + ": no such directory (expected a Python prefix: a conda env, a venv or /usr)");
    PrefixScan scan;
    scan.prefix = prefix.string();
    scan.conda = fs::is_directory(prefix / "conda-meta", ec);
    if (scan.conda) read_conda_meta(prefix, scan);
    find_python(prefix, scan);
    find_site_dirs(prefix, scan);
    if (!scan.conda && scan.site_dirs.empty())
        throw InputError(prefix_text + ": not a Python prefix (expected conda-meta/ or lib/pythonX.Y/site-packages, or lib/python3/dist-packages as Debian has)");
    for (const auto& site : scan.site_dirs) read_site_dir(site, prefix, scan);

    // Which conda record owns which metadata: conda lists every file it linked.
    std::map<std::string, size_t> conda_file;
    for (size_t i = 0; i < scan.conda_records.size(); ++i)
        for (const auto& f : scan.conda_records[i].files) conda_file.emplace(f, i);
    for (auto& d : scan.dists) {
        for (const std::string& f : {d.metadata + "/METADATA", d.metadata + "/PKG-INFO", d.metadata}) {
            auto it = conda_file.find(f);
            if (it == conda_file.end()) continue;
            auto& rec = scan.conda_records[it->second];
            d.conda_record = rec.name;
            if (rec.python_dist.empty()) rec.python_dist = d.normalized;
            d.installer = "conda";
            break;
        }
    }
    // A conda record whose metadata is gone (pip removed it when installing over it) still names
    // the distribution it installed, in its files list.
    static const std::regex meta_re(R"((?:^|/)(?:site|dist)-packages/([^/]+)\.(?:dist-info|egg-info)(?:/|$))");
    for (auto& rec : scan.conda_records) {
        if (!rec.python_dist.empty()) continue;
        for (const auto& f : rec.files) {
            std::smatch m;
            if (!std::regex_search(f, m, meta_re)) continue;
            rec.python_dist = pep508::normalize_name(name_version_from_dir(m[1].str()).first);
            break;
        }
    }
    // A record that lists no metadata is still the distribution of its name when it is a Python
    // package (it depends on python): the solver's identity (conda's numpy is PyPI's numpy).
    for (auto& rec : scan.conda_records) {
        if (!rec.python_dist.empty()) continue;
        bool python_package = std::any_of(rec.depends.begin(), rec.depends.end(), [](const std::string& d) {
            std::string name = d.substr(0, d.find_first_of(" =<>!~["));
            return name == "python" || name == "python_abi";
        });
        if (!python_package) continue;
        std::string dist = conda::python_dist_name(rec.name);
        // Not when the distribution is installed already (conda's numpy metapackage beside the
        // numpy-base whose files hold numpy's metadata).
        bool taken = std::any_of(scan.dists.begin(), scan.dists.end(), [&](const PythonDist& d) { return d.normalized == dist; }) ||
                     std::any_of(scan.conda_records.begin(), scan.conda_records.end(), [&](const CondaMetaRecord& o) { return o.python_dist == dist; });
        if (!taken) rec.python_dist = dist;
    }
    std::sort(scan.dists.begin(), scan.dists.end(), [](const PythonDist& a, const PythonDist& b) {
        return std::tie(a.normalized, a.metadata) < std::tie(b.normalized, b.metadata);
    });
    find_torch(prefix, scan);
    find_extensions(prefix, scan);
    return scan;
}

}  // namespace envlock::install
