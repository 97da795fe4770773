#include "install/record.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {

namespace {

const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// (A loop, not find_first_of: libstdc++'s searches the set with memchr once per character.)
bool is_csv_special(char c) { return c == ',' || c == '"' || c == '\r' || c == '\n'; }

void append_quoted_if_needed(std::string& out, const std::string& field) {
    if (std::none_of(field.begin(), field.end(), is_csv_special)) {
        out += field;
        return;
    }
    out.push_back('"');
    for (char c : field) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
}

// kB64's inverse; -1 for a byte outside both base64 alphabets ('+' and '/' are tolerated).
struct B64Table {
    signed char value[256];
    B64Table() {
        std::fill(std::begin(value), std::end(value), static_cast<signed char>(-1));
        for (int i = 0; i < 64; ++i) value[static_cast<unsigned char>(kB64[i])] = static_cast<signed char>(i);
        value[static_cast<unsigned char>('+')] = 62;
        value[static_cast<unsigned char>('/')] = 63;
    }
};
const B64Table kB64Values;

}  // namespace

std::vector<RecordRow> parse_record(std::string_view text, std::string_view source) {
    std::vector<RecordRow> rows;
    rows.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
    size_t i = 0, line = 1;
    std::string fields[3];
    while (i < text.size()) {
        size_t count = 1;
        std::string extra;   // a fourth field and beyond: only counted for the message
        for (auto& f : fields) f.clear();
        bool in_quotes = false, row_done = false;
        size_t row_line = line;
        auto field = [&]() -> std::string& { return count <= 3 ? fields[count - 1] : extra; };
        while (i < text.size() && !row_done) {
            // An unquoted run up to the next special character is copied at once.
            if (!in_quotes) {
                size_t stop = i;
                while (stop < text.size() && !is_csv_special(text[stop])) ++stop;
                if (stop > i) {
                    field().append(text.substr(i, stop - i));
                    i = stop;
                    continue;
                }
            }
            char c = text[i++];
            if (in_quotes) {
                if (c == '"') {
                    if (i < text.size() && text[i] == '"') {
                        field().push_back('"');
                        ++i;
                    } else {
                        in_quotes = false;
                    }
                } else {
                    if (c == '\n') ++line;
                    field().push_back(c);
                }
            } else if (c == '"' && field().empty()) {
                in_quotes = true;
            } else if (c == ',') {
                ++count;
                if (count > 3) extra.clear();
            } else if (c == '\n') {
                ++line;
                row_done = true;
            } else if (c == '\r') {
                if (i < text.size() && text[i] == '\n') ++i;
                ++line;
                row_done = true;
            } else {
                field().push_back(c);
            }
        }
        if (in_quotes)
            throw InputError(std::string(source) + ":" + std::to_string(row_line) + ": unterminated quoted field in RECORD");
        if (count == 1 && fields[0].empty()) continue;   // blank line
        if (count > 3)
            throw InputError(std::string(source) + ":" + std::to_string(row_line) +
                             ": expected 'path,hash,size' in RECORD, found " + std::to_string(count) + " fields");
        rows.push_back({std::move(fields[0]), std::move(fields[1]), std::move(fields[2])});
    }
    return rows;
}

std::string write_record(std::vector<RecordRow> rows) {
    std::sort(rows.begin(), rows.end(), [](const RecordRow& a, const RecordRow& b) { return a.path < b.path; });
    size_t total = 0;
    for (const auto& r : rows) total += r.path.size() + r.hash.size() + r.size.size() + 3;
    std::string out;
    out.reserve(total + total / 16);
    for (const auto& r : rows) {
        append_quoted_if_needed(out, r.path);
        out.push_back(',');
        append_quoted_if_needed(out, r.hash);
        out.push_back(',');
        append_quoted_if_needed(out, r.size);
        out.push_back('\n');
    }
    return out;
}

std::string record_hash_from_hex(std::string_view hex) {
    unsigned char bytes[64];
    size_t n = 0;
    for (size_t i = 0; i + 1 < hex.size() && n < sizeof bytes; i += 2)
        bytes[n++] = static_cast<unsigned char>(hex_value(hex[i]) * 16 + hex_value(hex[i + 1]));
    std::string out;
    out.reserve(7 + (n * 4 + 2) / 3);
    out = "sha256=";
    size_t i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t(bytes[i]) << 16) | (uint32_t(bytes[i + 1]) << 8) | uint32_t(bytes[i + 2]);
        for (int s = 18; s >= 0; s -= 6) out.push_back(kB64[(v >> s) & 63]);
    }
    if (n - i == 1) {
        uint32_t v = uint32_t(bytes[i]) << 16;
        out.push_back(kB64[(v >> 18) & 63]);
        out.push_back(kB64[(v >> 12) & 63]);
    } else if (n - i == 2) {
        uint32_t v = (uint32_t(bytes[i]) << 16) | (uint32_t(bytes[i + 1]) << 8);
        out.push_back(kB64[(v >> 18) & 63]);
        out.push_back(kB64[(v >> 12) & 63]);
        out.push_back(kB64[(v >> 6) & 63]);
    }
    return out;
}

