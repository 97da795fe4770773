#pragma once
// Internal to the solve: the libsolv pool for one Python minor version, built from a
// SolveInput. Every dependency is a REL_NAMESPACE dep whose argument says what it means
// ("pypi\ttorch==1.9.1", "fact\tdriver\t11.1" …); the namespace callback answers it with
// our own PEP 440 / conda matchers and the knowledge base.
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "resolver/solve/libsolv.hpp"

#include "resolver/specs/conda_version.hpp"
#include "resolver/specs/cuda_build.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/solve/solve.hpp"

namespace envlock::solve_detail {

// extra: a PyPI/source candidate with one of its extras (PEP 508 `name[extra]`): it requires
// exactly its base candidate and what the extra adds; it is never locked itself.
enum class CandKind { conda, pypi, source, virtual_package, system_nvcc, system_compiler, extra };

struct Candidate {
    IndexRecord record;
    CandKind kind = CandKind::conda;
    std::string solv_name;                 // "conda:numpy", "pypi:numpy", "source:mmdet3d", "__cuda", "system:nvcc"
    std::string dist;                      // normalized Python distribution it provides, "" for none
    std::optional<conda::Version> conda_version;
    std::optional<pep440::Version> pep440_version;
    std::optional<CudaBuild> cuda;
    std::optional<knowledge::ArchList> arch;   // torch builds whose arch list is known
    int compiler_major = 0;                // system_compiler / conda gcc
    int repo_priority = 0;
    int channel = 0;                       // conda: its channel's index in priority order
    int rank = 0;                          // within solv_name: higher is preferred (the EVR)
    std::vector<std::string> deps;         // namespace dep arguments
    std::vector<std::string> conflicts;
    // A stand-in for a project's versions whose metadata was not read (SolveInput::unread),
    // newest first: it has no version of its own and matches a specifier where one of these does.
    std::vector<pep440::Version> unread;
    std::string label() const;             // "torch 1.9.1+cu111 (pypi)"
    // Does the candidate's version (a stand-in: one of its versions) satisfy the specifier?
    bool satisfies(const pep440::SpecifierSet& specifier, std::optional<bool> prereleases) const;
};

// A requirement the user asked for, as a job.
struct Job {
    std::string dep;          // namespace argument
    std::string text;         // as the user wrote it
    Provenance from;
};

struct PoolContext {
    const SolveInput* input = nullptr;
    Target combined;                     // the targets merged: lowest driver/glibc, all GPUs
    std::string python_minor;            // "3.8"
    std::string python_full;             // "3.8.18" for Requires-Python checks
    bool cuda_extensions = false;
};

// A conda record strict channel priority set aside: `channel` is its own channel's index; a
// higher-priority channel has the name.
struct MaskedRecord {
    IndexRecord record;
    size_t channel = 0;
};

class SolvPool {
public:
    SolvPool(const PoolContext& ctx);
    ~SolvPool();
    SolvPool(const SolvPool&) = delete;
    SolvPool& operator=(const SolvPool&) = delete;

    Pool* pool() const { return pool_; }
    Id dep_id(const std::string& argument);
    const Candidate* candidate(Id solvable) const;
    const std::vector<Candidate>& candidates() const { return cands_; }
    std::vector<Id> matching(const std::string& argument);  // solvables a dep argument selects
    const PoolContext& context() const { return ctx_; }
    Id first_solvable() const { return first_id_; }
    const std::vector<MaskedRecord>& masked() const { return masked_; }

private:
    static Id namespace_callback(Pool* pool, void* data, Id name, Id evr);
    std::vector<Id> compute(const std::string& argument);
    void add_candidates();
    void add_knowledge_clauses();
    void add_to_pool();
    struct AdvisoryRule {
        std::vector<std::string> members;   // dep arguments; the first conflicts with the second
    };
    std::optional<AdvisoryRule> advisory_rule(const knowledge::Advisory& adv) const;
    void apply_advisory(const std::string& id, const AdvisoryRule& rule);

    PoolContext ctx_;
    Pool* pool_ = nullptr;
    Id ns_ = 0;
    Id first_id_ = 0;
    std::vector<Candidate> cands_;
    std::vector<MaskedRecord> masked_;
    std::unordered_map<std::string, std::vector<size_t>> extras_;   // "dist[extra]" -> extra candidates
    std::unordered_map<std::string, std::vector<size_t>> by_conda_name_;
    std::unordered_map<std::string, std::vector<size_t>> by_dist_;
    std::vector<size_t> nvcc_providers_;
    std::vector<size_t> compiler_providers_;
    std::unordered_map<std::string, std::vector<Id>> cache_;
};

// The arch torch's cpp_extension with nvcc `cuda` builds for GPU `sm` (same major, minor at
// or below): 86 for sm 89 under torch 1.9 and nvcc 11.1. nullopt when there is none.
std::optional<int> buildable_arch(const knowledge::Knowledge& k, const std::string& torch_series,
                                  const std::string& cuda, int sm);

// Every GPU's sm (major*10+minor) across the input's targets, sorted, unique.
std::vector<int> all_gpu_sms(const SolveInput& input);

using knowledge::major_minor;   // "11.1.105" -> "11.1"

// The Python distribution a conda package is ("pytorch" -> "torch"), "" for none.
std::string conda_dist_name(const std::string& conda_name);

// The dependency arguments of a PEP 508 requirement: "pypi\tREQ", and for each extra it asks
// for, "pypiextra\tEXTRA\tREQ" (the candidates of that extra whose version REQ allows).
std::vector<std::string> pypi_dep_arguments(const std::string& requirement);

// Splits "kind\targ1\targ2" into its fields.
std::vector<std::string> split_dep(const std::string& argument);

// Human words for a dep argument: "torch==1.9.1 (pypi)", "a driver that runs CUDA 11.1" …
std::string describe_dep(const std::string& argument);

}  // namespace envlock::solve_detail
