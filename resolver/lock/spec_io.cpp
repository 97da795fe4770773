#include "resolver/lock/spec_io.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/url_credentials.hpp"
#include "resolver/specs/utf8.hpp"

namespace envlock {

bool valid_channel_priority(std::string_view value) {
    return value == "strict" || value == "flexible" || value == "disabled";
}

namespace {
bool is_url(std::string_view s) { return s.rfind("https://", 0) == 0 || s.rfind("http://", 0) == 0; }
}  // namespace

std::string source_project_dir(const SpecSource& s) {
    const std::string cd = "cd ";
    if (s.install.rfind(cd, 0) != 0) return "";
    auto end = s.install.find("&&");
    std::string dir = s.install.substr(cd.size(), end == std::string::npos ? std::string::npos : end - cd.size());
    while (!dir.empty() && (dir.back() == ' ' || dir.back() == '/')) dir.pop_back();
    return dir == "." ? "" : dir;
}

// An upstream file is cited by its URL with GitHub's line anchor (".../docs/install.md#L13"),
// a file of the checkout as path:line.
std::string format_provenance(const Provenance& p) {
    if (p.file.empty()) return {};
    if (p.line <= 0) return p.file;
    if (is_url(p.file)) return p.file + "#L" + std::to_string(p.line);
    return p.file + ":" + std::to_string(p.line);
}

Provenance parse_provenance(std::string_view text) {
    Provenance p;
    if (is_url(text)) {
        auto anchor = text.rfind("#L");
        if (anchor != std::string_view::npos && anchor + 2 < text.size() && text.size() - anchor - 2 <= 9 &&
            std::all_of(text.begin() + anchor + 2, text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            p.file = std::string(text.substr(0, anchor));
            p.line = std::stoi(std::string(text.substr(anchor + 2)));
        } else {
            p.file = std::string(text);
        }
        return p;
    }
    auto colon = text.rfind(':');
    if (colon != std::string_view::npos && colon + 1 < text.size() &&
        std::all_of(text.begin() + colon + 1, text.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        text.size() - colon - 1 <= 9) {
        p.file = std::string(text.substr(0, colon));
        p.line = std::stoi(std::string(text.substr(colon + 1)));
    } else {
        p.file = std::string(text);
    }
    return p;
}

std::optional<std::string> requirement_problem(const SpecRequirement& r) {
    std::string pypi_error, conda_error;
    if (r.ecosystem != "conda") {
        try {
            pep508::Requirement::parse(r.text);
            return std::nullopt;
        } catch (const std::exception& e) {
            pypi_error = e.what();
        }
    }
    if (r.ecosystem != "pypi") {
        try {
            conda::MatchSpec::parse(r.text);
            return std::nullopt;
        } catch (const std::exception& e) {
            conda_error = e.what();
        }
    }
    if (r.ecosystem == "conda") return conda_error;
    if (r.ecosystem == "pypi") return pypi_error;
    return "neither a PEP 508 requirement nor a conda MatchSpec: " + pypi_error;
}

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

// A plain scalar that another YAML reader would take for a number, bool or null ("3.8" would
// become a float and "3.10" would become 3.1) is quoted, so the lock means the same everywhere.
bool needs_quotes(std::string_view s) {
    if (s.empty()) return true;
    std::string lower;
    for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* word : {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"})
        if (lower == word) return true;
    bool numeric = std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' || c == 'e' ||
               c == 'E' || c == '_' || c == ':';
    });
    return numeric;
}

// Every string of a spec passes here on its way out (and into the content hash), so a
// credential typed into an index URL or a documented command never reaches a lock.
void scalar(YAML::Emitter& out, const std::string& text) {
    std::string s = strip_url_credentials(text);
    if (needs_quotes(s))
        out << YAML::DoubleQuoted << s;
    else
        out << s;
}

void string_list(YAML::Emitter& out, const char* key, const std::vector<std::string>& items) {
    if (items.empty()) return;
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& item : items) scalar(out, item);
    out << YAML::EndSeq;
}

void from_field(YAML::Emitter& out, const Provenance& p) {
    auto text = format_provenance(p);
    if (text.empty()) return;
    out << YAML::Key << "from" << YAML::Value;
    scalar(out, text);
}

void requirement(YAML::Emitter& out, const SpecRequirement& r) {
    auto from = format_provenance(r.from);
    if (r.ecosystem.empty() && from.empty()) {
        scalar(out, r.text);
        return;
    }
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << (r.ecosystem.empty() ? std::string("any") : r.ecosystem) << YAML::Value;
    scalar(out, r.text);
    from_field(out, r.from);
    out << YAML::EndMap;
}

void keyed(YAML::Emitter& out, const char* key, const std::string& value) {
    if (value.empty()) return;
    out << YAML::Key << key << YAML::Value;
    scalar(out, value);
}

}  // namespace

