#pragma once
// Every requirement of the spec accounted for before the solve: each must name a package some
// index offers, at a version its specifier allows. One that does not is reported with its
// file:line and the nearest names or versions there are, instead of reaching the solver as
// nothing and coming back as a smaller lock.
#include <functional>
#include <string>
#include <vector>

#include "fetch/index_closure.hpp"
#include "resolver/lock/spec.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock {

struct MissingRequirement {
    SpecRequirement requirement;
    std::string name;                   // the project or package name it asks for
    bool name_known = false;            // some index has the name, not the version
    std::vector<std::string> nearest;   // names (name unknown) or versions (name known)
};

// The requirements of `spec` that nothing in `closure` satisfies by name and version (markers
// that do not hold for `env` exclude a requirement from the check; the target and the other
// requirements are the solver's business). `more_names` is asked, only when a name is
// missing, for names the indexes list beyond what the closure read (the index roots).
std::vector<MissingRequirement> missing_requirements(const Spec& spec, const fetch::IndexClosure& closure,
                                                     const pep508::MarkerEnv& env,
                                                     const std::function<std::vector<std::string>()>& more_names);

// One line per requirement: "requirements.txt:12: scikit-imagee==0.19.3: no index offers
// scikit-imagee (nearest: scikit-image)", then how to go on without it.
std::string describe_missing(const std::vector<MissingRequirement>& missing);

// Whether `name` is one the spec allows to be missing (resolve --allow-missing NAME).
bool allowed_missing(const Spec& spec, const std::string& name);

}  // namespace envlock
