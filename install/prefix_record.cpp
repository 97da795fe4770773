#include "install/prefix_record.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "install/json_text.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {

using nlohmann::json;

std::string prefix_record_filename(const PrefixRecord& r) { return r.name + "-" + r.version + "-" + r.build + ".json"; }

namespace {

void put_strings(std::string& out, const std::vector<std::string>& v, int indent) {
    if (v.empty()) {
        out += "[]";
        return;
    }
    const std::string pad(indent + 2, ' ');
    out += "[\n";
    for (size_t i = 0; i < v.size(); ++i) {
        out += pad;
        put_json_string(out, v[i]);
        out += i + 1 < v.size() ? ",\n" : "\n";
    }
    out.append(indent, ' ');
    out += ']';
}

// An object's members, each already rendered at `indent`, written in sorted key order.
void put_object(std::string& out, std::vector<std::pair<std::string, std::string>> members, int indent) {
    if (members.empty()) {
        out += "{}";
        return;
    }
    std::sort(members.begin(), members.end());
    const std::string pad(indent + 2, ' ');
    out += "{\n";
    for (size_t i = 0; i < members.size(); ++i) {
        out += pad;
        put_json_string(out, members[i].first);
        out += ": ";
        out += members[i].second;
        out += i + 1 < members.size() ? ",\n" : "\n";
    }
    out.append(indent, ' ');
    out += '}';
}

std::string rendered(const std::string& v) {
    std::string out;
    put_json_string(out, v);
    return out;
}

std::string rendered(const std::vector<std::string>& v, int indent) {
    std::string out;
    put_strings(out, v, indent);
    return out;
}

// One paths_data entry at indent 6; its keys in sorted order by hand (the hot loop).
void put_path(std::string& out, const PrefixPath& p) {
    const char* pad = "        ";
    out += "      {\n";
    auto field = [&](const char* key, const std::string& value, bool quoted, bool last) {
        out += pad;
        out += '"';
        out += key;
        out += "\": ";
        if (quoted) put_json_string(out, value);
        else out += value;
        out += last ? "\n" : ",\n";
    };
    const bool placeholder = !p.prefix_placeholder.empty();
    field("_path", p.path, true, false);
    if (placeholder) field("file_mode", p.file_mode, true, false);
    if (p.no_link) field("no_link", "true", false, false);
    field("path_type", p.path_type, true, false);
    if (placeholder) field("prefix_placeholder", p.prefix_placeholder, true, false);
    if (!p.sha256.empty()) field("sha256", p.sha256, true, false);
    if (!p.sha256_in_prefix.empty()) field("sha256_in_prefix", p.sha256_in_prefix, true, false);
    field("size_in_bytes", std::to_string(p.size_in_bytes), false, true);
    out += "      }";
}

}  // namespace

std::string prefix_record_json(const PrefixRecord& r) {
    std::string paths = "{\n    \"paths\": ";
    if (r.paths.empty()) {
        paths += "[]";
    } else {
        paths += "[\n";
        for (size_t i = 0; i < r.paths.size(); ++i) {
            put_path(paths, r.paths[i]);
            paths += i + 1 < r.paths.size() ? ",\n" : "\n";
        }
        paths += "    ]";
    }
    paths += ",\n    \"paths_version\": 1\n  }";
    std::string link;
    put_object(link, {{"source", rendered(r.link_source)}, {"type", std::to_string(r.link_type)}}, 2);
    std::vector<std::pair<std::string, std::string>> m = {
        {"name", rendered(r.name)},
        {"version", rendered(r.version)},
        {"build", rendered(r.build)},
        {"build_number", std::to_string(r.build_number)},
        {"channel", rendered(r.channel)},
        {"subdir", rendered(r.subdir)},
        {"fn", rendered(r.fn)},
        {"url", rendered(r.url)},
        {"md5", rendered(r.md5)},
        {"sha256", rendered(r.sha256)},
        {"size", std::to_string(r.size)},
        {"depends", rendered(r.depends, 2)},
        {"constrains", rendered(r.constrains, 2)},
        {"license", rendered(r.license)},
        {"track_features", rendered(r.track_features)},
        {"timestamp", std::to_string(r.timestamp)},
        {"files", rendered(r.files, 2)},
        {"paths_data", std::move(paths)},
        {"link", std::move(link)},
        {"extracted_package_dir", rendered(r.link_source)},
        {"package_tarball_full_path", rendered(r.package_tarball_full_path)},
        {"requested_spec", rendered(r.requested_spec)},
        {"requested_specs", rendered(r.requested_spec.empty() ? std::vector<std::string>{} : std::vector<std::string>{r.requested_spec}, 2)},
    };
    if (!r.noarch.empty()) m.push_back({"noarch", rendered(r.noarch)});
    if (!r.python_site_packages_path.empty()) m.push_back({"python_site_packages_path", rendered(r.python_site_packages_path)});
    std::string out;
    out.reserve(256 + r.paths.size() * 256);
    put_object(out, std::move(m), 0);
    out += "\n";
    return out;
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
