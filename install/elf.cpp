#include "install/elf.hpp"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace envlock::install {

namespace {

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

struct Section {
    uint64_t name = 0, type = 0, offset = 0, size = 0, link = 0, entsize = 0;
};

// An open ELF file's section headers; reads sections on demand.
class ElfFile {
public:
    explicit ElfFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) { ok_ = fd_ >= 0 && load(); }
    ~ElfFile() {
        if (fd_ >= 0) ::close(fd_);
    }
    ElfFile(const ElfFile&) = delete;
    ElfFile& operator=(const ElfFile&) = delete;

    bool ok() const { return ok_; }
    const Reader& reader() const { return r_; }
    const std::vector<Section>& sections() const { return sections_; }
    // A section's bytes; false when it does not fit the file or exceeds `limit`.
    bool bytes(const Section& s, std::string& out, uint64_t limit) const {
        if (s.type == SHT_NOBITS || s.size > limit) return false;
        out.assign(s.size, '\0');
        return read_at(fd_, out.data(), out.size(), s.offset);
    }
    bool read(uint64_t offset, size_t n, void* buf) const { return read_at(fd_, buf, n, offset); }
    const Section* find(uint64_t type) const {
        for (const auto& s : sections_)
            if (s.type == type) return &s;
        return nullptr;
    }
    const Section* named(const std::string& name) const {
        if (shstrndx_ >= sections_.size()) return nullptr;
        std::string names;
        if (!bytes(sections_[shstrndx_], names, 16u << 20)) return nullptr;
        for (const auto& s : sections_)
            if (s.name < names.size() && std::strcmp(names.c_str() + s.name, name.c_str()) == 0) return &s;
        return nullptr;
    }

private:
    bool load() {
        unsigned char ident[EI_NIDENT];
        if (!read_at(fd_, ident, sizeof ident, 0) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) return false;
        if (ident[EI_CLASS] == ELFCLASS32) r_.is64 = false;
        else if (ident[EI_CLASS] != ELFCLASS64) return false;
        if (ident[EI_DATA] == ELFDATA2LSB) r_.swap = false;
        else if (ident[EI_DATA] == ELFDATA2MSB) r_.swap = true;
        else return false;
        // e_shoff, e_shentsize, e_shnum, e_shstrndx at their class's offsets.
        unsigned char eh[64];
        if (!read_at(fd_, eh, r_.is64 ? 64 : 52, 0)) return false;
        uint64_t shoff = r_.is64 ? r_.u(eh + 0x28, 8) : r_.u(eh + 0x20, 4);
        uint64_t shentsize = r_.is64 ? r_.u(eh + 0x3A, 2) : r_.u(eh + 0x2E, 2);
        uint64_t shnum = r_.is64 ? r_.u(eh + 0x3C, 2) : r_.u(eh + 0x30, 2);
        shstrndx_ = r_.is64 ? r_.u(eh + 0x3E, 2) : r_.u(eh + 0x32, 2);
        if (shoff == 0 || shnum == 0) return true;
        if (shentsize < (r_.is64 ? 64u : 40u) || shnum > 65535) return false;
        std::string table(shentsize * shnum, '\0');
        if (!read_at(fd_, table.data(), table.size(), shoff)) return false;
        for (uint64_t i = 0; i < shnum; ++i) {
            auto* sh = reinterpret_cast<const unsigned char*>(table.data() + i * shentsize);
            Section s;
            s.name = r_.u(sh, 4);
            s.type = r_.u(sh + 4, 4);
            if (r_.is64) {
                s.offset = r_.u(sh + 0x18, 8);
                s.size = r_.u(sh + 0x20, 8);
                s.link = r_.u(sh + 0x28, 4);
                s.entsize = r_.u(sh + 0x38, 8);
            } else {
                s.offset = r_.u(sh + 0x10, 4);
                s.size = r_.u(sh + 0x14, 4);
                s.link = r_.u(sh + 0x18, 4);
                s.entsize = r_.u(sh + 0x24, 4);
            }
            sections_.push_back(s);
        }
        return true;
    }

    int fd_ = -1;
    bool ok_ = false;
    Reader r_;
    uint64_t shstrndx_ = 0;
    std::vector<Section> sections_;
};

// Symbol and string tables of the largest libraries (libtorch_cuda) run to tens of MB.
constexpr uint64_t kTableLimit = 1ull << 30;

