#include "resolver/solve/solve.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/wheel.hpp"
#include "resolver/knowledge/public_source.hpp"
#include "resolver/solve/explain.hpp"
#include "resolver/solve/pool.hpp"
#include "resolver/solve/self_check.hpp"
#include "resolver/lock/spec_io.hpp"

#include "resolver/solve/libsolv.hpp"

namespace envlock {

using namespace solve_detail;

namespace {

// One machine that stands for all targets: a lock for several machines must run on each, so
// the lowest driver and glibc, every GPU, the CPU flags they share, and only the system
// toolchains present on all of them.
Target combine_targets(const std::vector<NamedTarget>& targets, const knowledge::Knowledge& k) {
    Target out = targets.front().target;
    for (size_t i = 1; i < targets.size(); ++i) {
        const Target& t = targets[i].target;
        auto lower = [](const std::string& a, const std::string& b) {
            if (a.empty() || b.empty()) return std::string();
            auto va = conda::Version::try_parse(a), vb = conda::Version::try_parse(b);
            if (!va || !vb) return a;
            return *vb < *va ? b : a;
        };
        out.glibc = lower(out.glibc, t.glibc);
        out.driver_cuda = lower(out.driver_cuda, t.driver_cuda);
        out.gpus.insert(out.gpus.end(), t.gpus.begin(), t.gpus.end());
        std::vector<std::string> flags;
        for (const auto& f : out.cpu_flags)
            if (std::find(t.cpu_flags.begin(), t.cpu_flags.end(), f) != t.cpu_flags.end()) flags.push_back(f);
        out.cpu_flags = flags;
        std::erase_if(out.toolkits, [&](const CudaToolkit& tk) {
            return std::none_of(t.toolkits.begin(), t.toolkits.end(),
                                [&](const CudaToolkit& o) { return major_minor(o.version) == major_minor(tk.version); });
        });
        std::erase_if(out.compilers, [&](const HostCompiler& cc) {
            return std::none_of(t.compilers.begin(), t.compilers.end(), [&](const HostCompiler& o) {
                return o.kind == cc.kind && o.version.substr(0, o.version.find('.')) == cc.version.substr(0, cc.version.find('.'));
            });
        });
    }
    (void)k;
    return out;
}

// How a spec requirement becomes a dependency: its ecosystem, or a guess from its syntax.
std::string job_dep(const SpecRequirement& r) {
    if (r.ecosystem == "pypi") {
        // "spconv-cuxxx": a choice among the projects that fill it (pool.cpp, "cudavariant").
        try {
            if (cuda_placeholder(pep508::Requirement::parse(r.text).normalized_name)) return "cudavariant\t" + r.text;
        } catch (const InputError&) {
        }
        return "pypi\t" + r.text;
    }
    if (r.ecosystem == "conda") return "conda\t" + r.text;
    try {
        pep508::Requirement::parse(r.text);
        return "either\t" + r.text;
    } catch (const InputError&) {
        conda::MatchSpec::parse(r.text);  // neither: let the conda parser's message stand
        return "conda\t" + r.text;
    }
}

bool is_python_requirement(const SpecRequirement& r) {
    std::string name = r.text.substr(0, r.text.find_first_of(" =<>!~[;@"));
    return name == "python";
}

struct Attempt {
    bool solved = false;
    std::vector<Id> installed;                   // solvables chosen
    std::vector<std::string> problems;           // libsolv's problems, in our words
    std::vector<size_t> blamed_jobs;             // indexes into the job list
};

Attempt run(SolvPool& sp, const std::vector<Job>& jobs, const std::vector<Id>& favored) {
    Pool* pool = sp.pool();
    Queue q;
    queue_init(&q);
    for (const auto& job : jobs) {
        // libsolv turns an install job whose namespace dependency matches nothing into
        // "install the system solvable" (solver.c, "force install of namespace supplements
        // hack"): the requirement would vanish. Such a job asks for a plain name nothing
        // provides instead, which libsolv reports as a job nothing provides.
        Id dep = sp.matching(job.dep).empty() ? pool_str2id(pool, ("nothing-matches\t" + job.dep).c_str(), 1) : sp.dep_id(job.dep);
        queue_push2(&q, SOLVER_INSTALL | SOLVER_SOLVABLE_PROVIDES, dep);
    }
    for (Id p : favored) queue_push2(&q, SOLVER_FAVOR | SOLVER_SOLVABLE, p);
    Solver* solv = solver_create(pool);
    solver_set_flag(solv, SOLVER_FLAG_ALLOW_UNINSTALL, 0);
    solver_set_flag(solv, SOLVER_FLAG_BEST_OBEY_POLICY, 1);
    Attempt a;
    int nproblems = solver_solve(solv, &q);
    if (nproblems == 0) {
        a.solved = true;
        for (size_t i = 0; i < sp.candidates().size(); ++i) {
            Id p = sp.first_solvable() + static_cast<Id>(i);
            const Candidate* c = sp.candidate(p);
            if (c->kind == CandKind::virtual_package || c->kind == CandKind::extra) continue;
            if (solver_get_decisionlevel(solv, p) > 0) a.installed.push_back(p);
        }
    } else {
        auto described = describe_problems(sp, solv, jobs);
        a.problems = std::move(described.lines);
        a.blamed_jobs = std::move(described.jobs);
    }
    solver_free(solv);
    queue_free(&q);
    return a;
}

LockedPackage locked_package(const Candidate& c) {
    LockedPackage p;
    const IndexRecord& r = c.record;
    p.kind = r.ecosystem;
    p.url = c.kind == CandKind::source ? r.git : r.url;
    p.name = c.kind == CandKind::pypi ? c.dist : r.name;   // PyPI: the PEP 503 name, not the file's spelling
    p.version = r.version;
    p.build = r.build;
    p.build_number = r.build_number;
    p.sha256 = r.sha256;
    p.md5 = r.md5;
    p.size = r.size;
    p.channel = c.kind == CandKind::conda ? r.channel : r.index;
    p.subdir = r.subdir;
    p.rev = r.rev;
    p.depends = r.depends;
    if (c.cuda) {
        LockedCuda cuda;
        cuda.runtime = c.cuda->runtime;
        if (c.arch) {
            cuda.sm = c.arch->sass;
            cuda.ptx = c.arch->ptx;
        }
        p.cuda = cuda;
    }
    return p;
}

// Who asked for each chosen package: the spec's lines that select it, and for every other
// chosen package the first of its requirements that does. Made once for all of them (one
// lookup per requirement), not per package over every requirement again.
std::map<Id, std::vector<std::string>> who_asked_for(SolvPool& sp, const std::vector<Job>& jobs, const std::vector<Id>& installed) {
    std::map<Id, std::vector<std::string>> out;
    for (const auto& job : jobs) {
        // A git source's line names its URL and commit already (and locks keep their bytes).
        std::string from = job.dep.rfind("source\t", 0) == 0 ? "" : format_provenance(job.from);
        std::string line = "spec: " + job.text + (from.empty() ? "" : " (" + from + ")");
        for (Id id : sp.matching(job.dep)) out[id].push_back(line);
    }
    std::set<Id> chosen(installed.begin(), installed.end());
    for (Id p : installed) {
        const Candidate* other = sp.candidate(p);
        std::set<Id> named;   // the chosen packages one of its requirements selected already
        for (const auto& dep : other->deps) {
            if (split_dep(dep)[0] == "fact") continue;
            std::string line;
            for (Id id : sp.matching(dep)) {
                if (id == p || !chosen.count(id) || !named.insert(id).second) continue;
                if (line.empty())
                    line = (other->kind == CandKind::pypi ? other->dist : other->record.name) + " " + other->record.version + ": " +
                           describe_dep(dep);
                out[id].push_back(line);
            }
        }
    }
    for (auto& [id, lines] : out) {
        std::sort(lines.begin(), lines.end());
        lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    }
    return out;
}

// A requirement as the index closure keys its window: its normalized name and specifier.
std::optional<std::pair<std::string, std::string>> window_of(const std::string& argument) {
    auto f = split_dep(argument);
    const std::string* text = f[0] == "pypi" || f[0] == "either" ? &f[1] : f[0] == "pypiextra" && f.size() > 2 ? &f[2] : nullptr;
    if (!text) return std::nullopt;
    try {
        auto req = pep508::Requirement::parse(*text);
        return std::make_pair(req.normalized_name, req.specifier.str());
    } catch (const InputError&) {
        return std::nullopt;
    }
}

// Whether a solve's answer could change with versions not read (SolveInput::unread), and which
// requirements to read further if so. The stand-ins relax the problem (they satisfy whatever an
// unread version could, need nothing, and bind to no advisory), so whatever the solve rules out
// with them present (a newer release passed over, a version that conflicts) is ruled out with
// every version read too: a solution of the complete problem with that release would be one of
// this problem, the unread versions it takes replaced by their stand-ins. And libsolv takes, of
// what a requirement allows, the best ranked candidate it can, every stand-in ranking below the
// releases read. So the answer stands when (1) no stand-in was taken and (3) no unread release
// of a chosen project is newer than the one taken (a window orders the versions the page says fit
// first, and the solve's Python may differ from the closure's); else the requirements that took
// the stand-in, or the older release, read further.
std::vector<std::pair<std::string, std::string>> reads_to_widen(SolvPool& sp, const std::vector<Job>& jobs, const std::vector<Id>& installed) {
    std::set<std::pair<std::string, std::string>> out;
    auto stand_in = [&](Id p) {
        const Candidate* c = sp.candidate(p);
        return c && !c->unread.empty();
    };
    std::set<Id> chosen(installed.begin(), installed.end());
    auto asks_chosen_stand_in = [&](const std::string& dep) {
        for (Id p : sp.matching(dep))
            if (stand_in(p) && chosen.count(p)) return true;
        return false;
    };
    bool took_stand_in = std::any_of(installed.begin(), installed.end(), stand_in);
    if (took_stand_in) {
        for (const auto& job : jobs)
            if (asks_chosen_stand_in(job.dep))
                if (auto w = window_of(job.dep)) out.insert(*w);
        for (Id p : installed)
            for (const auto& dep : sp.candidate(p)->deps)
                if (asks_chosen_stand_in(dep))
                    if (auto w = window_of(dep)) out.insert(*w);
    }
    std::map<std::string, const Candidate*> stand_in_of;   // solv_name -> its stand-in
    for (const auto& c : sp.candidates())
        if (!c.unread.empty() && c.kind == CandKind::pypi) stand_in_of[c.solv_name] = &c;
    for (Id p : installed) {
        const Candidate* c = sp.candidate(p);
        if (c->kind != CandKind::pypi || !c->unread.empty() || !c->pep440_version) continue;
        auto s = stand_in_of.find(c->solv_name);
        if (s == stand_in_of.end() || !(s->second->unread.front() > *c->pep440_version)) continue;
        // (3) An unread release newer than the one taken that every requirement which took it
        // allows (a window orders the versions the page says fit first, and the solve's Python
        // may differ from the closure's): those requirements read further.
        std::vector<std::string> taking;
        auto takes = [&](const std::string& dep) {
            auto ids = sp.matching(dep);
            if (std::find(ids.begin(), ids.end(), p) != ids.end()) taking.push_back(dep);
        };
        for (const auto& job : jobs) takes(job.dep);
        for (Id q : installed)
            for (const auto& dep : sp.candidate(q)->deps) takes(dep);
        std::vector<pep440::SpecifierSet> specs;
        for (const auto& dep : taking)
            if (auto w = window_of(dep)) specs.push_back(pep440::SpecifierSet::parse(w->second));
        bool newer = std::any_of(s->second->unread.begin(), s->second->unread.end(), [&](const pep440::Version& u) {
            return u > *c->pep440_version && std::all_of(specs.begin(), specs.end(), [&](const pep440::SpecifierSet& spec) { return spec.contains(u); });
        });
        if (newer)
            for (const auto& dep : taking)
                if (auto w = window_of(dep)) out.insert(*w);
    }
    return {out.begin(), out.end()};
}

// Whether the answer depends on the kernel: a chosen conda record depends on (or constrains)
// __linux's version. Only then does the lock keep the kernel (#30: a lock records no host fact
// that nothing depends on, so another machine with another kernel re-resolves to the same bytes).
bool depends_on_kernel(const std::vector<const Candidate*>& chosen) {
    auto on_kernel = [](const std::string& text) {
        if (text.rfind("__linux", 0) != 0) return false;
        try {
            auto ms = conda::MatchSpec::parse(text);
            return ms.name == "__linux" && !ms.version.is_any();
        } catch (const InputError&) {
            return false;
        }
    };
    for (const Candidate* c : chosen) {
        if (c->kind != CandKind::conda) continue;
        if (std::any_of(c->record.depends.begin(), c->record.depends.end(), on_kernel) ||
            std::any_of(c->record.constrains.begin(), c->record.constrains.end(), on_kernel))
            return true;
    }
    return false;
}

// The target facts no chosen package depends on, which the lock leaves out (target.hpp
// leave_out) so that machines differing only there lock the same bytes (uv.lock and pixi.lock
// record no host facts). A lock with conda packages keeps them all: conda records depend on
// the target's virtual packages (__glibc, __cuda …) and a conda toolchain on its compilers. Of
// a PyPI-only lock: glibc/macOS decide which platform wheels install; the driver and GPUs what
// a CUDA wheel needs; compilers and toolkits the toolchain of CUDA extensions; CPU flags, WSL
// and GPUs what the target warnings of the locked packages read.
std::vector<std::string> facts_nothing_depends_on(const SolveInput& input, const std::vector<const Candidate*>& chosen) {
    if (std::any_of(chosen.begin(), chosen.end(), [](const Candidate* c) { return c->kind == CandKind::conda; })) return {};
    bool platform_wheel = false, driver = false, gpus = false, cpu = false;
    bool toolchain = !input.spec.extensions.empty();
    std::vector<std::pair<std::string, std::string>> locked;
    for (const Candidate* c : chosen) {
        if (c->kind == CandKind::system_nvcc || c->kind == CandKind::system_compiler) toolchain = true;
        if (c->kind == CandKind::pypi || c->kind == CandKind::source) locked.push_back({c->record.name, c->record.version});
        for (const auto& d : c->deps) {
            if (d.rfind("fact\tdriver", 0) == 0) driver = true;
            if (d.rfind("fact\tgpu", 0) == 0 || d.rfind("fact\textarch", 0) == 0) gpus = true;
            if (d.rfind("fact\tcpu", 0) == 0) cpu = true;
            if (d.rfind("nvcc", 0) == 0 || d.rfind("hostcc", 0) == 0) toolchain = true;
        }
        if (c->kind == CandKind::pypi && c->record.filename.ends_with(".whl")) {
            try {
                for (const auto& tag : wheel::WheelName::parse(c->record.filename).tags)
                    if (tag.platform != "any") platform_wheel = true;
            } catch (const InputError&) {
                platform_wheel = true;   // not read: keep what could decide it
            }
        }
    }
    auto read = knowledge::target_facts_warnings_read(input.knowledge, locked);
    auto warned = [&](const char* key) { return std::find(read.begin(), read.end(), key) != read.end(); };
    std::vector<std::string> out;
    if (!platform_wheel) out.insert(out.end(), {"glibc", "osx"});
    if (!cpu && !warned("cpu-flags")) out.push_back("cpu-flags");
    if (!warned("wsl")) out.push_back("wsl");
    if (!driver && !toolchain) out.push_back("driver");
    if (!gpus && !toolchain && !warned("gpus")) out.push_back("gpus");
    if (!toolchain) out.insert(out.end(), {"compilers", "cuda-toolkits"});
    return out;
}

}  // namespace

namespace {

// The Python interpreter requirements of the spec as conda MatchSpecs: "python=3.9.18",
// "python 3.9.* *_73_pypy" as written; a PEP 508 "python>=3.8" as "python >=3.8".
std::vector<std::pair<const SpecRequirement*, conda::MatchSpec>> python_specs(const Spec& spec) {
    std::vector<std::pair<const SpecRequirement*, conda::MatchSpec>> out;
    for (const auto& r : spec.requirements) {
        if (!is_python_requirement(r)) continue;
        if (r.ecosystem != "conda") {
            try {
                auto req = pep508::Requirement::parse(r.text);
                out.emplace_back(&r, conda::MatchSpec::parse("python " + (req.specifier.empty() ? std::string("*") : req.specifier.str())));
                continue;
            } catch (const InputError&) {
                if (r.ecosystem == "pypi") throw;
            }
        }
        out.emplace_back(&r, conda::MatchSpec::parse(r.text));
    }
    if (!spec.python.empty()) {
        std::string text = spec.python;
        bool bare = std::all_of(text.begin(), text.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) || ch == '.'; });
        out.emplace_back(nullptr, conda::MatchSpec::parse("python " + (bare ? text + ".*" : text)));
    }
    return out;
}

