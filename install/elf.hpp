#pragma once
// What doctor reads of a compiled module without loading it: the shared libraries it asks for
// (DT_NEEDED), the dynamic symbols it imports and exports, and the GPU code its CUDA fat binary
// carries (the .nv_fatbin section's headers). Positioned reads of the few sections needed, so a
// 1 GB libtorch_cuda costs its symbol tables, not its size.
#include <optional>
#include <string>
#include <vector>

namespace envlock::install {

// DT_NEEDED entries in file order; nullopt when `path` is not a readable ELF file of a class and
// byte order we read (ELF32/ELF64, little or big endian). A static ELF gives an empty list.
std::optional<std::vector<std::string>> elf_needed(const std::string& path);

// "libcudart.so.11.0" -> "11.0", "libcudart.so.10.2" -> "10.2"; "" for any other name.
std::string cudart_soname_version(const std::string& needed);

// The dynamic symbol table (.dynsym): names the module needs from others (undefined, global or
// weak binding) and names it defines for others (global/weak, default or protected visibility).
struct ElfDynamicSymbols {
    std::vector<std::string> undefined;   // global binding only: a weak one may stay unresolved
    std::vector<std::string> defined;
};
// nullopt as for elf_needed; `with_defined` false skips collecting `defined` (a big library's
// exports are only wanted from the libraries that provide them).
std::optional<ElfDynamicSymbols> elf_dynamic_symbols(const std::string& path, bool with_defined = true);

// The GPU code in a CUDA fat binary: SASS (cubin) per sm and PTX per compute capability, read
// from the headers of every fat binary in the .nv_fatbin section (magic 0xBA55ED50; each entry
// header names its kind, 1 PTX or 2 cubin, and its arch). Entries compressed by nvcc keep their
// headers uncompressed, so this works on them too.
struct FatbinArchs {
    std::vector<int> sass;   // sorted, unique: 75, 86
    std::vector<int> ptx;
};
// nullopt when `path` is not an ELF file we read or has no .nv_fatbin section (no device code,
// or code embedded another way); a malformed section yields what was read before the damage.
std::optional<FatbinArchs> elf_fatbin_archs(const std::string& path);
// The same over a section's bytes (for tests and for fat binaries found elsewhere).
FatbinArchs parse_fatbin(const std::string& section);

// Itanium C++ ABI demangling (what the dynamic linker's "undefined symbol" message shows
// mangled): "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs" -> "c10::detail::torchCheckFail(…)".
// The name itself when it is not a mangled C++ name.
std::string demangle(const std::string& symbol);

}  // namespace envlock::install
