#pragma once
// JSON Schemas compiled into the binary (schemas/*.json, see cmake/embed.cmake).
#include <string_view>

namespace envlock {

// The schema file's text by its file name ("envlock.schema.json"); throws std::out_of_range
// for a name that was not embedded.
std::string_view embedded_schema(std::string_view file_name);

}  // namespace envlock
