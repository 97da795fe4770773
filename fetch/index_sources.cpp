#include "fetch/index_sources.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "fetch/conda_repodata.hpp"
#include "fetch/documents.hpp"
#include "fetch/page_cache.hpp"
#include "fetch/pypi_readers.hpp"
#include "fetch/repodata_names.hpp"
#include "fetch/sharded_repodata.hpp"
#include "fetch/url.hpp"

#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSimpleAccept =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

bool is_known_subdir(std::string_view s) {
    for (std::string_view k : {"noarch", "linux-64", "linux-aarch64", "linux-ppc64le", "linux-32", "linux-armv7l",
                               "linux-s390x", "osx-64", "osx-arm64", "win-64", "win-32", "win-arm64"})
        if (s == k) return true;
    return false;
}

void throw_fetch_failures(const std::vector<std::string>& failures, const std::vector<std::string>& missing) {
    if (!missing.empty()) {
        std::string msg = "offline, and not in the cache:";
        for (const auto& m : missing) msg += "\n  " + m;
        msg += "\n(run once without --offline to fill the cache)";
        throw EnvironmentError(msg);
    }
    if (failures.size() == 1) throw EnvironmentError(failures.front());
    if (!failures.empty()) {
        std::string msg = "some indexes could not be read:";
        for (const auto& f : failures) msg += "\n  " + f;
        throw EnvironmentError(msg);
    }
}

std::string status_failure(const Document& d) {
    if (!d.error.empty()) return d.error;
    return "cannot fetch " + redact_url(d.fetched_url) + ": HTTP " + std::to_string(d.status);
}

// A PEP 503 page or a find-links page is HTML. A body without a single tag is something else
// (a proxy's error text, a file that is no index), never "this project has no files".
bool looks_like_html(std::string_view body) {
    for (size_t i = 0; i + 1 < body.size(); ++i)
        if (body[i] == '<' && (std::isalpha(static_cast<unsigned char>(body[i + 1])) || body[i + 1] == '!' || body[i + 1] == '/'))
            return true;
    return false;
}

// A local index root (after the mirrors) must be a folder that exists: otherwise every project
// would look absent, and a typo in a mirror would pass for "no such package".
void require_local_root(const std::string& root, const FetchContext& ctx) {
    std::string mapped = ctx.mirrors.apply(root);
    if (!is_file_url(mapped)) return;
    std::error_code ec;
    if (!fs::is_directory(file_url_path(mapped), ec))
        throw EnvironmentError("package index " + redact_url(root) +
                               (mapped != root ? " (mirrored to " + redact_url(mapped) + ")" : std::string()) +
                               ": no such folder " + file_url_path(mapped));
}

}  // namespace

std::vector<std::string> expand_channels(const std::vector<std::string>& channels) {
    std::vector<std::string> out;
    auto add = [&](const std::string& c) {
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    };
    for (const auto& c : channels) {
        std::string name = trim_trailing_slashes(c);
        if (name == "nodefaults") continue;
        if (name == "defaults") {
            add("pkgs/main");
            add("pkgs/r");
        } else {
            add(c);
        }
    }
    return out;
}

std::pair<std::string, std::string> split_channel(std::string_view channel) {
    bool repo_anaconda = false;
    for (std::string_view d : {"pkgs/main", "pkgs/r", "pkgs/msys2"})
        if (channel == d || (channel.substr(0, d.size()) == d && channel.size() > d.size() && channel[d.size()] == '/'))
            repo_anaconda = true;
    std::string url = channel.find("://") != std::string_view::npos ? std::string(channel)
                      : repo_anaconda ? "https://repo.anaconda.com/" + std::string(channel)
                                      : "https://conda.anaconda.org/" + std::string(channel);
    url = trim_trailing_slashes(url);
    auto slash = url.rfind('/');
    if (slash != std::string::npos && is_known_subdir(std::string_view(url).substr(slash + 1)))
        return {url.substr(0, slash), url.substr(slash + 1)};
    return {url, ""};
}

