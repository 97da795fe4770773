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

// Why a dependency nothing provides fails, in terms of the machine when it is a machine fact.
std::string why_unprovided(SolvPool& sp, const std::string& argument) {
    const SolveInput& in = *sp.context().input;
    auto f = split_dep(argument);
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

}  // namespace

DescribedProblems describe_problems(SolvPool& sp, Solver* solv, const std::vector<Job>& jobs) {
    DescribedProblems out;
    Pool* pool = sp.pool();
    std::set<std::string> seen;
    std::set<size_t> blamed;
    auto add = [&](const std::string& line) {
        if (seen.insert(line).second) out.lines.push_back(line);
    };
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
                            add("nothing in the indexes matches " + job.text + where(job));
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
                    auto f = split_dep(arg);
                    std::string line = label_of(sp, source) + " cannot be installed with " + label_of(sp, target);
                    if (f[0] == "advisory" && f.size() > 1) line += ": advisory " + f[1] + ": " + advisory_text(sp, f[1]);
                    else if (f[0] == "otherdist") line += ": both provide the Python package " + f[1];
                    else if (f[0] == "constrains") line += ": it constrains " + f[1];
                    add(line);
                    break;
                }
                case SOLVER_RULE_PKG_SAME_NAME:
                    add("only one of " + label_of(sp, source) + " and " + label_of(sp, target) + " can be installed");
                    break;
                case SOLVER_RULE_PKG_CONSTRAINS:
                    add(label_of(sp, source) + " constrains " + describe_dep(arg));
                    break;
                case SOLVER_RULE_PKG_NOT_INSTALLABLE:
                    add(label_of(sp, source) + " cannot be installed on this target");
                    break;
                default:
                    add(solver_problemruleinfo2str(solv, type, source, target, dep));
            }
        }
        queue_free(&rules);
    }
    out.jobs.assign(blamed.begin(), blamed.end());
    return out;
}

std::string explain_failure(SolvPool& sp, const std::vector<Job>& jobs, const std::vector<std::string>& problems,
                            const std::vector<size_t>& blamed_jobs, const Resolve& resolve) {
    std::ostringstream out;
    out << "No environment satisfies the spec on this machine (" << gpu_list(*sp.context().input) << "; "
        << driver_list(*sp.context().input) << ").\n";

    std::vector<std::string> also_involved;
    for (size_t j : blamed_jobs) {
        const Job& job = jobs[j];
        auto ids = sp.matching(job.dep);
        std::vector<const Candidate*> cands;
        for (Id p : ids)
            if (const Candidate* c = sp.candidate(p)) cands.push_back(c);
        std::sort(cands.begin(), cands.end(), [](const Candidate* a, const Candidate* b) {
            if (a->solv_name != b->solv_name) return a->repo_priority > b->repo_priority;
            return a->rank > b->rank;
        });
        if (cands.empty()) {
            out << "\n" << job.text << where(job) << ":\n  nothing in the indexes matches it\n";
            continue;
        }
        std::vector<std::string> blocked;
        for (const Candidate* c : cands) {
            std::string blocker = first_blocker(sp, *c);
            if (!blocker.empty()) blocked.push_back(c->label() + " " + blocker);
            if (blocked.size() == 6) break;
        }
        if (blocked.empty()) {
            also_involved.push_back(job.text + where(job));
            continue;
        }
        out << "\n" << job.text << where(job) << ":\n";
        for (const auto& line : blocked) out << "  - " << line << "\n";
    }
    if (!also_involved.empty()) {
        out << "\nAlso involved (their candidates need what the above rules out):\n";
        for (const auto& line : also_involved) out << "  - " << line << "\n";
    }

    if (!problems.empty()) {
        out << "\nHow the requirements collide:\n";
        size_t n = 0;
        for (const auto& line : problems) {
            out << "  - " << line << "\n";
            if (++n == 14) {
                out << "  - … and " << problems.size() - n << " more\n";
                break;
            }
        }
    }

    // The smallest relaxation: one requirement first, then pairs, each loosened to its bare name.
    std::vector<size_t> loosenable;
    for (size_t j = 0; j < jobs.size(); ++j)
        if (bare_name(jobs[j]) != jobs[j].dep && jobs[j].from.line >= 0) loosenable.push_back(j);
    std::vector<size_t> order = blamed_jobs;
    for (size_t j : loosenable)
        if (std::find(order.begin(), order.end(), j) == order.end()) order.push_back(j);
    // Python is not loosened here: every allowed minor is tried in turn by the caller.
    std::erase_if(order, [&](size_t j) { return bare_name(jobs[j]) == jobs[j].dep || bare_name(jobs[j]) == "conda\tpython"; });

    auto loosened = [&](const std::vector<size_t>& which) {
        std::vector<Job> relaxed = jobs;
        for (size_t j : which) relaxed[j].dep = bare_name(jobs[j]);
        return relaxed;
    };
    auto names_of = [&](const std::vector<size_t>& which) {
        std::string s;
        for (size_t j : which) s += (s.empty() ? "" : " and ") + jobs[j].text;
        return s;
    };
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

    out << "\nWhat would help:\n";
    bool found = false;
    std::vector<std::pair<std::string, std::string>> single_notes;   // (reason, requirements)
    for (size_t j : order) {
        RelaxResult r = resolve(loosened({j}));
        if (r.solved) {
            out << "  - loosen " << jobs[j].text << where(jobs[j]) << ": then " << related(r, {j}) << " fits\n";
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
                    out << "  - loosen " << names_of({order[a], order[b]}) << ": then "
                        << related(r, {order[a], order[b]}) << " fit\n";
                    found = true;
                }
            }
    }
    for (const auto& [reason, which] : single_notes)
        out << "  - loosening " << (which.find(", ") == std::string::npos ? which : "any one of " + which)
            << " alone is not enough: " << reason << "\n";
    if (!found) {
        // The knock-on effects: loosen every blamed requirement at once and say what follows.
        std::vector<size_t> blamed_loose;
        for (size_t j : order)
            if (std::find(blamed_jobs.begin(), blamed_jobs.end(), j) != blamed_jobs.end()) blamed_loose.push_back(j);
        if (blamed_loose.size() > 2) {
            RelaxResult r = resolve(loosened(blamed_loose));
            if (r.solved)
                out << "  - loosen all of " << names_of(blamed_loose) << ": then " << related(r, blamed_loose) << " fit\n";
            else
                out << "  - even with all of " << names_of(blamed_loose) << " loosened: " << first_reason(r.problems, 4) << "\n";
        }
        out << "  - no loosening of one or two requirements solves it on this machine\n";
    }
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
