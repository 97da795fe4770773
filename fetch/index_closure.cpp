#include "fetch/index_closure.hpp"

#include "fetch/wheel_metadata.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <deque>
#include <future>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "fetch/documents.hpp"
#include "fetch/sharded_repodata.hpp"
#include "fetch/url.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/find_chars.hpp"
#include "resolver/specs/pep440.hpp"

namespace envlock::fetch {

namespace {

// A project's files share few version strings (torch's 388 files on the demo mirror's find-links
// page have 91): each distinct one is parsed once.
using ParsedVersions = std::unordered_map<std::string, std::optional<pep440::Version>>;

const std::optional<pep440::Version>& parsed(ParsedVersions& cache, const std::string& version) {
    auto it = cache.find(version);
    if (it == cache.end()) it = cache.emplace(version, pep440::Version::try_parse(version)).first;
    return it->second;
}

// The versions of one project whose metadata is worth reading, newest first.
std::vector<std::string> versions_to_read(const IndexRecords& records, ParsedVersions& cache, const std::vector<std::string>& constraints,
                                          size_t budget, bool beyond_constraints = false) {
    std::vector<pep440::SpecifierSet> sets;
    for (const auto& c : constraints) {
        try {
            sets.push_back(pep440::SpecifierSet::parse(c));
        } catch (const InputError&) {
        }
    }
    std::vector<pep440::Version> versions;
    std::set<std::string> seen;
    if (beyond_constraints) {
        // The newest `budget` releases (a release's builds, +cu118 and +cpu, count once) and
        // whatever the constraints allow.
        std::vector<pep440::Version> all;
        for (const auto& r : records)
            if (const auto& v = parsed(cache, r.version); v && seen.insert(v->str()).second) all.push_back(*v);
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a > b; });
        std::set<std::string> releases;
        for (const auto& v : all) {
            std::string s = v.str();
            releases.insert(s.substr(0, s.find('+')));
            bool allowed = !sets.empty() &&
                           std::all_of(sets.begin(), sets.end(), [&](const pep440::SpecifierSet& set) { return set.contains(v, true); });
            if (releases.size() <= budget || allowed) versions.push_back(v);
        }
        std::vector<std::string> out;
        for (const auto& v : versions) out.push_back(v.str());
        return out;
    }
    std::set<std::string> raw_seen;
    for (const auto& r : records) {
        if (!raw_seen.insert(r.version).second) continue;
        const auto& v = parsed(cache, r.version);
        if (!v || !seen.insert(v->str()).second) continue;
        bool allowed = std::all_of(sets.begin(), sets.end(), [&](const pep440::SpecifierSet& s) { return s.contains(*v, true); });
        if (allowed) versions.push_back(*v);
    }
    std::sort(versions.begin(), versions.end(), [](const auto& a, const auto& b) { return a > b; });
    // A pinned project keeps every version the pins allow; an open one its newest few.
    if (sets.empty() && versions.size() > budget) versions.resize(budget);
    std::vector<std::string> out;
    for (const auto& v : versions) out.push_back(v.str());
    return out;
}

bool is_wheel(const IndexRecord& r) { return r.filename.size() > 4 && r.filename.substr(r.filename.size() - 4) == ".whl"; }

std::string name_of_matchspec(const std::string& matchspec) {
    std::string n = matchspec.substr(0, find_first_of_chars(matchspec, " =<>!~[;"));
    auto colons = n.rfind("::");
    return colons == std::string::npos ? n : n.substr(colons + 2);
}

// A conda-forge-sized channel holds ~465k records; a solve needs the few hundred its roots
// reach through depends. Each document is indexed by name without reading its records (or its
// saved name index is mapped), and only the records of reached names are read. A subdir that
// offers CEP 16 shards is read a shard per reached name, each wave's shards fetched at once.
struct Subdir {
    RepodataDocument doc;
    std::optional<SparseRepodata> sparse;
    std::optional<ShardIndex> shards;
};

