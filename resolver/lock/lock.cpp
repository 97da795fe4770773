#include "resolver/lock/lock.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>

#include "resolver/lock/embedded_schemas.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/utf8.hpp"
#include "resolver/lock/json_schema.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/lock/spec_io.hpp"
#include "resolver/lock/target_io.hpp"
#include "resolver/lock/yaml_json.hpp"

namespace envlock {

namespace {

const char* kind_key(Ecosystem e) {
    switch (e) {
        case Ecosystem::conda: return "conda";
        case Ecosystem::pypi: return "pypi";
        case Ecosystem::source: return "source";
    }
    return "conda";
}

void emit_string(YAML::Emitter& out, const char* key, const std::string& value) {
    if (value.empty()) return;
    out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
}

void emit_verified(YAML::Emitter& out, const LockVerified& v) {
    out << YAML::Key << "verified" << YAML::Value << YAML::BeginMap;
    emit_string(out, "date", v.date);
    emit_string(out, "result", v.result);
    emit_string(out, "nvcc", v.nvcc);
    emit_string(out, "nvcc-path", v.nvcc_path);
    emit_string(out, "host-compiler", v.host_compiler);
    if (!v.sm.empty()) {
        out << YAML::Key << "sm" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& sm : v.sm) out << sm;
        out << YAML::EndSeq;
    }
    emit_string(out, "torch", v.torch);
    if (!v.failed.empty()) {
        out << YAML::Key << "failed" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& f : v.failed) out << YAML::DoubleQuoted << f;
        out << YAML::EndSeq;
    }
    out << YAML::EndMap;
}



// The packages block written directly, in the bytes yaml-cpp's emitter gives it (a lock has
// hundreds of entries, and the emitter runs its plain-scalar regular expressions over every key
// and value: most of writing a lock). A scalar outside the plain shapes below is still
// formatted by the emitter; tests/unit/solve/lock_test.cpp holds the block to the emitter's.
void scalar_by_emitter(std::string& out, const std::string& value, bool double_quoted) {
    YAML::Emitter e;
    if (double_quoted) e << YAML::DoubleQuoted;
    e << value;
    out += e.c_str();
}

// "…" for printable ASCII without '"' or '\': what the emitter writes for such a string.
void double_quoted(std::string& out, const std::string& value) {
    for (char c : value)
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return scalar_by_emitter(out, value, true);
    out += '"';
    out += value;
    out += '"';
}

// A URL the emitter writes plain: a letter first, "://" inside, only URL characters that
// cannot start a comment or end a key (no blank, no '#', no ':' at the end).
void plain_url(std::string& out, const std::string& value) {
    bool plain = !value.empty() && std::isalpha(static_cast<unsigned char>(value[0])) && value.find("://") != std::string::npos &&
                 value.back() != ':';
    for (char c : value) {
        if (!plain) break;
        plain = std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-._~/?&=%+@!$,;()*':[]", c) != nullptr;
    }
    if (!plain) return scalar_by_emitter(out, value, false);
    out += value;
}

void field(std::string& out, const char* key, const std::string& value) {
    if (value.empty()) return;
    out += "    ";
    out += key;
    out += ": ";
    double_quoted(out, value);
    out += '\n';
}

void string_list(std::string& out, const char* key, const std::vector<std::string>& values) {
    out += "    ";
    out += key;
    out += ": [";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ", ";
        double_quoted(out, values[i]);
    }
    out += "]\n";
}

void int_list(std::string& out, const char* key, const std::vector<int>& values) {
    out += key;
    out += ": [";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(values[i]);
    }
    out += ']';
}

