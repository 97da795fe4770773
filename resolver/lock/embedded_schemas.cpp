#include "resolver/lock/embedded_schemas.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace envlock {

std::vector<std::pair<std::string_view, std::string_view>> embedded_schema_files();  // generated

std::string_view embedded_schema(std::string_view file_name) {
    for (const auto& [name, text] : embedded_schema_files())
        if (name == file_name) return text;
    throw std::out_of_range("no embedded schema " + std::string(file_name));
}

}  // namespace envlock
