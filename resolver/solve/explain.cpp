#include "resolver/solve/explain.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/lock/spec_io.hpp"

#include "resolver/solve/libsolv.hpp"

namespace envlock::solve_detail {

namespace {

std::string why_nothing_matches(SolvPool& sp, const Job& job);

std::string dep_argument(Pool* pool, Id dep) {
    if (!ISRELDEP(dep)) return pool_id2str(pool, dep);
    Reldep* rd = GETRELDEP(pool, dep);
    if (rd->flags != REL_NAMESPACE) return pool_dep2str(pool, dep);
    return pool_id2str(pool, rd->evr);
}

std::string label_of(SolvPool& sp, Id p) {
    if (p == SYSTEMSOLVABLE) return "the target machine";
    if (const Candidate* c = sp.candidate(p)) return c->label();
    return pool_solvid2str(sp.pool(), p);
}

std::string gpu_list(const SolveInput& input) {
    std::string out;
    for (const auto& t : input.targets)
        for (const auto& g : t.target.gpus) {
            if (!out.empty()) out += ", ";
            out += (g.name.empty() ? std::string("GPU") : g.name) + " sm_" + std::to_string(g.sm_major) +
                   std::to_string(g.sm_minor);
        }
    return out.empty() ? "no GPU" : out;
}

std::string driver_list(const SolveInput& input) {
    std::string out;
    for (const auto& t : input.targets) {
        if (!out.empty()) out += ", ";
        out += t.target.driver_version.empty()
                   ? std::string("no NVIDIA driver")
                   : "driver " + t.target.driver_version +
                         (t.target.driver_cuda.empty() ? "" : " (runs CUDA up to " + t.target.driver_cuda + ")");
    }
    return out;
}

// What the targets say of one of conda's OS virtual packages (__linux, __osx, __glibc), and
// how to say it where they do not.
std::string os_fact(const SolveInput& in, const std::string& name) {
    std::string out;
    for (const auto& nt : in.targets) {
        const Target& t = nt.target;
        std::string fact;
        if (name == "__linux")
            fact = t.platform.rfind("linux", 0) != 0 ? "is " + t.platform
                   : t.kernel.empty() ? "has a kernel not known (give --kernel, e.g. --kernel 5.15.0, or resolve --detect on the machine)"
                                      : "has kernel " + linux_version(t.kernel);
        else if (name == "__osx")
            fact = t.platform.rfind("osx", 0) != 0 ? "is " + t.platform
                   : t.osx.empty() ? "has a macOS version not known (give --osx, e.g. --osx 13.6)" : "has macOS " + t.osx;
        else if (name == "__glibc")
            fact = t.glibc.empty() ? "has no glibc known (give --glibc, e.g. --glibc 2.31)" : "has glibc " + t.glibc;
        if (fact.empty()) continue;
        out += (out.empty() ? "" : ", ") + std::string(in.targets.size() > 1 ? "target " + nt.name + " " : "the target ") + fact;
    }
    return out;
}

// Why a dependency nothing provides fails, in terms of the machine when it is a machine fact.
std::string why_unprovided(SolvPool& sp, const std::string& argument) {
    const SolveInput& in = *sp.context().input;
    auto f = split_dep(argument);
    if (f[0] == "conda" && f.size() > 1 && f[1].rfind("__", 0) == 0) {
        std::string name = f[1].substr(0, f[1].find_first_of(" =<>!~["));
        if (std::string fact = os_fact(in, name); !fact.empty()) return "needs " + describe_dep(argument) + "; " + fact;
    }
    if (f[0] == "fact" && f.size() > 1) {
        if (f[1] == "gpu") return "needs " + describe_dep(argument) + "; the target has " + gpu_list(in);
        if (f[1] == "driver") return "needs " + describe_dep(argument) + "; the target has " + driver_list(in);
        if (f[1] == "extarch")
            return "needs " + describe_dep(argument) + "; nvcc " + f[3] + " and torch " + f[2] +
                   " know no arch that runs on " + gpu_list(in);
        if (f[1] == "cpu") return "needs " + describe_dep(argument) + "; the target's CPU lacks it";
        if (f[1] == "unknown-build" || f[1] == "advisory") return "needs " + describe_dep(argument);
    }
    if (f[0] == "nvcc" && f.size() > 1) {
        std::string have;
        for (const auto& t : in.targets)
            for (const auto& tk : t.target.toolkits) have += (have.empty() ? "" : ", ") + tk.version + " at " + tk.path;
        return "needs " + describe_dep(argument) + " (system toolkits: " + (have.empty() ? "none" : have) +
               "; no channel offers cuda-nvcc " + f[1] + ")";
    }
    return "needs " + describe_dep(argument) + ", which nothing available provides";
}

std::string advisory_text(SolvPool& sp, const std::string& id) {
    for (const auto& adv : knowledge::advisories(sp.context().input->knowledge))
        if (adv.id == id) return adv.symptom + (adv.fix.empty() ? "" : " Fix: " + adv.fix);
    return "";
}

std::string bare_name(const Job& job) {
    auto f = split_dep(job.dep);
    if (f.size() < 2) return job.dep;
    // A git source loosened is its project from the indexes, any release.
    if (f[0] == "source") return "pypi\t" + f[1];
    try {
        if (f[0] == "pypi" || f[0] == "either") return f[0] + "\t" + pep508::Requirement::parse(f[1]).name;
    } catch (const InputError&) {
    }
    try {
        if (f[0] == "conda" || f[0] == "either") return "conda\t" + conda::MatchSpec::parse(f[1]).name;
    } catch (const InputError&) {
    }
    return job.dep;
}

std::string where(const Job& job) {
    std::string from = format_provenance(job.from);
    return from.empty() ? "" : " (" + from + ")";
}

// The lines of an attempt's problems that say why, not merely what was asked; at most `limit`.
std::string first_reason(const std::vector<std::string>& problems, size_t limit = 1) {
    std::string out;
    size_t n = 0;
    for (const auto& line : problems) {
        if (line.rfind("you asked for ", 0) == 0) continue;
        out += (out.empty() ? "" : "; ") + line;
        if (++n == limit) break;
    }
    if (!out.empty()) return out;
    return problems.empty() ? std::string("it is still unsatisfiable") : problems.front();
}

// The first of a candidate's own requirements that nothing satisfies, if any.
std::string first_blocker(SolvPool& sp, const Candidate& c) {
    for (const auto& d : c.deps)
        if (sp.matching(d).empty()) return why_unprovided(sp, d);
    return "";
}

// Every requirement of the candidate nothing provides, for --verbose's full derivation.
std::string all_blockers(SolvPool& sp, const Candidate& c) {
    std::string out;
    for (const auto& d : c.deps)
        if (sp.matching(d).empty()) out += (out.empty() ? "" : "; and ") + why_unprovided(sp, d);
    return out;
}

}  // namespace

DescribedProblems describe_problems(SolvPool& sp, Solver* solv, const std::vector<Job>& jobs) {
    DescribedProblems out;
    Pool* pool = sp.pool();
    std::set<std::string> seen;
    std::set<size_t> blamed;
    auto add = [&](const std::string& line) {
        if (seen.insert(line).second) out.lines.push_back(line);
    };
    std::map<std::string, std::set<std::string>> same_name;   // name -> versions libsolv paired
    std::map<std::string, std::vector<std::string>> conflicts;   // "label\treason" -> what it collides with
    std::vector<std::string> conflict_order;
    std::vector<std::string> same_name_order;
    unsigned int count = solver_problem_count(solv);
    for (Id problem = 1; problem <= static_cast<Id>(count); ++problem) {
        Queue rules;
        queue_init(&rules);
        solver_findallproblemrules(solv, problem, &rules);
        for (int i = 0; i < rules.count; ++i) {
            Id rid = rules.elements[i];
            Id source = 0, target = 0, dep = 0;
            SolverRuleinfo type = solver_ruleinfo(solv, rid, &source, &target, &dep);
            std::string arg = dep ? dep_argument(pool, dep) : "";
            switch (type) {
                case SOLVER_RULE_JOB:
                case SOLVER_RULE_JOB_NOTHING_PROVIDES_DEP:
                case SOLVER_RULE_JOB_UNKNOWN_PACKAGE: {
                    int idx = solver_rule2jobidx(solv, rid) / 2;
                    if (idx >= 0 && static_cast<size_t>(idx) < jobs.size()) {
                        blamed.insert(static_cast<size_t>(idx));
                        const Job& job = jobs[static_cast<size_t>(idx)];
                        if (type == SOLVER_RULE_JOB)
                            add("you asked for " + job.text + where(job));
                        else
                            add(job.text + where(job) + ": " + why_nothing_matches(sp, job));
                    }
                    break;
                }
                case SOLVER_RULE_PKG_NOTHING_PROVIDES_DEP:
                    add(label_of(sp, source) + " " + why_unprovided(sp, arg));
                    break;
                case SOLVER_RULE_PKG_REQUIRES:
                    add(label_of(sp, source) + " requires " + describe_dep(arg));
                    break;
                case SOLVER_RULE_PKG_CONFLICTS: {
                    // One line per package and reason, the builds it collides with listed once
                    // (an advisory against every torch >= 1.11 pairs with each of their builds).
                    auto f = split_dep(arg);
                    std::string reason;
                    if (f[0] == "advisory" && f.size() > 1) reason = ": advisory " + f[1] + ": " + advisory_text(sp, f[1]);
                    else if (f[0] == "otherdist") reason = ": both provide the Python package " + f[1];
                    else if (f[0] == "constrains") reason = ": it constrains " + f[1];
                    std::string key = label_of(sp, source) + "\t" + reason;
                    if (!conflicts.count(key)) conflict_order.push_back(key);
                    conflicts[key].push_back(label_of(sp, target));
                    break;
                }
                case SOLVER_RULE_PKG_SAME_NAME: {
                    // One line per name, not one per pair of builds (a name with 30 builds gives 435 pairs).
                    const Candidate* a = sp.candidate(source);
                    const Candidate* b = sp.candidate(target);
                    if (!a || !b) break;
                    std::string name = a->kind == CandKind::pypi ? a->dist : a->record.name;
                    if (!same_name.count(name)) same_name_order.push_back(name);
                    same_name[name].insert(a->record.version);
                    same_name[name].insert(b->record.version);
                    break;
                }
                case SOLVER_RULE_PKG_CONSTRAINS:
                    add(label_of(sp, source) + " constrains " + describe_dep(arg));
                    break;
                case SOLVER_RULE_PKG_NOT_INSTALLABLE:
                    add(label_of(sp, source) + " cannot be installed on this target");
                    break;
                default: {
                    // The machine's own facts (virtual packages, system tools) are fixed: a rule
                    // that keeps them is no news. Anything else in our words, never libsolv's.
                    const Candidate* a = sp.candidate(source);
                    if (!a || a->kind == CandKind::virtual_package || a->kind == CandKind::system_nvcc ||
                        a->kind == CandKind::system_compiler)
                        break;
                    std::string line = label_of(sp, source) + " is involved";
                    if (target) line += " with " + label_of(sp, target);
                    if (dep) line += " through " + describe_dep(arg);
                    add(line);
                }
            }
        }
        queue_free(&rules);
    }
    for (const auto& key : conflict_order) {
        auto tab = key.find('\t');
        auto& with = conflicts[key];
        with.erase(std::unique(with.begin(), with.end()), with.end());
        std::string listed;
        for (size_t i = 0; i < with.size() && i < 3; ++i) listed += (i ? ", " : "") + with[i];
        if (with.size() > 3) listed += " and " + std::to_string(with.size() - 3) + " more";
        add(key.substr(0, tab) + " cannot be installed with " + listed + key.substr(tab + 1));
    }
    for (const auto& name : same_name_order) {
        std::string versions;
        size_t n = 0;
        for (const auto& v : same_name[name]) {
            if (++n > 4) {
                versions += ", …";
                break;
            }
            versions += (versions.empty() ? "" : ", ") + v;
        }
        add("only one " + name + " can be installed (" + versions + ")");
    }
    out.jobs.assign(blamed.begin(), blamed.end());
    return out;
}

namespace {

// The project a job asks for: "numpy" for "conda\tnumpy=9.9" and "pypi\tNumPy==9.9".
std::string job_name(const Job& job) {
    auto f = split_dep(bare_name(job));
    if (f.size() < 2) return "";
    return f[0] == "conda" ? f[1] : pep508::normalize_name(f[1]);
}

// The name a dependency argument asks for ("conda\tnumpy-base 1.15.0 py36_0" -> "numpy-base").
std::string dep_name(const std::string& argument) {
    auto f = split_dep(argument);
    try {
        if (f[0] == "conda" && f.size() > 1) return conda::MatchSpec::parse(f[1]).name;
        if (f[0] == "pypi" && f.size() > 1) return pep508::Requirement::parse(f[1]).normalized_name;
    } catch (const InputError&) {
    }
    return "";
}

std::string versions_of(const std::vector<const Candidate*>& cands, size_t limit = 5) {
    std::vector<std::string> seen;
    for (const Candidate* c : cands)
        if (std::find(seen.begin(), seen.end(), c->record.version) == seen.end()) seen.push_back(c->record.version);
    std::string out;
    for (size_t i = 0; i < seen.size() && i < limit; ++i) out += (i ? ", " : "") + seen[i];
    if (seen.size() > limit) out += ", …";
    return out;
}

// Every candidate of a name, best first (conda by package name, PyPI and sources by distribution).
std::vector<const Candidate*> candidates_named(SolvPool& sp, const std::string& name) {
    std::vector<const Candidate*> out;
    for (const auto& c : sp.candidates())
        if ((c.kind == CandKind::conda && c.record.name == name) ||
            ((c.kind == CandKind::pypi || c.kind == CandKind::source) && c.dist == pep508::normalize_name(name)))
            out.push_back(&c);
    std::sort(out.begin(), out.end(), [](const Candidate* a, const Candidate* b) {
        if (a->solv_name != b->solv_name) return a->repo_priority > b->repo_priority;
        return a->rank > b->rank;
    });
    return out;
}

std::vector<const Candidate*> candidates_of(SolvPool& sp, const std::string& argument) {
    std::vector<const Candidate*> out;
    for (Id p : sp.matching(argument))
        if (const Candidate* c = sp.candidate(p)) out.push_back(c);
    std::sort(out.begin(), out.end(), [](const Candidate* a, const Candidate* b) {
        if (a->solv_name != b->solv_name) return a->repo_priority > b->repo_priority;
        return a->rank > b->rank;
    });
    return out;
}

// Why nothing matches a requirement: strict channel priority set the matching records aside,
// the name exists in other versions, or nothing has the name at all.
std::string why_nothing_matches(SolvPool& sp, const Job& job) {
    const SolveInput& in = *sp.context().input;
    auto f = split_dep(job.dep);
    std::string name = job_name(job);
    if ((f[0] == "conda" || f[0] == "either") && f.size() > 1) {
        try {
            auto ms = conda::MatchSpec::parse(f[1]);
            for (const auto& m : sp.masked()) {
                if (m.record.name != ms.name || !ms.matches(m.record)) continue;
                auto offered = candidates_named(sp, ms.name);
                std::string first;
                for (const Candidate* c : offered)
                    if (c->kind == CandKind::conda) {
                        first = in.channels[static_cast<size_t>(c->channel)].channel;
                        break;
                    }
                return "masked by strict channel priority: " + in.channels[m.channel].channel + " has " + m.record.name + " " +
                       m.record.version + " (" + m.record.build + "), but " + ms.name + " comes only from " + first +
                       ", the first channel that has it" + (offered.empty() ? "" : " (versions " + versions_of(offered) + ")") +
                       "; conda's default, --channel-priority flexible, lets a lower channel supply it";
            }
        } catch (const InputError&) {
        }
    }
    auto offered = candidates_named(sp, name);
    if (offered.empty()) return "no channel or index offers a package named " + name;
    return "no " + name + " matches; available: " + versions_of(offered, 8);
}

// Two requirements that cannot both hold, named with where each comes from: two pins on one
// project, or a pin against what every candidate of another requirement depends on.
std::vector<std::string> excluding_pins(SolvPool& sp, const std::vector<Job>& jobs) {
    std::vector<std::string> out;
    std::vector<std::string> names;
    std::vector<std::set<Id>> sets;
    for (const auto& job : jobs) {
        names.push_back(job_name(job));
        auto ids = sp.matching(job.dep);
        sets.emplace_back(ids.begin(), ids.end());
    }
    auto disjoint = [](const std::set<Id>& a, const std::set<Id>& b) {
        return std::none_of(a.begin(), a.end(), [&](Id p) { return b.count(p); });
    };
    for (size_t i = 0; i < jobs.size(); ++i)
        for (size_t k = i + 1; k < jobs.size(); ++k)
            if (!names[i].empty() && names[i] == names[k] && !sets[i].empty() && !sets[k].empty() && disjoint(sets[i], sets[k]))
                out.push_back(jobs[i].text + where(jobs[i]) + " and " + jobs[k].text + where(jobs[k]) + " exclude each other: one allows " +
                              versions_of(candidates_of(sp, jobs[i].dep)) + ", the other " + versions_of(candidates_of(sp, jobs[k].dep)));
    for (size_t i = 0; i < jobs.size(); ++i) {
        auto cands = candidates_of(sp, jobs[i].dep);
        if (cands.empty() || cands.size() > 400) continue;
        // The names every candidate depends on, with the union of what those dependencies allow.
        std::map<std::string, std::pair<size_t, std::set<Id>>> needed;
        std::map<std::string, std::string> example;
        for (const Candidate* c : cands) {
            std::set<std::string> mine;
            for (const auto& d : c->deps) {
                std::string n = dep_name(d);
                if (n.empty()) continue;
                if (mine.insert(n).second) ++needed[n].first;
                for (Id p : sp.matching(d)) needed[n].second.insert(p);
                example.emplace(n, c->label() + " requires " + describe_dep(d));
            }
        }
        for (const auto& [n, use] : needed) {
            if (use.first != cands.size()) continue;
            for (size_t k = 0; k < jobs.size(); ++k)
                if (k != i && names[k] == n && !sets[k].empty() && disjoint(use.second, sets[k]))
                    out.push_back(jobs[k].text + where(jobs[k]) + " excludes every " + n + " that " + jobs[i].text + where(jobs[i]) +
                                  " can use (" + example[n] + ")");
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// The machine-side fix when the best candidate of a requirement is held back only by the
// driver: the driver it needs, at GA and with CUDA minor-version compatibility.
std::string driver_fix(SolvPool& sp, const std::vector<Job>& jobs, const std::vector<size_t>& blamed) {
    const SolveInput& in = *sp.context().input;
    const auto& k = in.knowledge;
    for (size_t j : blamed) {
        for (const Candidate* c : candidates_of(sp, jobs[j].dep)) {
            std::string cuda;
            bool only_driver = true;
            for (const auto& d : c->deps) {
                if (!sp.matching(d).empty()) continue;
                auto f = split_dep(d);
                if (f[0] == "fact" && f.size() > 2 && f[1] == "driver") cuda = f[2];
                else only_driver = false;
            }
            if (cuda.empty() || !only_driver) continue;
            std::string have;
            for (const auto& t : in.targets)
                if (!t.target.driver_version.empty())
                    have += (have.empty() ? "" : ", ") + std::string("driver ") + t.target.driver_version +
                            (t.target.driver_cuda.empty() ? "" : " runs CUDA <= " + t.target.driver_cuda);
            std::string need;
            if (auto ga = knowledge::min_driver_for_cuda(k, cuda)) need = ">= " + *ga + " (CUDA " + cuda + " GA)";
            if (const auto* rule = knowledge::minor_version_rule(k, cuda); rule && !rule->min_driver.empty())
                need += (need.empty() ? "" : " or ") + std::string(">= ") + rule->min_driver + " with CUDA " +
                        std::to_string(rule->cuda_major) + ".x minor-version compatibility";
            if (need.empty()) need = "one that runs CUDA " + cuda;
            return "upgrade the NVIDIA driver: " + (have.empty() ? std::string("the target has no NVIDIA driver") : have) + "; " +
                   c->label() + " needs " + need;
        }
    }
    return "";
}

}  // namespace

std::optional<RelaxResult> unsatisfiable_outright(SolvPool& sp, const std::vector<Job>& jobs) {
    for (size_t j = 0; j < jobs.size(); ++j) {
        std::vector<std::string> lines;
        for (const Candidate* c : candidates_of(sp, jobs[j].dep)) {
            std::string blocker = first_blocker(sp, *c);
            if (blocker.empty()) {
                lines.clear();
                break;
            }
            if (std::string line = c->label() + " " + blocker; std::find(lines.begin(), lines.end(), line) == lines.end())
                lines.push_back(line);
        }
        if (lines.empty()) continue;   // a candidate may install, or none matches (libsolv names that)
        // Only where no other requirement's candidates depend on this project: otherwise libsolv
        // names those requirements too (torchvision==0.10.1+cu111 beside a torch no build of which
        // runs), and the explanation loosens them.
        std::set<std::string> names;
        for (const Candidate* c : candidates_of(sp, jobs[j].dep)) {
            names.insert(c->record.name);
            if (!c->dist.empty()) names.insert(c->dist);
        }
        for (size_t k = 0; k < jobs.size(); ++k) {
            if (k == j) continue;
            for (const Candidate* c : candidates_of(sp, jobs[k].dep))
                for (const auto& d : c->deps)
                    if (names.count(dep_name(d))) return std::nullopt;
        }
        RelaxResult r;
        r.problems = std::move(lines);
        r.blamed = {j};
        return r;
    }
    return std::nullopt;
}

std::string explain_failure(SolvPool& sp, const std::vector<Job>& jobs, const std::vector<std::string>& problems,
                            const std::vector<size_t>& blamed_jobs, const Resolve& solve_relaxed) {
    // The searches below ask for the same relaxed problem more than once (one requirement
    // loosened, then the same set as the first step of the step-wise search): each is solved
    // once on the one pool. A solve is the cost here (libsolv's rules for every build of a
    // loosened name), so the memo is what keeps an unsatisfiable answer near a solve's time.
    std::map<std::vector<std::string>, RelaxResult> solved;
    auto resolve = [&](const std::vector<Job>& relaxed) {
        std::vector<std::string> key;
        key.reserve(relaxed.size());
        for (const auto& j : relaxed) key.push_back(j.dep);
        auto it = solved.find(key);
        if (it == solved.end()) {
            auto outright = unsatisfiable_outright(sp, relaxed);
            it = solved.emplace(std::move(key), outright ? std::move(*outright) : solve_relaxed(relaxed)).first;
        }
        return it->second;
    };
    const SolveInput& in = *sp.context().input;
    // Sections, each a list of lines; the derivation ("How the requirements collide") is cut
    // first to keep the message on one screen unless --verbose asks for all of it.
    std::vector<std::string> head, why, collide, help;
    head.push_back("No environment satisfies the spec on this machine (" + gpu_list(in) + "; " + driver_list(in) + ").");

    for (const auto& line : excluding_pins(sp, jobs)) why.push_back("  - " + line);
    std::vector<std::string> also_involved;
    for (size_t j : blamed_jobs) {
        const Job& job = jobs[j];
        auto cands = candidates_of(sp, job.dep);
        if (cands.empty()) {
            why.push_back(job.text + where(job) + ": " + why_nothing_matches(sp, job));
            continue;
        }
        // Four candidates with their first blocker on one screen; --verbose: every candidate
        // with every blocker (the full derivation).
        std::vector<std::string> blocked;
        size_t looked = 0;
        for (const Candidate* c : cands) {
            ++looked;
            std::string blocker = in.verbose ? all_blockers(sp, *c) : first_blocker(sp, *c);
            if (!blocker.empty()) blocked.push_back(c->label() + " " + blocker);
            if (!in.verbose && blocked.size() == 4) break;
        }
        if (looked < cands.size())
            blocked.push_back("… " + std::to_string(cands.size() - looked) + " more candidates (--verbose lists each with every blocker)");
        if (blocked.empty()) {
            also_involved.push_back(job.text + where(job));
            continue;
        }
        why.push_back(job.text + where(job) + ":");
        for (const auto& line : blocked) why.push_back("  - " + line);
    }
    if (!also_involved.empty()) {
        std::string line;
        for (const auto& a : also_involved) line += (line.empty() ? "" : "; ") + a;
        why.push_back("Also involved (their candidates need what the above rules out): " + line);
    }
    // "you asked for X" restates a spec line the sections above already name, and a build's
    // blocker listed above is not said again below.
    for (const auto& line : problems)
        if (line.rfind("you asked for ", 0) != 0 && std::find(why.begin(), why.end(), "  - " + line) == why.end())
            collide.push_back("  - " + line);

    if (std::string fix = driver_fix(sp, jobs, blamed_jobs); !fix.empty()) help.push_back("  - " + fix);

    // The nearest working set: one requirement loosened first, then pairs, each to its bare name.
    std::vector<size_t> loosenable;
    for (size_t j = 0; j < jobs.size(); ++j)
        if (bare_name(jobs[j]) != jobs[j].dep && jobs[j].from.line >= 0) loosenable.push_back(j);
    std::vector<size_t> order = blamed_jobs;
    for (size_t j : loosenable)
        if (std::find(order.begin(), order.end(), j) == order.end()) order.push_back(j);
    // Python is not loosened here: every allowed minor is tried in turn by the caller.
    std::erase_if(order, [&](size_t j) { return bare_name(jobs[j]) == jobs[j].dep || bare_name(jobs[j]) == "conda\tpython"; });

    // A pin on a CUDA build (torch==1.9.1+cu111) loosened stays a CUDA build: the CPU builds of
    // the project (+cpu) are left out, or the nearest "working" set would be one without the GPU.
    auto cpu_builds_of = [&](size_t j) {
        std::string out;
        auto f = split_dep(bare_name(jobs[j]));
        if (f[0] != "pypi" && f[0] != "either") return out;
        auto pinned = candidates_of(sp, jobs[j].dep);
        bool cuda = !pinned.empty() && std::all_of(pinned.begin(), pinned.end(), [](const Candidate* c) {
            return c->kind == CandKind::pypi && c->record.version.find("+cu") != std::string::npos;
        });
        if (!cuda) return out;
        std::set<std::string> cpu;
        for (const Candidate* c : candidates_named(sp, f[1]))
            if (c->kind == CandKind::pypi && c->record.version.size() > 4 &&
                c->record.version.compare(c->record.version.size() - 4, 4, "+cpu") == 0)
                cpu.insert(c->record.version);
        for (const auto& v : cpu) out += ",!=" + v;
        return out;
    };
    // `dep` with `more` (",!=…" / ",>=…") added to its specifier.
    auto with_specs = [](std::string dep, const std::string& more) {
        if (more.empty()) return dep;
        auto f = split_dep(dep);
        bool has_spec = f.size() > 1 && f[1].find_first_of("=<>!~") != std::string::npos;
        return has_spec ? dep + more : dep + more.substr(1);
    };
    auto loosened = [&](const std::vector<size_t>& which) {
        std::vector<Job> relaxed = jobs;
        for (size_t j : which) relaxed[j].dep = with_specs(bare_name(jobs[j]), cpu_builds_of(j));
        return relaxed;
    };
    auto names_of = [&](const std::vector<size_t>& which) {
        std::string s;
        for (size_t j : which) s += (s.empty() ? "" : " and ") + jobs[j].text + where(jobs[j]);
        return s;
    };
    // What the relaxed solve picks for the loosened names, and for the other requirements
    // whose pick moved: the concrete set to pin instead.
    auto related = [&](const RelaxResult& r, const std::vector<size_t>& which) {
        std::string s;
        for (const auto& label : r.chosen) {
            for (size_t j : which) {
                std::string name = split_dep(bare_name(jobs[j])).back();
                if (label.rfind(name + " ", 0) == 0 || label.rfind(pep508::normalize_name(name) + " ", 0) == 0) {
                    s += (s.empty() ? "" : ", ") + label;
                    break;
                }
            }
        }
        return s;
    };

    // The nearest version that works: a loosened pin moves as little as it can, upward first
    // (a newer build that carries what the machine needs), then downward.
    auto nearest_in = [&](size_t j, const std::vector<Job>& base, RelaxResult fallback, std::string* pinned_dep) {
        auto pinned = candidates_of(sp, jobs[j].dep);
        // What the loosened requirement admits (pre-releases too, where the loosening took them).
        auto all = candidates_of(sp, base[j].dep == jobs[j].dep ? bare_name(jobs[j]) : base[j].dep);
        if (pinned.empty() || all.empty()) return fallback;
        auto newer = [](const Candidate* a, const Candidate* b) {
            if (a->pep440_version && b->pep440_version) return *a->pep440_version > *b->pep440_version;
            if (a->conda_version && b->conda_version) return a->conda_version->compare(*b->conda_version) > 0;
            return a->record.version > b->record.version;
        };
        const Candidate* anchor = *std::min_element(pinned.begin(), pinned.end(), newer);   // the newest pinned
        std::vector<const Candidate*> up, down;
        std::set<std::string> seen;
        // One try per release: a wheel's local label (+cu118) is a build of it, and the solve
        // picks the build that runs on the machine.
        auto release_of = [](const Candidate* c) {
            return c->kind == CandKind::conda ? c->record.version : c->record.version.substr(0, c->record.version.find('+'));
        };
        for (const Candidate* c : all) {
            if (!seen.insert(release_of(c)).second) continue;
            (newer(c, anchor) ? up : down).push_back(c);
        }
        std::sort(up.begin(), up.end(), [&](const Candidate* a, const Candidate* b) { return newer(b, a); });
        std::sort(down.begin(), down.end(), newer);
        up.insert(up.end(), down.begin(), down.end());
        auto f = split_dep(bare_name(jobs[j]));
        size_t tries = 0;
        for (const Candidate* c : up) {
            if (++tries > 24) break;
            std::vector<Job> relaxed = base;
            relaxed[j].dep = f[0] == "conda" || (f[0] == "either" && c->kind == CandKind::conda)
                                 ? "conda\t" + c->record.name + " " + c->record.version
                                 : with_specs("pypi\t" + c->dist + "==" + release_of(c), cpu_builds_of(j));
            RelaxResult r = resolve(relaxed);
            if (r.solved) {
                if (pinned_dep) *pinned_dep = relaxed[j].dep;
                return r;
            }
        }
        return fallback;
    };
    auto nearest = [&](size_t j, RelaxResult fallback) { return nearest_in(j, jobs, std::move(fallback), nullptr); };

    bool found = false;
    std::vector<std::pair<std::string, std::string>> single_notes;   // (reason, requirements)
    for (size_t j : order) {
        RelaxResult r = resolve(loosened({j}));
        if (r.solved) r = nearest(j, r);
        if (r.solved) {
            help.push_back("  - loosen " + jobs[j].text + where(jobs[j]) + ": then " + related(r, {j}) + " fits");
            found = true;
        } else if (std::find(blamed_jobs.begin(), blamed_jobs.end(), j) != blamed_jobs.end()) {
            std::string reason = first_reason(r.problems);
            auto same = std::find_if(single_notes.begin(), single_notes.end(), [&](const auto& n) { return n.first == reason; });
            if (same == single_notes.end()) single_notes.push_back({reason, jobs[j].text});
            else same->second += ", " + jobs[j].text;
        }
    }
    if (!found) {
        size_t tries = 0;
        for (size_t a = 0; a < order.size() && !found && tries < 60; ++a)
            for (size_t b = a + 1; b < order.size() && !found && tries < 60; ++b, ++tries) {
                RelaxResult r = resolve(loosened({order[a], order[b]}));
                if (r.solved) {
                    help.push_back("  - loosen " + names_of({order[a], order[b]}) + ": then " + related(r, {order[a], order[b]}) + " fit");
                    found = true;
                }
            }
    }
    if (!found) {
        // One step at a time: loosen what the failure blames; when the loosened problem fails
        // again, loosen what that failure blames too, until one solves. Then each loosened
        // requirement is pulled back to the release nearest its pin that still solves (newer
        // first: the oldest torch build that carries the GPU's code, not the newest), in the
        // order they were loosened. What that solve picks is the nearest working set.
        auto loosenable = [&](size_t j) {
            return std::find(order.begin(), order.end(), j) != order.end();
        };
        std::vector<size_t> loose, next = blamed_jobs;
        RelaxResult r;
        // PEP 440 leaves pre-releases out of a bare name while a final release exists; when only
        // a pre-release fits (mmdet3d 1.0.0rcN), a loosened requirement may take one, as pip
        // does for a specifier that names a pre-release.
        auto with_pre = [&](std::vector<Job> relaxed) {
            for (size_t j : loose) {
                auto f = split_dep(relaxed[j].dep);
                if (f[0] == "pypi" && f.size() > 1) relaxed[j].dep = with_specs(relaxed[j].dep, ",>=0.dev0");
            }
            return relaxed;
        };
        std::vector<Job> current;
        for (int step = 0; step < 8; ++step) {
            size_t before = loose.size();
            for (size_t j : next)
                if (loosenable(j) && std::find(loose.begin(), loose.end(), j) == loose.end()) loose.push_back(j);
            if (loose.size() == before) break;
            current = loosened(loose);
            r = resolve(current);
            std::vector<size_t> pre_blamed;
            if (!r.solved) {
                RelaxResult pre = resolve(with_pre(current));
                if (pre.solved) {
                    current = with_pre(current);
                    r = pre;
                }
                pre_blamed = pre.blamed;
            }
            if (r.solved) break;
            next = r.blamed;
            next.insert(next.end(), pre_blamed.begin(), pre_blamed.end());
        }
        if (r.solved) {
            for (size_t j : loose) {
                std::string dep;
                RelaxResult pulled = nearest_in(j, current, r, &dep);
                if (!dep.empty()) {
                    current[j].dep = dep;
                    r = pulled;
                }
            }
            auto chosen_named = [&](const std::string& name) {
                for (const auto& label : r.chosen)
                    if (label.rfind(name + " ", 0) == 0 || label.rfind(pep508::normalize_name(name) + " ", 0) == 0) return label;
                return std::string();
            };
            help.push_back("  - the nearest working set on this machine, loosening " + std::to_string(loose.size()) +
                           " requirements one step at a time (each then pulled back to the release nearest its pin):");
            std::set<std::string> named;
            for (size_t j : loose) {
                std::string name = split_dep(bare_name(jobs[j])).back();
                named.insert(pep508::normalize_name(name));
                std::string now = chosen_named(name);
                // An sdist is built on the machine: say so, it takes a compiler and time.
                for (const auto& c : sp.candidates())
                    if (c.kind == CandKind::pypi && c.label() == now && c.record.filename.find(".whl") == std::string::npos) {
                        now += ", built from its sdist";
                        break;
                    }
                help.push_back("      " + jobs[j].text + where(jobs[j]) + " -> " + (now.empty() ? std::string("not needed") : now));
            }
            // The OpenMMLab stack the knowledge base's gates tie to torch, as the solve picked it.
            std::string beside;
            for (const char* name : {"mmcv-full", "mmcv", "mmdet", "mmsegmentation", "mmdet3d", "mmengine"}) {
                if (named.count(name)) continue;
                std::string label = chosen_named(name);
                if (!label.empty()) beside += (beside.empty() ? "" : ", ") + label;
            }
            if (!beside.empty()) help.push_back("      beside it, as the gates allow: " + beside);
            found = true;
        }
    }
    for (const auto& [reason, which] : single_notes)
        help.push_back("  - loosening " + (which.find(", ") == std::string::npos ? which : "any one of " + which) +
                       " alone is not enough: " + reason);
    if (!found) {
        // The knock-on effects: loosen every blamed requirement at once and say what follows.
        std::vector<size_t> blamed_loose;
        for (size_t j : order)
            if (std::find(blamed_jobs.begin(), blamed_jobs.end(), j) != blamed_jobs.end()) blamed_loose.push_back(j);
        if (blamed_loose.size() > 2) {
            RelaxResult r = resolve(loosened(blamed_loose));
            if (r.solved)
                help.push_back("  - loosen all of " + names_of(blamed_loose) + ": then " + related(r, blamed_loose) + " fit");
            else
                help.push_back("  - even with all of " + names_of(blamed_loose) + " loosened: " + first_reason(r.problems, 4));
        }
        help.push_back("  - no loosening of one or two requirements solves it on this machine");
    }

    // One screen: 40 lines by default; the derivation gives way first, then long lists.
    const size_t budget = in.verbose ? SIZE_MAX : 40;
    size_t fixed = head.size() + (why.empty() ? 0 : why.size() + 1) + help.size() + 2;
    size_t room = fixed + 2 < budget ? budget - fixed - 2 : 0;
    std::ostringstream out;
    for (const auto& l : head) out << l << "\n";
    if (!why.empty()) {
        out << "\n";
        size_t limit = in.verbose ? why.size() : std::min(why.size(), budget / 2);
        for (size_t i = 0; i < limit; ++i) out << why[i] << "\n";
        if (limit < why.size()) out << "  … " << why.size() - limit << " more lines (--verbose shows them)\n";
    }
    if (!collide.empty() && room > 0) {
        out << "\nHow the requirements collide:\n";
        size_t limit = std::min(collide.size(), room);
        for (size_t i = 0; i < limit; ++i) out << collide[i] << "\n";
        if (limit < collide.size()) out << "  - … and " << collide.size() - limit << " more (--verbose shows the full derivation)\n";
    }
    out << "\nWhat would help:\n";
    size_t help_limit = in.verbose ? help.size() : std::min(help.size(), budget / 3);
    for (size_t i = 0; i < help_limit; ++i) out << help[i] << "\n";
    if (help_limit < help.size()) out << "  - … " << help.size() - help_limit << " more (--verbose)\n";
    return out.str();
}

void finish_toolchain(SolvPool& sp, const std::vector<const Candidate*>& chosen, LockedToolchain& toolchain) {
    const SolveInput& in = *sp.context().input;
    if (!sp.context().cuda_extensions) return;
    const Candidate* torch = nullptr;
    for (const Candidate* c : chosen)
        if (c->dist == "torch") torch = c;
    if (!torch || !torch->cuda) {
        toolchain.notes.push_back("the chosen torch is not a CUDA build: the extensions build for CPU only");
        return;
    }
    std::string series = major_minor(torch->record.version.substr(0, torch->record.version.find('+')));
    std::vector<std::string> archs;
    for (int sm : all_gpu_sms(in)) {
        auto arch = buildable_arch(in.knowledge, series, torch->cuda->runtime, sm);
        if (!arch) continue;
        std::string name = std::to_string(*arch / 10) + "." + std::to_string(*arch % 10);
        if (std::find(archs.begin(), archs.end(), name) == archs.end()) archs.push_back(name);
        if (*arch != sm)
            toolchain.notes.push_back("GPU sm_" + std::to_string(sm) + ": nvcc " + torch->cuda->runtime + " and torch " +
                                      series + "'s cpp_extension do not build " + std::to_string(sm / 10) + "." +
                                      std::to_string(sm % 10) + "; " + name +
                                      " is built instead, whose SASS runs there (same major)");
    }
    for (const auto& a : archs) toolchain.cuda_arch_list += (toolchain.cuda_arch_list.empty() ? "" : ";") + a;
    if (archs.empty())
        toolchain.notes.push_back("the target has no GPU: set TORCH_CUDA_ARCH_LIST for the machine that will run the extensions");
    toolchain.notes.push_back("nvcc " + toolchain.nvcc + " from " + toolchain.nvcc_from + ": torch " +
                              torch->record.version + " builds extensions only with nvcc of CUDA " + torch->cuda->runtime);
    for (const auto& t : in.targets)
        for (const auto& tk : t.target.toolkits)
            if (major_minor(tk.version) != torch->cuda->runtime)
                toolchain.notes.push_back("system nvcc " + tk.version + " at " + tk.path + " not used: its CUDA differs from torch's " +
                                          torch->cuda->runtime);
    if (auto newest = knowledge::newest_gcc_major(in.knowledge, torch->cuda->runtime))
        toolchain.notes.push_back("gcc " + toolchain.gcc + " from " + toolchain.gcc_from + ": nvcc " + torch->cuda->runtime +
                                  " accepts gcc up to " + std::to_string(*newest));
}

std::vector<LockedDecision> decisions_that_mattered(SolvPool& sp, const std::vector<Job>& jobs,
                                                   const std::vector<const Candidate*>& chosen) {
    std::vector<LockedDecision> out;
    auto id_of = [&](const Candidate* c) { return sp.first_solvable() + static_cast<Id>(c - sp.candidates().data()); };
    std::set<Id> chosen_ids;
    for (const Candidate* c : chosen) chosen_ids.insert(id_of(c));
    for (const Candidate* c : chosen) {
        if (c->kind != CandKind::conda && c->kind != CandKind::pypi) continue;
        // Only alternatives the user's own requirements allow count: a pin already excludes the rest.
        std::vector<std::set<Id>> constraints;
        for (const auto& job : jobs) {
            auto ids = sp.matching(job.dep);
            if (std::find(ids.begin(), ids.end(), id_of(c)) != ids.end()) constraints.emplace_back(ids.begin(), ids.end());
        }
        // PyPI: and the Requires-Dist of the chosen packages that took it (torchvision's
        // torch==1.9.0 leaves no other torch release to rule out). So the alternatives are the
        // releases every requirer allows, which lazy candidates read whatever their windows
        // (solve.cpp, reads_to_widen (3)), and the lock does not depend on what else was read.
        if (c->kind == CandKind::pypi)
            for (const Candidate* requirer : chosen)
                for (const auto& d : requirer->deps) {
                    auto ids = sp.matching(d);
                    if (requirer != c && std::find(ids.begin(), ids.end(), id_of(c)) != ids.end()) constraints.emplace_back(ids.begin(), ids.end());
                }
        std::vector<const Candidate*> better;
        for (const auto& other : sp.candidates())
            if (other.solv_name == c->solv_name && other.rank > c->rank &&
                std::all_of(constraints.begin(), constraints.end(), [&](const std::set<Id>& s) { return s.count(id_of(&other)); }))
                better.push_back(&other);
        std::sort(better.begin(), better.end(), [](const Candidate* a, const Candidate* b) { return a->rank > b->rank; });
        std::set<std::string> recorded;   // one decision per reason and package name: the best candidate it ruled out
        for (const Candidate* other : better) {
            for (const auto& d : other->deps) {
                auto f = split_dep(d);
                if (f[0] != "fact" || !sp.matching(d).empty()) continue;
                if (recorded.insert("machine:" + f[1]).second)
                    out.push_back({"machine:" + f[1], other->label(), why_unprovided(sp, d)});
                break;
            }
            // An advisory clause sits on one side of the pair: on the better candidate, or
            // on a chosen package whose clause names it.
            auto record_advisory = [&](const std::string& id, const Candidate* partner) {
                if (recorded.insert(id).second)
                    out.push_back({id, other->label(), "conflicts with " + partner->label() + ": " + advisory_text(sp, id)});
            };
            for (const auto& d : other->conflicts) {
                auto f = split_dep(d);
                if (f[0] != "advisory") continue;
                for (Id p : sp.matching(d))
                    if (chosen_ids.count(p)) {
                        record_advisory(f[1], sp.candidate(p));
                        break;
                    }
            }
            for (const Candidate* partner : chosen)
                for (const auto& d : partner->conflicts) {
                    auto f = split_dep(d);
                    if (f[0] != "advisory") continue;
                    auto ids = sp.matching(d);
                    if (std::find(ids.begin(), ids.end(), id_of(other)) != ids.end()) record_advisory(f[1], partner);
                }
        }
    }
    std::sort(out.begin(), out.end(), [](const LockedDecision& a, const LockedDecision& b) {
        return std::tie(a.id, a.excluded) < std::tie(b.id, b.excluded);
    });
    out.erase(std::unique(out.begin(), out.end(),
                          [](const LockedDecision& a, const LockedDecision& b) { return a.id == b.id && a.excluded == b.excluded; }),
              out.end());
    return out;
}

}  // namespace envlock::solve_detail
