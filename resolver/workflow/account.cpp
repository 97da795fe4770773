#include "resolver/workflow/account.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "resolver/lock/spec_io.hpp"
#include "resolver/specs/cuda_build.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/close_names.hpp"

namespace envlock {

namespace {

constexpr std::size_t kShown = 6;

// PyPI versions nearest to what a pin asks for: those sharing the most leading release
// numbers with it first, newest first among equals; without a pin, the newest.
std::vector<std::string> nearest_versions(const std::vector<std::string>& offered, const pep440::SpecifierSet& wanted) {
    std::optional<pep440::Version> pin;
    for (const auto& s : wanted.specifiers())
        if (auto v = pep440::Version::try_parse(s.version_text())) pin = *v;
    std::vector<pep440::Version> versions;
    for (const auto& o : offered)
        if (auto v = pep440::Version::try_parse(o)) versions.push_back(*v);
    auto shared = [&](const pep440::Version& v) {
        if (!pin) return std::size_t{0};
        std::size_t n = 0;
        while (n < v.release().size() && n < pin->release().size() && v.release()[n] == pin->release()[n]) ++n;
        return n;
    };
    std::sort(versions.begin(), versions.end(), [&](const auto& a, const auto& b) {
        auto sa = shared(a), sb = shared(b);
        return sa != sb ? sa > sb : a > b;
    });
    std::vector<std::string> out;
    for (const auto& v : versions) {
        if (out.size() == kShown) break;
        if (std::find(out.begin(), out.end(), v.str()) == out.end()) out.push_back(v.str());
    }
    return out;
}

std::vector<std::string> newest_conda_versions(std::vector<std::string> versions) {
    std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
        auto va = conda::Version::try_parse(a), vb = conda::Version::try_parse(b);
        if (va && vb) return *vb < *va;
        return a > b;
    });
    versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
    if (versions.size() > kShown) versions.resize(kShown);
    return versions;
}

struct Verdict {
    bool satisfied = false;
    bool name_known = false;
    std::string name;
    std::vector<std::string> nearest_versions;
};

Verdict pypi_verdict(const pep508::Requirement& req, const fetch::IndexClosure& closure) {
    Verdict v;
    v.name = req.normalized_name;
    // "spconv-cuxxx": offered when some project that fills it has an allowed version.
    if (auto placeholder = cuda_placeholder(req.normalized_name)) {
        std::vector<std::string> versions;
        for (const auto& [name, texts] : closure.pypi_versions) {
            if (!fills_cuda_placeholder(*placeholder, name)) continue;
            v.name_known = v.name_known || !texts.empty();
            for (const auto& text : texts) {
                auto version = pep440::Version::try_parse(text);
                if (version && req.specifier.contains(*version, true)) {
                    v.satisfied = true;
                    return v;
                }
                versions.push_back(text);
            }
        }
        v.nearest_versions = nearest_versions(versions, req.specifier);
        return v;
    }
    auto it = closure.pypi_versions.find(req.normalized_name);
    if (it == closure.pypi_versions.end() || it->second.empty()) return v;
    v.name_known = true;
    for (const auto& text : it->second) {
        auto version = pep440::Version::try_parse(text);
        // Pre-releases count: the solver decides whether one may be taken.
        if (version && req.specifier.contains(*version, true)) {
            v.satisfied = true;
            return v;
        }
    }
    v.nearest_versions = nearest_versions(it->second, req.specifier);
    return v;
}

Verdict conda_verdict(const conda::MatchSpec& ms, const fetch::IndexClosure& closure) {
    Verdict v;
    v.name = ms.name;
    std::vector<std::string> versions;
    for (const auto& channel : closure.channels)
        for (const auto& r : channel.records) {
            if (r.name != ms.name) continue;
            v.name_known = true;
            if (ms.matches(r)) {
                v.satisfied = true;
                return v;
            }
            versions.push_back(r.version);
        }
    v.nearest_versions = newest_conda_versions(versions);
    return v;
}

}  // namespace

bool allowed_missing(const Spec& spec, const std::string& name) {
    std::string n = pep508::normalize_name(name);
    return std::any_of(spec.allow_missing.begin(), spec.allow_missing.end(),
                       [&](const std::string& a) { return pep508::normalize_name(a) == n; });
}

