// Target warnings (target_warnings.yaml): which rows hold for one target and one set of locked
// packages. Nothing here changes a solve; the solve records the rows that hold in the lock.
#include <algorithm>
#include <optional>
#include <sstream>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::knowledge {
namespace {

using Packages = std::vector<std::pair<std::string, std::string>>;

std::string python_name(const std::string& name) {
    // conda's builds of torch carry the project under other names (pool.cpp keeps the full list).
    if (name == "pytorch" || name == "pytorch-gpu" || name == "pytorch-cpu") return "torch";
    return pep508::normalize_name(name);
}

// A requirement holds when a locked package of that name has a version it allows. A version
// that is no PEP 440 version (some conda builds) satisfies only a bare name.
bool locked(const std::string& requirement, const Packages& packages) {
    pep508::Requirement req;
    try {
        req = pep508::Requirement::parse(requirement);
    } catch (const InputError&) {
        return false;
    }
    for (const auto& [name, version] : packages) {
        if (python_name(name) != req.normalized_name) continue;
        if (req.specifier.empty()) return true;
        auto v = pep440::Version::try_parse(version);
        // A local label (+cu111) does not change which release it is.
        if (v && req.specifier.contains(*v, true)) return true;
    }
    return false;
}

bool target_holds(const std::string& conditions, const Target& t) {
    std::istringstream in(conditions);
    for (std::string c; std::getline(in, c, ',');) {
        c.erase(0, c.find_first_not_of(' '));
        c.erase(c.find_last_not_of(' ') + 1);
        if (c == "wsl") {
            if (!t.wsl) return false;
        } else if (c.rfind("cpu-lacks:", 0) == 0) {
            std::string flag = c.substr(10);
            if (t.cpu_flags.empty()) return false;   // flags unknown: no claim
            if (std::find(t.cpu_flags.begin(), t.cpu_flags.end(), flag) != t.cpu_flags.end()) return false;
        } else if (c == "no-gpu") {
            if (!cpu_only(t)) return false;
        } else if (c.rfind("gpus>=", 0) == 0) {
            if (t.gpus.size() < std::stoul(c.substr(6))) return false;
        } else {
            return false;   // a condition this build does not know (a newer knowledge file): no claim
        }
    }
    return true;
}

}  // namespace

std::vector<TargetWarning> target_warnings(const Knowledge& k, const Target& t, const Packages& packages) {
    std::vector<TargetWarning> out;
    for (const auto& w : k.target_warnings) {
        if (!target_holds(w.target, t)) continue;
        if (!std::all_of(w.when.begin(), w.when.end(), [&](const std::string& r) { return locked(r, packages); })) continue;
        if (std::any_of(w.unless.begin(), w.unless.end(), [&](const std::string& r) { return locked(r, packages); })) continue;
        out.push_back(w);
    }
    return out;
}

std::vector<std::string> target_facts_warnings_read(const Knowledge& k, const Packages& packages) {
    std::vector<std::string> out;
    for (const auto& w : k.target_warnings) {
        if (!std::all_of(w.when.begin(), w.when.end(), [&](const std::string& r) { return locked(r, packages); })) continue;
        if (std::any_of(w.unless.begin(), w.unless.end(), [&](const std::string& r) { return locked(r, packages); })) continue;
        std::istringstream in(w.target);
        for (std::string c; std::getline(in, c, ',');) {
            c.erase(0, c.find_first_not_of(' '));
            if (c.rfind("wsl", 0) == 0) out.push_back("wsl");
            else if (c.rfind("cpu-lacks:", 0) == 0) out.push_back("cpu-flags");
            else if (c.rfind("gpus", 0) == 0) out.push_back("gpus");
            else if (c.rfind("no-gpu", 0) == 0) out.insert(out.end(), {"gpus", "driver"});
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace envlock::knowledge