std::vector<std::vector<std::pair<size_t, IndexRecord>>> reach_records(std::vector<Subdir>& subdirs,
                                                                       const std::vector<std::string>& roots,
                                                                       const FetchContext& ctx) {
    std::set<std::string> reached;
    std::vector<std::string> wave, next;
    auto reach = [&](const std::string& name) {
        if (reached.insert(name).second) next.push_back(name);
    };
    // Each reached record is read once: for its depends now, and kept for the solve.
    std::vector<std::vector<std::pair<size_t, IndexRecord>>> kept(subdirs.size());
    auto keep = [&](size_t i, IndexRecord& r, size_t position) {
        for (const auto& d : r.depends) reach(name_of_matchspec(d));
        strip_credentials(r);
        kept[i].emplace_back(position, std::move(r));
    };
    for (const auto& r : roots) reach(r);
    while (!next.empty()) {
        wave.swap(next);
        next.clear();
        struct Wanted {
            size_t subdir;
            std::string name, sha256;
        };
        std::vector<DocumentRequest> requests;
        std::vector<Wanted> wanted;
        for (const auto& name : wave) {
            for (size_t i = 0; i < subdirs.size(); ++i) {
                if (subdirs[i].sparse) {
                    visit_records_of(*subdirs[i].sparse, name, [&](IndexRecord& r, size_t position) { keep(i, r, position); });
                } else if (auto it = subdirs[i].shards->shards.find(name); it != subdirs[i].shards->shards.end()) {
                    requests.push_back({subdirs[i].shards->shard_url(name), "", BodyKind::zstd, true});
                    wanted.push_back({i, name, it->second});
                }
            }
        }
        if (requests.empty()) continue;
        auto docs = get_documents(requests, ctx);
        std::vector<std::string> failures, missing;
        for (size_t k = 0; k < docs.size(); ++k) {
            const Document& d = docs[k];
            if (d.missing_offline) missing.push_back(redact_url(d.fetched_url));
            else if (!d.ok())
                failures.push_back(!d.error.empty() ? d.error
                                                    : "cannot fetch the shard of '" + wanted[k].name + "' at " + redact_url(d.fetched_url) +
                                                          ": HTTP " + std::to_string(d.status) + " (its channel's shard index names it)");
        }
        if (!missing.empty()) {
            std::string msg = "offline, and not in the cache:";
            for (const auto& m : missing) msg += "\n  " + m;
            throw EnvironmentError(msg + "\n(run once without --offline to fill the cache)");
        }
        if (!failures.empty()) {
            std::string msg = failures.size() == 1 ? failures.front() : "some repodata shards could not be read:";
            if (failures.size() > 1)
                for (const auto& f : failures) msg += "\n  " + f;
            throw EnvironmentError(msg);
        }
        for (size_t k = 0; k < docs.size(); ++k) {
            const Wanted& w = wanted[k];
            for (auto& r : read_fetched_shard(docs[k], *subdirs[w.subdir].shards, w.name, w.sha256)) keep(w.subdir, r, 0);
        }
    }
    return kept;
}

// A sharded subdir's records in the order its repodata.json would list them: `packages`
// (.tar.bz2) then `packages.conda`, each by file name, as conda-index writes them.
void in_repodata_order(std::vector<std::pair<size_t, IndexRecord>>& records) {
    auto conda = [](const IndexRecord& r) { return r.filename.size() > 6 && r.filename.compare(r.filename.size() - 6, 6, ".conda") == 0; };
    std::sort(records.begin(), records.end(), [&](const auto& a, const auto& b) {
        bool ca = conda(a.second), cb = conda(b.second);
        return ca != cb ? cb : a.second.filename < b.second.filename;
    });
    for (size_t i = 0; i < records.size(); ++i) records[i].first = i;
}

