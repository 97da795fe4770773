#pragma once
// `envlock export`: a lock rewritten for people who keep using pip or conda — a pip
// --require-hashes requirements file, a conda @EXPLICIT list with hashes, an environment.yml
// with exact pins.
#include <string>
#include <string_view>

#include "resolver/lock/lock.hpp"

namespace envlock::install {

enum class ExportFormat { requirements, conda_explicit, environment_yml };

// "requirements", "conda-explicit", "environment-yml"; InputError listing the formats otherwise.
ExportFormat parse_export_format(std::string_view name);

// `lock_name` is how the header comment names the lock ("envlock.yaml").
std::string export_lock(const Lock& lock, ExportFormat format, std::string_view lock_name = "envlock.yaml");

}  // namespace envlock::install