std::vector<RepodataDocument> fetch_repodata(const std::vector<std::string>& channels, const std::vector<std::string>& subdirs,
                                             const FetchContext& ctx, bool decode, bool shards) {
    struct CondaTarget {
        std::string channel, root, subdir;
        bool optional;   // noarch may be absent
    };
    std::vector<CondaTarget> conda;
    for (const auto& ch : expand_channels(channels)) {
        auto [root, subdir] = split_channel(ch);
        if (!subdir.empty()) conda.push_back({ch, root, subdir, false});
        else
            for (const auto& s : subdirs) conda.push_back({ch, root, s, s == "noarch"});
    }
    // With shards: first the CEP 16 shard index everywhere at once; the subdirs that offer one
    // are read that way. Any answer but a shard index falls back to repodata (a real failure
    // shows on that fetch).
    std::vector<Document> sharded(conda.size());
    std::vector<bool> is_sharded(conda.size(), false);
    if (shards) {
        std::vector<DocumentRequest> probe;
        // A subdir without shards is asked again after a day: channels rarely change format,
        // and the probe would otherwise add a round trip before every repodata fetch.
        for (const auto& c : conda)
            probe.push_back({c.root + "/" + c.subdir + "/repodata_shards.msgpack.zst", "", BodyKind::zstd, false, 24 * 3600});
        sharded = get_documents(probe, ctx);
        for (size_t i = 0; i < conda.size(); ++i) is_sharded[i] = sharded[i].ok();
    }
    // Then repodata.json.zst everywhere else at once; then repodata.json where there is none.
    std::vector<DocumentRequest> first;
    std::vector<size_t> first_for;
    for (size_t i = 0; i < conda.size(); ++i) {
        if (is_sharded[i]) continue;
        first.push_back({conda[i].root + "/" + conda[i].subdir + "/repodata.json.zst", "", BodyKind::zstd});
        first_for.push_back(i);
    }
    auto first_docs = get_documents(first, ctx);
    std::vector<Document> docs(conda.size());
    for (size_t k = 0; k < first_for.size(); ++k) docs[first_for[k]] = std::move(first_docs[k]);
    std::vector<std::string> failures, missing;
    std::vector<DocumentRequest> second;
    std::vector<size_t> second_for;
    for (size_t i = 0; i < conda.size(); ++i) {
        const auto& d = docs[i];
        if (is_sharded[i] || d.ok()) continue;
        if (!d.error.empty()) failures.push_back(d.error);
        else if (d.status == 404) {
            second.push_back({conda[i].root + "/" + conda[i].subdir + "/repodata.json", "", BodyKind::json});
            second_for.push_back(i);
        } else failures.push_back(status_failure(d));
    }
    auto fallback = get_documents(second, ctx);
    for (size_t k = 0; k < second_for.size(); ++k) {
        const auto& d = fallback[k];
        const auto& c = conda[second_for[k]];
        if (d.ok()) continue;
        if (d.missing_offline) {
            if (!c.optional) missing.push_back(redact_url(d.fetched_url));
        } else if (!d.error.empty()) failures.push_back(d.error);
        else if (d.status == 404) {
            if (!c.optional) {
                std::string via = d.fetched_url != d.url ? " (fetched from " + redact_url(d.fetched_url) + ")" : "";
                failures.push_back("no conda channel subdir at " + redact_url(c.root + "/" + c.subdir) +
                                   ": neither repodata.json.zst nor repodata.json exists (HTTP 404)" + via);
            }
        } else failures.push_back(status_failure(d));
    }
    throw_fetch_failures(failures, missing);

    std::vector<RepodataDocument> out;
    auto take = [&](Document& d, const CondaTarget& c) {
        RepodataDocument r;
        r.channel = c.channel;
        r.source = RepodataSource{c.root, c.subdir, redact_url(d.url)};
        r.zstd = d.url.size() > 4 && d.url.substr(d.url.size() - 4) == ".zst";
        r.offset = d.body_offset;
        r.json = std::move(d.data);
        r.cache_path = std::move(d.cache_path);
        r.cache_header = std::move(d.cache_header);
        if (r.zstd && decode) decode_repodata(r);
        out.push_back(std::move(r));
    };
    // In channel order, each channel's subdirs in the order asked for.
    for (size_t i = 0; i < conda.size(); ++i) {
        if (is_sharded[i]) {
            RepodataDocument r;
            r.channel = conda[i].channel;
            r.source = RepodataSource{conda[i].root, conda[i].subdir, redact_url(sharded[i].url)};
            r.zstd = r.sharded = true;
            r.offset = sharded[i].body_offset;
            r.json = std::move(sharded[i].data);
            out.push_back(std::move(r));
            continue;
        }
        if (docs[i].ok()) take(docs[i], conda[i]);
        for (size_t k = 0; k < second_for.size(); ++k)
            if (second_for[k] == i && fallback[k].ok()) take(fallback[k], conda[i]);
    }
    return out;
}

