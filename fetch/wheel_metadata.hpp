#pragma once
// Requires-Dist of PyPI files whose index page does not carry it, by the cheapest means the
// index allows, per file: the advertised PEP 658/714 file; else HTTP range reads of the wheel
// (the zip's end, its central directory, the one *.dist-info/METADATA member, as uv and pip
// read it); else the unadvertised "<file>.metadata" sidecar when the server refuses ranges;
// else the whole file, streamed to disk. What was read is kept in the cache for good under the
// file's sha256 (a file named by its hash never changes): a metadata read is paid once per machine.
#include <functional>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fetch/settings.hpp"
#include "fetch/transport.hpp"
#include "fetch/zip_directory.hpp"
#include "resolver/specs/record.hpp"

namespace envlock::fetch {

// The METADATA member of a wheel held in memory; InputError naming `source` when the bytes
// are not a zip or hold no *.dist-info/METADATA.
std::string metadata_from_wheel(std::string_view wheel_bytes, std::string_view source);

// Which of one version's files its metadata is read from: the wheel the target installs best
// (`rank`: 0 best, -1 for a wheel the target cannot install), else another wheel of the version
// (never a macOS or aarch64 wheel while one the target installs exists), else the first file.
// `files` is not empty.
std::size_t metadata_source(const IndexRecords& files, const std::function<int(const IndexRecord&)>& rank);

// The packaging files of an sdist held in memory (.tar.gz, .tar.bz2, .zip), by path below
// its top folder: PKG-INFO, setup.py, setup.cfg, pyproject.toml, requirements*.txt,
// requirements/*.txt. InputError naming `source` when the bytes are no such archive.
std::map<std::string, std::string> sdist_packaging_files(std::string_view bytes, std::string_view source);

// Reads a package's requirements statically from its packaging files; nullopt when they stay
// unknown. The caller supplies it (reading setup.py is inference's job, not fetch's).
using PackageReader = std::function<std::optional<std::vector<std::string>>(const std::map<std::string, std::string>&)>;

// For each sdist record whose depends are unknown: downloads it (streamed to disk; its packaging
// files are kept in the cache under its sha256) and takes its requirements from PKG-INFO when
// that is Metadata 2.2+ and does not mark Requires-Dist Dynamic, or an older one that lists
// some, else from `read` over its packaging files. Records that stay unknown keep depends_known
// false. Throws EnvironmentError naming every sdist that could not be downloaded. Returns what
// was downloaded (for -v).
std::vector<std::string> fill_metadata_from_sdists(IndexRecords& records, const FetchContext& ctx, const PackageReader& read);

// Fills depends/requires_python/depends_known of each record that lacks them (sdists without
// advertised metadata are left to fill_metadata_from_sdists). Throws EnvironmentError (exit 3)
// naming every file whose metadata could not be read (network failure, an HTTP error, a file
// that is no wheel), and offline, every file whose metadata is not in the cache. Returns notes
// for the user: the files read whole because their server refused range requests.
std::vector<std::string> fill_metadata_any_way(IndexRecords& records, const FetchContext& ctx);

// The ways a metadata read may take.
enum class MetadataWays {
    core,    // fill_metadata_any_way's: an sdist without advertised metadata is left unread
    sdist,   // fill_metadata_from_sdists': the sdist itself
    any,     // core metadata, and for an sdist without any, the sdist itself
};

// A wheel read by ranges so far: the bytes held from the end of the file, then the member's.
struct RangeState {
    std::string tail;                 // bytes [tail_start, total)
    std::uint64_t tail_start = 0, total = 0;
    std::optional<ZipMember> member;
    std::string member_bytes;         // from the member's local header on
    bool done = false;
    std::string failure;
};

// One file's metadata read step by step, in the order of the ways above, for a caller that
// streams its transfers (TransferStream): each step's request is made the moment the answer
// before it is in (a range read is three steps: the zip's end, its directory, the member).
//   auto m = begin_metadata_read(record, MetadataWays::any, ctx, reader);
//   while (m.request) continue_metadata_read(m, <the answer to *m.request>, ctx, reader);
// Then m.record holds what was read; a read that failed says why (throw_metadata_failures).
struct MetadataRead {
    IndexRecord record;
    std::optional<Request> request;    // the transfer to make next; none once the read is over
    std::string failure;               // over without metadata because a fetch or a file failed
    bool sdist_failure = false;        // ... while downloading an sdist
    bool missing_offline = false;      // offline, and not in the cache
    std::string note;                  // a whole wheel was downloaded to read it (ranges refused): said always
    std::string download;              // an sdist was downloaded to read it: what -v lists
    enum class Step { advertised, ranges, sidecar, whole_wheel, sdist, done } step = Step::done;
    MetadataWays ways = MetadataWays::any;
    RangeState range;
    std::string shown;                 // the file's URL, redacted
};
MetadataRead begin_metadata_read(IndexRecord record, MetadataWays ways, const FetchContext& ctx, const PackageReader& read);
void continue_metadata_read(MetadataRead& read, Response answer, const FetchContext& ctx, const PackageReader& reader);

// Throws what fill_metadata_any_way and fill_metadata_from_sdists throw for the reads that
// failed (EnvironmentError naming every file), if any did.
void throw_metadata_failures(const std::vector<const MetadataRead*>& reads);

}  // namespace envlock::fetch
