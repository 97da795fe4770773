#include "install/conda_package.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <simdjson.h>
#include <set>
#include <sstream>

#include "install/link.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// conda's default placeholder, built from pieces like conda does so that this binary is
// never itself rewritten by a prefix replacement (C:conda/base/constants.py L26-31).
const std::string kDefaultPlaceholder = std::string("/opt/anaconda1") + "anaconda2" + "anaconda3";

json read_json(const fs::path& file) {
    std::string text = read_whole_file(file);
    auto j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError(file.string() + ": expected a JSON object");
    return j;
}

std::vector<std::string> lines_of(const fs::path& file) {
    std::vector<std::string> out;
    std::error_code ec;
    if (!fs::exists(file, ec)) return out;
    std::istringstream in(read_whole_file(file));
    std::string line;
    while (std::getline(in, line)) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (!line.empty()) out.push_back(line);
    }
    return out;
}

// has_prefix fields: space separated, optionally double-quoted with backslash escapes.
std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && line[i] == ' ') ++i;
        if (i >= line.size()) break;
        std::string field;
        if (line[i] == '"') {
            for (++i; i < line.size() && line[i] != '"'; ++i) {
                if (line[i] == '\\' && i + 1 < line.size()) ++i;
                field += line[i];
            }
            ++i;
        } else {
            while (i < line.size() && line[i] != ' ') field += line[i++];
        }
        out.push_back(field);
    }
    return out;
}

std::vector<std::string> strings(const json& j, const char* key) {
    std::vector<std::string> out;
    if (j.contains(key) && j[key].is_array())
        for (const auto& v : j[key])
            if (v.is_string()) out.push_back(v.get<std::string>());
    return out;
}

