#include "resolver/solve/self_check.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/spec_io.hpp"
#include "resolver/solve/pool.hpp"
#include "resolver/specs/cuda_build.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock {

namespace {

std::string label(const IndexRecord& r) {
    switch (r.ecosystem) {
        case Ecosystem::conda: return r.name + " " + r.version + " (conda " + r.build + ")";
        case Ecosystem::pypi: return pep508::normalize_name(r.name) + " " + r.version + " (pypi)";
        case Ecosystem::source: return r.name + " " + r.version + " (git " + r.rev + ")";
    }
    return r.name;
}

std::string where(const Provenance& from) {
    std::string text = format_provenance(from);
    return text.empty() ? "" : " (" + text + ")";
}

// conda's virtual packages for one machine, as conda reports them (`conda info`): __cuda is
// the driver's CUDA, __glibc the C library, __linux the kernel, __osx the macOS version,
// __unix/__win the OS family.
std::vector<IndexRecord> virtual_packages(const Target& t) {
    std::vector<IndexRecord> out;
    auto add = [&](const char* name, const std::string& version) {
        IndexRecord r;
        r.name = name;
        r.version = version;
        r.build = "0";
        out.push_back(r);
    };
    if (!t.driver_cuda.empty()) add("__cuda", t.driver_cuda);
    if (!t.glibc.empty()) add("__glibc", t.glibc);
    if (t.platform.rfind("linux", 0) == 0) {
        add("__linux", t.kernel.empty() ? "0" : linux_version(t.kernel));
        add("__unix", "0");
    } else if (t.platform.rfind("osx", 0) == 0) {
        add("__osx", t.osx.empty() ? "0" : t.osx);
        add("__unix", "0");
    } else if (t.platform.rfind("win", 0) == 0) {
        add("__win", "0");
    }
    return out;
}

// Everything that provides Python distribution `dist`: PyPI files, git sources, and conda
// packages of that distribution (conda's pytorch is PyPI's torch).
std::string dist_of(const IndexRecord& r) {
    if (r.ecosystem == Ecosystem::conda) return solve_detail::conda_dist_name(r.name);
    return pep508::normalize_name(r.name);
}

struct Checker {
    const SolveInput& in;
    const knowledge::Knowledge& kb;   // in.knowledge, or the caller's own (no copy)
    const std::vector<IndexRecord>& chosen;
    std::string python;
    std::vector<SelfCheckViolation> out;
    std::map<std::string, std::vector<const IndexRecord*>> conda_by_name;
    std::map<std::string, std::vector<const IndexRecord*>> by_dist;
    std::map<std::string, std::set<std::string>> extras_asked;   // dist -> extras some requirement asks of it
    std::optional<pep508::MarkerEnv> env;
    std::vector<std::vector<IndexRecord>> virtuals;               // per target

    void fail(std::string requirement, std::string found) { out.push_back({std::move(requirement), std::move(found)}); }

    std::string have(const std::vector<const IndexRecord*>& records) const {
        std::string s;
        for (const auto* r : records) s += (s.empty() ? "" : ", ") + label(*r);
        return "the result has " + s;
    }

    // A conda MatchSpec against the chosen conda records, or a target's virtual packages.
    // "" when it holds, else what the result has instead.
    std::string conda_holds(const std::string& text, const std::vector<IndexRecord>* virtual_set) {
        conda::MatchSpec ms = conda::MatchSpec::parse(text);
        if (ms.name.rfind("__", 0) == 0) {
            if (!virtual_set) return "";
            for (const auto& v : *virtual_set)
                if (v.name == ms.name) return ms.matches(v) ? "" : "the target's " + v.name + " is " + v.version;
            return "the target has no " + ms.name;
        }
        auto it = conda_by_name.find(ms.name);
        if (it == conda_by_name.end()) return "the result has no " + ms.name;
        for (const auto* r : it->second)
            if (ms.matches(*r)) return "";
        return have(it->second);
    }

