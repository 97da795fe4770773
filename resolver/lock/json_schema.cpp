#include "resolver/lock/json_schema.hpp"

#include <algorithm>
#include <stdexcept>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

namespace envlock {
namespace {

using nlohmann::json;

std::string escape_pointer_token(const std::string& token) {
    std::string out;
    for (char c : token) {
        if (c == '~') out += "~0";
        else if (c == '/') out += "~1";
        else out += c;
    }
    return out;
}

// valijson names a value by a context path: "<root>", "[packages]", "[1]", "[sha256]".
std::string pointer_of(const std::vector<std::string>& context) {
    std::string pointer;
    for (const std::string& part : context) {
        if (part == "<root>") continue;
        std::string token = part;
        if (token.size() >= 2 && token.front() == '[' && token.back() == ']') token = token.substr(1, token.size() - 2);
        pointer += "/" + escape_pointer_token(token);
    }
    return pointer;
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// valijson follows every failing child with a summary at its parent ("Failed to validate item
// #1 in array."); the child already names the value, so the summary only repeats it.
bool is_parent_summary(const std::string& description) {
    return starts_with(description, "Failed to validate item #") ||
           starts_with(description, "Failed to validate against schema associated with property name") ||
           starts_with(description, "Failed to validate against additional properties schema") ||
           starts_with(description, "Failed to validate against schema associated with pattern");
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

// The value a pointer names, or nullptr when it names none.
const json* value_at(const json& doc, const std::string& pointer) {
    try {
        return &doc.at(json::json_pointer(pointer));
    } catch (const std::exception&) {
        return nullptr;
    }
}

// A combinator that no branch satisfies reports every branch's failures before its own
// summary; the branches are alternatives, so their failures are not each a fault of the document.
bool is_combinator_summary(const std::string& description) {
    return starts_with(description, "Failed to validate against any child schemas allowed by oneOf") ||
           starts_with(description, "Failed to validate against any schemas allowed by anyOf");
}

// JSON Schema counts 3.0 as an integer (draft-07 core, section 4.2.2); valijson goes by the
// JSON value's type. A copy with integral floats made integers is validated instead, when needed.
bool has_integral_float(const json& v) {
    if (v.is_number_float()) {
        double d = v.get<double>();
        return d == static_cast<double>(static_cast<long long>(d));
    }
    if (v.is_structured()) {
        for (const auto& child : v) if (has_integral_float(child)) return true;
    }
    return false;
}

json with_integral_floats_as_integers(const json& v) {
    if (v.is_number_float()) {
        double d = v.get<double>();
        if (d == static_cast<double>(static_cast<long long>(d))) return static_cast<long long>(d);
        return v;
    }
    if (v.is_object()) {
        json out = json::object();
        for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = with_integral_floats_as_integers(it.value());
        return out;
    }
    if (v.is_array()) {
        json out = json::array();
        for (const auto& child : v) out.push_back(with_integral_floats_as_integers(child));
        return out;
    }
    return v;
}

SchemaViolation violation_of(const valijson::ValidationResults::Error& error, const json& doc) {
    SchemaViolation v{pointer_of(error.context), error.description};
    // An unexpected property is reported at its object; point at the property itself, so the
    // lock reader names the line it is on.
    const std::string unwanted = "or 'additionalProperties' constraints: '";
    if (auto at = v.message.find(unwanted); at != std::string::npos && v.message.size() >= at + unwanted.size() + 2) {
        std::string name = v.message.substr(at + unwanted.size());
        name = name.substr(0, name.size() - 2);   // the closing "'."
        v.path += "/" + escape_pointer_token(name);
        v.message = "unexpected property '" + name + "'";
    } else if (starts_with(v.message, "Value type not permitted")) {
        if (const json* value = value_at(doc, v.path)) v.message += " (got " + type_name(*value) + ")";
    }
    return v;
}

}  // namespace

std::vector<SchemaViolation> validate(const json& schema, const json& doc) {
    valijson::Schema compiled;
    try {
        valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
        valijson::adapters::NlohmannJsonAdapter schema_adapter(schema);
        parser.populateSchema(schema_adapter, compiled);
    } catch (const std::exception& e) {
        return {{"", std::string("schema: ") + e.what()}};
    }
    valijson::Validator validator(valijson::Validator::kStrongTypes);
    valijson::ValidationResults results;
    const json normalized = has_integral_float(doc) ? with_integral_floats_as_integers(doc) : json();
    const json& checked = normalized.is_null() ? doc : normalized;
    valijson::adapters::NlohmannJsonAdapter doc_adapter(checked);
    std::vector<SchemaViolation> out;
    if (validator.validate(compiled, doc_adapter, &results)) return out;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
        if (is_parent_summary(error.description)) continue;
        SchemaViolation v = violation_of(error, checked);
        if (is_combinator_summary(error.description)) {
            std::erase_if(out, [&](const SchemaViolation& o) {
                return o.path == v.path || o.path.rfind(v.path + "/", 0) == 0;
            });
        }
        out.push_back(std::move(v));
    }
    // Document order of the pointers, so the first violation named is the first in the file.
    std::stable_sort(out.begin(), out.end(), [](const SchemaViolation& a, const SchemaViolation& b) { return a.path < b.path; });
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