// info/paths.json, read with simdjson: it has an entry per file (tens of thousands in a large
// env, read on every install), and building a nlohmann tree of it was most of the manifest
// reading time. The same rules as before: an object with a 'paths' array of objects, each
// with a '_path' string; a path_type conda does not know is refused.
std::vector<PackagePath> read_paths_json(const fs::path& file) {
    const std::string where = file.string();
    simdjson::padded_string text(read_whole_file(file));
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(text).get(root) != simdjson::SUCCESS || !root.is_object()) throw InputError(where + ": expected a JSON object");
    simdjson::dom::array paths;
    if (root["paths"].get_array().get(paths) != simdjson::SUCCESS) throw InputError(where + ": expected a 'paths' array");
    auto string_field = [&](simdjson::dom::object e, std::string_view key, std::string_view fallback,
                            const std::string& path) -> std::string_view {
        simdjson::dom::element v;
        if (e[key].get(v) != simdjson::SUCCESS) return fallback;
        std::string_view s;
        if (v.get_string().get(s) != simdjson::SUCCESS)
            throw InputError(where + ": " + path + ": '" + std::string(key) + "' must be a string");
        return s;
    };
    std::vector<PackagePath> out;
    out.reserve(paths.size());
    for (simdjson::dom::element item : paths) {
        simdjson::dom::object e;
        std::string_view path;
        if (item.get_object().get(e) != simdjson::SUCCESS || e["_path"].get_string().get(path) != simdjson::SUCCESS)
            throw InputError(where + ": every entry needs a '_path' string");
        PackagePath p;
        p.path = std::string(path);
        std::string_view type = string_field(e, "path_type", "hardlink", p.path);
        if (type == "softlink") p.type = PathType::softlink;
        else if (type == "directory") p.type = PathType::directory;
        else if (type != "hardlink") throw InputError(where + ": " + p.path + ": unknown path_type '" + std::string(type) + "'");
        p.file_mode = string_field(e, "file_mode", "text", p.path) == "binary" ? FileMode::binary : FileMode::text;
        std::string_view placeholder, sha;
        if (e["prefix_placeholder"].get_string().get(placeholder) == simdjson::SUCCESS) p.placeholder = std::string(placeholder);
        bool no_link = false;
        if (e["no_link"].get_bool().get(no_link) == simdjson::SUCCESS) p.no_link = no_link;
        if (e["sha256"].get_string().get(sha) == simdjson::SUCCESS) p.sha256 = std::string(sha);
        simdjson::dom::element size;
        if (e["size_in_bytes"].get(size) == simdjson::SUCCESS) {
            std::uint64_t u;
            std::int64_t i;
            double d;
            if (size.get_uint64().get(u) == simdjson::SUCCESS) p.size = u;
            else if (size.get_int64().get(i) == simdjson::SUCCESS) p.size = static_cast<std::uint64_t>(i);
            else if (size.get_double().get(d) == simdjson::SUCCESS) p.size = static_cast<std::uint64_t>(d);
        }
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace

std::vector<PackagePath> read_legacy_manifests(const fs::path& tree) {
    // CEP 34: info/files lists every file; has_prefix marks those with a placeholder;
    // no_link (and no_softlink, which rattler merges into it) must be copied.
    std::map<std::string, std::pair<std::string, FileMode>> prefixed;
    for (const auto& line : lines_of(tree / "info/has_prefix")) {
        auto f = split_fields(line);
        if (f.size() == 1) prefixed[f[0]] = {kDefaultPlaceholder, FileMode::text};
        else if (f.size() >= 3) {
            std::string path = f[2];
            for (size_t k = 3; k < f.size(); ++k) path += " " + f[k];
            prefixed[path] = {f[0], f[1] == "binary" ? FileMode::binary : FileMode::text};
        } else {
            throw InputError((tree / "info/has_prefix").string() + ": expected '<path>' or '<placeholder> <text|binary> <path>', got '" + line + "'");
        }
    }
    std::set<std::string> no_link;
    for (const char* f : {"info/no_link", "info/no_softlink"})
        for (const auto& line : lines_of(tree / f)) no_link.insert(line);
    std::vector<PackagePath> out;
    for (const auto& path : lines_of(tree / "info/files")) {
        PackagePath p;
        p.path = path;
        fs::path on_disk = safe_join(tree, path);
        std::error_code ec;
        auto st = fs::symlink_status(on_disk, ec);
        if (fs::is_symlink(st)) p.type = PathType::softlink;
        else if (fs::is_directory(st)) p.type = PathType::directory;
        else if (fs::is_regular_file(st)) p.size = fs::file_size(on_disk, ec);
        if (auto it = prefixed.find(path); it != prefixed.end()) {
            p.placeholder = it->second.first;
            p.file_mode = it->second.second;
        }
        p.no_link = no_link.count(path) > 0;
        out.push_back(std::move(p));
    }
    return out;
}

CondaPackageInfo read_conda_package(const fs::path& tree) {
    CondaPackageInfo info;
    fs::path index_file = tree / "info/index.json";
    std::error_code ec;
    if (!fs::exists(index_file, ec)) throw InputError(tree.string() + ": not a conda package (no info/index.json)");
    json index = read_json(index_file);
    info.name = index.value("name", "");
    info.version = index.value("version", "");
    info.build = index.value("build", "");
    if (info.name.empty() || info.version.empty())
        throw InputError(index_file.string() + ": expected name and version");
    info.build_number = index.value("build_number", 0);
    info.subdir = index.value("subdir", "");
    info.license = index.contains("license") && index["license"].is_string() ? index["license"].get<std::string>() : "";
    if (index.contains("noarch")) {
        const auto& n = index["noarch"];
        if (n.is_string()) info.noarch = n.get<std::string>();
        else if (n.is_boolean() && n.get<bool>()) info.noarch = "generic";   // legacy boolean
    }
    if (index.contains("timestamp") && index["timestamp"].is_number_unsigned()) info.timestamp = index["timestamp"].get<std::uint64_t>();
    info.depends = strings(index, "depends");
    info.constrains = strings(index, "constrains");
    if (index.contains("track_features")) {
        const auto& t = index["track_features"];
        if (t.is_string()) info.track_features = t.get<std::string>();
        else if (t.is_array())
            for (const auto& v : t)
                if (v.is_string()) info.track_features += (info.track_features.empty() ? "" : " ") + v.get<std::string>();
    }
    if (index.contains("python_site_packages_path") && index["python_site_packages_path"].is_string())
        info.python_site_packages_path = index["python_site_packages_path"].get<std::string>();

    fs::path paths_file = tree / "info/paths.json";
    if (fs::exists(paths_file, ec)) info.paths = read_paths_json(paths_file);
    else info.paths = read_legacy_manifests(tree);
    for (const auto& p : info.paths) safe_join(tree, p.path);   // refuses "..", absolute paths

    fs::path link_file = tree / "info/link.json";
    if (fs::exists(link_file, ec)) {
        json link = read_json(link_file);
        if (link.contains("noarch") && link["noarch"].is_object()) {
            if (info.noarch.empty()) info.noarch = link["noarch"].value("type", "");
            info.entry_points = strings(link["noarch"], "entry_points");
        }
    }
    return info;
}

std::string relocate_noarch_python(const std::string& path, const std::string& site_packages) {
    // C:conda/common/path/python.py L94-101; CEP 20.
    if (path.rfind("site-packages/", 0) == 0) return site_packages + path.substr(13);
    if (path.rfind("python-scripts/", 0) == 0) return "bin" + path.substr(14);
    return path;
}

}  // namespace envlock::install