    std::string pypi_holds(const pep508::Requirement& req) {
        // "spconv-cuxxx": any project that fills the placeholder, at an allowed version.
        if (auto placeholder = cuda_placeholder(req.normalized_name)) {
            for (const auto& [dist, records] : by_dist) {
                if (!fills_cuda_placeholder(*placeholder, dist)) continue;
                for (const auto* r : records) {
                    auto v = pep440::Version::try_parse(r->version);
                    if (v && req.specifier.contains(*v, true)) return "";
                }
            }
            return "the result has no project that fills " + req.normalized_name;
        }
        auto it = by_dist.find(req.normalized_name);
        if (it == by_dist.end()) return "the result has no " + req.normalized_name;
        for (const auto* r : it->second) {
            if (!req.url.empty() && r->ecosystem != Ecosystem::source) continue;
            auto v = pep440::Version::try_parse(r->version);
            // The pool admits a pre-release only where no final release fits; either is valid here.
            if (v && req.specifier.contains(*v, true)) return "";
        }
        return have(it->second);
    }

    bool applies(const pep508::Requirement& req, const std::set<std::string>& extras = {}) {
        return !env || req.applies(*env, extras);
    }

    void index() {
        for (const auto& r : chosen) {
            if (r.ecosystem == Ecosystem::conda) conda_by_name[r.name].push_back(&r);
            std::string dist = dist_of(r);
            if (!dist.empty()) by_dist[dist].push_back(&r);
        }
        for (const auto& t : in.targets) virtuals.push_back(virtual_packages(t.target));
        if (!python.empty()) {
            std::string platform = in.targets.front().target.platform.empty() ? "linux-64" : in.targets.front().target.platform;
            try {
                env = pep508::MarkerEnv::for_target(python, platform);
            } catch (const InputError&) {
            }
        }
        asked_extras();
    }

    // The extras some requirement asks of a project ("mmdet[tracking]"), from the spec and from
    // the chosen packages' Requires-Dist lines whose marker holds. A line's marker may name the
    // extras of its own package (contourpy's `contourpy[bokeh,docs]; extra == "mypy"` holds only
    // where contourpy[mypy] is asked for), so the set grows until nothing more is asked.
    void asked_extras() {
        auto ask = [&](const pep508::Requirement& req) {
            bool grew = false;
            for (const auto& e : req.extras) grew = extras_asked[req.normalized_name].insert(pep508::normalize_name(e)).second || grew;
            return grew;
        };
        for (const auto& r : in.spec.requirements) {
            if (r.ecosystem == "conda") continue;
            try {
                auto req = pep508::Requirement::parse(r.text);
                if (applies(req)) ask(req);
            } catch (const InputError&) {
            }
        }
        for (bool grew = true; grew;) {
            grew = false;
            for (const auto& r : chosen) {
                if (r.ecosystem == Ecosystem::conda) continue;
                std::set<std::string> own;
                if (auto it = extras_asked.find(dist_of(r)); it != extras_asked.end()) own = it->second;
                for (const auto& d : r.depends) {
                    try {
                        auto req = pep508::Requirement::parse(d);
                        if (applies(req, own)) grew = ask(req) || grew;
                    } catch (const InputError&) {
                    }
                }
            }
        }
    }

    void one_of_each() {
        for (const auto& [name, records] : conda_by_name)
            if (records.size() > 1) fail("one package named " + name, have(records));
        for (const auto& [dist, records] : by_dist)
            if (records.size() > 1) fail("one provider of the Python distribution " + dist, have(records));
    }

