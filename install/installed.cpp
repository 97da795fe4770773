#include "install/installed.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "install/json_text.hpp"
#include "install/link.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kind_name(Ecosystem e) {
    switch (e) {
        case Ecosystem::conda: return "conda";
        case Ecosystem::pypi: return "pypi";
        case Ecosystem::source: return "source";
    }
    return "?";
}

}  // namespace

std::string package_id(const LockedPackage& p) {
    std::string digest = !p.sha256.empty() ? p.sha256 : !p.md5.empty() ? "md5-" + p.md5 : p.rev;
    return std::string(kind_name(p.kind)) + ":" + p.name + "=" + p.version + "=" + p.build + ":" + digest;
}

// The bytes nlohmann's dump(1) writes for this document (sorted keys, one-space indent), written
// straight into one string: a state has a row per installed file (30,000 in a large env), and
// building a json tree of them cost a third of a second of a warm install.
std::string state_json(const PrefixState& s) {
    std::string out;
    // Reserved whole: growing a string of megabytes copies it and touches fresh pages each time.
    size_t size = 1024;
    for (const auto& p : s.packages) {
        size += 512 + p.id.size() + p.name.size() + p.channel.size();
        for (const auto& f : p.files) size += 48 + f.path.size() + f.sha256.size() + f.link_target.size();
    }
    out.reserve(size);
    auto field = [&](const char* pad, const char* key, const std::string& value, bool last) {
        out += pad;
        out += '"';
        out += key;
        out += "\": ";
        put_json_string(out, value);
        out += last ? "\n" : ",\n";
    };
    out += "{\n \"envlock-state\": 1,\n";
    field(" ", "generation", s.generation, false);
    field(" ", "lock-content-hash", s.lock_hash, false);
    out += " \"packages\": ";
    if (s.packages.empty()) out += "[]";
    else {
        out += "[\n";
        for (size_t i = 0; i < s.packages.size(); ++i) {
            const InstalledPackage& p = s.packages[i];
            out += "  {\n";
            if (!p.build.empty()) field("   ", "build", p.build, false);
            if (!p.channel.empty()) field("   ", "channel", p.channel, false);
            out += "   \"files\": ";
            if (p.files.empty()) out += "[]";
            else {
                out += "[\n";
                // Compact rows: [path, sha256, size] or [path, "", 0, link target].
                for (size_t k = 0; k < p.files.size(); ++k) {
                    const InstalledFile& f = p.files[k];
                    out += "    [\n     ";
                    put_json_string(out, f.path);
                    out += ",\n     ";
                    put_json_string(out, f.sha256);
                    out += ",\n     ";
                    out += std::to_string(f.size);
                    if (!f.link_target.empty()) {
                        out += ",\n     ";
                        put_json_string(out, f.link_target);
                    }
                    out += k + 1 < p.files.size() ? "\n    ],\n" : "\n    ]\n";
                }
                out += "   ]";
            }
            out += ",\n";
            field("   ", "id", p.id, false);
            field("   ", "kind", p.kind, false);
            field("   ", "name", p.name, false);
            if (!p.noarch.empty()) field("   ", "noarch", p.noarch, false);
            field("   ", "version", p.version, true);
            out += i + 1 < s.packages.size() ? "  },\n" : "  }\n";
        }
        out += " ]";
    }
    out += ",\n";
    field(" ", "prefix", s.prefix, false);
    out += " \"python\": {\n";
    field("  ", "executable", s.python.executable, false);
    field("  ", "major-minor", s.python.major_minor, false);
    field("  ", "site-packages", s.python.site_packages, false);
    field("  ", "version", s.python.version, true);
    out += " }\n}\n";
    return out;
}

std::optional<PrefixState> read_state(const fs::path& prefix) {
    fs::path file = prefix / kStateFile;
    std::error_code ec;
    if (!fs::exists(file, ec)) return std::nullopt;
    auto j = json::parse(read_whole_file(file), nullptr, false);
    auto bad = [&](const std::string& why) { return InputError(file.string() + ": " + why + " (delete the prefix and install again)"); };
    if (j.is_discarded() || !j.is_object() || j.value("envlock-state", 0) != 1) throw bad("not an envlock state file");
    PrefixState s;
    try {
        s.generation = j.at("generation").get<std::string>();
        s.prefix = j.at("prefix").get<std::string>();
        s.lock_hash = j.value("lock-content-hash", "");
        const auto& py = j.at("python");
        s.python = {py.value("version", ""), py.value("major-minor", ""), py.value("site-packages", ""), py.value("executable", "")};
        for (const auto& pj : j.at("packages")) {
            InstalledPackage p;
            p.id = pj.at("id").get<std::string>();
            p.kind = pj.at("kind").get<std::string>();
            p.name = pj.at("name").get<std::string>();
            p.version = pj.at("version").get<std::string>();
            p.noarch = pj.value("noarch", "");
            p.build = pj.value("build", "");
            p.channel = pj.value("channel", "");
            for (const auto& row : pj.at("files")) {
                InstalledFile f;
                f.path = row.at(0).get<std::string>();
                f.sha256 = row.at(1).get<std::string>();
                f.size = row.at(2).get<std::uint64_t>();
                if (row.size() > 3) f.link_target = row.at(3).get<std::string>();
                p.files.push_back(std::move(f));
            }
            s.packages.push_back(std::move(p));
        }
    } catch (const json::exception& e) {
        throw bad(std::string("malformed: ") + e.what());
    }
    return s;
}

}  // namespace envlock::install
