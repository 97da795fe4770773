#include "install/elf_needed.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace envlock::install {

namespace {

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

bool read_at(int fd, void* buf, size_t n, uint64_t off) {
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
        ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
        if (r <= 0) return false;
        p += r;
        n -= static_cast<size_t>(r);
        off += static_cast<uint64_t>(r);
    }
    return true;
}

// Reads the fields we need from ELF32 or ELF64 structures in either byte order.
struct Reader {
    bool is64 = true;
    bool swap = false;   // false: little endian (the last byte is the most significant)
    uint64_t u(const unsigned char* p, int size) const {
        uint64_t v = 0;
        for (int i = 0; i < size; ++i) {
            int idx = swap ? i : size - 1 - i;
            v = (v << 8) | p[idx];
        }
        return v;
    }
};

}  // namespace

std::optional<std::vector<std::string>> elf_needed(const std::string& path) {
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) return std::nullopt;
    unsigned char ident[EI_NIDENT];
    if (!read_at(f.fd, ident, sizeof ident, 0) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) return std::nullopt;
    Reader r;
    if (ident[EI_CLASS] == ELFCLASS32) r.is64 = false;
    else if (ident[EI_CLASS] != ELFCLASS64) return std::nullopt;
    if (ident[EI_DATA] == ELFDATA2LSB) r.swap = false;
    else if (ident[EI_DATA] == ELFDATA2MSB) r.swap = true;
    else return std::nullopt;

    // e_shoff, e_shentsize, e_shnum at their class's offsets.
    unsigned char eh[64];
    if (!read_at(f.fd, eh, r.is64 ? 64 : 52, 0)) return std::nullopt;
    uint64_t shoff = r.is64 ? r.u(eh + 0x28, 8) : r.u(eh + 0x20, 4);
    uint64_t shentsize = r.is64 ? r.u(eh + 0x3A, 2) : r.u(eh + 0x2E, 2);
    uint64_t shnum = r.is64 ? r.u(eh + 0x3C, 2) : r.u(eh + 0x30, 2);
    if (shoff == 0 || shnum == 0) return std::vector<std::string>{};
    if (shentsize < (r.is64 ? 64u : 40u) || shnum > 65535) return std::nullopt;

    struct Section { uint64_t type, offset, size, link, entsize; };
    auto section = [&](uint64_t i) -> std::optional<Section> {
        unsigned char sh[64];
        if (!read_at(f.fd, sh, r.is64 ? 64 : 40, shoff + i * shentsize)) return std::nullopt;
        Section s;
        s.type = r.u(sh + 4, 4);
        if (r.is64) {
            s.offset = r.u(sh + 0x18, 8);
            s.size = r.u(sh + 0x20, 8);
            s.link = r.u(sh + 0x28, 4);
            s.entsize = r.u(sh + 0x38, 8);
        } else {
            s.offset = r.u(sh + 0x10, 4);
            s.size = r.u(sh + 0x14, 4);
            s.link = r.u(sh + 0x18, 4);
            s.entsize = r.u(sh + 0x24, 4);
        }
        return s;
    };

    std::vector<std::string> out;
    for (uint64_t i = 0; i < shnum; ++i) {
        auto dyn = section(i);
        if (!dyn) return std::nullopt;
        if (dyn->type != SHT_DYNAMIC) continue;
        auto str = section(dyn->link);
        if (!str || str->type != SHT_STRTAB || dyn->size > (1u << 20) || str->size > (64u << 20)) return std::nullopt;
        std::string dynbytes(dyn->size, '\0'), strtab(str->size, '\0');
        if (!read_at(f.fd, dynbytes.data(), dynbytes.size(), dyn->offset) ||
            !read_at(f.fd, strtab.data(), strtab.size(), str->offset))
            return std::nullopt;
        size_t ent = r.is64 ? 16 : 8, half = ent / 2;
        for (size_t p = 0; p + ent <= dynbytes.size(); p += ent) {
            auto* e = reinterpret_cast<const unsigned char*>(dynbytes.data() + p);
            uint64_t tag = r.u(e, static_cast<int>(half)), val = r.u(e + half, static_cast<int>(half));
            if (tag == DT_NULL) break;
            if (tag == DT_NEEDED && val < strtab.size()) out.emplace_back(strtab.c_str() + val);
        }
        break;
    }
    return out;
}

std::string cudart_soname_version(const std::string& needed) {
    const std::string stem = "libcudart.so.";
    if (needed.rfind(stem, 0) != 0) return "";
    std::string v = needed.substr(stem.size());
    if (v.empty() || v.find_first_not_of("0123456789.") != std::string::npos) return "";
    return v;
}

}  // namespace envlock::install
