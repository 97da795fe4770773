#include "resolver/lock/json_schema.hpp"

#include <map>
#include <memory>
#include <regex>
#include <set>

namespace envlock {
namespace {

using nlohmann::json;

const std::set<std::string>& known_keywords() {
    static const std::set<std::string> k = {
        "$schema", "$id", "$ref", "$comment", "title", "description", "definitions", "default",
        "examples", "type", "properties", "required", "additionalProperties", "items", "enum",
        "const", "pattern", "minimum", "maximum", "minItems", "minLength", "uniqueItems",
        "oneOf", "anyOf", "allOf"};
    return k;
}

std::string escape_pointer_token(const std::string& token) {
    std::string out;
    for (char c : token) {
        if (c == '~') out += "~0";
        else if (c == '/') out += "~1";
        else out += c;
    }
    return out;
}

std::string type_name(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return "boolean";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return "integer";
        case json::value_t::number_float: return "number";
        case json::value_t::string: return "string";
        case json::value_t::array: return "array";
        case json::value_t::object: return "object";
        default: return "unknown";
    }
}

bool has_type(const json& v, const std::string& t) {
    if (t == "number") return v.is_number();
    if (t == "integer") {
        if (v.is_number_integer()) return true;
        if (v.is_number_float()) {
            double d = v.get<double>();
            return d == static_cast<double>(static_cast<long long>(d));
        }
        return false;
    }
    return type_name(v) == t;
}

std::string short_value(const json& v) {
    std::string s = v.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

struct Validator {
    const json& root;
    std::vector<SchemaViolation>& out;
    int depth = 0;
    // Compiled patterns, shared with sub-validators (std::regex construction is slow).
    std::shared_ptr<std::map<std::string, std::regex>> regexes = std::make_shared<std::map<std::string, std::regex>>();

    void fail(const std::string& path, const std::string& message) { out.push_back({path, message}); }

    const json* resolve_ref(const std::string& ref, const std::string& path) {
        const std::string prefix = "#/definitions/";
        if (ref.rfind(prefix, 0) != 0) {
            fail(path, "schema: unsupported $ref '" + ref + "' (only #/definitions/NAME)");
            return nullptr;
        }
        std::string name = ref.substr(prefix.size());
        auto defs = root.find("definitions");
        if (defs == root.end() || !defs->is_object() || !defs->contains(name)) {
            fail(path, "schema: $ref to missing definition '" + name + "'");
            return nullptr;
        }
        return &(*defs)[name];
    }

    // Validates without recording (for oneOf/anyOf branches).
    bool passes(const json& schema, const json& doc, const std::string& path) {
        std::vector<SchemaViolation> scratch;
        Validator sub{root, scratch, depth, regexes};
        sub.check(schema, doc, path);
        return scratch.empty();
    }

    void check(const json& schema, const json& doc, const std::string& path) {
        if (++depth > 64) {
            fail(path, "schema: $ref nesting deeper than 64");
            --depth;
            return;
        }
        check_inner(schema, doc, path);
        --depth;
    }

    void check_inner(const json& schema, const json& doc, const std::string& path) {
        if (schema.is_boolean()) {
            if (!schema.get<bool>()) fail(path, "no value is allowed here");
            return;
        }
        if (!schema.is_object()) {
            fail(path, "schema: a schema must be an object or a boolean");
            return;
        }
        for (const auto& [key, _] : schema.items())
            if (!known_keywords().count(key)) fail(path, "schema: unsupported keyword '" + key + "'");

        if (auto it = schema.find("$ref"); it != schema.end()) {
            if (const json* target = resolve_ref(it->get<std::string>(), path)) check(*target, doc, path);
        }

        if (auto it = schema.find("type"); it != schema.end()) {
            std::vector<std::string> types;
            if (it->is_string()) types.push_back(it->get<std::string>());
            else if (it->is_array()) for (const auto& t : *it) types.push_back(t.get<std::string>());
            bool ok = false;
            for (const auto& t : types) ok = ok || has_type(doc, t);
            if (!ok) {
                std::string expected;
                for (const auto& t : types) expected += (expected.empty() ? "" : " or ") + t;
                fail(path, "expected " + expected + ", got " + type_name(doc));
                return;  // further keywords would only repeat the type error
            }
        }

        if (auto it = schema.find("enum"); it != schema.end()) {
            bool found = false;
            for (const auto& e : *it) found = found || e == doc;
            if (!found) fail(path, "value " + short_value(doc) + " is not one of " + short_value(*it));
        }
        if (auto it = schema.find("const"); it != schema.end() && *it != doc)
            fail(path, "expected " + short_value(*it) + ", got " + short_value(doc));

        if (doc.is_string()) check_string(schema, doc.get<std::string>(), path);
        if (doc.is_number()) check_number(schema, doc.get<double>(), path);
        if (doc.is_object()) check_object(schema, doc, path);
        if (doc.is_array()) check_array(schema, doc, path);

        if (auto it = schema.find("allOf"); it != schema.end())
            for (const auto& s : *it) check(s, doc, path);
        if (auto it = schema.find("anyOf"); it != schema.end()) {
            bool any = false;
            for (const auto& s : *it) any = any || passes(s, doc, path);
            if (!any) fail(path, "value matches none of the allowed forms (anyOf)");
        }
        if (auto it = schema.find("oneOf"); it != schema.end()) {
            int matches = 0;
            for (const auto& s : *it) matches += passes(s, doc, path) ? 1 : 0;
            if (matches != 1)
                fail(path, matches == 0 ? "value matches none of the allowed forms (oneOf)"
                                        : "value matches more than one form (oneOf)");
        }
    }

    void check_string(const json& schema, const std::string& s, const std::string& path) {
        if (auto it = schema.find("minLength"); it != schema.end() && s.size() < it->get<std::size_t>())
            fail(path, "string shorter than " + std::to_string(it->get<std::size_t>()));
        if (auto it = schema.find("pattern"); it != schema.end()) {
            try {
                const std::string& pattern = it->get<std::string>();
                auto found = regexes->find(pattern);
                if (found == regexes->end())
                    found = regexes->emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
                if (!std::regex_search(s, found->second))
                    fail(path, "\"" + s + "\" does not match pattern " + it->get<std::string>());
            } catch (const std::regex_error&) {
                fail(path, "schema: invalid pattern " + it->get<std::string>());
            }
        }
    }

    void check_number(const json& schema, double v, const std::string& path) {
        if (auto it = schema.find("minimum"); it != schema.end() && v < it->get<double>())
            fail(path, "value " + short_value(v) + " is below the minimum " + short_value(*it));
        if (auto it = schema.find("maximum"); it != schema.end() && v > it->get<double>())
            fail(path, "value " + short_value(v) + " is above the maximum " + short_value(*it));
    }

    void check_object(const json& schema, const json& doc, const std::string& path) {
        if (auto it = schema.find("required"); it != schema.end())
            for (const auto& name : *it)
                if (!doc.contains(name.get<std::string>()))
                    fail(path, "missing required property '" + name.get<std::string>() + "'");
        const json* props = nullptr;
        if (auto it = schema.find("properties"); it != schema.end()) props = &*it;
        auto additional = schema.find("additionalProperties");
        for (const auto& [key, value] : doc.items()) {
            std::string sub = path + "/" + escape_pointer_token(key);
            if (props && props->contains(key)) {
                check((*props)[key], value, sub);
            } else if (additional != schema.end()) {
                if (additional->is_boolean()) {
                    if (!additional->get<bool>()) fail(sub, "unexpected property '" + key + "'");
                } else {
                    check(*additional, value, sub);
                }
            }
        }
    }

    void check_array(const json& schema, const json& doc, const std::string& path) {
        if (auto it = schema.find("minItems"); it != schema.end() && doc.size() < it->get<std::size_t>())
            fail(path, "expected at least " + std::to_string(it->get<std::size_t>()) + " items");
        if (auto it = schema.find("uniqueItems"); it != schema.end() && it->get<bool>()) {
            for (std::size_t i = 0; i < doc.size(); ++i)
                for (std::size_t j = i + 1; j < doc.size(); ++j)
                    if (doc[i] == doc[j]) fail(path + "/" + std::to_string(j), "duplicate item " + short_value(doc[j]));
        }
        if (auto it = schema.find("items"); it != schema.end()) {
            if (it->is_array()) {
                fail(path, "schema: tuple-form items is not supported");
                return;
            }
            for (std::size_t i = 0; i < doc.size(); ++i) check(*it, doc[i], path + "/" + std::to_string(i));
        }
    }
};

}  // namespace

std::vector<SchemaViolation> validate(const nlohmann::json& schema, const nlohmann::json& doc) {
    std::vector<SchemaViolation> out;
    Validator v{schema, out};
    try {
        v.check(schema, doc, "");
    } catch (const nlohmann::json::exception& e) {
        // A schema keyword holding the wrong JSON type (e.g. "required": "x").
        out.push_back({"", std::string("schema: malformed schema (") + e.what() + ")"});
    }
    return out;
}

std::string describe(const std::vector<SchemaViolation>& violations, std::size_t limit) {
    std::string text;
    for (std::size_t i = 0; i < violations.size() && i < limit; ++i) {
        if (!text.empty()) text += "; ";
        text += (violations[i].path.empty() ? "/" : violations[i].path) + ": " + violations[i].message;
    }
    if (violations.size() > limit) text += "; and " + std::to_string(violations.size() - limit) + " more";
    return text;
}

}  // namespace envlock
