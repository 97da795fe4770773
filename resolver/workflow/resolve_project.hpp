#pragma once
// resolver/workflow/ owns `envlock resolve` end to end: spec -> target -> indexes (through
// fetch/) -> solve -> lock written atomically. It is the one resolver folder that uses fetch/;
// it must not hold semantics of its own (those live in the folders it calls).
//
// `envlock resolve` as one function: find the spec (a spec file, a lock, a checkout to infer
// from, or a built-in recipe), find the target machines, read the indexes, solve, and write
// envlock.yaml beside the code. The CLI only parses flags and prints.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fetch/settings.hpp"
#include "resolver/knowledge/detect.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/workflow/reuse.hpp"

namespace envlock {

// What resolve is doing, for a progress display: each stage reports while it runs (throttling
// is the display's business) and once when it ends.
struct ResolveStep {
    // explain: an unsatisfiable spec; releases beyond its pins are read to say what would solve.
    enum class Stage { sources, indexes, solve, explain };
    Stage stage = Stage::indexes;
    bool finished = false;
    std::size_t done = 0;           // git sources read / index documents fetched
    std::size_t total = 0;          // sources: how many; indexes: unknown up front (0)
    std::uint64_t bytes = 0;        // indexes, explain: bytes received so far (0 when all came from the cache)
    double seconds = 0;             // finished: how long the stage took
    std::size_t pages = 0;          // indexes, solve, explain: PyPI project pages read so far
    std::size_t metadata = 0;       // indexes, solve, explain: versions whose metadata was read so far
    std::size_t round = 0;          // solve: which solve of the rounds over wider windows (1 first)
    bool unsolved = false;          // solve finished: no environment satisfies the spec (the explanation says why)
};

struct ResolveOptions {
    std::string path;                              // DIR, FILE, or a recipe name; "" = "."
    std::string output;                            // where to write; "" = beside the spec; "-" = stdout
    std::vector<std::pair<std::string, std::string>> target_files;   // (name, file); name "" = "default"
    TargetOverrides overrides;                     // detect's flags, applied to the detected machine
    bool redetect = false;                         // ignore the targets of an existing lock
    std::vector<std::string> knowledge_files;
    fetch::CommandLineSettings fetch;
    std::set<std::string> update;                  // names allowed to move from the existing lock
    bool update_all = false;
    bool verbose = false;                          // an unsatisfiable spec: the full derivation
    std::set<std::string> uses;                    // what the code does that advisories depend on
    std::set<std::string> allow_advisories;        // advisory ids the user opts out of
    std::set<std::string> allow_missing;           // requirements to go on without when nothing offers them
    std::string channel_priority;                  // strict|flexible|disabled, remembered in the spec; "" = the spec's
    bool clone = false;                            // recipe: git clone the repo at its commit first
    // Read the metadata of every version each requirement allows before the one solve (the
    // complete problem), instead of windows of the newest widened in rounds. Same lock, more reads.
    bool all_versions = false;
    // Added to the spec and remembered there: channels go first (as `conda install -c` puts
    // them), indexes and find-links pages after the spec's own.
    std::vector<std::string> channels, indexes, find_links;
    std::function<void(const ResolveStep&)> on_step;   // may be empty
    // --python X.Y: the interpreter of a virtual-environment spec (remembered in the spec, as
    // uv takes -p/--python), before .python-version and requires-python.
    std::string python;
    // The versions of the base interpreters this machine has ("3.12.1" …), asked only when a
    // venv spec names no exact Python; may be empty (then such a spec is refused).
    std::function<std::vector<std::string>()> interpreters;
};

struct ResolveResult {
    bool solved = false;
    std::string lock_path;                         // "-" when the lock goes to stdout (lock_text)
    Lock lock;                                     // when solved
    std::string lock_text;                         // when solved and written to "-"
    std::optional<Lock> previous;                  // the lock that was there before, if any
    std::string explanation;                       // when not
    std::vector<std::string> notes;                // what the index closure left out, git revs not verified …
    // For -v: why each solve round after the first was needed ("round 1 reached versions not
    // read: numpy<2 now reads its newest 4 releases"), the lazy candidates' cost made visible.
    std::vector<std::string> rounds;
    // For -v: the sdists downloaded whole to read their requirements (no core metadata), the
    // costliest metadata reads. (A whole wheel, read because ranges were refused, is a note.)
    std::vector<std::string> downloads;
    // The previous lock was current (same inputs, indexes unchanged) and proved again: it is
    // the result, and the file was left as it was.
    bool reused = false;
    // The lock file already held exactly these bytes (reused, or solved to the same lock).
    bool file_unchanged = false;
    // What this run fetched over the network (index documents, metadata reads, bytes).
    std::shared_ptr<const fetch::FetchTally> fetched;
};

ResolveResult resolve_project(const ResolveOptions& options);

// The spec and where the lock goes, for a path, a lock file or a recipe name.
struct SpecLocation {
    Spec spec;
    std::string lock_path;
    std::optional<Lock> previous;                  // the lock already there, if any
    std::string recipe_repo, recipe_rev;           // when the spec came from a recipe
    std::string checkout;                          // when the spec came from (or is kept for) a checkout: its path
    std::vector<std::string> changed;              // inferred-from files that changed since the previous lock
    std::string spec_file;                         // when the spec came from a spec file: its path
    std::vector<std::string> notes;                // what the user should know of where the spec came from
    // The previous lock's resolve memo (resolver/workflow/reuse), when the lock file is the one it was made with.
    std::optional<ResolveMemo> memo;
};

// A spec whose environment is a virtual environment on a base interpreter: no conda requirement,
// no channel, no CUDA extension (which takes nvcc and gcc from conda channels).
bool venv_spec(const Spec& spec);

// The sha256 of each of `files` (relative to `root`) that can be read.
std::map<std::string, std::string> inferred_hashes(const std::string& root, const std::vector<std::string>& files);

// The inferred-from files of `lock` whose content differs from what it recorded (or that are
// gone), read from `lock_dir` joined with the lock's checkout.
std::vector<std::string> changed_inputs(const Lock& lock, const std::string& lock_dir);
// The spec inferred from `dir` again, keeping what the user told resolve to remember in `old`
// (allowed advisories and missing requirements, channel priority, uses, --python).
Spec reinferred(const std::string& dir, const Spec& old);

// `spec` with every provenance line set to 0: two specs equal this way ask for the same things
// (a README paragraph added above the install section moves lines, nothing else).
Spec without_lines(Spec spec);

// With a cache dir, a lock whose resolve memo matches its bytes is read from the memo (no YAML).
SpecLocation locate_spec(const std::string& path, const std::string& output, const std::filesystem::path& cache_dir = {});

}  // namespace envlock