    void spec_requirements() {
        const Spec& spec = in.spec;
        for (const auto& r : spec.requirements) {
            std::string asked = "spec: " + r.text + where(r.from);
            std::optional<pep508::Requirement> pypi;
            if (r.ecosystem != "conda") {
                try {
                    pypi = pep508::Requirement::parse(r.text);
                } catch (const InputError&) {
                    if (r.ecosystem == "pypi") throw;
                }
            }
            if (pypi && pypi->normalized_name == "python" && r.ecosystem != "conda") {
                auto v = pep440::Version::try_parse(python);
                if (!v || !pypi->specifier.contains(*v, true)) fail(asked, "the result's Python is " + (python.empty() ? "none" : python));
                continue;
            }
            if (pypi) {
                if (!applies(*pypi)) continue;
                std::string found = pypi_holds(*pypi);
                // Either ecosystem: a conda record that matches the text as a MatchSpec also does.
                if (!found.empty() && r.ecosystem.empty()) {
                    try {
                        if (conda_holds(r.text, nullptr).empty()) found.clear();
                    } catch (const InputError&) {
                    }
                }
                if (!found.empty()) fail(asked, found);
                continue;
            }
            conda::MatchSpec ms = conda::MatchSpec::parse(r.text);
            if (ms.name == "python" && !conda_by_name.count("python")) {
                // No conda Python in the channels: the interpreter the PyPI packages were chosen for.
                auto v = conda::Version::try_parse(python);
                if (!v || !ms.matches_version(*v)) fail(asked, "the result's Python is " + (python.empty() ? "none" : python));
                continue;
            }
            std::string found = conda_holds(r.text, nullptr);
            if (!found.empty()) fail(asked, found);
        }
        if (!spec.python.empty()) {
            std::string text = spec.python;
            bool bare = std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
            auto ms = conda::MatchSpec::parse("python " + (bare ? text + ".*" : text));
            auto v = conda::Version::try_parse(python);
            if (!v || !ms.matches_version(*v)) fail("spec: python " + text, "the result's Python is " + (python.empty() ? "none" : python));
        }
        for (const auto& s : in.sources) {
            auto it = by_dist.find(pep508::normalize_name(s.name));
            bool found = it != by_dist.end() &&
                         std::any_of(it->second.begin(), it->second.end(), [](const IndexRecord* r) { return r->ecosystem == Ecosystem::source; });
            if (!found) fail("spec: " + s.name + " from " + s.git, it == by_dist.end() ? "the result has no " + s.name : have(it->second));
        }
    }

    void conda_record(const IndexRecord& r) {
        for (const auto& d : r.depends) {
            for (size_t t = 0; t < virtuals.size(); ++t) {
                std::string found = conda_holds(d, &virtuals[t]);
                if (!found.empty()) {
                    fail(label(r) + " depends on " + d, found + (in.targets.size() > 1 ? " (target " + in.targets[t].name + ")" : ""));
                    break;
                }
                if (conda::MatchSpec::parse(d).name.rfind("__", 0) != 0) break;   // the same for every target
            }
        }
        for (const auto& c : r.constrains) {
            conda::MatchSpec ms = conda::MatchSpec::parse(c);
            auto check = [&](const std::vector<const IndexRecord*>& records) {
                for (const auto* o : records)
                    if (!ms.matches(*o)) fail(label(r) + " constrains " + c, "the result has " + label(*o));
            };
            if (auto it = conda_by_name.find(ms.name); it != conda_by_name.end()) check(it->second);
            for (size_t t = 0; t < virtuals.size(); ++t)
                for (const auto& v : virtuals[t])
                    if (v.name == ms.name && !ms.matches(v)) fail(label(r) + " constrains " + c, "the target's " + v.name + " is " + v.version);
        }
        // conda (classic resolve): a record with `features` needs a package that tracks each.
        for (const auto& f : r.features) {
            bool tracked = std::any_of(chosen.begin(), chosen.end(), [&](const IndexRecord& o) {
                return std::find(o.track_features.begin(), o.track_features.end(), f) != o.track_features.end();
            });
            if (!tracked) fail(label(r) + " has feature " + f, "no package of the result tracks it (track_features)");
        }
    }

    void python_record(const IndexRecord& r) {
        if (!r.requires_python.empty() && !python.empty()) {
            try {
                if (!pep440::SpecifierSet::parse(r.requires_python).contains(pep440::Version::parse(python), true))
                    fail(label(r) + " requires Python " + r.requires_python, "the result's Python is " + python);
            } catch (const InputError&) {
            }
        }
        std::set<std::string> extras;
        if (auto it = extras_asked.find(dist_of(r)); it != extras_asked.end()) extras = it->second;
        for (const auto& d : r.depends) {
            std::optional<pep508::Requirement> req;
            try {
                req = pep508::Requirement::parse(d);
            } catch (const InputError&) {
                continue;   // an unreadable Requires-Dist line is skipped by pip too
            }
            if (!applies(*req, extras)) continue;
            std::string found = pypi_holds(*req);
            if (!found.empty()) fail(label(r) + " requires " + d, found);
        }
    }

