#pragma once
// resolver/solve/ owns the one libsolv problem (pool.hpp), its answer and its explanations
// (explain.hpp); it is the only folder that includes libsolv. Only the resolve workflow
// (resolver/workflow/) calls it; it must not do I/O.
//
// The one SAT solve (DESIGN.md "The solve"): conda records, PyPI candidates, source
// packages and the target machine's facts in one libsolv pool; knowledge and advisories
// as clauses; the answer is a Lock, or an explanation the user can act on.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/record.hpp"
#include "resolver/lock/spec.hpp"

namespace envlock {

// conda's channel_priority (conda's configuration docs, "Managing channels"): strict drops a
// name from every channel below the first that has it; flexible prefers the higher channel but
// lets a lower one supply a name the higher cannot (libsolv repo priorities, as libmamba sets
// them); disabled ranks by version first, channel order breaking ties.
enum class ChannelPriority { strict, flexible, disabled };

struct SolveInput {
    Spec spec;
    std::vector<NamedTarget> targets;                 // at least one
    knowledge::Knowledge knowledge;
    std::vector<CondaChannelRecords> channels;        // spec.channels order = priority order
    IndexRecords pypi;                                // every file found, index order as pip's
    // Files of PyPI versions the pages offer whose metadata was not read (lazy candidates): each
    // project's stand in as one candidate ranked below all its read releases, with no
    // requirements, matching a requirement wherever one of those versions would. It only
    // relaxes the problem: a solve that needs none of them is the answer, one that is
    // unsatisfiable even so is unsatisfiable with every version read, and one that takes a
    // stand-in says which requirements to read further (SolveOutcome::widen).
    IndexRecords unread;
    IndexRecords sources;                             // git sources, one record each
    std::map<std::string, std::string> previous;      // "conda:name"/"pypi:name" -> version in the old lock; "conda:name#build" -> its build; "pypi:name#file" -> its file
    std::set<std::string> update;                     // names allowed to move away from `previous`
    bool update_all = false;
    ChannelPriority channel_priority = ChannelPriority::strict;
    bool verbose = false;            // explanations: the full derivation, not one screen
    // What the repo's code does that advisories depend on: "numba-cuda",
    // "code-uses:torch.utils.tensorboard", "code-uses:numpy.float-aliases" …
    std::set<std::string> uses;
    // lock_content_hash(spec, targets as the previous lock kept them, knowledge.version), which
    // a re-resolve checks against the previous lock before any solve (resolve_project.cpp). The
    // solve makes its lock's own over the targets that lock records (without the kernel and the
    // facts nothing chosen depends on).
    std::string content_hash;
    // A virtual-environment spec (no channel offers python): the interpreter versions it may be
    // built on ("3.12", "3.11"), the caller's choice or what the target has. Tried newest first
    // among those the spec's python constraints allow; the first that solves is the lock's.
    std::vector<std::string> venv_pythons;
};

struct SolveOutcome {
    bool solved = false;
    Lock lock;                   // filled when solved (content hash and spec included)
    std::string explanation;     // when not solved: why, in the user's terms, and what would help
    // Not solved yet: the answer could depend on versions not read. The requirements (their
    // normalized name and specifier, "numpy\t<2") whose unread versions the solve took, or
    // could have taken for a newer release it passed over; read more of each and solve again.
    std::vector<std::pair<std::string, std::string>> widen;
};

SolveOutcome solve(const SolveInput& input);

// The conda subdir of a target platform ("linux-64") and the Python minor versions the
// spec allows, newest first, among those the channels offer.
std::vector<std::string> python_minors_to_try(const SolveInput& input);

}  // namespace envlock
