#include "fetch/wheel_metadata.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "fetch/files.hpp"
#include "fetch/git_source.hpp"
#include "fetch/pypi_readers.hpp"
#include "fetch/url.hpp"
#include "fetch/zip_directory.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/utf8.hpp"

namespace envlock::fetch {

namespace fs = std::filesystem;

namespace {

// The end of a wheel asked for first: the end of central directory record and, for all but the
// largest wheels, the directory's dist-info entries (written last) and often METADATA itself.
constexpr std::uint64_t kTailBytes = 16384;
// Asked for when the record was not in the tail (an archive comment longer than the tail).
constexpr std::uint64_t kLongTailBytes = 65536 + 22 + 20;

bool is_wheel(const IndexRecord& r) {
    return r.filename.size() > 4 && r.filename.compare(r.filename.size() - 4, 4, ".whl") == 0;
}

bool is_sha256(const std::string& s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The header lines of a METADATA or PKG-INFO file: all a resolver reads (the body after the
// first blank line is the long description, often most of the file).
std::string header_part(std::string_view text) {
    for (std::size_t at = 0; at < text.size();) {
        std::size_t nl = text.find('\n', at);
        if (nl == std::string_view::npos) break;
        std::string_view line = text.substr(at, nl - at);
        if (line.empty() || line == "\r") return std::string(text.substr(0, at));
        at = nl + 1;
    }
    return std::string(text);
}

void take_metadata(IndexRecord& r, std::string_view metadata_text) {
    auto meta = parse_core_metadata(metadata_text);
    r.depends = std::move(meta.requires_dist);
    if (!meta.requires_python.empty()) r.requires_python = meta.requires_python;
    r.depends_known = true;
}

// What was read of a file, kept for good under its sha256 (the index names the file by it, so
// the bytes and what they hold never change): <cache>/metadata/<2 hex>/<sha256>.<kind>.
fs::path kept_path(const FetchContext& ctx, const IndexRecord& r, std::string_view kind) {
    if (ctx.cache_dir.empty() || !is_sha256(r.sha256)) return {};
    return ctx.cache_dir / "metadata" / r.sha256.substr(0, 2) / (r.sha256 + "." + std::string(kind));
}

std::optional<std::string> read_kept(const fs::path& path) {
    if (path.empty()) return std::nullopt;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    try {
        return read_text_file(path.string(), "metadata cache file");
    } catch (const Error&) {
        return std::nullopt;   // unreadable: read from the network again
    }
}

// Kept for good and trusted whole by every host sharing the cache, so on disk before its name
// exists (fsync, then rename): a host that loses power a moment later leaves the old state or
// the whole file, never an empty one that would read as "requires nothing". Temps of writers
// that died beside it are swept by age (no lock covers this folder).
void keep(const fs::path& path, std::string_view text) {
    if (path.empty()) return;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    replace_cache_file(path.string(), text, {}, true);
    sweep_stale_temps(path.parent_path(), kStaleTempAge);
}

// Where whole files are streamed while they are read: beside the cache, or the temp folder.
// What a process killed before it removed its download left is swept by age.
fs::path download_folder(const FetchContext& ctx) {
    fs::path dir = ctx.cache_dir.empty() ? fs::temp_directory_path() / "envlock-downloads" : ctx.cache_dir / "downloads";
    std::error_code ec;
    fs::create_directories(dir, ec);
    sweep_stale_temps(dir, kStaleTempAge);
    return dir;
}

// A temp name of this host and process: several envlock processes, on several hosts, may
// share a cache, and each removes its download once read.
fs::path download_path(const FetchContext& ctx, const IndexRecord& r) {
    std::string stem = is_sha256(r.sha256) ? r.sha256.substr(0, 16) : sha256_hex(r.url).substr(0, 16);
    return download_folder(ctx) / (stem + "-" + r.filename + ".tmp-" + unique_temp_tail());
}

// The top-level *.dist-info/METADATA member of a wheel opened with libarchive, whether read
// from memory or from a downloaded file.
std::string metadata_member(archive* a, std::string_view source) {
    archive_entry* entry = nullptr;
    while (true) {
        int rc = archive_read_next_header(a, &entry);
        if (rc == ARCHIVE_EOF) break;
        if (rc != ARCHIVE_OK) throw InputError(std::string(source) + ": damaged wheel: " + archive_error_string(a));
        std::string name = archive_entry_pathname(entry);
        auto slash = name.find('/');
        if (slash == std::string::npos || name.substr(slash) != "/METADATA" || name.substr(0, slash).find(".dist-info") == std::string::npos)
            continue;
        std::string out;
        char buffer[65536];
        la_ssize_t n;
        while ((n = archive_read_data(a, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
        if (n < 0) throw InputError(std::string(source) + ": damaged wheel: " + archive_error_string(a));
        return out;
    }
    throw InputError(std::string(source) + ": wheel has no *.dist-info/METADATA");
}

std::string metadata_from_wheel_file(const fs::path& path, std::string_view source) {
    std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
    archive_read_support_format_zip_seekable(a.get());
    if (archive_read_open_filename(a.get(), path.c_str(), 65536) != ARCHIVE_OK)
        throw InputError(std::string(source) + ": not a wheel (zip) archive: " + archive_error_string(a.get()));
    return metadata_member(a.get(), source);
}

// The next range a read by ranges needs, or "" when it has what it needs (or failed). Advances
// the read as far as the bytes held allow.
std::string next_range(RangeState& w, const std::string& shown) {
    try {
        if (!w.member) {
            auto place = find_zip_directory(w.tail, w.tail_start, shown);
            if (!place) {
                if (w.tail_start == 0) throw InputError(shown + ": not a readable wheel (zip): no end of central directory record");
                std::uint64_t from = w.total > kLongTailBytes ? w.total - kLongTailBytes : 0;
                if (from >= w.tail_start) throw InputError(shown + ": not a readable wheel (zip): no end of central directory record");
                return "bytes=" + std::to_string(from) + "-" + std::to_string(w.tail_start - 1);
            }
            if (place->offset < w.tail_start) {
                // Only the directory's end is held: the dist-info entries are written last.
                w.member = find_wheel_metadata(read_zip_directory_end(w.tail, w.tail_start, *place));
                if (!w.member) return "bytes=" + std::to_string(place->offset) + "-" + std::to_string(w.tail_start - 1);
            } else {
                auto members = read_zip_directory(std::string_view(w.tail).substr(place->offset - w.tail_start, place->size), shown);
                w.member = find_wheel_metadata(members);
            }
            if (!w.member) throw InputError(shown + ": the wheel has no *.dist-info/METADATA");
        }
        if (w.member_bytes.empty()) {
            std::uint64_t end = std::min(w.total, w.member->local_offset + member_read_length(*w.member));
            if (w.member->local_offset >= w.tail_start) {
                w.member_bytes = w.tail.substr(w.member->local_offset - w.tail_start);
            } else {
                return "bytes=" + std::to_string(w.member->local_offset) + "-" + std::to_string(end - 1);
            }
        }
        w.done = true;
    } catch (const InputError& e) {
        w.failure = e.what();
    }
    return "";
}

}  // namespace

std::string metadata_from_wheel(std::string_view wheel_bytes, std::string_view source) {
    std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
    archive_read_support_format_zip(a.get());
    if (archive_read_open_memory(a.get(), wheel_bytes.data(), wheel_bytes.size()) != ARCHIVE_OK)
        throw InputError(std::string(source) + ": not a wheel (zip) archive: " + archive_error_string(a.get()));
    return metadata_member(a.get(), source);
}

std::size_t metadata_source(const IndexRecords& files, const std::function<int(const IndexRecord&)>& rank) {
    std::size_t best = files.size(), any_wheel = files.size();
    int best_rank = -1;
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (!is_wheel(files[i])) continue;
        if (any_wheel == files.size()) any_wheel = i;
        int r = rank ? rank(files[i]) : -1;
        if (r >= 0 && (best_rank < 0 || r < best_rank)) best = i, best_rank = r;
    }
    if (best < files.size()) return best;
    return any_wheel < files.size() ? any_wheel : 0;
}

namespace {

std::map<std::string, std::string> packaging_files(archive* a, std::string_view source) {
    std::map<std::string, std::string> out;
    archive_entry* entry = nullptr;
    while (true) {
        int rc = archive_read_next_header(a, &entry);
        if (rc == ARCHIVE_EOF) break;
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) throw InputError(std::string(source) + ": damaged sdist: " + archive_error_string(a));
        if (archive_entry_filetype(entry) != AE_IFREG) continue;
        std::string path = archive_entry_pathname(entry);
        auto slash = path.find('/');   // every member sits under NAME-VERSION/
        if (slash == std::string::npos) continue;
        std::string rel = path.substr(slash + 1);
        if (!is_packaging_file(rel) || archive_entry_size(entry) > (1 << 20)) continue;
        std::string text;
        char buffer[65536];
        la_ssize_t n;
        while ((n = archive_read_data(a, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
        if (n < 0) throw InputError(std::string(source) + ": damaged sdist: " + archive_error_string(a));
        // setup.py and PKG-INFO of old sdists may be Latin-1 (argparse 0.8.0's "Copyright \xA9"):
        // decoded as packaging and Python 2 read them, never a failure, and UTF-8 for the cache's JSON.
        out[rel] = utf8::utf8_or_latin1(text);
    }
    return out;
}

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_read_free)>;

ArchivePtr sdist_reader() {
    ArchivePtr a(archive_read_new(), archive_read_free);
    archive_read_support_format_tar(a.get());
    archive_read_support_format_zip(a.get());
    archive_read_support_filter_gzip(a.get());
    archive_read_support_filter_bzip2(a.get());
    archive_read_support_filter_xz(a.get());
    return a;
}

}  // namespace

std::map<std::string, std::string> sdist_packaging_files(std::string_view bytes, std::string_view source) {
    auto a = sdist_reader();
    if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
        throw InputError(std::string(source) + ": not an sdist archive: " + archive_error_string(a.get()));
    return packaging_files(a.get(), source);
}

namespace {

// PKG-INFO is the answer when it is Metadata 2.2+ and does not leave Requires-Dist to the build
// (PEP 643); an older one only when it lists requirements (older tools wrote them elsewhere).
bool pkg_info_decides(const CoreMetadata& meta) {
    auto dot = meta.metadata_version.find('.');
    int major = 0, minor = 0;
    try {
        major = std::stoi(meta.metadata_version.substr(0, dot));
        if (dot != std::string::npos) minor = std::stoi(meta.metadata_version.substr(dot + 1));
    } catch (const std::exception&) {
    }
    bool dynamic = std::any_of(meta.dynamic.begin(), meta.dynamic.end(), [](const std::string& d) {
        std::string lower = d;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        return lower == "requires-dist";
    });
    if (major > 2 || (major == 2 && minor >= 2)) return !dynamic;
    return !meta.requires_dist.empty();
}

// Read from the file it was streamed to, never whole into memory.
std::map<std::string, std::string> sdist_packaging_files_of(const fs::path& path, std::string_view source) {
    auto a = sdist_reader();
    if (archive_read_open_filename(a.get(), path.c_str(), 65536) != ARCHIVE_OK)
        throw InputError(std::string(source) + ": not an sdist archive: " + archive_error_string(a.get()));
    return packaging_files(a.get(), source);
}

}  // namespace

namespace {

// PEP 643: the sdist's PKG-INFO decides when it is Metadata 2.2+ without Dynamic requirements;
// else its setup files are read (`read`). Requirements that stay unknown leave depends_known false.
void take_sdist_files(MetadataRead& m, const std::map<std::string, std::string>& files, const PackageReader& read) {
    IndexRecord& r = m.record;
    if (files.empty()) return;
    if (auto pkg_info = files.find("PKG-INFO"); pkg_info != files.end()) {
        auto meta = parse_core_metadata(pkg_info->second);
        if (!meta.requires_python.empty() && r.requires_python.empty()) r.requires_python = meta.requires_python;
        if (pkg_info_decides(meta)) {
            r.depends = std::move(meta.requires_dist);
            r.depends_known = true;
            return;
        }
    }
    if (!read) return;
    if (auto deps = read(files)) {
        r.depends = std::move(*deps);
        r.depends_known = true;
    }
}

}  // namespace

namespace {

void took(MetadataRead& m, std::string_view text, const FetchContext& ctx) {
    std::string headers = header_part(text);
    take_metadata(m.record, headers);
    keep(kept_path(ctx, m.record, "METADATA"), headers);
    if (ctx.transport.tally) ctx.transport.tally->metadata_reads += 1;
}

void finished(MetadataRead& m) {
    m.step = MetadataRead::Step::done;
    m.request.reset();
}

void fail(MetadataRead& m, std::string why) {
    m.failure = std::move(why);
    finished(m);
}

// The sdist itself: its packaging files kept from an earlier run, else downloaded whole (streamed
// to disk). Offline and not kept, it stays unknown (as the lock then says).
void start_sdist(MetadataRead& m, const FetchContext& ctx, const PackageReader& read) {
    m.step = MetadataRead::Step::sdist;
    if (auto kept = read_kept(kept_path(ctx, m.record, "sdist.json"))) {
        try {
            take_sdist_files(m, nlohmann::json::parse(*kept).get<std::map<std::string, std::string>>(), read);
            return finished(m);
        } catch (const std::exception&) {
        }
    }
    if (ctx.offline) return finished(m);
    Request q{ctx.mirrors.apply(m.record.url), {}, download_path(ctx, m.record).string(), {}, {}, {}};
    if (is_sha256(m.record.sha256)) q.expected_sha256 = m.record.sha256;
    m.request = std::move(q);
}

void start_ranges(MetadataRead& m, const FetchContext& ctx) {
    m.step = MetadataRead::Step::ranges;
    m.request = Request{ctx.mirrors.apply(m.record.url), {}, {}, {}, {}, "bytes=-" + std::to_string(kTailBytes)};
}

// A server that refuses ranges: the unadvertised "<file>.metadata" sidecar, when it has one.
void start_sidecar(MetadataRead& m, const FetchContext& ctx) {
    m.step = MetadataRead::Step::sidecar;
    m.request = Request{ctx.mirrors.apply(m.record.url + ".metadata"), {}, {}, {}, {}, {}};
}

void start_whole_wheel(MetadataRead& m, const FetchContext& ctx) {
    m.step = MetadataRead::Step::whole_wheel;
    Request q{ctx.mirrors.apply(m.record.url), {}, download_path(ctx, m.record).string(), {}, {}, {}};
    if (is_sha256(m.record.sha256)) q.expected_sha256 = m.record.sha256;
    m.request = std::move(q);
}

// One answer of a read by ranges: more of the file's end, or the member.
void take_range(MetadataRead& m, Response& a) {
    RangeState& w = m.range;
    if (!a.error.empty()) return fail(m, a.error);
    if (!a.ok()) return fail(m, "cannot fetch " + m.shown + ": HTTP " + std::to_string(a.status));
    if (a.status == 200) {
        // A local file (file:// answers whole): all of it is the tail.
        w.tail = std::move(a.body);
        w.tail_start = 0;
        w.total = w.tail.size();
    } else if (w.total == 0) {
        if (a.total_size == 0) return fail(m, "cannot read " + m.shown + " by ranges: the server did not say the file's length");
        w.total = a.total_size;
        w.tail = std::move(a.body);
        w.tail_start = a.range_start;
    } else if (w.member && a.range_start == w.member->local_offset) {
        w.member_bytes = std::move(a.body);
    } else if (a.range_start + a.body.size() == w.tail_start) {
        w.tail = std::move(a.body) + w.tail;   // more of the end: the directory's start
        w.tail_start = a.range_start;
    } else {
        return fail(m, "cannot read " + m.shown + " by ranges: the server answered another range than the one asked");
    }
}

}  // namespace

MetadataRead begin_metadata_read(IndexRecord record, MetadataWays ways, const FetchContext& ctx, const PackageReader& read) {
    MetadataRead m;
    m.record = std::move(record);
    m.ways = ways;
    m.shown = redact_url(m.record.url);
    const bool wheel = is_wheel(m.record);
    if (m.record.depends_known || (ways == MetadataWays::sdist && wheel)) return m;
    if (ways != MetadataWays::sdist) {
        // Kept from an earlier run; offline, nothing else.
        if (auto text = read_kept(kept_path(ctx, m.record, "METADATA"))) {
            take_metadata(m.record, *text);
            return m;
        }
        if (m.record.metadata_url.empty() && !wheel) {
            if (ways == MetadataWays::any) start_sdist(m, ctx, read);
            return m;
        }
        if (ctx.offline) {
            m.missing_offline = true;
            return m;
        }
        // The advertised PEP 658 file; else the wheel's METADATA by ranges.
        if (!m.record.metadata_url.empty()) {
            m.step = MetadataRead::Step::advertised;
            m.request = Request{ctx.mirrors.apply(m.record.metadata_url), {}, {}, {}, {}, {}};
        } else {
            start_ranges(m, ctx);
        }
        return m;
    }
    start_sdist(m, ctx, read);
    return m;
}

void continue_metadata_read(MetadataRead& m, Response a, const FetchContext& ctx, const PackageReader& read) {
    using Step = MetadataRead::Step;
    const bool wheel = is_wheel(m.record);
    // Where a whole file was streamed: the request named it (a name of its own per download).
    const fs::path path = m.request ? fs::path(m.request->dest) : fs::path();
    m.request.reset();
    switch (m.step) {
    case Step::advertised:
        // One that does not answer leaves its wheel to the range read, an sdist to its sidecar.
        if (a.ok()) {
            took(m, a.body, ctx);
            return finished(m);
        }
        return wheel ? start_ranges(m, ctx) : start_sidecar(m, ctx);
    case Step::ranges: {
        if (a.error.empty() && a.range_refused) return start_sidecar(m, ctx);
        take_range(m, a);
        if (m.step == Step::done) return;
        std::string range = next_range(m.range, m.shown);
        if (!range.empty()) {
            m.request = Request{ctx.mirrors.apply(m.record.url), {}, {}, {}, {}, range};
            return;
        }
        if (!m.range.failure.empty()) return fail(m, m.range.failure);
        try {
            took(m, read_zip_member(m.range.member_bytes, *m.range.member, m.shown), ctx);
        } catch (const InputError& e) {
            return fail(m, e.what());
        }
        return finished(m);
    }
    case Step::sidecar:
        // A sidecar must look like core metadata: a server may answer 200 with a page.
        if (a.ok() && !parse_core_metadata(a.body).name.empty()) {
            took(m, a.body, ctx);
            return finished(m);
        }
        if (wheel) return start_whole_wheel(m, ctx);
        if (m.ways == MetadataWays::any) return start_sdist(m, ctx, read);
        return finished(m);
    case Step::whole_wheel: {
        if (!a.error.empty()) {
            fail(m, a.error);
        } else if (!a.ok()) {
            fail(m, "cannot fetch " + m.shown + ": HTTP " + std::to_string(a.status));
        } else {
            try {
                took(m, metadata_from_wheel_file(path, m.shown), ctx);
                if (ctx.transport.tally) ctx.transport.tally->whole_files += 1;
                m.note = "downloaded the whole of " + m.shown + " (" + std::to_string(a.size >> 10) +
                         " KiB) to read its metadata: its server refuses range requests and has no .metadata file";
                finished(m);
            } catch (const InputError& e) {
                fail(m, e.what());
            }
        }
        std::error_code ec;
        fs::remove(path, ec);
        return;
    }
    case Step::sdist: {
        if (!a.error.empty()) {
            fail(m, a.error);
            m.sdist_failure = true;
        } else if (!a.ok()) {
            fail(m, "cannot fetch " + m.shown + ": HTTP " + std::to_string(a.status));
            m.sdist_failure = true;
        } else {
            if (ctx.transport.tally) ctx.transport.tally->metadata_reads += 1, ctx.transport.tally->whole_files += 1;
            m.download = "downloaded the whole of " + m.shown + " (" + std::to_string(a.size >> 10) +
                          " KiB) to read its requirements: an sdist without core metadata";
            try {
                auto files = sdist_packaging_files_of(path, m.shown);
                keep(kept_path(ctx, m.record, "sdist.json"), nlohmann::json(files).dump());
                take_sdist_files(m, files, read);
            } catch (const InputError&) {
                // left unknown, and said so per package in the lock
            }
            finished(m);
        }
        std::error_code ec;
        fs::remove(path, ec);
        return;
    }
    case Step::done: return;
    }
}

void throw_metadata_failures(const std::vector<const MetadataRead*>& reads) {
    std::vector<std::string> offline, failures, sdists;
    for (const MetadataRead* m : reads) {
        if (m->missing_offline) offline.push_back(m->shown);
        else if (!m->failure.empty()) (m->sdist_failure ? sdists : failures).push_back(m->failure);
    }
    if (!offline.empty()) {
        std::string msg = "offline, and the metadata of these files is not in the cache:";
        for (const auto& o : offline) msg += "\n  " + o;
        throw EnvironmentError(msg + "\n(run once without --offline to fill the cache)");
    }
    if (!failures.empty()) {
        std::sort(failures.begin(), failures.end());
        std::string msg = failures.size() == 1 ? "cannot read the core metadata (Requires-Dist) of a file the resolve needs:"
                                               : "cannot read the core metadata (Requires-Dist) of " + std::to_string(failures.size()) +
                                                     " files the resolve needs:";
        for (const auto& f : failures) msg += "\n  " + f;
        throw EnvironmentError(msg);
    }
    if (!sdists.empty()) {
        std::sort(sdists.begin(), sdists.end());
        std::string msg = sdists.size() == 1 ? "cannot download an sdist the resolve needs to read its requirements:"
                                             : "cannot download " + std::to_string(sdists.size()) +
                                                   " sdists the resolve needs to read their requirements:";
        for (const auto& f : sdists) msg += "\n  " + f;
        throw EnvironmentError(msg);
    }
}

namespace {

// Every read of `records` to its end, each step started as the one before it is answered; the
// records take what was read. Throws as throw_metadata_failures; returns the notes.
std::vector<std::string> read_all(IndexRecords& records, MetadataWays ways, const FetchContext& ctx, const PackageReader& read,
                                  std::vector<std::string>* downloads = nullptr) {
    std::vector<MetadataRead> reads;
    reads.reserve(records.size());
    for (auto& r : records) reads.push_back(begin_metadata_read(r, ways, ctx, read));
    std::optional<TransferStream> stream;
    std::map<std::size_t, std::size_t> read_of;   // transfer id -> read
    auto start = [&](std::size_t i) {
        if (!reads[i].request) return;
        if (!stream) stream.emplace(ctx.transport);
        read_of[stream->submit(*reads[i].request)] = i;
    };
    for (std::size_t i = 0; i < reads.size(); ++i) start(i);
    while (stream) {
        auto done = stream->next();
        if (!done) break;
        std::size_t i = read_of.at(done->id);
        continue_metadata_read(reads[i], std::move(done->response), ctx, read);
        start(i);
    }
    std::vector<const MetadataRead*> all;
    std::vector<std::string> notes;
    for (std::size_t i = 0; i < reads.size(); ++i) {
        all.push_back(&reads[i]);
        if (!reads[i].note.empty()) notes.push_back(reads[i].note);
        if (downloads && !reads[i].download.empty()) downloads->push_back(reads[i].download);
    }
    throw_metadata_failures(all);
    for (std::size_t i = 0; i < reads.size(); ++i) records[i] = std::move(reads[i].record);
    return notes;
}

}  // namespace

std::vector<std::string> fill_metadata_any_way(IndexRecords& records, const FetchContext& ctx) {
    return read_all(records, MetadataWays::core, ctx, {});
}

std::vector<std::string> fill_metadata_from_sdists(IndexRecords& records, const FetchContext& ctx, const PackageReader& read) {
    std::vector<std::string> downloads;
    read_all(records, MetadataWays::sdist, ctx, read, &downloads);
    return downloads;
}

}  // namespace envlock::fetch
