#include "fetch/repodata_names.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "fetch/files.hpp"

namespace envlock::fetch {

namespace {

constexpr char kMagic[16] = {'e', 'n', 'v', 'l', 'o', 'c', 'k', '-', 'n', 'a', 'm', 'e', 's', ' ', '1', '\n'};

// Fixed-width, little-endian (the only byte order envlock runs on), 8-byte aligned.
struct FileHeader {
    char magic[16];
    std::uint64_t file_size;
    std::uint64_t entry_body_size;
    std::uint64_t entry_sample;
    std::uint64_t doc_size;
    std::uint64_t doc_at;          // 0: the document is the entry's body; else its place in this file
    std::uint64_t name_count, raw_count;
    std::uint64_t names_at, raws_at, strings_at, strings_size;
    std::uint64_t entry_header_at, entry_header_size;
    std::uint64_t subdir_at, subdir_size, base_url_at, base_url_size;
};
static_assert(sizeof(FileHeader) % 8 == 0);
static_assert(sizeof(SparseRepodata::Raw) == 24 && sizeof(SparseRepodata::Name) == 24);

// FNV-1a over the size and 17 slices of the body (evenly spread, and its end): a body of
// another size or with other bytes there is not the one the index was made from. It reads
// 17 pages, not the body.
std::uint64_t sample(std::string_view body) {
    std::uint64_t h = 1469598103934665603ULL;
    auto mix = [&](std::string_view bytes) {
        for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
    };
    std::uint64_t n = body.size();
    mix(std::string_view(reinterpret_cast<const char*>(&n), sizeof n));
    constexpr std::size_t kSlice = 256, kSlices = 16;
    for (std::size_t i = 0; i < kSlices; ++i) mix(body.substr(body.size() / kSlices * i, kSlice));
    mix(body.substr(body.size() > kSlice ? body.size() - kSlice : 0));
    return h;
}

void append_raw(std::string& out, const void* p, std::size_t n) { out.append(static_cast<const char*>(p), n); }

bool in_file(std::uint64_t at, std::uint64_t size, std::uint64_t file_size) {
    return at <= file_size && size <= file_size - at;
}

}  // namespace

std::string name_index_path(const std::string& cache_entry_path) { return cache_entry_path + ".names"; }

bool save_name_index(const std::string& path, const SparseRepodata& rd, std::string_view entry_header,
                     std::string_view entry_body, bool decoded) {
    FileHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.entry_body_size = entry_body.size();
    h.entry_sample = sample(entry_body);
    h.doc_size = rd.document().size();
    h.name_count = rd.names.size();
    h.raw_count = rd.raws.size();
    std::string index;
    index.resize(sizeof(FileHeader));
    h.names_at = index.size();
    append_raw(index, rd.names.data(), rd.names.size_bytes());
    h.raws_at = index.size();
    append_raw(index, rd.raws.data(), rd.raws.size_bytes());
    h.strings_at = index.size();
    h.strings_size = rd.strings.size();
    index += rd.strings;
    h.entry_header_at = index.size();
    h.entry_header_size = entry_header.size();
    index += entry_header;
    h.subdir_at = index.size();
    h.subdir_size = rd.subdir.size();
    index += rd.subdir;
    h.base_url_at = index.size();
    h.base_url_size = rd.base_url.size();
    index += rd.base_url;
    index.resize((index.size() + 63) / 64 * 64, '\0');
    h.doc_at = decoded ? index.size() : 0;
    h.file_size = index.size() + (decoded ? h.doc_size : 0);
    std::memcpy(index.data(), &h, sizeof h);

    // A decoded document is the only copy of what the records are read from: on disk before
    // the name is (an index alone is checked against the entry on every use).
    return replace_cache_file(path, index, decoded ? rd.document() : std::string_view(), decoded);
}

std::optional<SparseRepodata> load_name_index(const std::string& path, std::string_view entry_header,
                                              const PaddedBuffer& entry, std::size_t body_offset,
                                              const RepodataSource& source) {
    std::error_code ec;
    PaddedBuffer file = PaddedBuffer::map_file(path, ec);
    if (ec || file.size() < sizeof(FileHeader)) return std::nullopt;
    FileHeader h;
    std::memcpy(&h, file.data(), sizeof h);
    const std::uint64_t size = file.size();
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.file_size != size) return std::nullopt;
    if (h.name_count > size / sizeof(SparseRepodata::Name) || h.raw_count > size / sizeof(SparseRepodata::Raw)) return std::nullopt;
    if (h.names_at % 8 || h.raws_at % 8 || !in_file(h.names_at, h.name_count * sizeof(SparseRepodata::Name), size) ||
        !in_file(h.raws_at, h.raw_count * sizeof(SparseRepodata::Raw), size) || !in_file(h.strings_at, h.strings_size, size) ||
        !in_file(h.entry_header_at, h.entry_header_size, size) || !in_file(h.subdir_at, h.subdir_size, size) ||
        !in_file(h.base_url_at, h.base_url_size, size))
        return std::nullopt;
    std::string_view all = file.view();
    // Made from this very write of the entry: its header line (with its random id), size and bytes.
    if (all.substr(h.entry_header_at, h.entry_header_size) != entry_header) return std::nullopt;
    if (body_offset > entry.size()) return std::nullopt;
    std::string_view body = entry.view().substr(body_offset);
    if (h.entry_body_size != body.size() || h.entry_sample != sample(body)) return std::nullopt;

    SparseRepodata out;
    out.source = source;
    if (h.doc_at == 0) {
        if (h.doc_size != body.size()) return std::nullopt;
        out.json = entry;
        out.offset = body_offset;
    } else {
        if (h.doc_at % 64 || !in_file(h.doc_at, h.doc_size, size) || h.doc_at + h.doc_size != size) return std::nullopt;
        out.json = file;
        out.offset = h.doc_at;
    }
    out.names = {reinterpret_cast<const SparseRepodata::Name*>(file.data() + h.names_at), h.name_count};
    out.raws = {reinterpret_cast<const SparseRepodata::Raw*>(file.data() + h.raws_at), h.raw_count};
    out.strings = all.substr(h.strings_at, h.strings_size);
    // Every name inside the strings, its records inside the table, the names in order: what
    // the lookups rely on (26k names: well under a millisecond).
    std::string_view previous;
    for (std::size_t i = 0; i < out.names.size(); ++i) {
        const auto& n = out.names[i];
        if (!in_file(n.text, n.size, out.strings.size()) || std::uint64_t(n.first) + n.count > h.raw_count) return std::nullopt;
        std::string_view name = out.name_of(n);
        if (i > 0 && !(previous < name)) return std::nullopt;
        previous = name;
    }
    out.subdir = std::string(all.substr(h.subdir_at, h.subdir_size));
    out.base_url = std::string(all.substr(h.base_url_at, h.base_url_size));
    out.index_storage = std::make_shared<PaddedBuffer>(std::move(file));
    out.saved = true;
    out.json.advise_random();
    return out;
}

}  // namespace envlock::fetch