// Every python version the channels offer, by major.minor. Under strict channel priority only
// the first channel that has python offers it (conda's rule, as for any name).
std::map<std::string, std::vector<std::string>> python_releases(const SolveInput& input) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& ch : input.channels) {
        for (const auto& r : ch.records)
            if (r.name == "python") out[major_minor(r.version)].push_back(r.version);
        if (!out.empty() && input.channel_priority == ChannelPriority::strict) break;
    }
    // No conda python: the interpreters a venv may be built on stand in for the releases.
    if (out.empty())
        for (const auto& v : input.venv_pythons) out[major_minor(v)].push_back(v);
    return out;
}

std::vector<std::string> python_minors_to_try(const SolveInput& input, const std::map<std::string, std::vector<std::string>>& releases) {
    std::set<std::string> minors;
    for (const auto& [m, versions] : releases) minors.insert(m);
    auto constraints = python_specs(input.spec);
    if (minors.empty() && !input.spec.python.empty()) minors.insert(major_minor(input.spec.python));
    std::vector<std::pair<conda::Version, std::string>> ordered;
    for (const auto& m : minors) {
        auto v = conda::Version::try_parse(m);
        if (!v) continue;
        // A minor is allowed when some patch release of it satisfies every constraint.
        bool ok = true;
        auto offered = releases.find(m);
        for (const auto& [from, c] : constraints) {
            bool any = false;
            if (offered != releases.end())
                for (const auto& version : offered->second) {
                    auto rv = conda::Version::try_parse(version);
                    if (rv && c.matches_version(*rv)) any = true;
                }
            if (!any && (offered != releases.end() || !c.matches_version(*v))) ok = false;
        }
        if (ok) ordered.emplace_back(*v, m);
    }
    std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return b.first < a.first; });
    std::vector<std::string> out;
    for (const auto& [v, m] : ordered) out.push_back(m);
    return out;
}

