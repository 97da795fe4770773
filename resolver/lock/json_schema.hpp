#pragma once
// A validator for the subset of JSON Schema draft-07 that envlock's own schemas use
// (schemas/*.json): type, properties, required, additionalProperties (bool or schema),
// items, enum, const, pattern (ECMAScript regex, searched, not anchored), minimum/maximum,
// minItems, minLength, uniqueItems, oneOf/anyOf/allOf, and $ref to "#/definitions/NAME".
// Debian ships no C++ validator, and our schemas are ours, so a small one suffices.
// A schema keyword outside this subset is reported as a violation rather than ignored,
// so a schema never silently checks less than it says.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace envlock {

struct SchemaViolation {
    std::string path;      // JSON Pointer into the document: "/packages/3/sha256" ("" = root)
    std::string message;   // what was expected there
};

// Every violation found (empty = valid). Never throws for a bad document; a malformed
// schema yields violations whose message starts with "schema:".
std::vector<SchemaViolation> validate(const nlohmann::json& schema, const nlohmann::json& doc);

// "path: message" lines joined by "; ", first `limit` violations (for one-line errors).
std::string describe(const std::vector<SchemaViolation>& violations, std::size_t limit = 3);

}  // namespace envlock
