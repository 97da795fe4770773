#include "fetch/index_closure.hpp"

#include "fetch/wheel_metadata.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <deque>
#include <future>
#include <limits>
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

std::string requirement_key(const std::string& normalized_name, const std::string& specifier) { return normalized_name + "\t" + specifier; }

namespace {

// A project's files share few version strings (torch's 388 files on the demo mirror's find-links
// page have 91): each distinct one is parsed once.
using ParsedVersions = std::unordered_map<std::string, std::optional<pep440::Version>>;

const std::optional<pep440::Version>& parsed(ParsedVersions& cache, const std::string& version) {
    auto it = cache.find(version);
    if (it == cache.end()) it = cache.emplace(version, pep440::Version::try_parse(version)).first;
    return it->second;
}

// A version a project's pages offer, as far as the page alone tells.
struct Offered {
    pep440::Version version;
    std::string key;           // version.str()
    std::string release;       // its public version: a release's builds (+cu118, +cpu) count once in a window
    bool allowed = false;      // inside every constraint of the spec
    bool fits = false;         // some unyanked file the target can take: Requires-Python holds, and an sdist or a wheel whose tags fit
};

bool is_wheel(const IndexRecord& r);

// Every version some unyanked file offers, newest first.
std::vector<Offered> offered_versions(const IndexRecords& files, ParsedVersions& cache, const std::vector<pep440::SpecifierSet>& must,
                                      const std::optional<pep440::Version>& python, const std::optional<wheel::TagRanks>& tags) {
    std::unordered_map<std::string, bool> python_fits;   // files of a project share few Requires-Python texts
    std::map<std::string, Offered> by_key;
    for (const auto& r : files) {
        if (r.yanked) continue;   // PEP 592: the solve takes no yanked file (pool.cpp)
        const auto& v = parsed(cache, r.version);
        if (!v) continue;
        std::string key = v->str();
        auto it = by_key.find(key);
        if (it == by_key.end()) {
            Offered o{*v, key, v->public_version().str()};
            o.allowed = std::all_of(must.begin(), must.end(), [&](const pep440::SpecifierSet& s) { return s.contains(*v, true); });
            it = by_key.emplace(key, std::move(o)).first;
        }
        if (it->second.fits) continue;
        bool fits = true;
        if (python && !r.requires_python.empty()) {
            auto [f, added] = python_fits.try_emplace(r.requires_python, true);
            if (added) {
                try {
                    f->second = pep440::SpecifierSet::parse(r.requires_python).contains(*python, true);
                } catch (const InputError&) {
                }
            }
            fits = f->second;
        }
        if (fits && tags) {
            try {
                fits = is_wheel(r) ? tags->best(wheel::WheelName::parse(r.filename)) >= 0 : wheel::SdistName::try_parse(r.filename).has_value();
            } catch (const InputError&) {
                fits = false;
            }
        }
        it->second.fits = fits;
    }
    std::vector<Offered> out;
    for (auto& [key, o] : by_key) out.push_back(std::move(o));
    std::sort(out.begin(), out.end(), [](const Offered& a, const Offered& b) { return a.version > b.version; });
    return out;
}

// The newest `window` releases of those a requirement allows, the ones the target can take
// first (a version whose files all need another Python or platform is read only when the
// window reaches past every one that fits). PEP 440: pre-releases only where the specifier
// names one or nothing else matches, as the solve matches them.
// Versions whose metadata, once read, rules them out whatever else is chosen (`ruled_out`) stay
// in the window's reads but do not count in it: the window reaches the next release instead.
void take_window(const std::vector<Offered>& offered, const pep440::SpecifierSet* spec, bool within_constraints, size_t window,
                 std::set<std::string>& wanted, const std::set<std::string>& ruled_out = {}) {
    std::vector<const Offered*> matches;
    for (int pass = 0; pass < 2 && matches.empty(); ++pass) {
        std::optional<bool> pre = pass == 0 ? std::nullopt : std::optional<bool>(true);
        for (const auto& o : offered) {
            // A requirement without a specifier is the empty set: every final release, pre-releases
            // only when nothing else is offered (jupyterlab's newest two are 4.7.0 alphas, which the
            // solve passes over). Beyond the constraints (for an explanation) every release counts:
            // the nearest working set may be a pre-release (mmdet3d 1.0.0rc1).
            bool admitted = spec ? spec->contains(o.version, pre) : !within_constraints || pre.value_or(false) || !o.version.is_prerelease();
            if ((!within_constraints || o.allowed) && admitted) matches.push_back(&o);
        }
    }
    std::stable_partition(matches.begin(), matches.end(), [](const Offered* o) { return o->fits; });
    std::set<std::string> releases;
    for (const Offered* o : matches) {
        if (!releases.count(o->release) && releases.size() >= window) continue;
        if (!ruled_out.count(o->key)) releases.insert(o->release);
        wanted.insert(o->key);
    }
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

// The PyPI part of the closure, breadth first, a wave at a time: every page of a wave is
// fetched at once, then every metadata file its windows add, so a cold resolve waits on a few
// round trips, not on one per project. A project's requirements grow as the versions that
// need it are read; each new one may widen what is read of it, so it is looked at again.
void pypi_closure(const ClosureRequest& request, IndexClosure& out, std::future<std::map<std::string, IndexRecords>>* linking,
                  const FetchContext& ctx) {
    IndexSources indexes;
    indexes.index_urls = request.sources.index_urls;
    std::optional<pep440::Version> python;
    if (!request.python.empty()) python = pep440::Version::try_parse(request.python);
    std::optional<wheel::TagRanks> tags;
    if (!request.tags.empty()) tags.emplace(request.tags);
    const wheel::TagRanks target_ranks(request.target_tags);
    auto rank_for_target = [&](const IndexRecord& r) {
        try {
            return target_ranks.best(wheel::WheelName::parse(r.filename));
        } catch (const InputError&) {
            return -1;
        }
    };
    std::map<std::string, pep440::SpecifierSet> specifiers;   // each requirement's text parsed once
    auto specifier = [&](const std::string& text) -> const pep440::SpecifierSet* {
        auto it = specifiers.find(text);
        if (it == specifiers.end()) {
            try {
                it = specifiers.emplace(text, pep440::SpecifierSet::parse(text)).first;
            } catch (const InputError&) {
                return nullptr;
            }
        }
        return &it->second;
    };

    std::map<std::string, std::set<std::string>> required;   // project -> the specifiers asked of it
    std::map<std::string, std::set<std::string>> extras_of;  // project -> the extras asked of it
    std::set<std::string> named;                               // the projects the spec names
    std::deque<std::string> queue;
    std::set<std::string> queued;
    auto require = [&](const std::string& name, const std::string& spec, const std::vector<std::string>& extras = {}) {
        bool more = required[name].insert(spec).second;
        // A new extra turns on lines of the versions already read: the project is followed again.
        for (const auto& e : extras) more = extras_of[name].insert(pep508::normalize_name(e)).second || more;
        if (more && queued.insert(name).second) queue.push_back(name);
    };
    for (const auto& n : request.pypi_names) {
        std::string name = pep508::normalize_name(n);
        named.insert(name);
        std::vector<std::string> extras;
        if (auto e = request.extras.find(name); e != request.extras.end()) extras.assign(e->second.begin(), e->second.end());
        require(name, "", extras);
        if (auto c = request.constraints.find(name); c != request.constraints.end())
            for (const auto& text : c->second) require(name, text);
    }
    // A window a round widened is a requirement too (the solve may follow a line the closure's
    // Python does not), so widening always reads further.
    for (const auto& [key, size] : request.windows)
        if (auto tab = key.find('\t'); tab != std::string::npos) require(key.substr(0, tab), key.substr(tab + 1));
    auto must_of = [&](const std::string& name) {
        std::vector<pep440::SpecifierSet> must;
        if (auto c = request.constraints.find(name); c != request.constraints.end())
            for (const auto& text : c->second)
                if (const auto* s = specifier(text)) must.push_back(*s);
        return must;
    };
    std::map<std::string, ParsedVersions> parsed_of;
    // Versions read that no solution can take, known from their own metadata: a Requires-Python
    // the target's Python fails, or a requirement on a project the spec constrains that none of
    // its versions within the constraints satisfies (opencv-python 5.0 needs numpy>=2; the spec
    // says numpy<2). A window passes over them to the next release, in the same read, where a
    // solve round would have found them one widening at a time (the answer never depends on
    // the windows; only how soon it is found does).
    std::map<std::string, std::set<std::string>>& ruled_out = out.ruled_out;
    std::map<std::string, bool> satisfiable;   // "project\tspecifier" -> some allowed version offered matches
    auto can_be_met = [&](const pep508::Requirement& dep) {
        auto c = request.constraints.find(dep.normalized_name);
        auto page = out.projects.find(dep.normalized_name);
        if (c == request.constraints.end() || page == out.projects.end()) return true;   // not known yet: assume so
        const std::string key = requirement_key(dep.normalized_name, dep.specifier.str());
        if (auto it = satisfiable.find(key); it != satisfiable.end()) return it->second;
        auto must = must_of(dep.normalized_name);
        ParsedVersions& versions = parsed_of[dep.normalized_name];
        bool met = false;
        for (const auto& r : page->second.files) {
            if (r.yanked) continue;
            const auto& v = parsed(versions, r.version);
            if (!v || !dep.specifier.contains(*v, true)) continue;
            if (std::all_of(must.begin(), must.end(), [&](const pep440::SpecifierSet& m) { return m.contains(*v, true); })) {
                met = true;
                break;
            }
        }
        return satisfiable[key] = met;
    };
    auto rules_out = [&](const IndexRecord& probe) {
        if (python && !probe.requires_python.empty()) {
            try {
                if (!pep440::SpecifierSet::parse(probe.requires_python).contains(*python, true)) return true;
            } catch (const InputError&) {
            }
        }
        for (const auto& d : probe.depends) {
            try {
                auto dep = pep508::Requirement::parse(d);
                if (dep.applies(request.marker_env) && !can_be_met(dep)) return true;
            } catch (const InputError&) {
            }
        }
        return false;
    };

    while (!queue.empty()) {
        std::vector<std::string> wave(queue.begin(), queue.end());
        queue.clear();
        queued.clear();
        std::vector<std::string> unlisted;
        for (const auto& name : wave)
            if (!out.projects.count(name)) unlisted.push_back(name);
        std::vector<IndexRecords> pages = indexes.index_urls.empty() || unlisted.empty() ? std::vector<IndexRecords>(unlisted.size())
                                                                                          : find_pypi_records(indexes, unlisted, ctx);
        if (!indexes.index_urls.empty()) out.pages_read += unlisted.size();
        if (linking && linking->valid()) out.find_links_left = linking->get();
        for (size_t k = 0; k < unlisted.size(); ++k) {
            const std::string& name = unlisted[k];
            ProjectRead& p = out.projects[name];
            p.files = std::move(pages[k]);
            // A name is reached once: its find-links records move, not copy.
            if (auto it = out.find_links_left.find(name); it != out.find_links_left.end()) {
                p.files.insert(p.files.end(), std::make_move_iterator(it->second.begin()), std::make_move_iterator(it->second.end()));
                out.find_links_left.erase(it);
            }
            auto& seen = out.pypi_versions[name];
            std::unordered_set<std::string_view> listed;
            for (const auto& r : p.files)
                if (listed.insert(r.version).second) seen.push_back(r.version);
        }

        // The versions each project's requirements now reach that were not read before.
        struct Probe {
            std::string name, version;
        };
        std::vector<Probe> probed;
        IndexRecords probes;
        for (const auto& name : wave) {
            ProjectRead& p = out.projects[name];
            ParsedVersions& versions_of = parsed_of[name];
            auto offered = offered_versions(p.files, versions_of, must_of(name), python, tags);
            std::set<std::string> wanted;
            for (const auto& text : required[name]) {
                if (request.all_versions) {
                    take_window(offered, text.empty() ? nullptr : specifier(text), true, std::numeric_limits<size_t>::max(), wanted);
                    continue;
                }
                const pep440::SpecifierSet* spec = text.empty() ? nullptr : specifier(text);
                if (!text.empty() && !spec) continue;
                auto w = request.windows.find(requirement_key(name, text));
                take_window(offered, spec, true, w == request.windows.end() ? request.initial_window : w->second, wanted, ruled_out[name]);
            }
            if (request.beyond_constraints && named.count(name)) take_window(offered, nullptr, false, request.beyond_window, wanted);
            std::map<std::string, std::vector<const IndexRecord*>> files_of;
            for (const auto& r : p.files) {
                const auto& v = parsed(versions_of, r.version);
                if (!v) continue;
                std::string key = v->str();
                if (wanted.count(key) && !p.read.count(key)) files_of[key].push_back(&r);
            }
            for (auto& [version, files] : files_of) {
                p.read.insert(version);
                bool known = std::all_of(files.begin(), files.end(), [](const IndexRecord* r) { return r->depends_known; });
                if (known) continue;   // the page said (the PyPI JSON API lists requires_dist)
                IndexRecords candidates;
                for (const IndexRecord* r : files) candidates.push_back(*r);
                probes.push_back(std::move(candidates[metadata_source(candidates, rank_for_target)]));
                probed.push_back({name, version});
            }
        }
        for (auto& note : fill_metadata_any_way(probes, ctx)) out.read_notes.push_back(std::move(note));
        // A version with only an sdist: its PKG-INFO, else its setup files read statically.
        fill_metadata_from_sdists(probes, ctx, request.read_package);
        out.metadata_read += probes.size();
        for (size_t i = 0; i < probes.size(); ++i) {
            const IndexRecord& probe = probes[i];
            if (!probe.depends_known) continue;
            ProjectRead& p = out.projects[probed[i].name];
            ParsedVersions& versions_of = parsed_of[probed[i].name];
            for (auto& r : p.files) {
                if (r.depends_known) continue;
                const auto& v = parsed(versions_of, r.version);
                if (!v || v->str() != probed[i].version) continue;
                r.depends = probe.depends;
                if (r.requires_python.empty()) r.requires_python = probe.requires_python;
                r.depends_known = true;
            }
            if (!request.all_versions && rules_out(probe) && ruled_out[probed[i].name].insert(probed[i].version).second &&
                queued.insert(probed[i].name).second)
                queue.push_back(probed[i].name);   // its windows reach one release further
        }
        // What the versions read need: requirements on other projects (those already met are
        // met again, at no cost), with the lines the extras asked of the project turn on.
        for (const auto& name : wave) {
            ProjectRead& p = out.projects[name];
            ParsedVersions& versions_of = parsed_of[name];
            const std::set<std::string> extras = extras_of[name];
            std::set<std::string_view> followed;   // one version's files share their Requires-Dist
            for (const auto& r : p.files) {
                if (!r.depends_known) continue;
                const auto& v = parsed(versions_of, r.version);
                if (!v || !p.read.count(v->str()) || !followed.insert(r.version).second) continue;
                std::vector<std::string> implied;
                if (request.implied_requirements) implied = request.implied_requirements(name, r.version);
                for (const std::vector<std::string>* lines : {&r.depends, static_cast<const std::vector<std::string>*>(&implied)})
                    for (const auto& d : *lines) {
                        try {
                            auto req = pep508::Requirement::parse(d);
                            if (req.applies(request.marker_env) || (!extras.empty() && req.applies(request.marker_env, extras)))
                                require(req.normalized_name, req.specifier.str(), req.extras);
                        } catch (const InputError&) {
                        }
                    }
            }
        }
    }

    // What the solve sees: the files of the versions read, wheels first (an sdist's metadata
    // can only be had by building it), and the files of the versions no window reached.
    out.pypi.clear();
    out.unread.clear();
    out.notes = out.read_notes;
    for (auto& [name, p] : out.projects) {
        ParsedVersions& versions_of = parsed_of[name];
        auto must = must_of(name);
        IndexRecords kept;
        for (const auto& r : p.files) {
            const auto& v = parsed(versions_of, r.version);
            if (!v) continue;
            if (p.read.count(v->str())) kept.push_back(r);
            else if (!r.yanked &&
                     std::all_of(must.begin(), must.end(), [&](const pep440::SpecifierSet& s) { return s.contains(*v, true); }))
                out.unread.push_back(r);
        }
        std::stable_sort(kept.begin(), kept.end(), [](const IndexRecord& a, const IndexRecord& b) { return is_wheel(a) && !is_wheel(b); });
        size_t dropped = 0;
        for (auto& r : kept) {
            // An sdist's requirements are known only once it is built, as pip finds out; it stays
            // a candidate, and the lock says so if it is chosen. A wheel without them is left out.
            if (!r.depends_known && is_wheel(r)) {
                ++dropped;
                continue;
            }
            out.pypi.push_back(std::move(r));
        }
        if (dropped)
            out.notes.push_back(name + ": " + std::to_string(dropped) +
                                " file(s) left out: no Requires-Dist could be read for them (no core metadata, no readable wheel)");
    }
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
    pypi_closure(request, out, linking.valid() ? &linking : nullptr, ctx);
    return out;
}

void read_more_pypi(const ClosureRequest& request, IndexClosure& closure, const FetchContext& ctx) {
    if (request.sources.index_urls.empty() && request.sources.find_links.empty()) return;
    pypi_closure(request, closure, nullptr, ctx);
}

}  // namespace envlock::fetch