// The newest patch release of `minor` every python constraint allows: what PyPI markers and
// Requires-Python are evaluated for.
std::string python_full_for(const std::string& minor, const std::map<std::string, std::vector<std::string>>& releases,
                            const std::vector<std::pair<const SpecRequirement*, conda::MatchSpec>>& constraints) {
    std::optional<pep440::Version> best;
    if (auto offered = releases.find(minor); offered != releases.end())
        for (const auto& version : offered->second) {
            auto cv = conda::Version::try_parse(version);
            auto v = pep440::Version::try_parse(version);
            if (!cv || !v) continue;
            if (!std::all_of(constraints.begin(), constraints.end(), [&](const auto& c) { return c.second.matches_version(*cv); })) continue;
            if (!best || *v > *best) best = v;
        }
    return best ? best->str() : minor + ".0";
}

}  // namespace

std::vector<std::string> python_minors_to_try(const SolveInput& input) { return python_minors_to_try(input, python_releases(input)); }

// One solve over the candidates given (stand-ins included).
static SolveOutcome solve_once(const SolveInput& input);

SolveOutcome solve(const SolveInput& input) {
    if (input.targets.empty()) throw InputError("resolve: no target machine given");
    if (!input.unread.empty()) {
        SolveOutcome relaxed = solve_once(input);
        if (relaxed.solved || !relaxed.widen.empty()) return relaxed;
        // Unsatisfiable even with every unread version standing in: so it is with all of them
        // read. Explained over the versions read, in the words of real releases.
        SolveInput read = input;
        read.unread.clear();
        return solve_once(read);
    }
    return solve_once(input);
}

