#include "fetch/wheel_metadata.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

#include "fetch/documents.hpp"
#include "fetch/git_source.hpp"
#include "fetch/pypi_readers.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

namespace {

void take_metadata(IndexRecord& r, std::string_view metadata_text) {
    auto meta = parse_core_metadata(metadata_text);
    r.depends = std::move(meta.requires_dist);
    if (!meta.requires_python.empty()) r.requires_python = meta.requires_python;
    r.depends_known = true;
}

bool is_wheel(const IndexRecord& r) {
    return r.filename.size() > 4 && r.filename.compare(r.filename.size() - 4, 4, ".whl") == 0;
}

}  // namespace

std::string metadata_from_wheel(std::string_view wheel_bytes, std::string_view source) {
    std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
    archive_read_support_format_zip(a.get());
    if (archive_read_open_memory(a.get(), wheel_bytes.data(), wheel_bytes.size()) != ARCHIVE_OK)
        throw InputError(std::string(source) + ": not a wheel (zip) archive: " + archive_error_string(a.get()));
    archive_entry* entry = nullptr;
    while (true) {
        int rc = archive_read_next_header(a.get(), &entry);
        if (rc == ARCHIVE_EOF) break;
        if (rc != ARCHIVE_OK) throw InputError(std::string(source) + ": damaged wheel: " + archive_error_string(a.get()));
        std::string path = archive_entry_pathname(entry);
        auto slash = path.find('/');
        if (slash == std::string::npos || path.substr(slash) != "/METADATA" || path.find(".dist-info") == std::string::npos)
            continue;
        std::string out;
        char buffer[65536];
        la_ssize_t n;
        while ((n = archive_read_data(a.get(), buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
        if (n < 0) throw InputError(std::string(source) + ": damaged wheel: " + archive_error_string(a.get()));
        return out;
    }
    throw InputError(std::string(source) + ": wheel has no *.dist-info/METADATA");
}

void fill_metadata_any_way(IndexRecords& records, const FetchContext& ctx) {
    std::vector<DocumentRequest> sidecars;
    std::vector<size_t> which;
    for (size_t i = 0; i < records.size(); ++i) {
        if (records[i].depends_known) continue;
        std::string url = records[i].metadata_url.empty() ? records[i].url + ".metadata" : records[i].metadata_url;
        sidecars.push_back(DocumentRequest{url, ""});
        which.push_back(i);
    }
    auto docs = get_documents(sidecars, ctx);
    std::vector<DocumentRequest> wheels;
    std::vector<size_t> wheel_for;
    for (size_t k = 0; k < docs.size(); ++k) {
        IndexRecord& r = records[which[k]];
        if (docs[k].ok()) {
            take_metadata(r, docs[k].body());
        } else if (is_wheel(r) && !docs[k].missing_offline) {
            wheels.push_back(DocumentRequest{r.url, ""});
            wheel_for.push_back(which[k]);
        }
    }
    if (wheels.empty()) return;
    auto bodies = get_documents(wheels, ctx);
    for (size_t k = 0; k < bodies.size(); ++k) {
        if (!bodies[k].ok()) continue;
        IndexRecord& r = records[wheel_for[k]];
        try {
            take_metadata(r, metadata_from_wheel(bodies[k].body(), r.url));
        } catch (const InputError&) {
            // Left unknown: the caller leaves such files out and says so.
        }
    }
}

std::map<std::string, std::string> sdist_packaging_files(std::string_view bytes, std::string_view source) {
    std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
    archive_read_support_format_tar(a.get());
    archive_read_support_format_zip(a.get());
    archive_read_support_filter_gzip(a.get());
    archive_read_support_filter_bzip2(a.get());
    archive_read_support_filter_xz(a.get());
    if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
        throw InputError(std::string(source) + ": not an sdist archive: " + archive_error_string(a.get()));
    std::map<std::string, std::string> out;
    archive_entry* entry = nullptr;
    while (true) {
        int rc = archive_read_next_header(a.get(), &entry);
        if (rc == ARCHIVE_EOF) break;
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) throw InputError(std::string(source) + ": damaged sdist: " + archive_error_string(a.get()));
        if (archive_entry_filetype(entry) != AE_IFREG) continue;
        std::string path = archive_entry_pathname(entry);
        auto slash = path.find('/');   // every member sits under NAME-VERSION/
        if (slash == std::string::npos) continue;
        std::string rel = path.substr(slash + 1);
        if (!is_packaging_file(rel) || archive_entry_size(entry) > (1 << 20)) continue;
        std::string text;
        char buffer[65536];
        la_ssize_t n;
        while ((n = archive_read_data(a.get(), buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
        if (n < 0) throw InputError(std::string(source) + ": damaged sdist: " + archive_error_string(a.get()));
        out[rel] = std::move(text);
    }
    return out;
}

void fill_metadata_from_sdists(IndexRecords& records, const FetchContext& ctx, const PackageReader& read) {
    std::vector<DocumentRequest> requests;
    std::vector<size_t> which;
    for (size_t i = 0; i < records.size(); ++i)
        if (!records[i].depends_known && !is_wheel(records[i])) {
            requests.push_back(DocumentRequest{records[i].url, ""});
            which.push_back(i);
        }
    auto bodies = get_documents(requests, ctx);
    for (size_t k = 0; k < bodies.size(); ++k) {
        if (!bodies[k].ok()) continue;
        IndexRecord& r = records[which[k]];
        std::map<std::string, std::string> files;
        try {
            files = sdist_packaging_files(bodies[k].body(), r.url);
        } catch (const InputError&) {
            continue;   // left unknown, and said so per package in the lock
        }
        if (auto pkg_info = files.find("PKG-INFO"); pkg_info != files.end()) {
            auto meta = parse_core_metadata(pkg_info->second);
            if (!meta.requires_python.empty() && r.requires_python.empty()) r.requires_python = meta.requires_python;
            // Metadata 2.2+ marks what it leaves open as Dynamic; older PKG-INFO simply omits
            // Requires-Dist, so only a non-empty list is taken as the answer.
            if (!meta.requires_dist.empty()) {
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
