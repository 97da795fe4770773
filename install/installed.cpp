#include "install/installed.hpp"

#include <nlohmann/json.hpp>

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

std::string state_json(const PrefixState& s) {
    json j;
    j["envlock-state"] = 1;
    j["generation"] = s.generation;
    j["prefix"] = s.prefix;
    j["lock-content-hash"] = s.lock_hash;
    j["python"] = {{"version", s.python.version}, {"major-minor", s.python.major_minor},
                   {"site-packages", s.python.site_packages}, {"executable", s.python.executable}};
    json packages = json::array();
    for (const auto& p : s.packages) {
        json files = json::array();
        // Compact rows: [path, sha256, size] or [path, "", 0, link target].
        for (const auto& f : p.files) {
            json row = {f.path, f.sha256, f.size};
            if (!f.link_target.empty()) row.push_back(f.link_target);
            files.push_back(std::move(row));
        }
        json pj = {{"id", p.id}, {"kind", p.kind}, {"name", p.name}, {"version", p.version}, {"files", std::move(files)}};
        if (!p.noarch.empty()) pj["noarch"] = p.noarch;
        if (!p.build.empty()) pj["build"] = p.build;
        if (!p.channel.empty()) pj["channel"] = p.channel;
        packages.push_back(std::move(pj));
    }
    j["packages"] = std::move(packages);
    return j.dump(1) + "\n";
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