void emit_spec(YAML::Emitter& out, const Spec& spec) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value;
    scalar(out, spec.name);
    string_list(out, "inferred-from", spec.inferred_from);
    if (!spec.python.empty()) {
        out << YAML::Key << "python" << YAML::Value << YAML::DoubleQuoted << spec.python;
        keyed(out, "python-from", format_provenance(spec.python_from));
    }
    string_list(out, "channels", spec.channels);
    if (!spec.channel_priority.empty()) keyed(out, "channel-priority", spec.channel_priority);
    string_list(out, "indexes", spec.indexes);
    string_list(out, "find-links", spec.find_links);

    out << YAML::Key << "requirements" << YAML::Value;
    if (spec.requirements.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
    } else {
        out << YAML::BeginSeq;
        for (const auto& r : spec.requirements) requirement(out, r);
        out << YAML::EndSeq;
    }

    if (!spec.sources.empty()) {
        out << YAML::Key << "sources" << YAML::Value << YAML::BeginSeq;
        for (const auto& s : spec.sources) {
            out << YAML::Flow << YAML::BeginMap;
            keyed(out, "name", s.name);
            keyed(out, "git", s.git);
            keyed(out, "rev", s.rev);
            keyed(out, "install", s.install);
            from_field(out, s.from);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    if (!spec.extensions.empty()) {
        out << YAML::Key << "extensions" << YAML::Value << YAML::BeginSeq;
        for (const auto& e : spec.extensions) {
            out << YAML::Flow << YAML::BeginMap;
            keyed(out, "name", e.name);
            keyed(out, "in", e.in);
            keyed(out, "build", e.build);
            keyed(out, "import", e.import);
            if (e.cuda) out << YAML::Key << "cuda" << YAML::Value << true;
            from_field(out, e.from);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    if (!spec.env.empty()) {
        out << YAML::Key << "env" << YAML::Value << YAML::Flow << YAML::BeginMap;
        for (const auto& [k, v] : spec.env) {
            out << YAML::Key << k << YAML::Value;
            scalar(out, v);
        }
        out << YAML::EndMap;
    }
    string_list(out, "allow-advisories", spec.allow_advisories);
    string_list(out, "allow-missing", spec.allow_missing);
    string_list(out, "uses", spec.uses);
    if (!spec.notes.empty()) {
        out << YAML::Key << "notes" << YAML::Value << YAML::BeginSeq;
        for (const auto& n : spec.notes) {
            out << YAML::Flow << YAML::BeginMap;
            keyed(out, "kind", n.kind);
            keyed(out, "text", n.text);
            keyed(out, "why", n.why);
            from_field(out, n.from);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    if (!spec.contradictions.empty()) {
        out << YAML::Key << "contradictions" << YAML::Value << YAML::BeginSeq;
        for (const auto& c : spec.contradictions) {
            out << YAML::BeginMap;
            keyed(out, "name", c.name);
            out << YAML::Key << "first" << YAML::Value;
            requirement(out, c.first);
            out << YAML::Key << "second" << YAML::Value;
            requirement(out, c.second);
            keyed(out, "why", c.why);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    out << YAML::EndMap;
}

std::string spec_to_yaml_text(const Spec& spec) {
    YAML::Emitter out;
    emit_spec(out, spec);
    return std::string(out.c_str()) + "\n";
}

YAML::Node spec_to_yaml(const Spec& spec) {
    // Loading the emitted text keeps the flow/block styles on the nodes. A node cannot hold
    // the quotes around "3.8", so emit_spec is the byte-exact path for writing files.
    return YAML::Load(spec_to_yaml_text(spec));
}

// ---------------------------------------------------------------------------------------------
// Reading

namespace {

struct Reader {
    std::string file;

    [[noreturn]] void fail(const YAML::Node& at, const std::string& path, const std::string& what) const {
        std::string where = file;
        auto mark = at.Mark();
        if (mark.line >= 0) where += ":" + std::to_string(mark.line + 1);
        throw InputError(where + ": " + path + ": " + what);
    }

    std::string string(const YAML::Node& n, const std::string& path) const {
        if (!n.IsScalar()) fail(n, path, "expected a string");
        // yaml-cpp decodes the escapes "\_", "\N", "\L", "\P" to single bytes, not UTF-8.
        if (utf8::invalid_at(n.Scalar())) fail(n, path, "expected UTF-8 text (an escape such as \"\\_\" decodes to a lone byte)");
        return n.Scalar();
    }

    std::vector<std::string> strings(const YAML::Node& n, const std::string& path) const {
        if (n.IsNull()) return {};
        if (!n.IsSequence()) fail(n, path, "expected a list of strings");
        std::vector<std::string> out;
        for (std::size_t i = 0; i < n.size(); ++i)
            out.push_back(string(n[i], path + "[" + std::to_string(i) + "]"));
        return out;
    }

    void only_keys(const YAML::Node& n, const std::string& path, std::initializer_list<const char*> keys) const {
        for (auto it = n.begin(); it != n.end(); ++it) {
            // A copy: yaml-cpp's iterator hands out a temporary pair, so a reference dangles.
            const YAML::Node key = it->first;
            if (!key.IsScalar()) fail(key, path, "expected string keys");
            bool known = std::any_of(keys.begin(), keys.end(), [&](const char* k) { return key.Scalar() == k; });
            if (!known) {
                std::string list;
                for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
                fail(key, path, "unknown key '" + key.Scalar() + "' (expected one of: " + list + ")");
            }
        }
    }

    Provenance from(const YAML::Node& map, const std::string& path) const {
        auto n = map["from"];
        if (!n) return {};
        return parse_provenance(string(n, path + ".from"));
    }

    SpecRequirement requirement(const YAML::Node& n, const std::string& path) const {
        SpecRequirement r;
        if (n.IsScalar()) {
            r.text = n.Scalar();
            if (r.text.empty()) fail(n, path, "empty requirement");
            if (auto problem = requirement_problem(r)) fail(n, path, *problem);
            return r;
        }
        if (!n.IsMap()) fail(n, path, "expected a string or a map with pypi:/conda:/any:");
        only_keys(n, path, {"pypi", "conda", "any", "from"});
        int found = 0;
        for (const char* eco : {"pypi", "conda", "any"}) {
            if (auto v = n[eco]) {
                ++found;
                r.text = string(v, path + "." + eco);
                r.ecosystem = std::string(eco) == "any" ? "" : eco;
                if (r.text.empty()) fail(v, path + "." + eco, "empty requirement");
            }
        }
        if (found != 1) fail(n, path, "expected a string or a map with exactly one of pypi:/conda:/any:");
        r.from = from(n, path);
        if (auto problem = requirement_problem(r)) fail(n, path, *problem);
        return r;
    }

    template <class F>
    void each_map(const YAML::Node& seq, const std::string& path, const char* what, F f) const {
        if (!seq || seq.IsNull()) return;
        if (!seq.IsSequence()) fail(seq, path, std::string("expected a list of ") + what);
        for (std::size_t i = 0; i < seq.size(); ++i) {
            auto item_path = path + "[" + std::to_string(i) + "]";
            if (!seq[i].IsMap()) fail(seq[i], item_path, std::string("expected a map (") + what + ")");
            f(seq[i], item_path);
        }
    }

    std::string optional(const YAML::Node& map, const char* key, const std::string& path) const {
        auto v = map[key];
        if (!v) return {};
        return string(v, path + "." + key);
    }

    std::string required(const YAML::Node& map, const char* key, const std::string& path) const {
        auto v = map[key];
        if (!v) fail(map, path, std::string("missing '") + key + "'");
        auto s = string(v, path + "." + key);
        if (s.empty()) fail(v, path + "." + key, "must not be empty");
        return s;
    }
};

}  // namespace

Spec spec_from_yaml(const YAML::Node& node, std::string_view file) {
    Reader rd{std::string(file)};
    if (!node.IsMap()) rd.fail(node, "spec", "expected a map");
    rd.only_keys(node, "spec",
                 {"name", "inferred-from", "python", "python-from", "channels", "channel-priority", "indexes", "find-links", "requirements", "sources",
                  "extensions", "env", "allow-advisories", "allow-missing", "uses", "notes", "contradictions"});
    Spec spec;
    if (auto n = node["name"]) spec.name = rd.string(n, "spec.name");
    if (auto n = node["inferred-from"]) spec.inferred_from = rd.strings(n, "spec.inferred-from");
    if (auto n = node["python"]) spec.python = rd.string(n, "spec.python");
    if (auto n = node["python-from"]) spec.python_from = parse_provenance(rd.string(n, "spec.python-from"));
    if (auto n = node["channels"]) spec.channels = rd.strings(n, "spec.channels");
    if (auto n = node["channel-priority"]) {
        spec.channel_priority = rd.string(n, "spec.channel-priority");
        if (!valid_channel_priority(spec.channel_priority))
            rd.fail(n, "spec.channel-priority", "expected strict, flexible or disabled (conda's channel_priority)");
    }
    if (auto n = node["indexes"]) spec.indexes = rd.strings(n, "spec.indexes");
    if (auto n = node["find-links"]) spec.find_links = rd.strings(n, "spec.find-links");
    if (auto n = node["requirements"]; n && !n.IsNull()) {
        if (!n.IsSequence()) rd.fail(n, "spec.requirements", "expected a list");
        for (std::size_t i = 0; i < n.size(); ++i)
            spec.requirements.push_back(rd.requirement(n[i], "spec.requirements[" + std::to_string(i) + "]"));
    }
    rd.each_map(node["sources"], "spec.sources", "name:, git:, rev:", [&](const YAML::Node& m, const std::string& p) {
        rd.only_keys(m, p, {"name", "git", "rev", "install", "from"});
        SpecSource s;
        s.name = rd.required(m, "name", p);
        s.git = rd.required(m, "git", p);
        s.rev = rd.optional(m, "rev", p);
        s.install = rd.optional(m, "install", p);
        s.from = rd.from(m, p);
        spec.sources.push_back(std::move(s));
    });
    rd.each_map(node["extensions"], "spec.extensions", "name:, in:, build:, import:",
                [&](const YAML::Node& m, const std::string& p) {
                    rd.only_keys(m, p, {"name", "in", "build", "import", "cuda", "from"});
                    SpecExtension e;
                    e.name = rd.required(m, "name", p);
                    e.in = rd.optional(m, "in", p);
                    e.build = rd.required(m, "build", p);
                    e.import = rd.optional(m, "import", p);
                    if (auto c = m["cuda"]) {
                        auto v = rd.string(c, p + ".cuda");
                        if (v == "true")
                            e.cuda = true;
                        else if (v != "false")
                            rd.fail(c, p + ".cuda", "expected true or false");
                    }
                    e.from = rd.from(m, p);
                    spec.extensions.push_back(std::move(e));
                });
    if (auto n = node["env"]; n && !n.IsNull()) {
        if (!n.IsMap()) rd.fail(n, "spec.env", "expected a map of NAME: value");
        for (auto it = n.begin(); it != n.end(); ++it) {
            auto key = rd.string(it->first, "spec.env");
            spec.env[key] = rd.string(it->second, "spec.env." + key);
        }
    }
    if (auto n = node["allow-advisories"]) spec.allow_advisories = rd.strings(n, "spec.allow-advisories");
    if (auto n = node["allow-missing"]) spec.allow_missing = rd.strings(n, "spec.allow-missing");
    if (auto n = node["uses"]) spec.uses = rd.strings(n, "spec.uses");
    rd.each_map(node["notes"], "spec.notes", "kind:, text:", [&](const YAML::Node& m, const std::string& p) {
        rd.only_keys(m, p, {"kind", "text", "why", "from"});
        SpecNote note;
        note.kind = rd.required(m, "kind", p);
        note.text = rd.required(m, "text", p);
        note.why = rd.optional(m, "why", p);
        note.from = rd.from(m, p);
        spec.notes.push_back(std::move(note));
    });
    rd.each_map(node["contradictions"], "spec.contradictions", "name:, first:, second:",
                [&](const YAML::Node& m, const std::string& p) {
                    rd.only_keys(m, p, {"name", "first", "second", "why"});
                    SpecContradiction c;
                    c.name = rd.required(m, "name", p);
                    if (!m["first"]) rd.fail(m, p, "missing 'first'");
                    if (!m["second"]) rd.fail(m, p, "missing 'second'");
                    c.first = rd.requirement(m["first"], p + ".first");
                    c.second = rd.requirement(m["second"], p + ".second");
                    c.why = rd.optional(m, "why", p);
                    spec.contradictions.push_back(std::move(c));
                });
    return spec;
}

Spec spec_from_yaml_text(std::string_view text, std::string_view file) {
    utf8::require(text, file);
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
        std::string where(file);
        if (e.mark.line >= 0) where += ":" + std::to_string(e.mark.line + 1);
        throw InputError(where + ": not valid YAML: " + e.msg);
    }
    if (root.IsMap() && root["spec"]) return spec_from_yaml(root["spec"], file);
    return spec_from_yaml(root, file);
}

// ---------------------------------------------------------------------------------------------
// JSON: one uniform shape per entry (no plain-string shorthand), for programs to read.

namespace {

nlohmann::json provenance_json(const Provenance& p) {
    if (p.file.empty()) return nullptr;
    return {{"file", p.file}, {"line", p.line}};
}

nlohmann::json requirement_json(const SpecRequirement& r) {
    return {{"text", r.text}, {"ecosystem", r.ecosystem}, {"from", provenance_json(r.from)}};
}

struct JsonReader {
    std::string file;

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw InputError(file + ": " + path + ": " + what);
    }
    const nlohmann::json* member(const nlohmann::json& obj, const char* key) const {
        auto it = obj.find(key);
        if (it == obj.end() || it->is_null()) return nullptr;
        return &*it;
    }
    std::string string(const nlohmann::json& obj, const char* key, const std::string& path) const {
        auto* v = member(obj, key);
        if (!v) return {};
        if (!v->is_string()) fail(path + "." + key, "expected a string");
        return v->get<std::string>();
    }
    std::vector<std::string> strings(const nlohmann::json& obj, const char* key, const std::string& path) const {
        auto* v = member(obj, key);
        if (!v) return {};
        if (!v->is_array()) fail(path + "." + key, "expected an array of strings");
        std::vector<std::string> out;
        for (std::size_t i = 0; i < v->size(); ++i) {
            if (!(*v)[i].is_string()) fail(path + "." + key + "[" + std::to_string(i) + "]", "expected a string");
            out.push_back((*v)[i].get<std::string>());
        }
        return out;
    }
    Provenance from(const nlohmann::json& obj, const std::string& path) const {
        auto* v = member(obj, "from");
        if (!v) return {};
        if (!v->is_object()) fail(path + ".from", "expected {file, line}");
        Provenance p;
        p.file = string(*v, "file", path + ".from");
        if (auto* line = member(*v, "line")) {
            if (!line->is_number_integer()) fail(path + ".from.line", "expected an integer");
            p.line = line->get<int>();
        }
        return p;
    }
    SpecRequirement requirement(const nlohmann::json& v, const std::string& path) const {
        if (!v.is_object()) fail(path, "expected an object with text, ecosystem, from");
        SpecRequirement r;
        r.text = string(v, "text", path);
        if (r.text.empty()) fail(path + ".text", "empty requirement");
        r.ecosystem = string(v, "ecosystem", path);
        if (!r.ecosystem.empty() && r.ecosystem != "pypi" && r.ecosystem != "conda")
            fail(path + ".ecosystem", "expected \"pypi\", \"conda\" or \"\"");
        r.from = from(v, path);
        if (auto problem = requirement_problem(r)) fail(path, *problem);
        return r;
    }
    template <class F>
    void each(const nlohmann::json& obj, const char* key, const std::string& path, F f) const {
        auto* v = member(obj, key);
        if (!v) return;
        if (!v->is_array()) fail(path + "." + key, "expected an array");
        for (std::size_t i = 0; i < v->size(); ++i) {
            auto p = path + "." + key + "[" + std::to_string(i) + "]";
            if (!(*v)[i].is_object()) fail(p, "expected an object");
            f((*v)[i], p);
        }
    }
};

void strip_credentials_in(nlohmann::json& j) {
    if (j.is_string())
        j = strip_url_credentials(j.get_ref<const std::string&>());
    else if (j.is_structured())
        for (auto& item : j) strip_credentials_in(item);
}

}  // namespace

nlohmann::json spec_to_json(const Spec& spec) {
    nlohmann::json j;
    j["name"] = spec.name;
    j["inferred-from"] = spec.inferred_from;
    j["python"] = spec.python;
    j["python-from"] = format_provenance(spec.python_from);
    j["channels"] = spec.channels;
    if (!spec.channel_priority.empty()) j["channel-priority"] = spec.channel_priority;
    j["indexes"] = spec.indexes;
    j["find-links"] = spec.find_links;
    j["requirements"] = nlohmann::json::array();
    for (const auto& r : spec.requirements) j["requirements"].push_back(requirement_json(r));
    j["sources"] = nlohmann::json::array();
    for (const auto& s : spec.sources)
        j["sources"].push_back({{"name", s.name},
                                {"git", s.git},
                                {"rev", s.rev},
                                {"install", s.install},
                                {"from", provenance_json(s.from)}});
    j["extensions"] = nlohmann::json::array();
    for (const auto& e : spec.extensions)
        j["extensions"].push_back({{"name", e.name},
                                   {"in", e.in},
                                   {"build", e.build},
                                   {"import", e.import},
                                   {"cuda", e.cuda},
                                   {"from", provenance_json(e.from)}});
    j["env"] = nlohmann::json::object();
    for (const auto& [k, v] : spec.env) j["env"][k] = v;
    j["allow-advisories"] = spec.allow_advisories;
    j["allow-missing"] = spec.allow_missing;
    j["uses"] = spec.uses;
    j["notes"] = nlohmann::json::array();
    for (const auto& n : spec.notes)
        j["notes"].push_back({{"kind", n.kind}, {"text", n.text}, {"why", n.why}, {"from", provenance_json(n.from)}});
    j["contradictions"] = nlohmann::json::array();
    for (const auto& c : spec.contradictions)
        j["contradictions"].push_back({{"name", c.name},
                                       {"first", requirement_json(c.first)},
                                       {"second", requirement_json(c.second)},
                                       {"why", c.why}});
    strip_credentials_in(j);
    return j;
}

Spec spec_from_json(const nlohmann::json& j, std::string_view file) {
    JsonReader rd{std::string(file)};
    if (!j.is_object()) rd.fail("spec", "expected an object");
    Spec spec;
    spec.name = rd.string(j, "name", "spec");
    spec.inferred_from = rd.strings(j, "inferred-from", "spec");
    spec.python = rd.string(j, "python", "spec");
    spec.python_from = parse_provenance(rd.string(j, "python-from", "spec"));
    spec.channels = rd.strings(j, "channels", "spec");
    spec.channel_priority = rd.string(j, "channel-priority", "spec");
    if (!spec.channel_priority.empty() && !valid_channel_priority(spec.channel_priority))
        rd.fail("spec.channel-priority", "expected strict, flexible or disabled (conda's channel_priority)");
    spec.indexes = rd.strings(j, "indexes", "spec");
    spec.find_links = rd.strings(j, "find-links", "spec");
    if (auto* reqs = rd.member(j, "requirements")) {
        if (!reqs->is_array()) rd.fail("spec.requirements", "expected an array");
        for (std::size_t i = 0; i < reqs->size(); ++i)
            spec.requirements.push_back(rd.requirement((*reqs)[i], "spec.requirements[" + std::to_string(i) + "]"));
    }
    rd.each(j, "sources", "spec", [&](const nlohmann::json& v, const std::string& p) {
        spec.sources.push_back({rd.string(v, "name", p), rd.string(v, "git", p), rd.string(v, "rev", p), rd.from(v, p),
                                rd.string(v, "install", p)});
    });
    rd.each(j, "extensions", "spec", [&](const nlohmann::json& v, const std::string& p) {
        SpecExtension e{rd.string(v, "name", p), rd.string(v, "in", p), rd.string(v, "build", p),
                        rd.string(v, "import", p), rd.from(v, p)};
        if (auto* c = rd.member(v, "cuda")) {
            if (!c->is_boolean()) rd.fail(p + ".cuda", "expected true or false");
            e.cuda = c->get<bool>();
        }
        spec.extensions.push_back(std::move(e));
    });
    if (auto* env = rd.member(j, "env")) {
        if (!env->is_object()) rd.fail("spec.env", "expected an object");
        for (auto it = env->begin(); it != env->end(); ++it) {
            if (!it->is_string()) rd.fail("spec.env." + it.key(), "expected a string");
            spec.env[it.key()] = it->get<std::string>();
        }
    }
    spec.allow_advisories = rd.strings(j, "allow-advisories", "spec");
    spec.allow_missing = rd.strings(j, "allow-missing", "spec");
    spec.uses = rd.strings(j, "uses", "spec");
    rd.each(j, "notes", "spec", [&](const nlohmann::json& v, const std::string& p) {
        spec.notes.push_back({rd.string(v, "kind", p), rd.string(v, "text", p), rd.string(v, "why", p), rd.from(v, p)});
    });
    rd.each(j, "contradictions", "spec", [&](const nlohmann::json& v, const std::string& p) {
        SpecContradiction c;
        c.name = rd.string(v, "name", p);
        if (!rd.member(v, "first") || !rd.member(v, "second")) rd.fail(p, "expected first and second");
        c.first = rd.requirement(v["first"], p + ".first");
        c.second = rd.requirement(v["second"], p + ".second");
        c.why = rd.string(v, "why", p);
        spec.contradictions.push_back(std::move(c));
    });
    return spec;
}

}  // namespace envlock
