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

// One wheel read by ranges: the bytes held so far from the end of the file, then the member's.
struct RangeRead {
    std::size_t record = 0;
    std::string url;                  // after mirrors
    std::string shown;                // redacted, for messages
    std::string tail;                 // bytes [tail_start, total)
    std::uint64_t tail_start = 0, total = 0;
    std::optional<ZipMember> member;
    std::string member_bytes;         // from the member's local header on
    bool refused = false;             // the server answers ranges with the whole file
    bool done = false;
    std::string failure;
};

// The next range this read needs, or "" when it has what it needs (or failed). Advances the
// read as far as the bytes held allow.
std::string next_range(RangeRead& w) {
    try {
        if (!w.member) {
            auto place = find_zip_directory(w.tail, w.tail_start, w.shown);
            if (!place) {
                if (w.tail_start == 0) throw InputError(w.shown + ": not a readable wheel (zip): no end of central directory record");
                std::uint64_t from = w.total > kLongTailBytes ? w.total - kLongTailBytes : 0;
                if (from >= w.tail_start) throw InputError(w.shown + ": not a readable wheel (zip): no end of central directory record");
                return "bytes=" + std::to_string(from) + "-" + std::to_string(w.tail_start - 1);
            }
            if (place->offset < w.tail_start) {
                // Only the directory's end is held: the dist-info entries are written last.
                w.member = find_wheel_metadata(read_zip_directory_end(w.tail, w.tail_start, *place));
                if (!w.member) return "bytes=" + std::to_string(place->offset) + "-" + std::to_string(w.tail_start - 1);
            } else {
                auto members = read_zip_directory(std::string_view(w.tail).substr(place->offset - w.tail_start, place->size), w.shown);
                w.member = find_wheel_metadata(members);
            }
            if (!w.member) throw InputError(w.shown + ": the wheel has no *.dist-info/METADATA");
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

std::vector<std::string> fill_metadata_any_way(IndexRecords& records, const FetchContext& ctx) {
    std::vector<std::string> notes, failures, offline;
    auto tally = ctx.transport.tally;
    auto took = [&](IndexRecord& r, std::string_view text) {
        std::string headers = header_part(text);
        take_metadata(r, headers);
        keep(kept_path(ctx, r, "METADATA"), headers);
        if (tally) tally->metadata_reads += 1;
    };

    // 1. Kept from an earlier run; offline, nothing else.
    std::vector<std::size_t> advertised, ranged, sidecar;
    for (std::size_t i = 0; i < records.size(); ++i) {
        IndexRecord& r = records[i];
        if (r.depends_known) continue;
        if (auto text = read_kept(kept_path(ctx, r, "METADATA"))) {
            take_metadata(r, *text);
            continue;
        }
        // An sdist without advertised metadata is fill_metadata_from_sdists' to read.
        if (r.metadata_url.empty() && !is_wheel(r)) continue;
        if (ctx.offline) {
            offline.push_back(redact_url(r.url));
            continue;
        }
        if (!r.metadata_url.empty()) advertised.push_back(i);
        else ranged.push_back(i);
    }
    if (!offline.empty()) {
        std::string msg = "offline, and the metadata of these files is not in the cache:";
        for (const auto& o : offline) msg += "\n  " + o;
        throw EnvironmentError(msg + "\n(run once without --offline to fill the cache)");
    }

    // 2. The advertised PEP 658 files; one that does not answer leaves its wheel to the range read.
    if (!advertised.empty()) {
        std::vector<Request> wire;
        for (auto i : advertised) wire.push_back(Request{ctx.mirrors.apply(records[i].metadata_url), {}, {}, {}, {}, {}});
        auto answers = perform(wire, ctx.transport);
        for (std::size_t k = 0; k < answers.size(); ++k) {
            IndexRecord& r = records[advertised[k]];
            if (answers[k].ok()) took(r, answers[k].body);
            else if (is_wheel(r)) ranged.push_back(advertised[k]);
            else sidecar.push_back(advertised[k]);
        }
    }

    // 3. Range reads of the wheels, every wheel's next range in one round of transfers.
    std::vector<RangeRead> reads;
    for (auto i : ranged) {
        RangeRead w;
        w.record = i;
        w.url = ctx.mirrors.apply(records[i].url);
        w.shown = redact_url(records[i].url);
        reads.push_back(std::move(w));
    }
    std::vector<RangeRead*> pending;
    std::vector<std::string> ranges;
    for (auto& w : reads) pending.push_back(&w), ranges.push_back("bytes=-" + std::to_string(kTailBytes));
    while (!pending.empty()) {
        std::vector<Request> wire;
        for (std::size_t k = 0; k < pending.size(); ++k) {
            Request q{pending[k]->url, {}, {}, {}, {}, ranges[k]};
            wire.push_back(std::move(q));
        }
        auto answers = perform(wire, ctx.transport);
        std::vector<RangeRead*> next;
        std::vector<std::string> next_ranges;
        for (std::size_t k = 0; k < answers.size(); ++k) {
            RangeRead& w = *pending[k];
            Response& a = answers[k];
            if (!a.error.empty()) {
                w.failure = a.error;
                continue;
            }
            if (a.range_refused) {
                w.refused = true;
                continue;
            }
            if (!a.ok()) {
                w.failure = "cannot fetch " + w.shown + ": HTTP " + std::to_string(a.status);
                continue;
            }
            if (a.status == 200) {
                // A local file (file:// answers whole): all of it is the tail.
                w.tail = std::move(a.body);
                w.tail_start = 0;
                w.total = w.tail.size();
            } else if (w.total == 0) {
                if (a.total_size == 0) {
                    w.failure = "cannot read " + w.shown + " by ranges: the server did not say the file's length";
                    continue;
                }
                w.total = a.total_size;
                w.tail = std::move(a.body);
                w.tail_start = a.range_start;
            } else if (w.member && a.range_start == w.member->local_offset) {
                w.member_bytes = std::move(a.body);
            } else if (a.range_start + a.body.size() == w.tail_start) {
                w.tail = std::move(a.body) + w.tail;   // more of the end: the directory's start
                w.tail_start = a.range_start;
            } else {
                w.failure = "cannot read " + w.shown + " by ranges: the server answered another range than the one asked";
                continue;
            }
            std::string range = next_range(w);
            if (!range.empty()) next.push_back(&w), next_ranges.push_back(range);
        }
        pending.swap(next);
        ranges.swap(next_ranges);
    }
    std::vector<std::size_t> refused;
    for (auto& w : reads) {
        IndexRecord& r = records[w.record];
        if (w.refused) {
            refused.push_back(w.record);
        } else if (!w.failure.empty()) {
            failures.push_back(w.failure);
        } else {
            try {
                took(r, read_zip_member(w.member_bytes, *w.member, w.shown));
            } catch (const InputError& e) {
                failures.push_back(e.what());
            }
        }
    }

    // 4. A server that refuses ranges: the "<file>.metadata" sidecar when it has one, else the
    // whole wheel, streamed to disk and read there.
    for (auto i : refused) sidecar.push_back(i);
    std::vector<std::size_t> whole;
    if (!sidecar.empty()) {
        std::vector<Request> wire;
        for (auto i : sidecar) wire.push_back(Request{ctx.mirrors.apply(records[i].url + ".metadata"), {}, {}, {}, {}, {}});
        auto answers = perform(wire, ctx.transport);
        for (std::size_t k = 0; k < answers.size(); ++k) {
            IndexRecord& r = records[sidecar[k]];
            // A sidecar must look like core metadata: a server may answer 200 with a page.
            if (answers[k].ok() && !parse_core_metadata(answers[k].body).name.empty()) took(r, answers[k].body);
            else if (is_wheel(r)) whole.push_back(sidecar[k]);
        }
    }
    if (!whole.empty()) {
        std::vector<Request> wire;
        for (auto i : whole) {
            Request q{ctx.mirrors.apply(records[i].url), {}, download_path(ctx, records[i]).string(), {}, {}, {}};
            if (is_sha256(records[i].sha256)) q.expected_sha256 = records[i].sha256;
            wire.push_back(std::move(q));
        }
        auto answers = perform(wire, ctx.transport);
        for (std::size_t k = 0; k < answers.size(); ++k) {
            IndexRecord& r = records[whole[k]];
            const std::string shown = redact_url(r.url);
            const fs::path path = wire[k].dest;
            if (!answers[k].error.empty()) {
                failures.push_back(answers[k].error);
            } else if (!answers[k].ok()) {
                failures.push_back("cannot fetch " + shown + ": HTTP " + std::to_string(answers[k].status));
            } else {
                try {
                    took(r, metadata_from_wheel_file(path, shown));
                    if (tally) tally->whole_files += 1;
                    notes.push_back("downloaded the whole of " + shown + " (" + std::to_string(answers[k].size >> 10) +
                                    " KiB) to read its metadata: its server refuses range requests and has no .metadata file");
                } catch (const InputError& e) {
                    failures.push_back(e.what());
                }
            }
            std::error_code ec;
            fs::remove(path, ec);
        }
    }
    if (!failures.empty()) {
        std::sort(failures.begin(), failures.end());
        std::string msg = failures.size() == 1 ? "cannot read the core metadata (Requires-Dist) of a file the resolve needs:"
                                               : "cannot read the core metadata (Requires-Dist) of " + std::to_string(failures.size()) +
                                                     " files the resolve needs:";
        for (const auto& f : failures) msg += "\n  " + f;
        throw EnvironmentError(msg);
    }
    return notes;
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

void fill_metadata_from_sdists(IndexRecords& records, const FetchContext& ctx, const PackageReader& read) {
    // Each sdist's packaging files: kept from an earlier run, else downloaded (streamed to disk).
    std::vector<std::size_t> which;
    std::vector<std::map<std::string, std::string>> files_of;
    std::vector<Request> wire;
    std::vector<std::size_t> wire_of;
    for (std::size_t i = 0; i < records.size(); ++i) {
        if (records[i].depends_known || is_wheel(records[i])) continue;
        which.push_back(i);
        files_of.emplace_back();
        if (auto kept = read_kept(kept_path(ctx, records[i], "sdist.json"))) {
            try {
                files_of.back() = nlohmann::json::parse(*kept).get<std::map<std::string, std::string>>();
                continue;
            } catch (const std::exception&) {
            }
        }
        if (ctx.offline) continue;   // stays unknown, as the lock then says
        Request q{ctx.mirrors.apply(records[i].url), {}, download_path(ctx, records[i]).string(), {}, {}, {}};
        if (is_sha256(records[i].sha256)) q.expected_sha256 = records[i].sha256;
        wire.push_back(std::move(q));
        wire_of.push_back(which.size() - 1);
    }
    auto answers = perform(wire, ctx.transport);
    std::vector<std::string> failures;
    for (std::size_t k = 0; k < answers.size(); ++k) {
        IndexRecord& r = records[which[wire_of[k]]];
        const std::string shown = redact_url(r.url);
        const fs::path path = wire[k].dest;
        if (!answers[k].error.empty()) {
            failures.push_back(answers[k].error);
        } else if (!answers[k].ok()) {
            failures.push_back("cannot fetch " + shown + ": HTTP " + std::to_string(answers[k].status));
        } else {
            if (ctx.transport.tally) ctx.transport.tally->metadata_reads += 1, ctx.transport.tally->whole_files += 1;
            try {
                auto files = sdist_packaging_files_of(path, shown);
                keep(kept_path(ctx, r, "sdist.json"), nlohmann::json(files).dump());
                files_of[wire_of[k]] = std::move(files);
            } catch (const InputError&) {
                // left unknown, and said so per package in the lock
            }
        }
        std::error_code ec;
        fs::remove(path, ec);
    }
    if (!failures.empty()) {
        std::string msg = failures.size() == 1 ? "cannot download an sdist the resolve needs to read its requirements:"
                                               : "cannot download " + std::to_string(failures.size()) +
                                                     " sdists the resolve needs to read their requirements:";
        for (const auto& f : failures) msg += "\n  " + f;
        throw EnvironmentError(msg);
    }
    for (std::size_t k = 0; k < which.size(); ++k) {
        IndexRecord& r = records[which[k]];
        const auto& files = files_of[k];
        if (files.empty()) continue;
        if (auto pkg_info = files.find("PKG-INFO"); pkg_info != files.end()) {
            auto meta = parse_core_metadata(pkg_info->second);
            if (!meta.requires_python.empty() && r.requires_python.empty()) r.requires_python = meta.requires_python;
            if (pkg_info_decides(meta)) {
                r.depends = std::move(meta.requires_dist);
                r.depends_known = true;
                continue;
            }
        }
        if (!read) continue;
        if (auto deps = read(files)) {
            r.depends = std::move(*deps);
            r.depends_known = true;
        }
    }
}

}  // namespace envlock::fetch