std::vector<CondaChannelRecords> conda_closure(std::vector<RepodataDocument> docs, const std::vector<std::string>& channels,
                                               const std::vector<std::string>& roots, std::vector<std::string>& names_offered,
                                               const FetchContext& ctx) {
    std::vector<Subdir> subdirs;
    for (auto& d : docs) {
        Subdir s;
        if (d.sharded) {
            std::string index_url = d.source.channel_url + "/" + d.source.subdir + "/repodata_shards.msgpack.zst";
            s.shards = parse_shard_index(decompress_zstd(d.body(), d.source.name), d.source, index_url);
        } else {
            s.sparse = open_sparse_repodata(d);
        }
        s.doc = std::move(d);
        subdirs.push_back(std::move(s));
    }
    std::vector<std::vector<std::pair<size_t, IndexRecord>>> kept;
    try {
        kept = reach_records(subdirs, roots, ctx);
    } catch (const StaleNameIndex&) {
        // A saved index that does not fit its body: every saved one is built again from its
        // body (and saved anew), and the walk starts over, so no record can be missed.
        for (auto& s : subdirs)
            if (s.sparse && s.sparse->saved) s.sparse = rebuild_sparse_repodata(s.doc);
        kept = reach_records(subdirs, roots, ctx);
    }
    std::set<std::string> offered;
    for (const auto& s : subdirs) {
        if (s.sparse)
            for (const auto& n : s.sparse->names) offered.emplace(s.sparse->name_of(n));
        else
            for (const auto& [name, hash] : s.shards->shards) offered.insert(name);
    }
    names_offered.assign(offered.begin(), offered.end());
    std::vector<CondaChannelRecords> out;
    for (const auto& ch : channels) out.push_back({ch, {}});
    for (size_t i = 0; i < subdirs.size(); ++i) {
        auto& records = std::find_if(out.begin(), out.end(), [&](const auto& c) { return c.channel == subdirs[i].doc.channel; })->records;
        if (subdirs[i].shards) in_repodata_order(kept[i]);
        for (auto& r : in_file_order(std::move(kept[i]))) records.push_back(std::move(r));
    }
    return out;
}

}  // namespace