static SolveOutcome solve_once(const SolveInput& input) {
    SolveOutcome outcome;

    // Python is asked for only when the spec names it or asks for PyPI packages or sources;
    // a conda-only spec gets python only where a package depends on it (conda does the same).
    std::vector<Job> spec_jobs;
    bool needs_python = !input.sources.empty() || !input.spec.python.empty();
    for (const auto& r : input.spec.requirements) {
        if (is_python_requirement(r)) {
            needs_python = true;
            continue;
        }
        Job job{job_dep(r), r.text, r.from};
        if (job.dep.rfind("conda\t", 0) != 0) needs_python = true;
        spec_jobs.push_back(std::move(job));
    }
    for (const auto& s : input.sources) {
        // Where the spec names the source, so an explanation can cite it (and loosen it).
        Provenance from;
        for (const auto& ss : input.spec.sources)
            if (pep508::normalize_name(ss.name) == pep508::normalize_name(s.name)) from = ss.from;
        spec_jobs.push_back({"source\t" + pep508::normalize_name(s.name), s.name + " from " + s.git + " at " + s.rev, from});
    }
    auto python_constraints = python_specs(input.spec);

    PoolContext base;
    base.input = &input;
    base.combined = combine_targets(input.targets, input.knowledge);
    base.cuda_extensions = std::any_of(input.spec.extensions.begin(), input.spec.extensions.end(),
                                       [](const SpecExtension& e) { return e.cuda; });

    auto releases = python_releases(input);
    auto minors = python_minors_to_try(input, releases);
    if (minors.empty() && needs_python) {
        std::string asked;
        for (const auto& [from, ms] : python_constraints)
            asked += (asked.empty() ? "" : ", ") + (from ? from->text + (format_provenance(from->from).empty() ? "" : " (" + format_provenance(from->from) + ")")
                                                         : "python " + input.spec.python);
        std::string offered;
        for (const auto& [m, versions] : releases)
            for (const auto& v : versions) offered += (offered.empty() ? "" : ", ") + v;
        std::string why = asked.empty() && offered.empty()
                              ? "No environment satisfies the spec: its PyPI requirements need a Python, the spec names none, and no "
                                "channel offers python. Say which: `python: \"3.8\"` in the spec (a virtual environment on that "
                                "interpreter), or a conda requirement such as `python=3.8` with a channel that has it"
                              : "No environment satisfies the spec: no Python the channels offer satisfies " + asked +
                                    (offered.empty() ? "; no channel offers python" : "; python " + offered + " is offered");
        // Strict channel priority: a lower channel's python that would fit is named, with the channel that masks it.
        if (input.channel_priority == ChannelPriority::strict) {
            SolveInput all = input;
            all.channel_priority = ChannelPriority::flexible;
            if (!python_minors_to_try(all, python_releases(all)).empty()) {
                size_t first = 0;
                while (first < input.channels.size() &&
                       std::none_of(input.channels[first].records.begin(), input.channels[first].records.end(),
                                    [](const IndexRecord& r) { return r.name == "python"; }))
                    ++first;
                why += "\n  masked by strict channel priority: a lower channel has a python that fits, but python comes only from " +
                       input.channels[first].channel + ", the first channel that has it; conda's default, --channel-priority flexible, "
                       "lets a lower channel supply it";
            }
        }
        throw UnmetError(why);
    }
    // Without Python in the request, one attempt: the minor only names wheel tags nobody asks for.
    if (!needs_python) minors = {minors.empty() ? std::string("3.8") : minors.front()};

    std::string first_failure;
    for (const auto& minor : minors) {
        PoolContext ctx = base;
        ctx.python_minor = minor;
        ctx.python_full = python_full_for(minor, releases, python_constraints);
        SolvPool sp(ctx);
        std::vector<Job> jobs;
        pep508::MarkerEnv env = pep508::MarkerEnv::for_target(ctx.python_full, ctx.combined.platform.empty() ? "linux-64" : ctx.combined.platform);
        for (const auto& job : spec_jobs) {
            // A requirement whose marker does not hold for this Python and platform is not asked for.
            auto f = split_dep(job.dep);
            if (f[0] == "pypi" || f[0] == "either") {
                try {
                    if (!pep508::Requirement::parse(f[1]).applies(env)) continue;
                } catch (const InputError&) {
                }
            }
            jobs.push_back(job);
            // `name[extra]`: the extra's own candidates too, so what it adds is installed.
            if (f[0] == "pypi" || f[0] == "either")
                for (const auto& arg : pypi_dep_arguments(f[1]))
                    if (arg.rfind("pypiextra\t", 0) == 0) jobs.push_back({arg, job.text, job.from});
        }
        bool conda_python = std::any_of(sp.candidates().begin(), sp.candidates().end(),
                                        [](const Candidate& c) { return c.kind == CandKind::conda && c.record.name == "python"; });
        if (conda_python && needs_python) {
            jobs.push_back({"conda\tpython " + minor + ".*", "python " + minor, {}});
            for (const auto& [from, ms] : python_constraints)
                jobs.push_back({"conda\t" + ms.original(), from ? from->text : "python " + input.spec.python, from ? from->from : Provenance{}});
        }

        std::vector<Id> favored;
        for (size_t i = 0; i < sp.candidates().size(); ++i) {
            const auto& c = sp.candidates()[i];
            std::string key = (c.kind == CandKind::conda ? "conda:" : "pypi:") + (c.kind == CandKind::conda ? c.record.name : c.dist);
            auto it = input.previous.find(key);
            if (it == input.previous.end() || it->second != c.record.version) continue;
            // conda: the locked build, not every build of the locked version.
            if (auto b = input.previous.find(key + "#build"); c.kind == CandKind::conda && b != input.previous.end() && b->second != c.record.build)
                continue;
            // PyPI: the locked file, not the sdist beside a locked wheel of the same release.
            if (auto f = input.previous.find(key + "#file"); c.kind == CandKind::pypi && f != input.previous.end() &&
                                                              f->second != c.record.url.substr(c.record.url.rfind('/') + 1))
                continue;
            if (input.update_all || input.update.count(c.record.name) || input.update.count(c.dist)) continue;
            favored.push_back(sp.first_solvable() + static_cast<Id>(i));
        }

        // Favoured in preference order, so libsolv's favour keeps our ranking among them: of two
        // favoured candidates the later wins (libsolv test/testcases/favor/favor.t), so the best last.
        // Two are favoured for one name when the lock's build is in two channels (flexible priority).
        std::sort(favored.begin(), favored.end(), [&](Id a, Id b) { return sp.candidate(a)->rank < sp.candidate(b)->rank; });
        // Decided without libsolv when one requirement's every candidate needs what nothing
        // provides (explain.hpp): an unsatisfiable answer then costs no solve at all.
        Attempt a;
        if (auto outright = unsatisfiable_outright(sp, jobs)) {
            a.problems = std::move(outright->problems);
            a.blamed_jobs = std::move(outright->blamed);
        } else {
            a = run(sp, jobs, favored);
        }
        if (!a.solved) {
            // With stand-ins, an unsatisfiable answer is explained by solve() over the versions read.
            if (first_failure.empty() && input.unread.empty()) {
                first_failure = explain_failure(sp, jobs, a.problems, a.blamed_jobs,
                    [&](const std::vector<Job>& relaxed) {
                        Attempt r = run(sp, relaxed, {});
                        RelaxResult out;
                        out.solved = r.solved;
                        out.problems = r.problems;
                        out.blamed = r.blamed_jobs;
                        for (Id p : r.installed) out.chosen.push_back(sp.candidate(p)->label());
                        return out;
                    });
            }
            continue;
        }

        if (!input.unread.empty()) {
            outcome.widen = reads_to_widen(sp, jobs, a.installed);
            if (!outcome.widen.empty()) return outcome;
        }
        std::vector<const Candidate*> chosen;
        for (Id p : a.installed) chosen.push_back(sp.candidate(p));
        // The proof of the result, made apart from the pool: a failure here is a bug of the
        // solve, and no lock is written (exit 3).
        std::vector<IndexRecord> records;
        std::string python = needs_python ? ctx.python_full : "";
        for (const Candidate* c : chosen) {
            if (c->kind != CandKind::conda && c->kind != CandKind::pypi && c->kind != CandKind::source) continue;
            records.push_back(c->record);
            if (c->kind == CandKind::conda && c->record.name == "python") python = c->record.version;
        }
        if (auto violations = self_check(input, records, python); !violations.empty())
            throw EnvironmentError("internal error: the solve's result fails its self-check, so no lock was written "
                                   "(a bug in envlock; please report it with the spec):" + describe_violations(violations));

        Lock& lock = outcome.lock;
        lock.spec = input.spec;
        lock.targets = input.targets;
        bool kernel_kept = depends_on_kernel(chosen);
        auto unused = facts_nothing_depends_on(input, chosen);
        for (auto& t : lock.targets) {
            if (!kernel_kept) t.target = without_kernel(std::move(t.target));
            t.target = leave_out(std::move(t.target), unused);
        }
        lock.knowledge_version = input.knowledge.version;
        lock.content_hash = lock_content_hash(input.spec, lock.targets, input.knowledge.version);
        auto asked = who_asked_for(sp, jobs, a.installed);
        for (const Candidate* c : chosen) {
            Id self = sp.first_solvable() + static_cast<Id>(c - sp.candidates().data());
            std::vector<std::string> requested_by;
            if (auto it = asked.find(self); it != asked.end()) requested_by = std::move(it->second);
            if (c->kind == CandKind::system_nvcc) {
                lock.toolchain.nvcc = c->record.version;
                lock.toolchain.nvcc_from = "system:" + c->record.url;
            } else if (c->kind == CandKind::system_compiler) {
                lock.toolchain.gcc = c->record.version;
                lock.toolchain.gcc_from = "system:" + c->record.url;
            } else {
                if (c->record.name == "cuda-nvcc") {
                    lock.toolchain.nvcc = c->record.version;
                    lock.toolchain.nvcc_from = "conda:" + c->record.name;
                } else if (c->kind == CandKind::pypi && ctx.cuda_extensions && !knowledge::pypi_nvcc_home(c->dist, c->record.version).empty()) {
                    lock.toolchain.nvcc = c->record.version;
                    lock.toolchain.nvcc_from = "pypi:" + c->dist;
                }
                if (c->compiler_major > 0 && c->kind == CandKind::conda && lock.toolchain.gcc_from.rfind("system:", 0) != 0) {
                    lock.toolchain.gcc = c->record.version;
                    lock.toolchain.gcc_from = "conda:" + c->record.name;
                }
                lock.packages.push_back(locked_package(*c));
                lock.packages.back().requested_by = std::move(requested_by);
            }
        }
        finish_toolchain(sp, chosen, lock.toolchain);
        // A venv: no conda python among the chosen, so the lock names the interpreter it was
        // solved for (the caller says where that choice came from).
        bool conda_python_chosen = std::any_of(chosen.begin(), chosen.end(), [](const Candidate* c) {
            return c->kind == CandKind::conda && c->record.name == "python";
        });
        if (needs_python && !conda_python_chosen) lock.python = LockedPython{releases.count(minor) ? ctx.python_full : minor, ""};
        lock.decisions = decisions_that_mattered(sp, jobs, chosen);
        std::sort(lock.packages.begin(), lock.packages.end(), [](const LockedPackage& x, const LockedPackage& y) {
            if (x.name != y.name) return x.name < y.name;
            return static_cast<int>(x.kind) < static_cast<int>(y.kind);
        });
        // What no package choice avoids: the machine itself breaks this lock at run time.
        std::vector<std::pair<std::string, std::string>> locked;
        for (const auto& p : lock.packages) locked.push_back({p.name, p.version});
        for (const auto& nt : input.targets)
            for (const auto& w : knowledge::target_warnings(input.knowledge, nt.target, locked))
                lock.warnings.push_back({w.id, nt.name, w.symptom, w.fix, knowledge::public_source(w.source)});
        outcome.solved = true;
        return outcome;
    }
    outcome.explanation = first_failure;
    if (minors.size() > 1) {
        std::string tried;
        for (const auto& m : minors) tried += (tried.empty() ? "" : ", ") + m;
        outcome.explanation += "(Each Python the spec allows was tried: " + tried + "; the above is for " + minors.front() + ".)\n";
    }
    return outcome;
}

}  // namespace envlock
