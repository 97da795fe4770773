#include "install/prefix_record.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "resolver/specs/errors.hpp"

namespace envlock::install {

using nlohmann::json;

std::string prefix_record_filename(const PrefixRecord& r) { return r.name + "-" + r.version + "-" + r.build + ".json"; }

std::string prefix_record_json(const PrefixRecord& r) {
    json j;   // std::map underneath: keys come out sorted
    j["name"] = r.name;
    j["version"] = r.version;
    j["build"] = r.build;
    j["build_number"] = r.build_number;
    j["channel"] = r.channel;
    j["subdir"] = r.subdir;
    j["fn"] = r.fn;
    j["url"] = r.url;
    j["md5"] = r.md5;
    j["sha256"] = r.sha256;
    j["size"] = r.size;
    j["depends"] = r.depends;
    j["constrains"] = r.constrains;
    j["license"] = r.license;
    if (!r.noarch.empty()) j["noarch"] = r.noarch;
    j["track_features"] = r.track_features;
    if (!r.python_site_packages_path.empty()) j["python_site_packages_path"] = r.python_site_packages_path;
    j["timestamp"] = r.timestamp;
    j["files"] = r.files;
    json paths = json::array();
    for (const auto& p : r.paths) {
        json e;
        e["_path"] = p.path;
        e["path_type"] = p.path_type;
        if (!p.sha256.empty()) e["sha256"] = p.sha256;
        if (!p.sha256_in_prefix.empty()) e["sha256_in_prefix"] = p.sha256_in_prefix;
        e["size_in_bytes"] = p.size_in_bytes;
        if (!p.prefix_placeholder.empty()) {
            e["file_mode"] = p.file_mode;
            e["prefix_placeholder"] = p.prefix_placeholder;
        }
        if (p.no_link) e["no_link"] = true;
        paths.push_back(std::move(e));
    }
    j["paths_data"] = {{"paths", std::move(paths)}, {"paths_version", 1}};
    j["link"] = {{"source", r.link_source}, {"type", r.link_type}};
    j["extracted_package_dir"] = r.link_source;
    j["package_tarball_full_path"] = r.package_tarball_full_path;
    j["requested_spec"] = r.requested_spec;
    j["requested_specs"] = r.requested_spec.empty() ? json::array() : json::array({r.requested_spec});
    return j.dump(2) + "\n";
}

std::vector<std::string> record_files(const std::string& json_text, const std::string& file) {
    auto j = json::parse(json_text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw InputError(file + ": expected a conda-meta record (a JSON object)");
    std::vector<std::string> out;
    if (j.contains("files") && j["files"].is_array())
        for (const auto& f : j["files"])
            if (f.is_string()) out.push_back(f.get<std::string>());
    return out;
}

std::string history_block(const std::string& when, const std::string& command, const std::vector<std::string>& removed,
                          const std::vector<std::string>& added, const std::vector<std::string>& update_specs) {
    std::string out = "==> " + when + " <==\n# cmd: " + command + "\n# envlock version: " ENVLOCK_VERSION "\n";
    auto sorted = [](std::vector<std::string> v) {
        std::sort(v.begin(), v.end());
        return v;
    };
    for (const auto& r : sorted(removed)) out += "-" + r + "\n";
    for (const auto& a : sorted(added)) out += "+" + a + "\n";
    if (!update_specs.empty()) {
        out += "# update specs: [";
        for (size_t i = 0; i < update_specs.size(); ++i) out += (i ? ", " : "") + json(update_specs[i]).dump();
        out += "]\n";
    }
    return out;
}

std::string channel_label(const std::string& channel, const std::string& subdir) {
    std::string ch = channel;
    while (!ch.empty() && ch.back() == '/') ch.pop_back();
    auto last = [](const std::string& s) { return s.substr(s.rfind('/') + 1); };
    std::string name = last(ch);
    if (!subdir.empty() && (name == subdir || name == "noarch")) {
        // The lock recorded the subdir URL: the channel is the segment before it.
        ch = ch.substr(0, ch.rfind('/') == std::string::npos ? 0 : ch.rfind('/'));
        name = last(ch);
    }
    if (name.empty()) return "";
    return subdir.empty() ? name : name + "/" + subdir;
}

std::string history_entry(const std::string& channel, const std::string& subdir, const std::string& name,
                          const std::string& version, const std::string& build) {
    std::string label = channel_label(channel, subdir);
    return (label.empty() ? "" : label + "::") + name + "-" + version + "-" + build;
}

}  // namespace envlock::install
