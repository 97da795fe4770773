#pragma once
// resolver/lock/ owns the values at the resolver's borders (Spec, Target, Lock), their YAML/JSON
// forms (readers validate against schemas/ with valijson and name the offending line) and the
// content hash. It must not solve, infer, fetch or know the knowledge base's rows.
//
// The lock: envlock.yaml's model, its deterministic writer and its validating reader.
// The JSON Schema in schemas/envlock.schema.json is the contract; read_lock checks it and
// points at the offending line.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "resolver/specs/record.hpp"
#include "resolver/lock/spec.hpp"
#include "resolver/lock/target.hpp"

namespace envlock {

// What a CUDA build carries: its runtime and the GPU code in it (sm numbers: 37, 86, 90 …).
struct LockedCuda {
    std::string runtime;        // "11.1"
    std::vector<int> sm;        // SASS
    std::vector<int> ptx;       // PTX that JITs forward
};

struct LockedPackage {
    Ecosystem kind = Ecosystem::conda;
    std::string url;            // conda / pypi artifact URL, or the git URL of a source
    std::string name;
    std::string version;
    std::string build;          // conda build string; wheel tags
    int build_number = 0;
    std::string sha256;
    std::string md5;
    std::uint64_t size = 0;
    std::string channel;        // conda channel / PyPI index or find-links page
    std::string subdir;
    std::string rev;            // source: the revision asked for (tag or commit)
    std::vector<std::string> depends;
    // An sdist or git source whose requirements none of its files declared in a way a static
    // reading follows: `depends` may be short of what installing it pulls in.
    bool depends_unknown = false;
    std::optional<LockedCuda> cuda;
    std::vector<std::string> requested_by;   // spec lines or packages whose requirement brought it in
    int line = 0;               // where read_lock found the entry (1-based); 0 when not read from a file
};

// How the repo's CUDA extensions get built on the target.
struct LockedToolchain {
    std::string nvcc;            // "11.1"; empty when the spec has no CUDA extensions
    std::string nvcc_from;       // "system:/usr/local/cuda-11.1" or "conda:cuda-nvcc"
    std::string gcc;             // major version, "9"
    std::string gcc_from;        // "system:/usr/bin/gcc-9" or "conda:gxx_linux-64"
    std::string cuda_arch_list;  // TORCH_CUDA_ARCH_LIST, "8.6"
    std::vector<std::string> notes;   // why, in words
};

// An advisory or machine fact that changed the outcome, kept so `envlock why` can tell it.
struct LockedDecision {
    std::string id;        // advisory id, or "machine:gpu-arch" …
    std::string excluded;  // what it ruled out, "yapf 0.40.2"
    std::string reason;
};

// A target on which the lock installs and then breaks at run time (a knowledge row of
// target_warnings.yaml that holds for it): kept so `resolve`, `check` and `why` can say so.
struct LockedWarning {
    std::string id;        // the knowledge row
    std::string target;    // the target it holds for ("default", "lab-3090" …)
    std::string symptom;
    std::string fix;
    std::string source;
};

// What `envlock verify --record` found when it last checked this lock on a machine. Outside
// the content hash: recording a verification does not make the lock out of date.
struct LockVerified {
    std::string date;                  // UTC, "2026-11-24T05:40:12Z"
    std::string result;                // "passed" | "failed"
    std::string nvcc;                  // the release it built with, "13.0.88"; "" when none
    std::string nvcc_path;             // "/usr/local/cuda/bin/nvcc"
    std::string host_compiler;         // "/usr/bin/g++ 12.2.0"
    std::vector<std::string> sm;       // "sm_86" …
    std::string torch;                 // the env's torch, "1.13.0a0" (CUDA …)
    std::vector<std::string> failed;   // names of the checks that failed
};

struct NamedTarget {
    std::string name;      // "default", "lab-3090" …
    Target target;
};

struct Lock {
    int version = 1;
    std::string content_hash;          // "sha256:…" over spec + targets + knowledge version
    std::string knowledge_version;
    // When the spec was inferred from a checkout: where it is, relative to the lock's folder,
    // and the sha256 of each inferred-from file then, so `check` sees the docs change.
    std::string checkout;
    std::map<std::string, std::string> inferred_sha256;
    Spec spec;
    std::vector<NamedTarget> targets;
    LockedToolchain toolchain;
    std::vector<LockedPackage> packages;   // sorted by name, then kind
    std::vector<LockedDecision> decisions;
    std::vector<LockedWarning> warnings;
    std::optional<LockVerified> verified;
};

// "sha256:<hex>" over the normalized spec, the targets and the knowledge version.
std::string lock_content_hash(const Spec& spec, const std::vector<NamedTarget>& targets,
                              std::string_view knowledge_version);

// Deterministic: the same Lock gives the same bytes.
std::string write_lock(const Lock& lock);

// Validates against the schema; InputError names `file`, the line and what was expected.
Lock read_lock(std::string_view yaml_text, std::string_view file);

// The lock text with its `verified:` block replaced (or added at the end); every other byte kept.
std::string set_verified(std::string_view yaml_text, const LockVerified& verified);

// Every field of a lock as JSON, and back to an equal Lock: the resolve memo's copy of a lock
// (resolver/workflow/reuse), read without YAML when the lock file's bytes are the ones it was
// made from. Not a user-facing format; read_lock stays the validating reader.
nlohmann::json lock_to_json(const Lock& lock);
Lock lock_from_json(const nlohmann::json& j);   // throws nlohmann::json::exception or InputError when malformed

// The embedded schemas/envlock.schema.json.
std::string_view lock_schema_text();

}  // namespace envlock