std::optional<std::string> hex_from_record_hash(std::string_view record_hash) {
    if (record_hash.rfind("sha256=", 0) != 0) return std::nullopt;
    std::string_view b64 = record_hash.substr(7);
    while (!b64.empty() && b64.back() == '=') b64.remove_suffix(1);   // tolerate padding
    unsigned char bytes[32];
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : b64) {
        int v = kB64Values.value[static_cast<unsigned char>(c)];
        if (v < 0) return std::nullopt;
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n == sizeof bytes) return std::nullopt;
            bytes[n++] = static_cast<unsigned char>((acc >> bits) & 0xff);
        }
    }
    if (n != 32) return std::nullopt;
    static const char* hex = "0123456789abcdef";
    std::string out(64, '\0');
    for (size_t k = 0; k < 32; ++k) {
        out[2 * k] = hex[bytes[k] >> 4];
        out[2 * k + 1] = hex[bytes[k] & 0xf];
    }
    return out;
}

bool record_hash_matches(std::string_view record_hash, std::string_view content) {
    size_t eq = record_hash.find('=');
    std::string algo(record_hash.substr(0, eq == std::string_view::npos ? 0 : eq));
    // hashlib's names -> OpenSSL's.
    static const std::pair<const char*, const char*> names[] = {
        {"sha224", "SHA224"}, {"sha256", "SHA256"}, {"sha384", "SHA384"}, {"sha512", "SHA512"},
        {"sha3_224", "SHA3-224"}, {"sha3_256", "SHA3-256"}, {"sha3_384", "SHA3-384"}, {"sha3_512", "SHA3-512"},
        {"blake2b", "BLAKE2b512"}, {"blake2s", "BLAKE2s256"}};
    const char* evp_name = nullptr;
    for (const auto& [py, ossl] : names)
        if (algo == py) evp_name = ossl;
    const EVP_MD* md = evp_name ? EVP_get_digestbyname(evp_name) : nullptr;
    if (!md) throw InputError("RECORD hash '" + std::string(record_hash) + "': not an algorithm a wheel may use (sha256 or stronger)");
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(content.data(), content.size(), digest, &length, md, nullptr) != 1)
        throw EnvironmentError("OpenSSL: cannot compute " + algo);
    std::string out;
    size_t i = 0;
    for (; i + 2 < length; i += 3) {
        uint32_t v = (uint32_t(digest[i]) << 16) | (uint32_t(digest[i + 1]) << 8) | digest[i + 2];
        for (int sh = 18; sh >= 0; sh -= 6) out.push_back(kB64[(v >> sh) & 63]);
    }
    if (length - i == 1) {
        uint32_t v = uint32_t(digest[i]) << 16;
        out.push_back(kB64[(v >> 18) & 63]);
        out.push_back(kB64[(v >> 12) & 63]);
    } else if (length - i == 2) {
        uint32_t v = (uint32_t(digest[i]) << 16) | (uint32_t(digest[i + 1]) << 8);
        out.push_back(kB64[(v >> 18) & 63]);
        out.push_back(kB64[(v >> 12) & 63]);
        out.push_back(kB64[(v >> 6) & 63]);
    }
    std::string_view given = record_hash.substr(eq + 1);
    while (!given.empty() && given.back() == '=') given.remove_suffix(1);
    return given == out;
}

FileDigest digest_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw EnvironmentError("cannot read " + path + ": " + std::strerror(errno));
    Sha256 hash;
    FileDigest d;
    char buffer[1 << 16];
    while (true) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            ::close(fd);
            throw EnvironmentError("cannot read " + path + ": " + std::strerror(e));
        }
        if (n == 0) break;
        hash.update(std::string_view(buffer, static_cast<size_t>(n)));
        d.size += static_cast<uint64_t>(n);
    }
    ::close(fd);
    d.sha256 = hash.hex_digest();
    return d;
}

}  // namespace envlock::install