void write_package(std::string& out, const LockedPackage& p) {
    out += "  - ";
    out += kind_key(p.kind);
    out += ": ";
    plain_url(out, p.url);
    out += '\n';
    field(out, "name", p.name);
    field(out, "version", p.version);
    field(out, "build", p.build);
    if (p.kind == Ecosystem::conda) out += "    build-number: " + std::to_string(p.build_number) + "\n";
    field(out, "sha256", p.sha256);
    field(out, "md5", p.md5);
    if (p.size) out += "    size: " + std::to_string(p.size) + "\n";
    field(out, "channel", p.channel);
    field(out, "subdir", p.subdir);
    field(out, "rev", p.rev);
    if (!p.depends.empty()) string_list(out, "depends", p.depends);
    if (p.depends_unknown) out += "    depends-unknown: true\n";
    if (p.cuda) {
        out += "    cuda: {runtime: ";
        double_quoted(out, p.cuda->runtime);
        if (!p.cuda->sm.empty()) out += ", ", int_list(out, "sm", p.cuda->sm);
        if (!p.cuda->ptx.empty()) out += ", ", int_list(out, "ptx", p.cuda->ptx);
        out += "}\n";
    }
    if (!p.requested_by.empty()) string_list(out, "requested-by", p.requested_by);
}

std::string target_text(const std::vector<NamedTarget>& targets) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    for (const auto& t : targets) out << YAML::Key << t.name << YAML::Value << YAML::Load(target_to_yaml(t.target));
    out << YAML::EndMap;
    return out.c_str();
}

std::string str_of(const YAML::Node& n) { return n ? n.as<std::string>() : std::string(); }

std::vector<std::string> strings_of(const YAML::Node& n) {
    std::vector<std::string> out;
    if (n)
        for (const auto& item : n) out.push_back(item.as<std::string>());
    return out;
}

std::vector<int> ints_of(const YAML::Node& n) {
    std::vector<int> out;
    if (n)
        for (const auto& item : n) out.push_back(item.as<int>());
    return out;
}

}  // namespace

std::string_view lock_schema_text() { return embedded_schema("envlock.schema.json"); }

std::string lock_content_hash(const Spec& spec, const std::vector<NamedTarget>& targets, std::string_view knowledge_version) {
    Sha256 hash;
    hash.update(spec_to_yaml_text(spec));
    hash.update("\n---targets\n");
    hash.update(target_text(targets));
    hash.update("\n---knowledge\n");
    hash.update(knowledge_version);
    return "sha256:" + hash.hex_digest();
}