IndexClosure collect_index_closure(const ClosureRequest& request, const FetchContext& ctx) {
    IndexClosure out;
    // A find-links page lists every project at once: it is fetched once, first, and read into
    // records on the other core while the channels and the first wave's pages are read here.
    std::future<std::map<std::string, IndexRecords>> linking;
    if (!request.sources.find_links.empty()) {
        IndexSources links;
        links.find_links = request.sources.find_links;
        linking = std::async(std::launch::async, [pages = fetch_pypi_pages(links, {""}, ctx)] {
            std::map<std::string, IndexRecords> linked;
            auto read = read_pypi_pages(pages);
            for (auto& r : read.front()) linked[pep508::normalize_name(r.name)].push_back(std::move(r));
            return linked;
        });
    }
    const std::vector<std::string> channels = expand_channels(request.sources.channels);
    if (request.conda_names.empty()) {
        for (const auto& channel : channels) {
            IndexSources one;
            one.channels = {channel};
            one.subdirs = request.sources.subdirs;
            out.channels.push_back({channel, find_records(one, "", ctx)});
        }
    } else {
        out.channels = conda_closure(fetch_repodata(channels, request.sources.subdirs, ctx, false, true), channels, request.conda_names,
                                     out.conda_names_offered, ctx);
    }

    if (request.sources.index_urls.empty() && request.sources.find_links.empty()) return out;
    std::map<std::string, IndexRecords> linked;
    IndexSources indexes;
    indexes.index_urls = request.sources.index_urls;

    std::deque<std::string> queue;
    std::set<std::string> queued;
    auto enqueue = [&](const std::string& name) {
        std::string n = pep508::normalize_name(name);
        if (queued.insert(n).second) queue.push_back(n);
    };
    for (const auto& n : request.pypi_names) enqueue(n);
    const wheel::TagRanks target_ranks(request.target_tags);
    auto rank_for_target = [&](const IndexRecord& r) {
        try {
            return target_ranks.best(wheel::WheelName::parse(r.filename));
        } catch (const InputError&) {
            return -1;
        }
    };

    // Breadth first, a wave at a time: every page of a wave is fetched at once, then every
    // metadata file its versions need, so a cold resolve waits on a few round trips, not on
    // one per project.
    while (!queue.empty()) {
        std::vector<std::string> wave(queue.begin(), queue.end());
        queue.clear();
        std::vector<IndexRecords> pages = indexes.index_urls.empty() ? std::vector<IndexRecords>(wave.size())
                                                                     : find_pypi_records(indexes, wave, ctx);
        if (linking.valid()) linked = linking.get();
        struct Project {
            IndexRecords kept;
            std::map<std::string, size_t> probe_of;   // version -> index into `probes`
        };
        std::vector<Project> projects(wave.size());
        IndexRecords probes;   // one metadata read per version: files of one version share their Requires-Dist
        for (size_t w = 0; w < wave.size(); ++w) {
            const std::string& name = wave[w];
            IndexRecords& found = pages[w];
            // A name is in one wave only: its find-links records move, not copy.
            if (auto it = linked.find(name); it != linked.end())
                found.insert(found.end(), std::make_move_iterator(it->second.begin()), std::make_move_iterator(it->second.end()));
            auto& seen = out.pypi_versions[name];
            std::unordered_set<std::string_view> listed;
            for (const auto& r : found)
                if (listed.insert(r.version).second) seen.push_back(r.version);
            ParsedVersions versions_of;
            auto c = request.constraints.find(name);
            auto versions = versions_to_read(found, versions_of, c == request.constraints.end() ? std::vector<std::string>{} : c->second,
                                             request.versions_per_project, request.beyond_constraints);
            std::set<std::string> wanted(versions.begin(), versions.end());
            Project& p = projects[w];
            for (auto& r : found) {
                const auto& v = parsed(versions_of, r.version);
                if (v && wanted.count(v->str())) p.kept.push_back(std::move(r));
            }
            // Wheels first: an sdist's metadata can only be had by building it.
            std::stable_sort(p.kept.begin(), p.kept.end(), [](const IndexRecord& a, const IndexRecord& b) { return is_wheel(a) && !is_wheel(b); });
            // One file per version is read, the one the target installs best (torch's macOS
            // wheel lacks the nvidia-* requirements of its linux one).
            std::map<std::string, IndexRecords> unknown_of;
            for (const auto& r : p.kept)
                if (!r.depends_known) unknown_of[pep440::Version::parse(r.version).str()].push_back(r);
            for (auto& [v, files] : unknown_of) {
                p.probe_of[v] = probes.size();
                probes.push_back(std::move(files[metadata_source(files, rank_for_target)]));
            }
        }
        for (auto& note : fill_metadata_any_way(probes, ctx)) out.notes.push_back(std::move(note));
        // A version with only an sdist: its PKG-INFO, else its setup files read statically.
        fill_metadata_from_sdists(probes, ctx, request.read_package);
        for (size_t w = 0; w < wave.size(); ++w) {
            const std::string& name = wave[w];
            Project& p = projects[w];
            size_t dropped = 0;
            for (auto& r : p.kept) {
                if (!r.depends_known) {
                    auto it = p.probe_of.find(pep440::Version::parse(r.version).str());
                    if (it == p.probe_of.end() || !probes[it->second].depends_known) {
                        // An sdist's requirements are known only once it is built, as pip finds
                        // out; it stays a candidate, with that said. A wheel without them is left out.
                        if (is_wheel(r)) {
                            ++dropped;
                            continue;
                        }
                        // Unknown even from its setup files: a candidate still, and the lock
                        // says so if it is chosen.
                        out.pypi.push_back(std::move(r));
                        continue;
                    }
                    r.depends = probes[it->second].depends;
                    if (r.requires_python.empty()) r.requires_python = probes[it->second].requires_python;
                    r.depends_known = true;
                }
                for (const auto& d : r.depends) {
                    try {
                        auto req = pep508::Requirement::parse(d);
                        if (req.applies(request.marker_env)) enqueue(req.normalized_name);
                    } catch (const InputError&) {
                    }
                }
                out.pypi.push_back(std::move(r));
            }
            if (dropped)
                out.notes.push_back(name + ": " + std::to_string(dropped) +
                                    " file(s) left out: no Requires-Dist could be read for them (no core metadata, no readable wheel)");
        }
    }
    return out;
}

}  // namespace envlock::fetch
