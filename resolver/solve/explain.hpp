#pragma once
// Internal to the solve: turning libsolv's problems into words a user acts on, searching
// for the smallest relaxation of the spec that solves, and recording which machine facts
// and advisories changed the outcome of a successful solve.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "resolver/solve/libsolv.hpp"

#include "resolver/solve/pool.hpp"

namespace envlock::solve_detail {

struct DescribedProblems {
    std::vector<std::string> lines;   // one per libsolv rule, deduplicated
    std::vector<size_t> jobs;         // indexes of the jobs the problems involve
};

DescribedProblems describe_problems(SolvPool& sp, Solver* solv, const std::vector<Job>& jobs);

struct RelaxResult {
    bool solved = false;
    std::vector<std::string> problems;
    std::vector<std::string> chosen;  // labels of the chosen packages
    std::vector<size_t> blamed;       // when not solved: the jobs its problems involve
};
using Resolve = std::function<RelaxResult(const std::vector<Job>&)>;

// A problem where every candidate of one requirement needs something nothing provides is
// unsatisfiable without a solve (libsolv would spend one building rules for every build its
// names reach: ~500k for python -> pip -> 800 setuptools). The lines are libsolv's own for that
// case (a build and what it needs), best candidate first; that requirement is blamed.
std::optional<RelaxResult> unsatisfiable_outright(SolvPool& sp, const std::vector<Job>& jobs);

// The whole explanation: what the blamed requirements could have been and why each
// candidate does not fit, libsolv's chain, and the smallest relaxation that would solve.
std::string explain_failure(SolvPool& sp, const std::vector<Job>& jobs, const std::vector<std::string>& problems,
                            const std::vector<size_t>& blamed_jobs, const Resolve& resolve);

// TORCH_CUDA_ARCH_LIST and the notes on why this nvcc and gcc.
void finish_toolchain(SolvPool& sp, const std::vector<const Candidate*>& chosen, LockedToolchain& toolchain);

// Better-ranked candidates that an advisory or a machine fact ruled out.
std::vector<LockedDecision> decisions_that_mattered(SolvPool& sp, const std::vector<Job>& jobs,
                                                   const std::vector<const Candidate*>& chosen);

}  // namespace envlock::solve_detail