namespace {

void write_lock_tail(YAML::Emitter& out, const Lock& lock) {
    if (!lock.decisions.empty()) {
        out << YAML::Key << "decisions" << YAML::Value << YAML::BeginSeq;
        for (const auto& d : lock.decisions) {
            out << YAML::BeginMap;
            out << YAML::Key << "id" << YAML::Value << YAML::DoubleQuoted << d.id;
            out << YAML::Key << "excluded" << YAML::Value << YAML::DoubleQuoted << d.excluded;
            out << YAML::Key << "reason" << YAML::Value << YAML::DoubleQuoted << d.reason;
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    if (!lock.warnings.empty()) {
        out << YAML::Key << "warnings" << YAML::Value << YAML::BeginSeq;
        for (const auto& w : lock.warnings) {
            out << YAML::BeginMap;
            out << YAML::Key << "id" << YAML::Value << YAML::DoubleQuoted << w.id;
            out << YAML::Key << "target" << YAML::Value << YAML::DoubleQuoted << w.target;
            out << YAML::Key << "symptom" << YAML::Value << YAML::DoubleQuoted << w.symptom;
            out << YAML::Key << "fix" << YAML::Value << YAML::DoubleQuoted << w.fix;
            out << YAML::Key << "source" << YAML::Value << YAML::DoubleQuoted << w.source;
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    if (lock.verified) emit_verified(out, *lock.verified);
}

}  // namespace

std::string write_lock(const Lock& lock) {
    YAML::Emitter out;
    out.SetIndent(2);
    out << YAML::BeginMap;
    out << YAML::Key << "version" << YAML::Value << lock.version;
    out << YAML::Key << "content-hash" << YAML::Value << lock.content_hash;
    emit_string(out, "knowledge-version", lock.knowledge_version);
    if (!lock.inferred_sha256.empty()) {
        out << YAML::Key << "checkout" << YAML::Value << YAML::DoubleQuoted << (lock.checkout.empty() ? "." : lock.checkout);
        out << YAML::Key << "inferred-from-sha256" << YAML::Value << YAML::BeginMap;
        for (const auto& [path, hex] : lock.inferred_sha256) out << YAML::Key << path << YAML::Value << hex;
        out << YAML::EndMap;
    }
    out << YAML::Key << "spec" << YAML::Value;
    emit_spec(out, lock.spec);
    out << YAML::Key << "targets" << YAML::Value << YAML::BeginMap;
    for (const auto& t : lock.targets) out << YAML::Key << t.name << YAML::Value << YAML::Load(target_to_yaml(t.target));
    out << YAML::EndMap;
    const LockedToolchain& tc = lock.toolchain;
    if (!tc.nvcc.empty() || !tc.gcc.empty() || !tc.cuda_arch_list.empty() || !tc.notes.empty()) {
        out << YAML::Key << "toolchain" << YAML::Value << YAML::BeginMap;
        emit_string(out, "nvcc", tc.nvcc);
        emit_string(out, "nvcc-from", tc.nvcc_from);
        emit_string(out, "gcc", tc.gcc);
        emit_string(out, "gcc-from", tc.gcc_from);
        emit_string(out, "cuda-arch-list", tc.cuda_arch_list);
        if (!tc.notes.empty()) {
            out << YAML::Key << "notes" << YAML::Value << YAML::BeginSeq;
            for (const auto& n : tc.notes) out << YAML::DoubleQuoted << n;
            out << YAML::EndSeq;
        }
        out << YAML::EndMap;
    }
    // The packages block directly (see write_package); the emitter writes what is around it.
    out << YAML::EndMap;
    if (!out.good()) throw std::logic_error(std::string("lock writer: ") + out.GetLastError());
    std::string text = std::string(out.c_str()) + "\npackages:";
    if (lock.packages.empty()) {
        text += "\n  []";   // what the emitter writes for an empty block sequence
    } else {
        text.reserve(text.size() + lock.packages.size() * 640);
        text += '\n';
        for (const auto& p : lock.packages) write_package(text, p);
        text.pop_back();   // the emitter's last line has no newline of its own
    }
    YAML::Emitter tail;
    tail.SetIndent(2);
    tail << YAML::BeginMap;
    write_lock_tail(tail, lock);
    tail << YAML::EndMap;
    if (!tail.good()) throw std::logic_error(std::string("lock writer: ") + tail.GetLastError());
    std::string after = tail.c_str();
    if (!after.empty() && after != "{}") text += "\n" + after;
    return text + "\n";
}


Lock read_lock(std::string_view yaml_text, std::string_view file) {
    const std::string name(file);
    utf8::require(yaml_text, name);
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml_text));
    } catch (const YAML::ParserException& e) {
        throw InputError(name + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
    }
    if (!root.IsMap()) throw InputError(name + ": expected a lock (a YAML map with version, spec, targets, packages)");

    JsonLines lines;
    nlohmann::json doc = yaml_to_json(root, "", &lines);
    auto violations = validate(nlohmann::json::parse(lock_schema_text()), doc);
    if (!violations.empty()) {
        const auto& v = violations.front();
        int line = std::max(1, line_of(lines, v.path));
        throw InputError(name + ":" + std::to_string(line) + ": " + (v.path.empty() ? "lock" : v.path) + ": " + v.message);
    }

    Lock lock;
    try {
        lock.version = root["version"].as<int>();
        lock.content_hash = str_of(root["content-hash"]);
        lock.knowledge_version = str_of(root["knowledge-version"]);
        lock.checkout = str_of(root["checkout"]);
        for (const auto& kv : root["inferred-from-sha256"]) lock.inferred_sha256[kv.first.as<std::string>()] = kv.second.as<std::string>();
        lock.spec = spec_from_yaml(root["spec"], file);
        for (const auto& kv : root["targets"])
            lock.targets.push_back({kv.first.as<std::string>(), target_from_yaml(kv.second, name)});
        if (const auto tc = root["toolchain"]) {
            lock.toolchain.nvcc = str_of(tc["nvcc"]);
            lock.toolchain.nvcc_from = str_of(tc["nvcc-from"]);
            lock.toolchain.gcc = str_of(tc["gcc"]);
            lock.toolchain.gcc_from = str_of(tc["gcc-from"]);
            lock.toolchain.cuda_arch_list = str_of(tc["cuda-arch-list"]);
            lock.toolchain.notes = strings_of(tc["notes"]);
        }
        for (const auto& n : root["packages"]) {
            LockedPackage p;
            p.line = n.Mark().line + 1;
            for (Ecosystem e : {Ecosystem::conda, Ecosystem::pypi, Ecosystem::source})
                if (n[kind_key(e)]) {
                    p.kind = e;
                    p.url = n[kind_key(e)].as<std::string>();
                }
            p.name = str_of(n["name"]);
            p.version = str_of(n["version"]);
            p.build = str_of(n["build"]);
            p.build_number = n["build-number"] ? n["build-number"].as<int>() : 0;
            p.sha256 = str_of(n["sha256"]);
            p.md5 = str_of(n["md5"]);
            p.size = n["size"] ? n["size"].as<std::uint64_t>() : 0;
            p.channel = str_of(n["channel"]);
            p.subdir = str_of(n["subdir"]);
            p.rev = str_of(n["rev"]);
            p.depends = strings_of(n["depends"]);
            p.depends_unknown = n["depends-unknown"] && n["depends-unknown"].as<bool>();
            p.requested_by = strings_of(n["requested-by"]);
            if (const auto c = n["cuda"]) p.cuda = LockedCuda{str_of(c["runtime"]), ints_of(c["sm"]), ints_of(c["ptx"])};
            lock.packages.push_back(std::move(p));
        }
        if (lock.targets.empty()) throw InputError(name + ":" + std::to_string(root["targets"].Mark().line + 1) + ": /targets: expected at least one target");
        for (const auto& n : root["decisions"])
            lock.decisions.push_back({str_of(n["id"]), str_of(n["excluded"]), str_of(n["reason"])});
        for (const auto& n : root["warnings"])
            lock.warnings.push_back({str_of(n["id"]), str_of(n["target"]), str_of(n["symptom"]), str_of(n["fix"]), str_of(n["source"])});
        if (const auto v = root["verified"])
            lock.verified = LockVerified{str_of(v["date"]), str_of(v["result"]), str_of(v["nvcc"]), str_of(v["nvcc-path"]),
                                         str_of(v["host-compiler"]), strings_of(v["sm"]), str_of(v["torch"]), strings_of(v["failed"])};
    } catch (const YAML::Exception& e) {
        throw InputError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    return lock;
}

nlohmann::json lock_to_json(const Lock& lock) {
    using nlohmann::json;
    json j;
    j["version"] = lock.version;
    j["content-hash"] = lock.content_hash;
    j["knowledge-version"] = lock.knowledge_version;
    j["checkout"] = lock.checkout;
    j["inferred-from-sha256"] = lock.inferred_sha256;
    j["spec"] = spec_to_json(lock.spec);
    j["targets"] = json::array();
    // The YAML the lock itself holds, read back by the lock's own target reader.
    for (const auto& t : lock.targets) j["targets"].push_back({t.name, target_to_yaml(t.target)});
    const LockedToolchain& tc = lock.toolchain;
    j["toolchain"] = {tc.nvcc, tc.nvcc_from, tc.gcc, tc.gcc_from, tc.cuda_arch_list, tc.notes};
    j["packages"] = json::array();
    for (const auto& p : lock.packages) {
        json pj = {static_cast<int>(p.kind), p.url, p.name, p.version, p.build, p.build_number, p.sha256, p.md5, p.size,
                   p.channel, p.subdir, p.rev, p.depends, p.depends_unknown, p.requested_by};
        if (p.cuda) pj.push_back({p.cuda->runtime, p.cuda->sm, p.cuda->ptx});
        j["packages"].push_back(std::move(pj));
    }
    j["decisions"] = json::array();
    for (const auto& d : lock.decisions) j["decisions"].push_back({d.id, d.excluded, d.reason});
    j["warnings"] = json::array();
    for (const auto& w : lock.warnings) j["warnings"].push_back({w.id, w.target, w.symptom, w.fix, w.source});
    if (lock.verified) {
        const LockVerified& v = *lock.verified;
        j["verified"] = {v.date, v.result, v.nvcc, v.nvcc_path, v.host_compiler, v.sm, v.torch, v.failed};
    }
    return j;
}

Lock lock_from_json(const nlohmann::json& j) {
    Lock lock;
    lock.version = j.at("version").get<int>();
    lock.content_hash = j.at("content-hash").get<std::string>();
    lock.knowledge_version = j.at("knowledge-version").get<std::string>();
    lock.checkout = j.at("checkout").get<std::string>();
    lock.inferred_sha256 = j.at("inferred-from-sha256").get<std::map<std::string, std::string>>();
    lock.spec = spec_from_json(j.at("spec"), "resolve memo");
    for (const auto& t : j.at("targets"))
        lock.targets.push_back({t.at(0).get<std::string>(), target_from_text(t.at(1).get<std::string>(), "resolve memo")});
    const auto& tc = j.at("toolchain");
    lock.toolchain = {tc.at(0).get<std::string>(), tc.at(1).get<std::string>(), tc.at(2).get<std::string>(),
                      tc.at(3).get<std::string>(), tc.at(4).get<std::string>(), tc.at(5).get<std::vector<std::string>>()};
    for (const auto& pj : j.at("packages")) {
        LockedPackage p;
        int kind = pj.at(0).get<int>();
        if (kind < 0 || kind > static_cast<int>(Ecosystem::source)) throw InputError("resolve memo: bad package kind");
        p.kind = static_cast<Ecosystem>(kind);
        p.url = pj.at(1).get<std::string>();
        p.name = pj.at(2).get<std::string>();
        p.version = pj.at(3).get<std::string>();
        p.build = pj.at(4).get<std::string>();
        p.build_number = pj.at(5).get<int>();
        p.sha256 = pj.at(6).get<std::string>();
        p.md5 = pj.at(7).get<std::string>();
        p.size = pj.at(8).get<std::uint64_t>();
        p.channel = pj.at(9).get<std::string>();
        p.subdir = pj.at(10).get<std::string>();
        p.rev = pj.at(11).get<std::string>();
        p.depends = pj.at(12).get<std::vector<std::string>>();
        p.depends_unknown = pj.at(13).get<bool>();
        p.requested_by = pj.at(14).get<std::vector<std::string>>();
        if (pj.size() > 15) {
            const auto& c = pj.at(15);
            p.cuda = LockedCuda{c.at(0).get<std::string>(), c.at(1).get<std::vector<int>>(), c.at(2).get<std::vector<int>>()};
        }
        lock.packages.push_back(std::move(p));
    }
    for (const auto& d : j.at("decisions"))
        lock.decisions.push_back({d.at(0).get<std::string>(), d.at(1).get<std::string>(), d.at(2).get<std::string>()});
    for (const auto& w : j.at("warnings"))
        lock.warnings.push_back({w.at(0).get<std::string>(), w.at(1).get<std::string>(), w.at(2).get<std::string>(),
                                 w.at(3).get<std::string>(), w.at(4).get<std::string>()});
    if (auto v = j.find("verified"); v != j.end())
        lock.verified = LockVerified{v->at(0).get<std::string>(), v->at(1).get<std::string>(), v->at(2).get<std::string>(),
                                     v->at(3).get<std::string>(), v->at(4).get<std::string>(),
                                     v->at(5).get<std::vector<std::string>>(), v->at(6).get<std::string>(),
                                     v->at(7).get<std::vector<std::string>>()};
    return lock;
}

std::string set_verified(std::string_view yaml_text, const LockVerified& verified) {
    // Text surgery rather than a rewrite: every byte of the lock outside the block stays as
    // resolve wrote it (and the content hash does not cover the block).
    std::string text(yaml_text);
    size_t at = text.rfind("\nverified:");
    if (text.rfind("verified:", 0) == 0) at = 0;
    else if (at != std::string::npos) ++at;
    if (at != std::string::npos) {
        size_t end = at;
        while (true) {
            size_t nl = text.find('\n', end);
            if (nl == std::string::npos) { end = text.size(); break; }
            end = nl + 1;
            if (end >= text.size() || (text[end] != ' ' && text[end] != '\n')) break;
        }
        text.erase(at, end - at);
    }
    if (!text.empty() && text.back() != '\n') text.push_back('\n');
    YAML::Emitter out;
    out << YAML::BeginMap;
    emit_verified(out, verified);
    out << YAML::EndMap;
    return text + out.c_str() + "\n";
}

}  // namespace envlock
