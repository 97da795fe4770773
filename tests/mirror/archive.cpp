#include "tests/mirror/archive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

#include "resolver/specs/errors.hpp"
#include "resolver/lock/sha256.hpp"

namespace envlock::mirror {
namespace {

// 2021-06-01T00:00:00Z: a fixed member time keeps archives byte-identical between runs.
constexpr time_t kMemberTime = 1622505600;

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

la_ssize_t append_to_string(struct archive*, void* client, const void* buffer, size_t length) {
    static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
    return static_cast<la_ssize_t>(length);
}

void check(struct archive* a, int rc, const char* what) {
    if (rc < ARCHIVE_WARN)
        throw std::runtime_error(std::string("libarchive ") + what + ": " +
                                 (archive_error_string(a) ? archive_error_string(a) : "?"));
}

std::string write_members(struct archive* a, const std::vector<ArchiveMember>& members) {
    std::string out;
    check(a, archive_write_open(a, &out, nullptr, append_to_string, nullptr), "open");
    for (const auto& m : members) {
        std::unique_ptr<archive_entry, void (*)(archive_entry*)> e(archive_entry_new(), archive_entry_free);
        archive_entry_set_pathname(e.get(), m.path.c_str());
        archive_entry_set_mtime(e.get(), kMemberTime, 0);
        archive_entry_set_uid(e.get(), 0);
        archive_entry_set_gid(e.get(), 0);
        if (!m.symlink_to.empty()) {
            archive_entry_set_filetype(e.get(), AE_IFLNK);
            archive_entry_set_perm(e.get(), 0777);
            archive_entry_set_symlink(e.get(), m.symlink_to.c_str());
            archive_entry_set_size(e.get(), 0);
        } else {
            archive_entry_set_filetype(e.get(), AE_IFREG);
            archive_entry_set_perm(e.get(), m.mode);
            archive_entry_set_size(e.get(), static_cast<la_int64_t>(m.content.size()));
        }
        check(a, archive_write_header(a, e.get()), "header");
        if (m.symlink_to.empty() && !m.content.empty()) {
            auto written = archive_write_data(a, m.content.data(), m.content.size());
            if (written < 0) check(a, ARCHIVE_FATAL, "data");
        }
    }
    check(a, archive_write_close(a), "close");
    return out;
}

}  // namespace

std::string write_tar(const std::vector<ArchiveMember>& members, TarFilter filter) {
    ArchivePtr a(archive_write_new(), archive_write_free);
    check(a.get(), archive_write_set_format_pax_restricted(a.get()), "tar format");
    switch (filter) {
        case TarFilter::none: break;
        case TarFilter::bzip2: check(a.get(), archive_write_add_filter_bzip2(a.get()), "bzip2"); break;
        case TarFilter::zstd: check(a.get(), archive_write_add_filter_zstd(a.get()), "zstd"); break;
        case TarFilter::gzip:
            check(a.get(), archive_write_add_filter_gzip(a.get()), "gzip");
            // No name/timestamp in the gzip header: same bytes on every run.
            check(a.get(), archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr), "gzip opt");
            break;
    }
    // Without this libarchive pads the last block to 10 KiB, which is legal but wasteful.
    archive_write_set_bytes_in_last_block(a.get(), 1);
    return write_members(a.get(), members);
}

std::string write_zip(const std::vector<ArchiveMember>& members, bool stored) {
    ArchivePtr a(archive_write_new(), archive_write_free);
    check(a.get(), archive_write_set_format_zip(a.get()), "zip format");
    check(a.get(), archive_write_set_format_option(a.get(), "zip", "compression", stored ? "store" : "deflate"),
          "zip compression");
    // Sizes are known up front; no zip64 extras or data descriptors are needed.
    archive_write_set_format_option(a.get(), "zip", "zip64", nullptr);
    archive_write_set_bytes_in_last_block(a.get(), 1);
    return write_members(a.get(), members);
}

std::vector<ArchiveMember> read_archive(const std::string& bytes) {
    ArchivePtr a(archive_read_new(), archive_read_free);
    archive_read_support_format_all(a.get());
    archive_read_support_filter_all(a.get());
    if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
        throw InputError(std::string("not an archive: ") + (archive_error_string(a.get()) ?: "?"));
    std::vector<ArchiveMember> out;
    archive_entry* e = nullptr;
    int rc;
    while ((rc = archive_read_next_header(a.get(), &e)) == ARCHIVE_OK) {
        ArchiveMember m;
        m.path = archive_entry_pathname(e);
        m.mode = archive_entry_perm(e);
        if (archive_entry_filetype(e) == AE_IFLNK) {
            m.symlink_to = archive_entry_symlink(e);
        } else {
            char buf[16384];
            la_ssize_t n;
            while ((n = archive_read_data(a.get(), buf, sizeof buf)) > 0) m.content.append(buf, static_cast<size_t>(n));
            if (n < 0) throw InputError(std::string("corrupt archive member ") + m.path);
        }
        out.push_back(std::move(m));
    }
    if (rc != ARCHIVE_EOF)
        throw InputError(std::string("corrupt archive: ") + (archive_error_string(a.get()) ?: "?"));
    return out;
}

std::string md5_hex(const std::string& bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_md5(), nullptr);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 15];
    }
    return out;
}

std::string sha256_hex_of(const std::string& bytes) { return envlock::sha256_hex(bytes); }

std::string record_digest(const std::string& bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
    static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    unsigned i = 0;
    for (; i + 2 < len; i += 3) {
        unsigned v = (digest[i] << 16) | (digest[i + 1] << 8) | digest[i + 2];
        out += table[(v >> 18) & 63];
        out += table[(v >> 12) & 63];
        out += table[(v >> 6) & 63];
        out += table[v & 63];
    }
    if (len - i == 2) {
        unsigned v = (digest[i] << 16) | (digest[i + 1] << 8);
        out += table[(v >> 18) & 63];
        out += table[(v >> 12) & 63];
        out += table[(v >> 6) & 63];
    } else if (len - i == 1) {
        unsigned v = digest[i] << 16;
        out += table[(v >> 18) & 63];
        out += table[(v >> 12) & 63];
    }
    return "sha256=" + out;
}

}  // namespace envlock::mirror
