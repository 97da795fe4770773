#pragma once
// The records read from an index page, kept in the cache and bound to the exact body they were
// read from (Document::identity) and to the envlock binary that read them, as uv keeps its
// parsed simple-API responses: a re-resolve reads the records of an unchanged page, not its HTML.
// <cache>/pages/<xx>/<sha256 of kind, page URL and project>.records
// A file that is missing, damaged, of another binary or of another body is not used.
#include <filesystem>
#include <optional>
#include <string>

#include "resolver/specs/record.hpp"

namespace envlock::fetch {

struct PageKey {
    std::string kind;       // "simple-html", "simple-json", "find-links", "pypi-json"
    std::string url;        // the page as asked for
    std::string project;    // the project its records were read for ("" for every project)
    std::string identity;   // Document::identity of the body read
};

std::optional<IndexRecords> load_page_records(const std::filesystem::path& cache_dir, const PageKey& key);

// False when it could not be written (a read-only cache is not an error).
bool save_page_records(const std::filesystem::path& cache_dir, const PageKey& key, const IndexRecords& records);

// The bytes save_page_records writes, and their reading (for tests and fuzzing): nullopt for
// anything but a whole, well-formed file of this key and this binary.
std::string page_records_bytes(const PageKey& key, const IndexRecords& records);
std::optional<IndexRecords> page_records_from_bytes(std::string_view bytes, const PageKey& key);

}  // namespace envlock::fetch
