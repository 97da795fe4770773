// libarchive opened on first use instead of at start-up, as curl_loader.cpp does for libcurl.
// Debian's libarchive brings nine shared libraries (libxml2 and ICU among them): measured with
// perf stat, an empty program linked against it starts in 1.7 ms of CPU against 0.8 ms, about
// a fifth of `envlock --version`. Only reading archives needs it (installs, wheel metadata,
// .conda/.tar.bz2 repodata members); resolve, check, why, spec and inspect never do.
//
// These definitions stand in for the libarchive functions envlock calls: the first call
// dlopens libarchive.so.13 and each function is looked up once.
#include <archive.h>
#include <archive_entry.h>

#include <string>

#include "fetch/lazy_library.hpp"

namespace {

envlock::fetch::LazyLibrary& library() {
    static envlock::fetch::LazyLibrary lib("libarchive.so.13", "libarchive", "reading packages", "libarchive13");
    return lib;
}


}  // namespace

// One definition per function: its pointer is looked up on the first call.
#define ENVLOCK_ARCHIVE_FN(ret, name, params, args)            \
    extern "C" ret name params {                               \
        using fn_t = ret(*) params;                            \
        static const fn_t f = library().function<fn_t>(#name); \
        return f args;                                         \
    }

ENVLOCK_ARCHIVE_FN(struct archive*, archive_read_new, (void), ())
ENVLOCK_ARCHIVE_FN(int, archive_read_free, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_support_filter_all, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_support_filter_bzip2, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_support_filter_gzip, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_support_filter_xz, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_support_filter_zstd, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_support_format_gnutar, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_support_format_tar, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_support_format_zip, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_support_format_zip_seekable, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(int, archive_read_open, (struct archive* a, void* data, archive_open_callback* o, archive_read_callback* r, archive_close_callback* c),
                   (a, data, o, r, c))
ENVLOCK_ARCHIVE_FN(int, archive_read_open_filename, (struct archive* a, const char* file, size_t block), (a, file, block))
ENVLOCK_ARCHIVE_FN(int, archive_read_open_memory, (struct archive* a, const void* buffer, size_t size), (a, buffer, size))
ENVLOCK_ARCHIVE_FN(int, archive_read_next_header, (struct archive* a, struct archive_entry** entry), (a, entry))
ENVLOCK_ARCHIVE_FN(la_ssize_t, archive_read_data, (struct archive* a, void* buffer, size_t size), (a, buffer, size))
ENVLOCK_ARCHIVE_FN(int, archive_read_data_block, (struct archive* a, const void** buffer, size_t* size, la_int64_t* offset),
                   (a, buffer, size, offset))
ENVLOCK_ARCHIVE_FN(const char*, archive_error_string, (struct archive* a), (a))
ENVLOCK_ARCHIVE_FN(__LA_MODE_T, archive_entry_filetype, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(__LA_MODE_T, archive_entry_perm, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(const char*, archive_entry_hardlink, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(const char*, archive_entry_symlink, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(const char*, archive_entry_pathname, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(const char*, archive_entry_pathname_utf8, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(la_int64_t, archive_entry_size, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(int, archive_entry_size_is_set, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(time_t, archive_entry_mtime, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(long, archive_entry_mtime_nsec, (struct archive_entry* e), (e))
ENVLOCK_ARCHIVE_FN(int, archive_entry_mtime_is_set, (struct archive_entry* e), (e))

#undef ENVLOCK_ARCHIVE_FN