    // The knowledge base's facts about the chosen builds: CUDA runtime against each driver,
    // kernels against each GPU, gates between projects.
    void knowledge_facts(const IndexRecord& r) {
        const auto& k = kb;
        std::string dist = dist_of(r);
        std::string default_variant;
        if (dist == "torch" && r.ecosystem == Ecosystem::pypi) {
            if (auto rel = knowledge::torch_release(k, r.version)) default_variant = rel->pypi_default;
            if (default_variant.empty()) default_variant = cuda_variant_pinned_by(r.depends);
        }
        auto cuda = cuda_build_of(r, default_variant);
        if (cuda && r.ecosystem != Ecosystem::source) {
            for (const auto& t : in.targets)
                if (!cpu_only(t.target) &&
                    (t.target.driver_version.empty() || !knowledge::driver_runs_cuda(k, t.target.driver_version, cuda->runtime)))
                    fail(label(r) + " needs a driver that runs CUDA " + cuda->runtime,
                         t.target.driver_version.empty() ? "target " + t.name + " has no NVIDIA driver"
                                                         : "target " + t.name + " has driver " + t.target.driver_version);
            if (dist == "torch") {
                auto v = pep440::Version::try_parse(r.version);
                std::string version = r.ecosystem == Ecosystem::pypi && v ? v->public_version().str() : r.version;
                auto arch = knowledge::torch_arch_list(k, version, cuda->variant, r.ecosystem == Ecosystem::conda ? "conda" : "pip");
                if (arch)
                    for (const auto& t : in.targets)
                        for (const auto& g : t.target.gpus) {
                            int sm = g.sm_major * 10 + g.sm_minor;
                            if (!knowledge::arch_list_runs_on(*arch, sm))
                                fail(label(r) + " runs on every GPU of the target",
                                     "its kernels (" + knowledge::describe(*arch) + ") do not run on " + g.name + " sm_" + std::to_string(sm));
                        }
            }
        }
        if (dist.empty() || !pep440::Version::try_parse(r.version)) return;
        for (const auto& gate : knowledge::gate_requirements(k, dist, r.version)) {
            try {
                auto req = pep508::Requirement::parse(gate);
                if (!applies(req)) continue;
                std::string found = pypi_holds(req);
                if (!found.empty()) fail(label(r) + " needs " + gate + " (knowledge base)", found);
            } catch (const InputError&) {
            }
        }
    }

    // conda's strict channel priority: a name comes only from the first channel that has it.
    void channel_priority() {
        if (in.channel_priority != ChannelPriority::strict) return;
        std::map<std::string, size_t> first;
        for (size_t ch = 0; ch < in.channels.size(); ++ch)
            for (const auto& rec : in.channels[ch].records) first.emplace(rec.name, ch);
        for (const auto& r : chosen) {
            if (r.ecosystem != Ecosystem::conda) continue;
            auto it = first.find(r.name);
            if (it == first.end()) continue;
            const auto& records = in.channels[it->second].records;
            bool there = std::any_of(records.begin(), records.end(), [&](const IndexRecord& o) { return o.url == r.url && o.filename == r.filename; });
            if (!there)
                fail(label(r) + " comes from the first channel that has " + r.name + " (" + in.channels[it->second].channel +
                         ", strict channel priority)",
                     "it comes from " + r.channel);
        }
    }
};

}  // namespace

std::vector<SelfCheckViolation> self_check(const SolveInput& input, const std::vector<IndexRecord>& chosen,
                                           const std::string& python) {
    return self_check(input, input.knowledge, chosen, python);
}

std::vector<SelfCheckViolation> self_check(const SolveInput& input, const knowledge::Knowledge& knowledge,
                                           const std::vector<IndexRecord>& chosen, const std::string& python) {
    Checker c{input, knowledge, chosen, python, {}, {}, {}, {}, {}, {}};
    c.index();
    c.one_of_each();
    c.spec_requirements();
    for (const auto& r : chosen) {
        if (r.ecosystem == Ecosystem::conda) c.conda_record(r);
        else c.python_record(r);
        c.knowledge_facts(r);
    }
    c.channel_priority();
    return c.out;
}

std::string describe_violations(const std::vector<SelfCheckViolation>& violations, size_t limit) {
    std::string out;
    for (size_t i = 0; i < violations.size() && i < limit; ++i)
        out += "\n  - " + violations[i].requirement + ": " + violations[i].found;
    if (violations.size() > limit) out += "\n  - … and " + std::to_string(violations.size() - limit) + " more";
    return out;
}

}  // namespace envlock