void sort_unique(std::vector<int>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

uint64_t le(const unsigned char* p, int size) {
    uint64_t v = 0;
    for (int i = size - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

}  // namespace

std::optional<std::vector<std::string>> elf_needed(const std::string& path) {
    ElfFile f(path);
    if (!f.ok()) return std::nullopt;
    const Reader& r = f.reader();
    std::vector<std::string> out;
    const Section* dyn = f.find(SHT_DYNAMIC);
    if (!dyn) return out;
    if (dyn->link >= f.sections().size()) return std::nullopt;
    const Section& str = f.sections()[dyn->link];
    std::string dynbytes, strtab;
    if (str.type != SHT_STRTAB || !f.bytes(*dyn, dynbytes, 1u << 20) || !f.bytes(str, strtab, 64u << 20)) return std::nullopt;
    size_t ent = r.is64 ? 16 : 8, half = ent / 2;
    for (size_t p = 0; p + ent <= dynbytes.size(); p += ent) {
        auto* e = reinterpret_cast<const unsigned char*>(dynbytes.data() + p);
        uint64_t tag = r.u(e, static_cast<int>(half)), val = r.u(e + half, static_cast<int>(half));
        if (tag == DT_NULL) break;
        if (tag == DT_NEEDED && val < strtab.size()) out.emplace_back(strtab.c_str() + val);
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

std::optional<ElfDynamicSymbols> elf_dynamic_symbols(const std::string& path, bool with_defined) {
    ElfFile f(path);
    if (!f.ok()) return std::nullopt;
    const Reader& r = f.reader();
    ElfDynamicSymbols out;
    const Section* sym = f.find(SHT_DYNSYM);
    if (!sym) return out;
    if (sym->link >= f.sections().size()) return std::nullopt;
    std::string symtab, strtab;
    if (!f.bytes(*sym, symtab, kTableLimit) || !f.bytes(f.sections()[sym->link], strtab, kTableLimit)) return std::nullopt;
    const size_t ent = r.is64 ? 24 : 16;
    for (size_t p = ent; p + ent <= symtab.size(); p += ent) {   // entry 0 is the null symbol
        auto* s = reinterpret_cast<const unsigned char*>(symtab.data() + p);
        uint64_t name = r.u(s, 4);
        unsigned info = r.is64 ? s[4] : s[12], other = r.is64 ? s[5] : s[13];
        uint64_t shndx = r.is64 ? r.u(s + 6, 2) : r.u(s + 14, 2);
        if (name == 0 || name >= strtab.size()) continue;
        unsigned bind = info >> 4, visibility = other & 3;
        if (shndx == SHN_UNDEF) {
            if (bind == STB_GLOBAL) out.undefined.emplace_back(strtab.c_str() + name);
        } else if (with_defined && (bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE) &&
                   (visibility == STV_DEFAULT || visibility == STV_PROTECTED)) {
            out.defined.emplace_back(strtab.c_str() + name);
        }
    }
    return out;
}

namespace {

// Walks the fat binaries in [0, size) through `read(offset, n, buf)`, touching only their
// headers: a 100 MB section of a library built for many sm costs a few reads per kernel file.
template <class Read>
FatbinArchs walk_fatbin(uint64_t n, Read&& read) {
    // The fat binary header: magic u32, version u16, header size u16, size of the entries u64.
    // Each entry: kind u16, version u16, header size u32, payload size u64, …, arch u32 at +28.
    constexpr uint64_t kMagic = 0xBA55ED50;
    FatbinArchs out;
    unsigned char h[32];
    uint64_t base = 0;
    while (base + 16 <= n) {
        if (!read(base, 16, h)) break;
        if (le(h, 4) != kMagic) {   // padding between fat binaries
            base += 8;
            continue;
        }
        uint64_t header = le(h + 6, 2), size = le(h + 8, 8);
        if (header < 16 || size > n || base + header + size > n) break;
        uint64_t off = base + header, end = base + header + size;
        while (off + 32 <= end) {
            if (!read(off, 32, h)) break;
            uint64_t kind = le(h, 2), entry_header = le(h + 4, 4), payload = le(h + 8, 8);
            if (entry_header < 32 || payload > end || off + entry_header + payload > end) break;
            int arch = static_cast<int>(le(h + 28, 4));
            if (kind == 1) out.ptx.push_back(arch);
            else if (kind == 2) out.sass.push_back(arch);
            off += entry_header + payload;
        }
        base = (end + 7) / 8 * 8;
    }
    sort_unique(out.sass);
    sort_unique(out.ptx);
    return out;
}

}  // namespace

FatbinArchs parse_fatbin(const std::string& section) {
    return walk_fatbin(section.size(), [&](uint64_t off, size_t len, unsigned char* buf) {
        if (off + len > section.size()) return false;
        std::memcpy(buf, section.data() + off, len);
        return true;
    });
}

std::optional<FatbinArchs> elf_fatbin_archs(const std::string& path) {
    ElfFile f(path);
    if (!f.ok()) return std::nullopt;
    const Section* s = f.named(".nv_fatbin");
    if (!s || s->type == SHT_NOBITS) return std::nullopt;
    return walk_fatbin(s->size, [&](uint64_t off, size_t len, unsigned char* buf) { return f.read(s->offset + off, len, buf); });
}

std::string demangle(const std::string& symbol) {
    if (symbol.rfind("_Z", 0) != 0) return symbol;
    int status = 0;
    char* out = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
    if (status != 0 || !out) return symbol;
    std::string s(out);
    std::free(out);
    return s;
}

}  // namespace envlock::install
