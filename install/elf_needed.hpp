#pragma once
// The shared libraries an ELF file asks the dynamic linker for (DT_NEEDED), read from its
// dynamic section with a few positioned reads, so a 1 GB libtorch costs what a small one does.
#include <optional>
#include <string>
#include <vector>

namespace envlock::install {

// DT_NEEDED entries in file order; nullopt when `path` is not a readable ELF file of a class and
// byte order we read (ELF32/ELF64, little or big endian). A static ELF gives an empty list.
std::optional<std::vector<std::string>> elf_needed(const std::string& path);

// "libcudart.so.11.0" -> "11.0", "libcudart.so.10.2" -> "10.2"; "" for any other name.
std::string cudart_soname_version(const std::string& needed);

}  // namespace envlock::install
