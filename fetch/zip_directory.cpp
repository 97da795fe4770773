#include "fetch/zip_directory.hpp"

#include <zlib.h>

#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

namespace {

std::uint64_t le(std::string_view b, std::size_t at, int bytes) {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
    return v;
}

[[noreturn]] void damaged(std::string_view source, const std::string& what) {
    throw InputError(std::string(source) + ": not a readable wheel (zip): " + what);
}

constexpr std::string_view kEocd("PK\x05\x06", 4);
constexpr std::string_view kZip64Locator("PK\x06\x07", 4);
constexpr std::string_view kZip64Eocd("PK\x06\x06", 4);
constexpr std::string_view kCentral("PK\x01\x02", 4);
constexpr std::string_view kLocal("PK\x03\x04", 4);

}  // namespace

std::optional<ZipDirectoryPlace> find_zip_directory(std::string_view tail, std::uint64_t tail_start, std::string_view source) {
    // The record is 22 bytes and a comment of up to 65535; searched from the end.
    if (tail.size() < 22) return std::nullopt;
    std::size_t at = tail.size() - 22;
    for (;;) {
        if (tail.compare(at, 4, kEocd) == 0 && at + 22 + le(tail, at + 20, 2) == tail.size()) break;
        if (at == 0 || tail.size() - at > 22 + 65535) return std::nullopt;
        --at;
    }
    ZipDirectoryPlace place{le(tail, at + 16, 4), le(tail, at + 12, 4)};
    if (place.offset == 0xFFFFFFFF || place.size == 0xFFFFFFFF) {
        // ZIP64: a locator sits just before the record and points at the ZIP64 record.
        if (at < 20 || tail.compare(at - 20, 4, kZip64Locator) != 0) damaged(source, "ZIP64 sizes without a ZIP64 locator");
        std::uint64_t record = le(tail, at - 20 + 8, 8);
        if (record < tail_start || record - tail_start + 56 > tail.size()) return std::nullopt;
        std::size_t r = static_cast<std::size_t>(record - tail_start);
        if (tail.compare(r, 4, kZip64Eocd) != 0) damaged(source, "no ZIP64 end of central directory where its locator points");
        place = {le(tail, r + 48, 8), le(tail, r + 40, 8)};
    }
    if (place.offset + place.size > tail_start + at) damaged(source, "the central directory runs into its end record");
    return place;
}

std::vector<ZipMember> read_zip_directory(std::string_view d, std::string_view source) {
    std::vector<ZipMember> out;
    std::size_t at = 0;
    while (at + 46 <= d.size() && d.compare(at, 4, kCentral) == 0) {
        ZipMember m;
        m.method = static_cast<std::uint16_t>(le(d, at + 10, 2));
        m.compressed_size = le(d, at + 20, 4);
        m.size = le(d, at + 24, 4);
        std::size_t name_len = le(d, at + 28, 2), extra_len = le(d, at + 30, 2), comment_len = le(d, at + 32, 2);
        m.local_offset = le(d, at + 42, 4);
        if (at + 46 + name_len + extra_len + comment_len > d.size()) damaged(source, "a central directory entry runs past its end");
        m.name = std::string(d.substr(at + 46, name_len));
        // ZIP64 extended information (id 1): the 8-byte values of the fields saturated above, in order.
        std::string_view extra = d.substr(at + 46 + name_len, extra_len);
        for (std::size_t e = 0; e + 4 <= extra.size();) {
            std::size_t id = le(extra, e, 2), len = le(extra, e + 2, 2);
            if (e + 4 + len > extra.size()) break;
            if (id == 1) {
                std::size_t k = e + 4;
                auto take = [&](std::uint64_t& field) {
                    if (field != 0xFFFFFFFF || k + 8 > e + 4 + len) return;
                    field = le(extra, k, 8);
                    k += 8;
                };
                take(m.size);
                take(m.compressed_size);
                take(m.local_offset);
            }
            e += 4 + len;
        }
        out.push_back(std::move(m));
        at += 46 + name_len + extra_len + comment_len;
    }
    if (at != d.size()) damaged(source, "the central directory holds something other than entries");
    return out;
}

std::vector<ZipMember> read_zip_directory_end(std::string_view tail, std::uint64_t tail_start, const ZipDirectoryPlace& place) {
    if (place.offset + place.size < tail_start || place.offset + place.size - tail_start > tail.size()) return {};
    std::string_view held = tail.substr(0, static_cast<std::size_t>(place.offset + place.size - tail_start));
    for (std::size_t at = held.find(kCentral); at != std::string_view::npos; at = held.find(kCentral, at + 1)) {
        try {
            return read_zip_directory(held.substr(at), "");
        } catch (const InputError&) {
            // a signature inside a name or an extra field: the chain breaks; try the next one
        }
    }
    return {};
}

std::optional<ZipMember> find_wheel_metadata(const std::vector<ZipMember>& members) {
    constexpr std::string_view dist_info = ".dist-info/METADATA";
    for (const auto& m : members) {
        auto slash = m.name.find('/');
        if (slash == std::string::npos || m.name.find('/', slash + 1) != std::string::npos) continue;
        if (m.name.size() > dist_info.size() && m.name.compare(m.name.size() - dist_info.size(), dist_info.size(), dist_info) == 0 &&
            slash + 9 == m.name.size())
            return m;
    }
    return std::nullopt;
}

std::uint64_t member_read_length(const ZipMember& member) {
    // 30 bytes of fixed header, then the name (known) and an extra field (usually empty or a few
    // dozen bytes: 1 KiB covers every writer seen).
    return 30 + member.name.size() + 1024 + member.compressed_size;
}

std::string read_zip_member(std::string_view b, const ZipMember& member, std::string_view source) {
    if (b.size() < 30 || b.compare(0, 4, kLocal) != 0) damaged(source, "no local file header where the directory points for " + member.name);
    std::size_t start = 30 + le(b, 26, 2) + le(b, 28, 2);
    if (start + member.compressed_size > b.size()) damaged(source, member.name + " is cut short");
    std::string_view data = b.substr(start, member.compressed_size);
    if (member.method == 0) return std::string(data);
    if (member.method != 8) damaged(source, member.name + " is compressed with method " + std::to_string(member.method));
    std::string out(member.size, '\0');
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) damaged(source, "cannot start inflating " + member.name);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    int rc = inflate(&z, Z_FINISH);
    std::size_t produced = out.size() - z.avail_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END || produced != member.size) damaged(source, member.name + " does not inflate to its declared size");
    return out;
}

}  // namespace envlock::fetch