std::vector<MissingRequirement> missing_requirements(const Spec& spec, const fetch::IndexClosure& closure,
                                                     const pep508::MarkerEnv& env,
                                                     const std::function<std::vector<std::string>()>& more_names) {
    bool any_conda = std::any_of(closure.channels.begin(), closure.channels.end(),
                                 [](const CondaChannelRecords& c) { return !c.records.empty(); });
    std::vector<MissingRequirement> out;
    for (const auto& r : spec.requirements) {
        std::optional<pep508::Requirement> pypi;
        std::optional<conda::MatchSpec> conda;
        if (r.ecosystem != "conda") {
            try {
                pypi = pep508::Requirement::parse(r.text);
            } catch (const InputError&) {
            }
        }
        if (r.ecosystem != "pypi") {
            try {
                conda = conda::MatchSpec::parse(r.text);
            } catch (const InputError&) {
            }
        }
        if (!pypi && !conda) continue;   // reading the spec refused these already
        if (pypi && (!pypi->url.empty() || !pypi->applies(env))) continue;
        std::string name = pypi ? pypi->normalized_name : conda->name;
        // Python is the interpreter: the solver pins it; without channels the system's is used.
        if (name == "python" && !any_conda) continue;
        if (conda && conda->name.rfind("__", 0) == 0) continue;   // virtual packages describe the machine

        std::vector<Verdict> verdicts;
        if (pypi && pypi->normalized_name != "python") verdicts.push_back(pypi_verdict(*pypi, closure));
        if (conda && (r.ecosystem == "conda" || any_conda)) verdicts.push_back(conda_verdict(*conda, closure));
        if (pypi && r.ecosystem.empty() && any_conda) {
            // Either ecosystem: the conda spelling of the project counts too (PyPI torch = conda pytorch).
            std::string conda_name = pypi->normalized_name == "torch" ? "pytorch" : pypi->normalized_name;
            try {
                verdicts.push_back(conda_verdict(conda::MatchSpec::parse(conda_name + " " + pypi->specifier.str()), closure));
            } catch (const InputError&) {
            }
        }
        if (verdicts.empty() || std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.satisfied; }))
            continue;
        MissingRequirement m;
        m.requirement = r;
        m.name = name;
        for (const auto& v : verdicts)
            if (v.name_known && !m.name_known) {
                m.name_known = true;
                m.name = v.name;
                m.nearest = v.nearest_versions;
            }
        out.push_back(std::move(m));
    }
    if (std::any_of(out.begin(), out.end(), [](const MissingRequirement& m) { return !m.name_known; })) {
        std::vector<std::string> known;
        for (const auto& [n, versions] : closure.pypi_versions)
            if (!versions.empty()) known.push_back(n);
        known.insert(known.end(), closure.conda_names_offered.begin(), closure.conda_names_offered.end());
        // The index's list of every project (PyPI's: ~700k names) only for a name that could be
        // a PyPI project: a conda requirement's nearest names are the channels' own.
        bool pypi_name_missing = std::any_of(out.begin(), out.end(),
                                             [](const MissingRequirement& m) { return !m.name_known && m.requirement.ecosystem != "conda"; });
        if (more_names && pypi_name_missing) {
            auto more = more_names();
            known.insert(known.end(), more.begin(), more.end());
        }
        for (auto& m : out)
            if (!m.name_known) m.nearest = close_names(m.name, known);
    }
    return out;
}

std::string describe_missing(const std::vector<MissingRequirement>& missing) {
    std::string msg;
    std::set<std::string> names;
    for (const auto& m : missing) {
        std::string where = format_provenance(m.requirement.from);
        msg += (where.empty() ? "spec" : where) + ": " + m.requirement.text + ": ";
        if (!m.name_known) {
            msg += "no index offers " + m.name;
            if (!m.nearest.empty()) {
                msg += " (did you mean ";
                for (size_t i = 0; i < m.nearest.size(); ++i) msg += (i ? ", " : "") + m.nearest[i];
                msg += "?)";
            }
        } else {
            msg += "no version of " + m.name + " matches";
            if (!m.nearest.empty()) {
                msg += " (there are ";
                for (size_t i = 0; i < m.nearest.size(); ++i) msg += (i ? ", " : "") + m.nearest[i];
                msg += m.nearest.size() == kShown ? ", …)" : ")";
            }
        }
        msg += "\n";
        names.insert(m.name);
    }
    msg += "fix the requirement, add the index that has it, or go on without it:";
    for (const auto& n : names) msg += " --allow-missing " + n;
    return msg + "\n";
}

}  // namespace envlock
