#include <doctest/doctest.h>

#include "resolver/lock/json_schema.hpp"

using envlock::validate;
using nlohmann::json;

namespace {
const json kLockLike = json::parse(R"({
  "type": "object",
  "required": ["version", "packages"],
  "additionalProperties": false,
  "properties": {
    "version": {"type": "integer", "minimum": 1, "maximum": 1},
    "packages": {"type": "array", "items": {"$ref": "#/definitions/package"}}
  },
  "definitions": {
    "package": {
      "type": "object",
      "required": ["name", "sha256"],
      "properties": {
        "name": {"type": "string", "minLength": 1},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "kind": {"enum": ["conda", "pypi", "source"]}
      }
    }
  }
})");
const std::string kHash(64, 'a');
}  // namespace

TEST_CASE("a document that follows the schema has no violations") {
    json doc = {{"version", 1}, {"packages", {{{"name", "numpy"}, {"sha256", kHash}, {"kind", "pypi"}}}}};
    CHECK(validate(kLockLike, doc).empty());
}

TEST_CASE("a violation names the JSON pointer of the offending value") {
    json doc = {{"version", 1},
                {"packages", {{{"name", "a"}, {"sha256", kHash}}, {{"name", "b"}, {"sha256", "XYZ"}}}}};
    auto v = validate(kLockLike, doc);
    REQUIRE(v.size() == 1);
    CHECK(v[0].path == "/packages/1/sha256");
    CHECK(v[0].message.find("pattern") != std::string::npos);
}

TEST_CASE("missing required properties and unexpected ones are both reported") {
    json doc = {{"packages", json::array()}, {"extra", true}};
    auto v = validate(kLockLike, doc);
    REQUIRE(v.size() == 2);
    CHECK(v[0].path == "");
    CHECK(v[0].message.find("'version'") != std::string::npos);
    CHECK(v[1].path == "/extra");
}

TEST_CASE("type, enum and range errors") {
    auto type = validate(kLockLike, json{{"version", "1"}, {"packages", json::array()}});
    REQUIRE(type.size() == 1);
    CHECK(type[0].path == "/version");
    CHECK(type[0].message.find("'type'") != std::string::npos);
    CHECK(type[0].message.find("got string") != std::string::npos);
    CHECK(validate(kLockLike, json{{"version", 2}, {"packages", json::array()}})[0].message.find("less than or equal to 1") !=
          std::string::npos);
    json bad_kind = {{"version", 1}, {"packages", {{{"name", "x"}, {"sha256", kHash}, {"kind", "npm"}}}}};
    auto v = validate(kLockLike, bad_kind);
    REQUIRE(v.size() == 1);
    CHECK(v[0].path == "/packages/0/kind");
}

TEST_CASE("an integral float counts as an integer, a fractional one does not (draft-07 core 4.2.2)") {
    json s = {{"type", "integer"}};
    CHECK(validate(s, json(3.0)).empty());
    CHECK(validate(s, json(3.5)).size() == 1);
}

TEST_CASE("oneOf needs exactly one matching branch, anyOf at least one") {
    json one = json::parse(R"({"oneOf": [{"type": "string"}, {"type": "string", "pattern": "^a"}]})");
    CHECK(validate(one, "b").empty());
    CHECK(validate(one, "abc").size() == 1);  // both branches match
    CHECK(validate(one, 3).size() == 1);      // none match
    json any = json::parse(R"({"anyOf": [{"type": "integer"}, {"type": "null"}]})");
    CHECK(validate(any, nullptr).empty());
    CHECK(validate(any, "x").size() == 1);
}

TEST_CASE("additionalProperties may itself be a schema") {
    json s = json::parse(R"({"type": "object", "additionalProperties": {"type": "integer"}})");
    CHECK(validate(s, json{{"a", 1}, {"b", 2}}).empty());
    auto v = validate(s, json{{"a", 1}, {"b", "two"}});
    REQUIRE(v.size() == 1);
    CHECK(v[0].path == "/b");
}

TEST_CASE("pointer tokens escape '/' and '~'") {
    json s = json::parse(R"({"type": "object", "additionalProperties": false})");
    auto v = validate(s, json{{"a/b~c", 1}});
    REQUIRE(v.size() == 1);
    CHECK(v[0].path == "/a~1b~0c");
}

TEST_CASE("draft-07 keywords beyond the lock's own schema are checked too (valijson implements the draft)") {
    json s = json::parse(R"({"type": "object", "not": {"required": ["forbidden"]}, "maxProperties": 2})");
    CHECK(validate(s, json{{"ab", 1}}).empty());
    CHECK_FALSE(validate(s, json{{"forbidden", 1}}).empty());
    CHECK_FALSE(validate(s, json{{"a", 1}, {"b", 2}, {"c", 3}}).empty());
}

TEST_CASE("a $ref to another document is a schema error, not a silent pass") {
    json s = json::parse(R"({"$ref": "other.json#/x"})");
    REQUIRE(validate(s, 1).size() == 1);
}

TEST_CASE("describe joins the first violations into one line") {
    std::vector<envlock::SchemaViolation> v = {{"/a", "x"}, {"", "y"}, {"/c", "z"}, {"/d", "w"}};
    CHECK(envlock::describe(v, 2) == "/a: x; /: y; and 2 more");
}
