#pragma once
// A wheel's RECORD (the "Recording installed projects" spec): CSV rows of path, hash and size.
// Parsing, writing (sorted, as pip does), and the hash form `sha256=<urlsafe base64, no padding>`.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envlock::install {

struct RecordRow {
    std::string path;   // as written: relative to the directory holding .dist-info, '/'-separated
    std::string hash;   // "sha256=…" or "" (RECORD itself, .pyc)
    std::string size;   // decimal bytes or ""
    bool operator==(const RecordRow&) const = default;
};

// Python's csv.reader dialect: ',' separated, '"' quoting with "" for a quote, \n or \r\n.
// InputError naming `source` on an unterminated quote or a row that is not 1-3 fields.
std::vector<RecordRow> parse_record(std::string_view text, std::string_view source);

// One row per line, '\n' terminated, rows sorted by path; fields quoted only when they must be.
std::string write_record(std::vector<RecordRow> rows);

// "sha256=<urlsafe-b64-nopad>" of a lowercase hex SHA-256 digest, and back (nullopt when the
// text is not a sha256 RECORD hash).
std::string record_hash_from_hex(std::string_view hex);
std::optional<std::string> hex_from_record_hash(std::string_view record_hash);

// Whether `content` has the digest a RECORD hash names, for the algorithms a wheel may use
// (hashlib.algorithms_guaranteed minus md5 and sha1, which the wheel spec forbids): sha224,
// sha256, sha384, sha512, sha3_*, blake2b, blake2s. InputError for any other algorithm.
bool record_hash_matches(std::string_view record_hash, std::string_view content);

struct FileDigest {
    std::string sha256;        // lowercase hex
    std::uint64_t size = 0;
};
// EnvironmentError naming the file when it cannot be read.
FileDigest digest_file(const std::string& path);

}  // namespace envlock::install
