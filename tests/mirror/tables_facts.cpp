// Reads the mirror's tables from ../shared/facts. The facts files are written for people
// (free text in some columns), so the parsers here accept exactly the shapes those files
// use and fall back to the built-in row where a cell cannot be read.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <regex>

#include "resolver/specs/errors.hpp"
#include "tests/mirror/tables.hpp"

namespace envlock::mirror {
namespace {

namespace fs = std::filesystem;

YAML::Node load_yaml(const fs::path& file) {
    try {
        return YAML::LoadFile(file.string());
    } catch (const YAML::Exception& e) {
        throw InputError(file.string() + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
    }
}

std::string str(const YAML::Node& n) { return n && n.IsScalar() ? n.as<std::string>() : std::string(); }

// "0.15.1 (pip); 0.15.0 (conda)" -> "0.15.1"; "0.16.x (minor pairing)" -> "0.16.0";
// "not listed on page" / "not retrieved" -> "".
std::string first_version(const std::string& cell) {
    static const std::regex re(R"(^\s*(\d+\.\d+)(\.(\d+|x))?)");
    std::smatch m;
    if (!std::regex_search(cell, m, re)) return "";
    std::string patch = m[3].matched ? m[3].str() : "0";
    if (patch == "x") patch = "0";
    return m[1].str() + "." + patch;
}

std::vector<std::string> conda_cudas(const std::string& text) {
    std::vector<std::string> out;
    auto pos = text.find("conda:");
    if (pos == std::string::npos) return out;
    std::string part = text.substr(pos + 6);
    part = part.substr(0, part.find(';'));
    static const std::regex re(R"((\d{1,2}\.\d)(?!\d))");
    for (std::sregex_iterator it(part.begin(), part.end(), re), end; it != end; ++it)
        if (std::find(out.begin(), out.end(), (*it)[1].str()) == out.end()) out.push_back((*it)[1].str());
    return out;
}

std::vector<TorchRelease> read_torch(const fs::path& file, const std::vector<TorchRelease>& builtin) {
    auto doc = load_yaml(file);
    std::vector<TorchRelease> out;
    for (const auto& row : doc["releases"]) {
        std::string version = first_version(str(row["torch"]));
        if (version.empty() || str(row["torch"]).find("LTS") != std::string::npos) continue;  // 1.8.2 lives on another index
        int major = std::stoi(version), minor = std::stoi(version.substr(version.find('.') + 1));
        if (major < 2 && minor < 8) continue;  // the mirror starts at 1.8 (scenarios need 1.8+)
        TorchRelease r;
        r.torch = version;
        r.torchvision = first_version(str(row["torchvision"]));
        r.torchaudio = first_version(str(row["torchaudio"]));
        // torchaudio "not retrieved" from 2.1 on: the real index pairs it with torch's version.
        if (r.torchaudio.empty() && major >= 2) r.torchaudio = version;
        r.pip_variants = parse_pip_variants(str(row["cuda_variants"]));
        r.conda_cuda = conda_cudas(str(row["cuda_variants"]));
        if (!parse_python_range(str(row["python"]), r.py_min, r.py_max)) continue;
        r.source = file.filename().string() + " releases[torch=" + str(row["torch"]) + "]: " + str(row["source"]);
        // The facts' conda column is the install page's command; the real channel (snapshot)
        // also has the CUDA builds the built-in table lists, so keep the union.
        for (const auto& b : builtin)
            if (b.torch == r.torch)
                for (const auto& c : b.conda_cuda)
                    if (std::find(r.conda_cuda.begin(), r.conda_cuda.end(), c) == r.conda_cuda.end())
                        r.conda_cuda.push_back(c);
        if (r.torchvision.empty()) continue;
        out.push_back(std::move(r));
    }
    return out;
}

std::string torch_minor(const std::string& cell) {  // "1.9.x" -> "1.9"
    auto dot = cell.find('.');
    auto dot2 = cell.find('.', dot + 1);
    return cell.substr(0, dot2);
}

std::vector<MmcvRow> read_mmcv(const YAML::Node& doc, const std::string& file) {
    std::vector<MmcvRow> out;
    for (const char* key : {"mmcv_full_1x_prebuilt", "mmcv_2x_prebuilt"}) {
        for (const auto& row : doc[key]) {
            if (str(row["os"]) != "Linux") continue;
            MmcvRow r;
            r.package = std::string(key) == "mmcv_full_1x_prebuilt" ? "mmcv-full" : "mmcv";
            r.cuda = str(row["cuda"]);
            if (r.cuda != "cpu" && r.cuda.find('.') == std::string::npos) continue;  // "mps" and the like
            r.torch = torch_minor(str(row["torch"]));
            for (const auto& v : row["versions"]) r.versions.push_back(v.as<std::string>());
            r.source = file + " " + key + ": " + str(row["source"]);
            out.push_back(std::move(r));
        }
    }
    return out;
}

// "'>=3.6 (no upper bound declared in setup.py)'" -> ">=3.6"; ">=1.15 (…)" -> ">=1.15".
std::string specifier_only(const std::string& cell) {
    auto paren = cell.find(" (");
    std::string s = paren == std::string::npos ? cell : cell.substr(0, paren);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

std::vector<NumbaRow> read_numba(const YAML::Node& doc, const std::string& file) {
    std::vector<NumbaRow> out;
    for (const auto& row : doc["numba"]) {
        NumbaRow r{str(row["numba"]), specifier_only(str(row["python"])), specifier_only(str(row["numpy_run"])),
                   specifier_only(str(row["llvmlite"])), file + " numba: " + str(row["source"])};
        if (!r.numba.empty()) out.push_back(std::move(r));
    }
    return out;
}

std::vector<Mmdet3dRelease> read_mmdet3d(const YAML::Node& doc, const std::string& file) {
    std::vector<Mmdet3dRelease> out;
    for (const auto& row : doc["mmdet3d_version_checks"]) {
        Mmdet3dRelease r;
        r.version = str(row["mmdet3d"]);
        // 0.17-0.18 (the git repo's era) and 1.0.0rcN (still mmcv-full based). 1.1 and later need
        // open3d, which the mirror does not carry; they are left out rather than published broken.
        if (r.version.rfind("0.17.", 0) != 0 && r.version.rfind("0.18.", 0) != 0 && r.version.rfind("1.0.0rc", 0) != 0) continue;
        for (const auto& s : row["runtime_txt"]) r.runtime.push_back(s.as<std::string>());
        for (const auto& s : row["mminstall_txt"]) r.mminstall.push_back(s.as<std::string>());
        const auto& c = row["init_checks"];
        r.mmcv_min = str(c["mmcv_minimum_version"]);
        r.mmcv_max = str(c["mmcv_maximum_version"]);
        r.mmdet_min = str(c["mmdet_minimum_version"]);
        r.mmdet_max = str(c["mmdet_maximum_version"]);
        r.mmseg_min = str(c["mmseg_minimum_version"]);
        r.mmseg_max = str(c["mmseg_maximum_version"]);
        r.source = file + " mmdet3d_version_checks: " + str(row["source"]);
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace

std::vector<std::string> parse_pip_variants(const std::string& text) {
    std::string part = text;
    auto pip = part.find("pip:");
    if (pip != std::string::npos) {
        part = part.substr(pip + 4);
        part = part.substr(0, part.find(';'));
    } else {
        // Free text ("11.8 (stable), 12.1 (experimental); ROCm 6.4"): drop ROCm and conda parts' words.
        part = std::regex_replace(part, std::regex(R"((rocm|ROCm)\s*[\d.]+)"), "");
        part = std::regex_replace(part, std::regex(R"(pytorch-cuda)"), "");
    }
    std::vector<std::string> out{"cpu"};
    auto add = [&](const std::string& v) {
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    };
    static const std::regex cu(R"(\bcu(\d{2,3})\b)");
    for (std::sregex_iterator it(part.begin(), part.end(), cu), end; it != end; ++it) add("cu" + (*it)[1].str());
    if (pip == std::string::npos) {
        static const std::regex num(R"((^|[^\d.])(\d{2})\.(\d)(?![\d.]))");
        for (std::sregex_iterator it(part.begin(), part.end(), num), end; it != end; ++it)
            add("cu" + (*it)[2].str() + (*it)[3].str());
    }
    return out;
}

bool parse_python_range(const std::string& text, int& min_minor, int& max_minor) {
    static const std::regex lo(R"(>=\s*3\.(\d+))"), hi(R"(<=\s*3\.(\d+))");
    std::smatch m;
    if (!std::regex_search(text, m, lo)) return false;
    min_minor = std::stoi(m[1]);
    if (!std::regex_search(text, m, hi)) return false;
    max_minor = std::stoi(m[1]);
    if (min_minor < 6) min_minor = 6;  // the mirror's conda side starts at Python 3.6
    return min_minor <= max_minor;
}

Tables load_tables(const std::string& shared_dir) {
    Tables t = builtin_tables();
    if (shared_dir.empty()) return t;
    fs::path facts = fs::path(shared_dir) / "facts";
    if (!fs::is_directory(facts)) return t;
    std::vector<TableSource> sources;

    if (fs::exists(facts / "torch.yaml")) {
        auto rows = read_torch(facts / "torch.yaml", t.torch);
        if (!rows.empty()) {
            t.torch = std::move(rows);
            sources.push_back({"torch releases (find-links, conda pytorch fallback)",
                               (facts / "torch.yaml").string() + " releases[] (each row's source: column is kept in the row)"});
        }
    }
    if (fs::exists(facts / "mmcv.yaml")) {
        auto doc = load_yaml(facts / "mmcv.yaml");
        auto rows = read_mmcv(doc, "facts/mmcv.yaml");
        if (!rows.empty()) {
            t.mmcv = std::move(rows);
            sources.push_back({"mmcv wheel matrix",
                               (facts / "mmcv.yaml").string() + " mmcv_full_1x_prebuilt + mmcv_2x_prebuilt, Linux rows"});
        }
        auto m3d = read_mmdet3d(doc, "facts/mmcv.yaml");
        if (!m3d.empty()) {
            t.mmdet3d = std::move(m3d);
            sources.push_back({"mmdet3d requirements and version gates",
                               (facts / "mmcv.yaml").string() + " mmdet3d_version_checks (0.17.x-0.18.x, 1.0.0rc0-rc6)"});
        }
    }
    if (fs::exists(facts / "python_libs.yaml")) {
        auto doc = load_yaml(facts / "python_libs.yaml");
        auto rows = read_numba(doc, "facts/python_libs.yaml");
        if (!rows.empty()) {
            t.numba = std::move(rows);
            sources.push_back({"numba/llvmlite/numpy ranges", (facts / "python_libs.yaml").string() + " numba[]"});
        }
    }
    // Tables not replaced keep their built-in source line.
    for (const auto& b : t.sources) {
        bool replaced = false;
        for (const auto& s : sources) replaced |= s.table == b.table;
        if (!replaced) sources.push_back(b);
    }
    t.sources = std::move(sources);
    return t;
}

}  // namespace envlock::mirror
