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

std::string quoted_if_needed(const std::string& field) {
    if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
    std::string out = "\"";
    for (char c : field) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
    return out;
}

}  // namespace

std::vector<RecordRow> parse_record(std::string_view text, std::string_view source) {
    std::vector<RecordRow> rows;
    size_t i = 0, line = 1;
    while (i < text.size()) {
        std::vector<std::string> fields(1);
        bool in_quotes = false, row_done = false;
        size_t row_line = line;
        while (i < text.size() && !row_done) {
            char c = text[i++];
            if (in_quotes) {
                if (c == '"') {
                    if (i < text.size() && text[i] == '"') {
                        fields.back().push_back('"');
                        ++i;
                    } else {
                        in_quotes = false;
                    }
                } else {
                    if (c == '\n') ++line;
                    fields.back().push_back(c);
                }
            } else if (c == '"' && fields.back().empty()) {
                in_quotes = true;
            } else if (c == ',') {
                fields.emplace_back();
            } else if (c == '\n') {
                ++line;
                row_done = true;
            } else if (c == '\r') {
                if (i < text.size() && text[i] == '\n') ++i;
                ++line;
                row_done = true;
            } else {
                fields.back().push_back(c);
            }
        }
        if (in_quotes)
            throw InputError(std::string(source) + ":" + std::to_string(row_line) + ": unterminated quoted field in RECORD");
        if (fields.size() == 1 && fields[0].empty()) continue;   // blank line
        if (fields.size() > 3)
            throw InputError(std::string(source) + ":" + std::to_string(row_line) +
                             ": expected 'path,hash,size' in RECORD, found " + std::to_string(fields.size()) + " fields");
        fields.resize(3);
        rows.push_back({fields[0], fields[1], fields[2]});
    }
    return rows;
}

std::string write_record(std::vector<RecordRow> rows) {
    std::sort(rows.begin(), rows.end(), [](const RecordRow& a, const RecordRow& b) { return a.path < b.path; });
    std::string out;
    for (const auto& r : rows) out += quoted_if_needed(r.path) + "," + quoted_if_needed(r.hash) + "," + quoted_if_needed(r.size) + "\n";
    return out;
}

std::string record_hash_from_hex(std::string_view hex) {
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        bytes.push_back(static_cast<char>(hex_value(hex[i]) * 16 + hex_value(hex[i + 1])));
    std::string out = "sha256=";
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
        for (int s = 18; s >= 0; s -= 6) out.push_back(kB64[(v >> s) & 63]);
    }
    if (bytes.size() - i == 1) {
        uint32_t v = uint8_t(bytes[i]) << 16;
        out.push_back(kB64[(v >> 18) & 63]);
        out.push_back(kB64[(v >> 12) & 63]);
    } else if (bytes.size() - i == 2) {
        uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
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
    std::string bytes;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : b64) {
        const char* p = std::strchr(kB64, c);
        if (c == '+') p = kB64 + 62;   // tolerate the standard alphabet too
        if (c == '/') p = kB64 + 63;
        if (!p || c == '\0') return std::nullopt;
        acc = (acc << 6) | static_cast<uint32_t>(p - kB64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            bytes.push_back(static_cast<char>((acc >> bits) & 0xff));
        }
    }
    if (bytes.size() != 32) return std::nullopt;
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned char b : bytes) {
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 0xf]);
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