void decode_repodata(RepodataDocument& doc) {
    if (!doc.zstd) return;
    doc.json = PaddedBuffer(decompress_zstd(doc.body(), doc.source.name));
    doc.offset = 0;
    doc.zstd = false;
}

SparseRepodata rebuild_sparse_repodata(RepodataDocument doc) {
    PaddedBuffer entry = doc.json;   // the body as cached (zstd or not), for the saved index
    std::size_t entry_offset = doc.offset;
    bool decoded = doc.zstd;
    decode_repodata(doc);
    SparseRepodata rd = index_repodata(std::move(doc.json), doc.offset, doc.source);
    if (!doc.cache_path.empty())
        save_name_index(name_index_path(doc.cache_path), rd, doc.cache_header, entry.view().substr(entry_offset), decoded);
    return rd;
}

SparseRepodata open_sparse_repodata(RepodataDocument doc) {
    if (!doc.cache_path.empty())
        if (auto saved = load_name_index(name_index_path(doc.cache_path), doc.cache_header, doc.json, doc.offset, doc.source))
            return std::move(*saved);
    return rebuild_sparse_repodata(std::move(doc));
}

IndexRecords find_records(const IndexSources& sources, std::string_view name, const FetchContext& ctx) {
    IndexRecords out;
    // One name: a subdir offering CEP 16 shards gives that name's shard. Every record (no
    // name): repodata.json, not tens of thousands of shards.
    for (auto& doc : fetch_repodata(sources.channels, sources.subdirs, ctx, true, !name.empty())) {
        auto add = [&](IndexRecord& r) {
            strip_credentials(r);   // find_pypi_records strips its own
            out.push_back(std::move(r));
        };
        if (doc.sharded) {
            std::string index_url = doc.source.channel_url + "/" + doc.source.subdir + "/repodata_shards.msgpack.zst";
            auto index = parse_shard_index(decompress_zstd(doc.body(), doc.source.name), doc.source, index_url);
            for (auto& r : shard_records_of(index, std::string(name), ctx)) add(r);
            continue;
        }
        // A whole-document walk: read ahead of it.
        doc.json.advise_sequential();
        visit_repodata_padded(doc.body(), doc.source, name, add);
    }

    auto pypi = find_pypi_records(sources, {std::string(name)}, ctx);
    for (auto& r : pypi.front()) out.push_back(std::move(r));
    return out;
}

PypiPages plan_pypi_pages(const IndexSources& sources, const std::vector<std::string>& names, const FetchContext& ctx) {
    using Target = PypiPages::Target;
    for (const auto& idx : sources.index_urls) require_local_root(trim_trailing_slashes(idx), ctx);
    PypiPages pages;
    pages.names = names;
    pages.cache_dir = ctx.cache_dir;
    auto& pypi = pages.targets;
    for (size_t n = 0; n < names.size(); ++n) {
        const std::string normalized = normalize_project_name(names[n]);
        for (const auto& idx : sources.index_urls) {
            std::string root = trim_trailing_slashes(idx);
            if (root.size() >= 5 && root.substr(root.size() - 5) == "/pypi") pypi.push_back({n, root + "/" + normalized + "/json", Target::json_api, 0, {}, {}});
            else pypi.push_back({n, root + "/" + normalized + "/", Target::simple, 0, {}, {}});
        }
        for (const auto& fl : sources.find_links) {
            std::string mapped = ctx.mirrors.apply(fl);
            std::error_code ec;
            if (is_file_url(mapped) && fs::is_directory(file_url_path(mapped), ec)) pypi.push_back({n, fl, Target::directory, 0, {}, {}});
            else pypi.push_back({n, fl, Target::find_links, 0, {}, {}});
        }
    }
    // Every page of every name at once; a find-links page asked for by several names is
    // fetched once.
    auto& requests = pages.requests;
    std::map<std::string, size_t> request_of;
    for (auto& t : pypi) {
        if (t.kind == Target::directory) {
            // The folder's distributions as the links of a page.
            std::string url = ctx.mirrors.apply(t.url);
            std::error_code ec;
            for (const auto& entry : fs::directory_iterator(file_url_path(url), ec))
                if (entry.is_regular_file()) t.listing += "<a href=\"" + entry.path().filename().string() + "\"></a>\n";
            t.listing_base = url.back() == '/' ? url : url + "/";
            continue;
        }
        auto [it, added] = request_of.try_emplace(t.url, requests.size());
        if (added)
            requests.push_back({t.url, t.kind == Target::simple ? kSimpleAccept : "",
                                t.kind == Target::json_api ? BodyKind::json
                                : t.kind == Target::simple ? BodyKind::simple_page
                                                           : BodyKind::any});
        t.document = it->second;
    }
    return pages;
}

