#pragma once
// Tiny but valid package archives: conda .tar.bz2 and .conda (v2: an uncompressed zip of
// metadata.json, info-*.tar.zst and pkg-*.tar.zst), wheels (PEP 427 with a RECORD of real
// hashes) and sdists (.tar.gz with PKG-INFO).
#include <string>

#include "tests/mirror/model.hpp"

namespace envlock::mirror {

// Placeholders a conda installer must replace: the classic text one, and a long one (as
// conda-build uses) for binary files, where the new prefix has to fit in its length.
inline constexpr const char* kTextPlaceholder = "/opt/anaconda1anaconda2anaconda3";
std::string binary_placeholder();

std::string build_conda_package(const CondaRecord& record);   // bytes, in the record's ext format
std::string build_wheel(const PyDist& dist);                   // bytes of the .whl
std::string build_sdist(const PyDist& dist);                   // bytes of the .tar.gz
std::string core_metadata(const PyDist& dist);                 // METADATA / PKG-INFO text (PEP 658 body)

// The import name a project installs ("Pillow" -> "PIL", "pytorch" -> "torch").
std::string module_name(const std::string& project);

// setuptools and wheel: their stand-ins carry metadata only, so the host's real ones build sdists.
bool is_build_tool(const std::string& project);
// The entry_points.txt a build tool's stand-in carries (empty for other projects).
std::string build_tool_entry_points(const std::string& project);

}  // namespace envlock::mirror
