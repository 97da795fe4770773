#pragma once
// JSON Schema (draft-07) validation of envlock's documents (the lock, the knowledge files),
// by valijson (Debian's libvalijson-dev). Violations come back as JSON pointers, so a caller
// that kept the YAML line of each pointer (yaml_json.hpp) can name the offending line.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace envlock {

struct SchemaViolation {
    std::string path;      // JSON Pointer into the document: "/packages/3/sha256" ("" = root)
    std::string message;   // what was expected there
};

// Every violation found (empty = valid), deepest first. Never throws for a bad document;
// a schema valijson cannot compile yields one violation whose message starts with "schema:".
std::vector<SchemaViolation> validate(const nlohmann::json& schema, const nlohmann::json& doc);

// "path: message" lines joined by "; ", first `limit` violations (for one-line errors).
std::string describe(const std::vector<SchemaViolation>& violations, std::size_t limit = 3);

}  // namespace envlock
