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
#include <variant>

#include "fetch/documents.hpp"
#include "fetch/transport.hpp"
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

}  // namespace

struct ClosureMemo {
    std::map<std::string, std::set<std::string>> required;   // project -> the specifiers asked of it
    std::map<std::string, std::set<std::string>> extras_of;  // project -> the extras asked of it
    std::map<std::string, ParsedVersions> parsed_of;
    std::map<std::string, std::vector<Offered>> offered_of;   // what each parsed page offers
};

namespace {

// The PyPI part of the closure, streamed: a project's page is requested the moment a version
// read (or the spec) first requires the project, and a version's metadata read starts the moment
// its project's page is parsed and a window reaches it, each on one stream of transfers
// (TransferStream), so a cold resolve waits on the longest chain of answers, not on a round trip
// per level of the dependency graph times the slowest answer of each. Pages are parsed and
// metadata taken here while the stream's thread keeps the transfers going.
//
// What is read does not depend on the order answers arrive in: every decision is taken again when
// what it depends on arrives (a version ruled out by a requirement on a project whose page is not
// parsed yet is judged once that page is), so the versions read are always the least set that
// the requirements, windows and ruled-out versions close over, whatever the order. The solve
// sees them in page order.
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

    if (!out.memo) out.memo = std::make_shared<ClosureMemo>();
    auto& required = out.memo->required;
    auto& extras_of = out.memo->extras_of;
    std::set<std::string> named;                               // the projects the spec names
    // Projects whose windows must be looked at again (a new requirement, a version ruled out,
    // their page parsed), and those whose read versions must be followed again (a new extra).
    std::set<std::string> dirty, refollow;
    // Every project read before is looked at again: a wider window, every version
    // (all_versions), or the releases beyond the constraints may reach more of it.
    for (const auto& [name, project] : out.projects) dirty.insert(name);
    auto require = [&](const std::string& name, const std::string& spec, const std::vector<std::string>& extras = {}) {
        if (required[name].insert(spec).second) dirty.insert(name);
        // A new extra turns on lines of the versions already read: the project is followed again.
        for (const auto& e : extras)
            if (extras_of[name].insert(pep508::normalize_name(e)).second) refollow.insert(name);
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
    auto& parsed_of = out.memo->parsed_of;
    auto& offered_of = out.memo->offered_of;
    // Versions read that no solution can take, known from their own metadata: a Requires-Python
    // the target's Python fails, or a requirement on a project the spec constrains that none of
    // its versions within the constraints satisfies (opencv-python 5.0 needs numpy>=2; the spec
    // says numpy<2). A window passes over them to the next release, in the same read, where a
    // solve round would have found them one widening at a time (the answer never depends on
    // the windows; only how soon it is found does).
    std::map<std::string, std::set<std::string>>& ruled_out = out.ruled_out;
    std::map<std::string, bool> satisfiable;   // "project\tspecifier" -> some allowed version offered matches
    // Whether a requirement on a constrained project can be met; nullopt while its page is not parsed.
    auto can_be_met = [&](const pep508::Requirement& dep) -> std::optional<bool> {
        auto c = request.constraints.find(dep.normalized_name);
        if (c == request.constraints.end()) return true;
        auto page = out.projects.find(dep.normalized_name);
        if (page == out.projects.end()) return std::nullopt;
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
    // A probe's version is ruled out (true), or not, or not yet known: then `waiting_on` names
    // the constrained projects whose pages decide.
    auto rules_out = [&](const IndexRecord& probe, std::vector<std::string>& waiting_on) {
        if (python && !probe.requires_python.empty()) {
            try {
                if (!pep440::SpecifierSet::parse(probe.requires_python).contains(*python, true)) return true;
            } catch (const InputError&) {
            }
        }
        for (const auto& d : probe.depends) {
            try {
                auto dep = pep508::Requirement::parse(d);
                if (!dep.applies(request.marker_env)) continue;
                auto met = can_be_met(dep);
                if (!met) waiting_on.push_back(dep.normalized_name);
                else if (!*met) return true;
            } catch (const InputError&) {
            }
        }
        return false;
    };
    struct Probe {
        std::string name, version;
        MetadataRead read;
    };
    std::vector<Probe> probes;
    // Probes whose ruling waits on a page, by the project of that page.
    std::map<std::string, std::vector<std::size_t>> rulings_waiting;
    auto judge = [&](std::size_t i) {
        std::vector<std::string> waiting_on;
        const Probe& probe = probes[i];
        if (rules_out(probe.read.record, waiting_on)) {
            if (ruled_out[probe.name].insert(probe.version).second) dirty.insert(probe.name);   // its windows reach one release further
        } else {
            for (const auto& name : waiting_on) rulings_waiting[name].push_back(i);
        }
    };

    // What a version read needs: requirements on other projects, with the lines the extras asked
    // of the project turn on (those already met are met again, at no cost).
    auto follow = [&](const std::string& name, const IndexRecord& r) {
        const std::set<std::string>& extras = extras_of[name];
        std::vector<std::string> implied;   // the knowledge base's import gates of this release
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
    };
    auto follow_again = [&](const std::string& name) {
        auto pit = out.projects.find(name);
        if (pit == out.projects.end()) return;
        ProjectRead& p = pit->second;
        ParsedVersions& versions_of = parsed_of[name];
        std::set<std::string_view> followed;   // one version's files share their Requires-Dist
        for (const auto& r : p.files) {
            if (!r.depends_known) continue;
            const auto& v = parsed(versions_of, r.version);
            if (!v || !p.read.count(v->str()) || !followed.insert(r.version).second) continue;
            follow(name, r);
        }
    };

    TransferStream stream(ctx.transport);
    std::deque<PypiPages> pages;                       // one set per project asked for (a parse holds a reference)
    std::deque<std::vector<DocumentFetch>> page_docs;
    std::vector<std::size_t> page_waiting;             // transfers each set still waits on
    std::deque<std::size_t> pages_ready;               // answered: to check, then parse
    // Pages are parsed on threads of their own, a few at once, while answers keep being acted on
    // here: a cold resolve's CPU is mostly pages (30 MB of them for 15 data-science projects).
    constexpr std::size_t kParsers = 2;
    std::deque<std::size_t> to_parse;
    std::vector<std::pair<std::size_t, std::future<IndexRecords>>> parsing;
    std::set<std::string> pages_asked;
    std::deque<std::size_t> probes_ready;
    // What each transfer in flight is for: a page set's document, or a probe's next step.
    struct ForPage {
        std::size_t set, document;
    };
    std::map<std::size_t, std::variant<ForPage, std::size_t>> purpose;
    std::vector<std::size_t> failed_pages, failed_reads;   // page sets, probes
    std::vector<std::string> notes, downloads;
    // After a failure nothing new is asked: what is in flight is drained and the failures named.
    auto failed = [&] { return !failed_pages.empty() || !failed_reads.empty(); };

    auto ask_page = [&](const std::string& name) {
        if (out.projects.count(name) || !pages_asked.insert(name).second || failed()) return;
        const std::size_t set = pages.size();
        pages.push_back(indexes.index_urls.empty() ? PypiPages{} : plan_pypi_pages(indexes, {name}, ctx));
        pages.back().names = {name};
        page_docs.emplace_back();
        page_waiting.push_back(0);
        for (std::size_t k = 0; k < pages[set].requests.size(); ++k) {
            page_docs[set].push_back(start_document(pages[set].requests[k], ctx));
            if (auto& wire = page_docs[set][k].wire) {
                purpose[stream.submit(*wire)] = ForPage{set, k};
                ++page_waiting[set];
            }
        }
        if (page_waiting[set] == 0) pages_ready.push_back(set);
    };
    auto start_probe = [&](std::size_t i) {
        if (probes[i].read.request) purpose[stream.submit(*probes[i].read.request)] = i;
        else probes_ready.push_back(i);
    };

    // A project's pages answered: a failure is kept to be said; the pages go to be parsed.
    auto page_answered = [&](std::size_t set) {
        PypiPages& p = pages[set];
        for (auto& doc : page_docs[set]) p.documents.push_back(std::move(doc.document));
        page_docs[set].clear();
        if (!p.requests.empty()) {
            try {
                throw_pypi_page_failures({&p});
            } catch (const EnvironmentError&) {
                failed_pages.push_back(set);
                return;
            }
        }
        to_parse.push_back(set);
    };
    auto start_parses = [&] {
        while (parsing.size() < kParsers && !to_parse.empty()) {
            std::size_t set = to_parse.front();
            to_parse.pop_front();
            const PypiPages& p = pages[set];
            parsing.emplace_back(set, std::async(std::launch::async, [&p] {
                return p.requests.empty() ? IndexRecords{} : std::move(read_pypi_pages(p).front());
            }));
        }
    };
    // A project's page parsed: its files, with the find-links records of the project after them.
    auto page_parsed = [&](std::size_t set, IndexRecords files) {
        PypiPages& p = pages[set];
        const std::string name = p.names.front();
        if (!p.requests.empty()) ++out.pages_read;
        p.documents.clear();   // the bodies: the records are what is kept
        if (linking && linking->valid()) out.find_links_left = linking->get();
        ProjectRead& project = out.projects[name];
        project.files = std::move(files);
        // A name is reached once: its find-links records move, not copy.
        if (auto it = out.find_links_left.find(name); it != out.find_links_left.end()) {
            project.files.insert(project.files.end(), std::make_move_iterator(it->second.begin()), std::make_move_iterator(it->second.end()));
            out.find_links_left.erase(it);
        }
        auto& seen = out.pypi_versions[name];
        std::unordered_set<std::string_view> listed;
        for (const auto& r : project.files)
            if (listed.insert(r.version).second) seen.push_back(r.version);
        dirty.insert(name);
        // Rulings that waited on this page are taken now.
        if (auto w = rulings_waiting.find(name); w != rulings_waiting.end()) {
            auto waiting = std::move(w->second);
            rulings_waiting.erase(w);
            for (std::size_t i : waiting) judge(i);
        }
    };

    // The versions a project's requirements now reach that were not read before: read.
    auto widen = [&](const std::string& name) {
        auto pit = out.projects.find(name);
        if (pit == out.projects.end()) return ask_page(name);
        ProjectRead& p = pit->second;
        ParsedVersions& versions_of = parsed_of[name];
        auto oit = offered_of.find(name);
        if (oit == offered_of.end()) oit = offered_of.emplace(name, offered_versions(p.files, versions_of, must_of(name), python, tags)).first;
        const std::vector<Offered>& offered = oit->second;
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
            if (known) {
                follow(name, *files.front());   // the page said (the PyPI JSON API lists requires_dist)
                continue;
            }
            IndexRecords candidates;
            for (const IndexRecord* r : files) candidates.push_back(*r);
            std::size_t i = probes.size();
            // A version with only an sdist: its PKG-INFO, else its setup files read statically.
            probes.push_back({name, version,
                              begin_metadata_read(std::move(candidates[metadata_source(candidates, rank_for_target)]), MetadataWays::any, ctx,
                                                  request.read_package)});
            ++out.metadata_read;
            start_probe(i);
        }
    };

    // A probe's metadata read: the version's files take it, it is judged, and followed.
    auto probe_read = [&](std::size_t i) {
        const MetadataRead& read = probes[i].read;
        if (!read.failure.empty() || read.missing_offline) {
            failed_reads.push_back(i);
            return;
        }
        if (!read.note.empty()) notes.push_back(read.note);
        if (!read.download.empty()) downloads.push_back(read.download);
        const IndexRecord& probe = read.record;
        if (!probe.depends_known) return;
        ProjectRead& p = out.projects[probes[i].name];
        ParsedVersions& versions_of = parsed_of[probes[i].name];
        for (auto& r : p.files) {
            if (r.depends_known) continue;
            const auto& v = parsed(versions_of, r.version);
            if (!v || v->str() != probes[i].version) continue;
            r.depends = probe.depends;
            if (r.requires_python.empty()) r.requires_python = probe.requires_python;
            r.depends_known = true;
        }
        if (!request.all_versions) judge(i);
        follow(probes[i].name, probe);
    };

    probes.reserve(64);
    for (;;) {
        // Everything known is acted on before waiting for the next answer.
        for (;;) {
            // Parses that finished (a page that is no index throws here).
            for (auto it = parsing.begin(); it != parsing.end();) {
                if (it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
                    ++it;
                    continue;
                }
                std::size_t set = it->first;
                IndexRecords files = it->second.get();
                it = parsing.erase(it);
                page_parsed(set, std::move(files));
            }
            start_parses();
            if (pages_ready.empty() && probes_ready.empty() && dirty.empty() && refollow.empty()) break;
            if (!pages_ready.empty()) {
                std::size_t set = pages_ready.front();
                pages_ready.pop_front();
                page_answered(set);
            } else if (!probes_ready.empty()) {
                std::size_t i = probes_ready.front();
                probes_ready.pop_front();
                probe_read(i);
            } else if (!refollow.empty()) {
                std::string name = *refollow.begin();
                refollow.erase(refollow.begin());
                follow_again(name);
            } else {
                std::string name = *dirty.begin();
                dirty.erase(dirty.begin());
                if (!failed()) widen(name);
            }
        }
        // Nothing to act on: wait for an answer, or, while pages are parsed, a moment at a time.
        std::optional<TransferStream::Finished> done;
        if (parsing.empty()) {
            done = stream.next();
            if (!done) break;
        } else if (stream.outstanding() == 0) {
            parsing.front().second.wait();
            continue;
        } else {
            done = stream.next(std::chrono::milliseconds(2));
            if (!done) continue;
        }
        auto what = purpose.extract(done->id).mapped();
        if (auto* page = std::get_if<ForPage>(&what)) {
            finish_document(page_docs[page->set][page->document], std::move(done->response), ctx);
            if (--page_waiting[page->set] == 0) pages_ready.push_back(page->set);
        } else {
            std::size_t i = std::get<std::size_t>(what);
            continue_metadata_read(probes[i].read, std::move(done->response), ctx, request.read_package);
            if (!probes[i].read.request || !failed()) start_probe(i);
        }
    }
    std::vector<const PypiPages*> pages_failed;
    for (std::size_t set : failed_pages) pages_failed.push_back(&pages[set]);
    if (!pages_failed.empty()) throw_pypi_page_failures(pages_failed);
    std::vector<const MetadataRead*> reads_failed;
    for (std::size_t i : failed_reads) reads_failed.push_back(&probes[i].read);
    throw_metadata_failures(reads_failed);
    // The notes in an order of their own, not the order the answers came in.
    std::sort(notes.begin(), notes.end());
    std::sort(downloads.begin(), downloads.end());
    out.read_notes.insert(out.read_notes.end(), notes.begin(), notes.end());
    out.downloads.insert(out.downloads.end(), downloads.begin(), downloads.end());

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
