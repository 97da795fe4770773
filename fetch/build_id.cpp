#include "fetch/build_id.hpp"

#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>

namespace envlock {

namespace {

// The NT_GNU_BUILD_ID note of the main program (the first object dl_iterate_phdr reports).
int find_build_id(struct dl_phdr_info* info, size_t, void* data) {
    auto* out = static_cast<std::string*>(data);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE) continue;
        const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
        const char* end = p + ph.p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
            const char* name = p + sizeof(ElfW(Nhdr));
            const char* desc = name + ((note->n_namesz + 3) & ~3u);
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                static const char* hex = "0123456789abcdef";
                for (unsigned k = 0; k < note->n_descsz; ++k) {
                    auto b = static_cast<unsigned char>(desc[k]);
                    out->push_back(hex[b >> 4]);
                    out->push_back(hex[b & 15]);
                }
                return 1;
            }
            p = desc + ((note->n_descsz + 3) & ~3u);
        }
    }
    return 1;   // only the main program
}

}  // namespace

std::string binary_build_id() {
    static const std::string id = [] {
        std::string out;
        dl_iterate_phdr(find_build_id, &out);
        if (!out.empty()) return "gnu:" + out;
        struct stat st{};
        if (::stat("/proc/self/exe", &st) != 0) return std::string();
        return "exe:" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
               std::to_string(st.st_mtim.tv_nsec);
    }();
    return id;
}

}  // namespace envlock
