#include "resolver/workflow/check_lock.hpp"

#include <algorithm>
#include <set>

#include "resolver/solve/self_check.hpp"
#include "resolver/lock/spec_io.hpp"
#include "resolver/specs/conda_filename.hpp"
#include "resolver/specs/cuda_build.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/wheel.hpp"
#include "resolver/workflow/account.hpp"
#include "resolver/workflow/resolve_project.hpp"

namespace envlock {

namespace {

std::string last_segment(const std::string& url) {
    std::string u = url.substr(0, url.find_first_of("?#"));
    return u.substr(u.rfind('/') + 1);
}

// The conda name of a PyPI project where they differ, and back (DESIGN.md: one project).
std::string other_spelling(const std::string& name) {
    if (name == "torch") return "pytorch";
    if (name == "pytorch") return "torch";
    return name;
}

}  // namespace

std::vector<std::string> unprovided_names(const Lock& lock) {
    std::set<std::string> conda, pypi;
    std::string python = "3.8";
    std::string platform = lock.targets.empty() || lock.targets.front().target.platform.empty()
                               ? "linux-64" : lock.targets.front().target.platform;
    for (const auto& p : lock.packages) {
        if (p.kind == Ecosystem::conda) conda.insert(p.name);
        pypi.insert(pep508::normalize_name(p.name));
        if (p.name == "python") python = p.version;
    }
    // Python comes from conda or from the system; the lock's Python decides the markers.
    pep508::MarkerEnv env = pep508::MarkerEnv::for_target(python, platform);
    auto provided = [&](const std::string& name) {
        std::string n = pep508::normalize_name(name);
        // "spconv-cuxxx" is provided by the project the solver chose for it ("spconv-cu111").
        if (auto placeholder = cuda_placeholder(n))
            return std::any_of(pypi.begin(), pypi.end(), [&](const std::string& p) { return fills_cuda_placeholder(*placeholder, p).has_value(); });
        return name == "python" || conda.count(name) || pypi.count(n) || pypi.count(other_spelling(n)) ||
               conda.count(other_spelling(name));
    };
    std::vector<std::string> out;
    for (const auto& r : lock.spec.requirements) {
        std::string name;
        if (r.ecosystem != "conda") {
            try {
                auto req = pep508::Requirement::parse(r.text);
                if (!req.applies(env)) continue;
                name = req.normalized_name;
            } catch (const InputError&) {
            }
        }
        if (name.empty()) {
            try {
                name = conda::MatchSpec::parse(r.text).name;
            } catch (const InputError&) {
                continue;
            }
        }
        if (name.rfind("__", 0) == 0 || provided(name) || allowed_missing(lock.spec, name)) continue;
        std::string where = r.from.file.empty() ? std::string("spec") : format_provenance(r.from);
        out.push_back(r.text + " (" + where + "): no package of the lock provides " + name);
    }
    for (const auto& p : lock.packages) {
        for (const auto& d : p.depends) {
            std::string name;
            if (p.kind == Ecosystem::conda) {
                try {
                    name = conda::MatchSpec::parse(d).name;
                } catch (const InputError&) {
                    continue;
                }
                if (name.rfind("__", 0) == 0) continue;
            } else {
                try {
                    auto req = pep508::Requirement::parse(d);
                    if (!req.applies(env)) continue;
                    name = req.normalized_name;
                } catch (const InputError&) {
                    continue;
                }
            }
            if (!provided(name)) out.push_back(p.name + " " + p.version + ": needs " + d + ", which no package of the lock provides");
        }
    }
    return out;
}

std::vector<std::string> self_check_problems(const Lock& lock, const knowledge::Knowledge& knowledge) {
    SolveInput in;
    in.spec = lock.spec;
    in.targets = lock.targets;
    in.channel_priority = ChannelPriority::flexible;   // no channel records here to mask with
    // A requirement the user went on without (--allow-missing) is not in the lock by design.
    std::set<std::string> locked;
    for (const auto& p : lock.packages) locked.insert(pep508::normalize_name(p.name));
    auto& reqs = in.spec.requirements;
    reqs.erase(std::remove_if(reqs.begin(), reqs.end(), [&](const SpecRequirement& r) {
                   std::string name = r.text.substr(0, r.text.find_first_of(" =<>!~[;@"));
                   return allowed_missing(lock.spec, name) && !locked.count(pep508::normalize_name(name));
               }),
               reqs.end());
    std::vector<IndexRecord> chosen;
    std::string python;
    for (const auto& p : lock.packages) {
        IndexRecord r;
        r.ecosystem = p.kind;
        r.name = p.name;
        r.version = p.version;
        r.build = p.build;
        r.build_number = p.build_number;
        r.url = p.url;
        r.filename = last_segment(p.url);
        r.sha256 = p.sha256;
        r.md5 = p.md5;
        r.size = p.size;
        r.channel = p.channel;
        r.subdir = p.subdir;
        r.depends = p.depends;
        r.depends_known = !p.depends_unknown;
        if (p.kind == Ecosystem::pypi) r.index = p.channel;
        if (p.kind == Ecosystem::source) {
            r.git = p.url;
            r.rev = p.rev;
        }
        if (p.kind == Ecosystem::conda && p.name == "python") python = p.version;
        chosen.push_back(std::move(r));
    }
    // A lock without a conda python (a venv on a base interpreter) was solved for the spec's
    // `python: "X.Y"`, as the solve reads it: markers are evaluated for that.
    if (python.empty() && pep440::Version::try_parse(lock.spec.python)) python = lock.spec.python;
    std::vector<std::string> out;
    for (const auto& v : self_check(in, knowledge, chosen, python)) out.push_back(v.requirement + ": " + v.found);
    return out;
}

std::vector<std::string> lock_problems(const Lock& lock, const std::string& lock_dir, const knowledge::Knowledge& knowledge) {
    auto out = incomplete_entries(lock);
    auto names = unprovided_names(lock);
    out.insert(out.end(), names.begin(), names.end());
    // The solve's proof, when the entries themselves hold (an edited entry would only echo).
    if (out.empty()) {
        auto proof = self_check_problems(lock, knowledge);
        out.insert(out.end(), proof.begin(), proof.end());
    }
    for (const auto& f : changed_inputs(lock, lock_dir))
        out.push_back(f + ": changed since the spec was inferred from it (run `envlock resolve` to read it again)");
    return out;
}

}  // namespace envlock
