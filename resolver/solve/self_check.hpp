#pragma once
// The proof that a solve's result is a lock of what was asked, made apart from the pool that
// produced it: the spec's requirements (markers, extras, build strings), every chosen package's
// depends / Requires-Dist / constrains / features, strict channel priority, and each target's
// virtual packages, driver and GPUs, re-evaluated on the chosen records with the matchers alone.
#include <string>
#include <vector>

#include "resolver/solve/solve.hpp"

namespace envlock {

struct SelfCheckViolation {
    std::string requirement;   // what should hold, and whose it is: "spec: numpy=9.9 (docs/install.md:3)"
    std::string found;         // what the result has instead: "the result has no numpy"
};

// `chosen`: every package of the result (conda, PyPI, git sources). `python`: the interpreter
// version markers and Requires-Python were evaluated for ("" when the result has none).
std::vector<SelfCheckViolation> self_check(const SolveInput& input, const std::vector<IndexRecord>& chosen,
                                           const std::string& python);
// The same against `knowledge` instead of input.knowledge (which may then be empty): a lock's
// proof needs no copy of the knowledge base in a SolveInput.
std::vector<SelfCheckViolation> self_check(const SolveInput& input, const knowledge::Knowledge& knowledge,
                                           const std::vector<IndexRecord>& chosen, const std::string& python);

// The violations as one message for an internal error (exit 3), at most `limit` of them.
std::string describe_violations(const std::vector<SelfCheckViolation>& violations, size_t limit = 10);

}  // namespace envlock
