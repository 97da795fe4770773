#include "install/installed.hpp"

#include <algorithm>
#include <simdjson.h>

#include "fetch/padded_buffer.hpp"
#include "install/json_text.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;

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

// Read with simdjson (a state has a row per installed file: 5 MB for 30,000 files, which
// nlohmann's parser took most of a no-op install to read).
std::optional<PrefixState> read_state(const fs::path& prefix) {
    fs::path file = prefix / kStateFile;
    std::error_code ec;
    if (!fs::exists(file, ec)) return std::nullopt;
    auto bad = [&](const std::string& why) { return InputError(file.string() + ": " + why + " (delete the prefix and install again)"); };
    // Mapped, not copied: the state is only ever replaced by rename, never rewritten in place.
    fetch::PaddedBuffer text = fetch::PaddedBuffer::map_file(file, ec);
    if (ec) throw EnvironmentError(file.string() + ": cannot read: " + ec.message());
    simdjson::dom::parser parser;
    simdjson::dom::object root;
    if (parser.parse(text.data(), text.size(), false).get_object().get(root) != simdjson::SUCCESS)
        throw bad("not an envlock state file");
    int64_t format = 0;
    if (root["envlock-state"].get_int64().get(format) != simdjson::SUCCESS || format != 1) throw bad("not an envlock state file");
    // A required string, or "" for an optional one that is absent; a wrong type is malformed.
    auto text_of = [&](simdjson::dom::object object, const char* key, bool required) {
        simdjson::dom::element value;
        if (object[key].get(value) != simdjson::SUCCESS) {
            if (required) throw bad(std::string("malformed: no '") + key + "'");
            return std::string();
        }
        std::string_view s;
        if (value.get_string().get(s) != simdjson::SUCCESS) throw bad(std::string("malformed: '") + key + "' is not a string");
        return std::string(s);
    };
    auto object_at = [&](simdjson::dom::object object, const char* key) {
        simdjson::dom::object out;
        if (object[key].get_object().get(out) != simdjson::SUCCESS) throw bad(std::string("malformed: '") + key + "' is not an object");
        return out;
    };
    auto array_at = [&](simdjson::dom::object object, const char* key) {
        simdjson::dom::array out;
        if (object[key].get_array().get(out) != simdjson::SUCCESS) throw bad(std::string("malformed: '") + key + "' is not an array");
        return out;
    };
    PrefixState s;
    s.generation = text_of(root, "generation", true);
    s.prefix = text_of(root, "prefix", true);
    s.lock_hash = text_of(root, "lock-content-hash", false);
    simdjson::dom::object py = object_at(root, "python");
    s.python = {text_of(py, "version", false), text_of(py, "major-minor", false), text_of(py, "site-packages", false),
                text_of(py, "executable", false)};
    simdjson::dom::array packages = array_at(root, "packages");
    s.packages.reserve(packages.size());
    for (simdjson::dom::element element : packages) {
        simdjson::dom::object pj;
        if (element.get_object().get(pj) != simdjson::SUCCESS) throw bad("malformed: a package is not an object");
        InstalledPackage p;
        p.id = text_of(pj, "id", true);
        p.kind = text_of(pj, "kind", true);
        p.name = text_of(pj, "name", true);
        p.version = text_of(pj, "version", true);
        p.noarch = text_of(pj, "noarch", false);
        p.build = text_of(pj, "build", false);
        p.channel = text_of(pj, "channel", false);
        simdjson::dom::array files = array_at(pj, "files");
        p.files.reserve(files.size());
        for (simdjson::dom::element row : files) {
            simdjson::dom::array cells;
            std::string_view path, sha256, link;
            uint64_t size = 0;
            if (row.get_array().get(cells) != simdjson::SUCCESS || cells.size() < 3 || cells.at(0).get_string().get(path) ||
                cells.at(1).get_string().get(sha256) || cells.at(2).get_uint64().get(size) ||
                (cells.size() > 3 && cells.at(3).get_string().get(link)))
                throw bad("malformed: a file row of " + p.name + " is not [path, sha256, size(, link target)]");
            p.files.push_back({std::string(path), std::string(sha256), size, std::string(link)});
        }
        s.packages.push_back(std::move(p));
    }
    return s;
}

}  // namespace envlock::install