void throw_pypi_page_failures(const std::vector<const PypiPages*>& fetched) {
    using Target = PypiPages::Target;
    std::vector<std::string> failures, missing;
    for (const PypiPages* pages : fetched) {
        std::set<size_t> reported;
        for (const auto& t : pages->targets) {
            if (t.kind == Target::directory || !reported.insert(t.document).second) continue;
            const auto& d = pages->documents[t.document];
            if (d.missing_offline) missing.push_back(redact_url(d.fetched_url));
            else if (!d.error.empty()) failures.push_back(d.error);
            else if (!d.ok() && !(d.status == 404 && t.kind != Target::find_links)) failures.push_back(status_failure(d));
        }
    }
    throw_fetch_failures(failures, missing);
}

PypiPages fetch_pypi_pages(const IndexSources& sources, const std::vector<std::string>& names, const FetchContext& ctx) {
    PypiPages pages = plan_pypi_pages(sources, names, ctx);
    pages.documents = get_documents(pages.requests, ctx);
    throw_pypi_page_failures({&pages});
    return pages;
}

std::vector<IndexRecords> read_pypi_pages(const PypiPages& pages) {
    using Target = PypiPages::Target;
    std::vector<IndexRecords> out(pages.names.size());
    for (const auto& p : pages.targets) {
        const std::string& name = pages.names[p.name];
        const std::string index = redact_url(p.url);
        // Where each record was found, and no credential inside one: they would end up in the
        // lock, and in the page records kept below.
        auto finish = [&](IndexRecords& records) {
            for (auto& r : records) {
                r.index = index;
                strip_credentials(r);
            }
        };
        IndexRecords found;
        if (p.kind == Target::directory) {
            found = parse_find_links(p.listing, p.listing_base, name);
            finish(found);
        } else {
            const auto& d = pages.documents[p.document];
            if (!d.ok()) continue;
            const bool simple_json = d.content_type.find("application/vnd.pypi.simple.v1+json") != std::string::npos;
            PageKey key{p.kind == Target::json_api ? "pypi-json"
                        : p.kind == Target::simple ? (simple_json ? "simple-json" : "simple-html")
                                                   : "find-links",
                        d.url, name, d.identity};
            // A page read with credentials in its URL is not kept: the cache would keep them (as
            // the resolve memo is not written then).
            if (strip_userinfo(d.url) != d.url) key.identity.clear();
            if (auto kept = load_page_records(pages.cache_dir, key)) {
                found = std::move(*kept);
            } else {
                std::string page = redact_url(d.url);
                switch (p.kind) {
                case Target::json_api: found = parse_pypi_json(d.body(), page, name); break;
                case Target::simple:
                    if (simple_json) {
                        found = parse_simple_json(d.body(), d.url, name);
                    } else {
                        if (!looks_like_html(d.body()))
                            throw InputError(page + ": expected a PEP 503 simple page (HTML links), got no HTML at all");
                        found = parse_simple_html(d.body(), d.url, name);
                    }
                    break;
                default:
                    if (!looks_like_html(d.body()))
                        throw InputError(page + ": expected a find-links page (HTML links), got no HTML at all");
                    found = parse_find_links(d.body(), d.url, name);
                    break;
                }
                finish(found);
                save_page_records(pages.cache_dir, key, found);
            }
        }
        // Kept records were finished before they were saved.
        auto& kept = out[p.name];
        kept.insert(kept.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
    }
    return out;
}

std::vector<IndexRecords> find_pypi_records(const IndexSources& sources, const std::vector<std::string>& names,
                                            const FetchContext& ctx) {
    return read_pypi_pages(fetch_pypi_pages(sources, names, ctx));
}

std::vector<std::string> index_project_names(const std::string& index_url, const FetchContext& ctx) {
    std::string root = trim_trailing_slashes(index_url);
    if (root.size() >= 5 && root.substr(root.size() - 5) == "/pypi") return {};   // the JSON API lists nothing
    require_local_root(root, ctx);
    std::string mapped = ctx.mirrors.apply(root);
    std::vector<std::string> names;
    if (is_file_url(mapped) && !fs::exists(file_url_path(mapped) + "/index.html")) {
        // A folder tree without a root page: its subfolders are the projects.
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(file_url_path(mapped), ec))
            if (entry.is_directory()) names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
    auto docs = get_documents({{root + "/", kSimpleAccept}}, ctx);
    const Document& d = docs.front();
    if (d.missing_offline) return {};
    if (!d.ok()) {
        std::string why = d.error.empty() ? "HTTP " + std::to_string(d.status) : d.error;
        throw EnvironmentError("package index " + redact_url(root) + " cannot be read (" + why + "): is the index URL or its mirror right?");
    }
    std::string_view body = d.body();
    if (d.content_type.find("application/vnd.pypi.simple.v1+json") != std::string::npos) {
        // PEP 691: {"projects": [{"name": ...}, ...]}
        try {
            auto doc = nlohmann::json::parse(body);
            for (const auto& p : doc.at("projects")) names.push_back(p.at("name").get<std::string>());
        } catch (const nlohmann::json::exception&) {
            throw InputError(redact_url(root) + "/: expected a PEP 691 project list");
        }
        return names;
    }
    // PEP 503: one <a> per project, its text the name.
    for (size_t at = body.find("<a"); at != std::string_view::npos; at = body.find("<a", at + 2)) {
        size_t open_end = body.find('>', at);
        size_t close = body.find("</a>", open_end == std::string_view::npos ? at : open_end);
        if (open_end == std::string_view::npos || close == std::string_view::npos) break;
        std::string text(body.substr(open_end + 1, close - open_end - 1));
        auto b = text.find_first_not_of(" \t\r\n"), e = text.find_last_not_of(" \t\r\n");
        if (b != std::string::npos) names.push_back(text.substr(b, e - b + 1));
    }
    return names;
}

void strip_credentials(IndexRecord& r) {
    // Without an '@' there is no user info: nothing to copy (this runs for every record read).
    for (std::string* s : {&r.url, &r.channel, &r.index, &r.metadata_url})
        if (s->find('@') != std::string::npos) *s = strip_userinfo(*s);
}

void fill_core_metadata(IndexRecords& records, const FetchContext& ctx) {
    std::vector<DocumentRequest> reqs;
    std::vector<size_t> which;
    for (size_t i = 0; i < records.size(); ++i)
        if (!records[i].depends_known && !records[i].metadata_url.empty()) {
            reqs.push_back({records[i].metadata_url, ""});
            which.push_back(i);
        }
    auto docs = get_documents(reqs, ctx);
    std::vector<std::string> failures, missing;
    for (size_t k = 0; k < docs.size(); ++k) {
        const auto& d = docs[k];
        if (d.missing_offline) missing.push_back(redact_url(d.fetched_url));
        else if (!d.ok()) failures.push_back(status_failure(d));
        else {
            auto meta = parse_core_metadata(d.body());
            auto& r = records[which[k]];
            r.depends = std::move(meta.requires_dist);
            if (!meta.requires_python.empty()) r.requires_python = meta.requires_python;
            r.depends_known = true;
        }
    }
    throw_fetch_failures(failures, missing);
}

}  // namespace envlock::fetch
