#pragma once
// resolver/knowledge/ owns the sourced facts (the *.yaml files beside this header, embedded at
// build time), their loader and queries, and detect.hpp (this machine as a Target). It must not
// decide a solve: the solver turns these answers into clauses.
//
// The knowledge base: facts that tie packages to machines (CUDA toolkit <-> driver, nvcc targets,
// host compilers, GPU compute capabilities, torch releases and their arch lists, mmcv wheel
// matrices, OpenMMLab version gates, numba limits) and advisories. The data lives in
// resolver/knowledge/*.yaml (embedded at build time, checked against schemas/knowledge.schema.json);
// every row carries its source, and rows that rest on no checked source are marked unverified.
// Lookups prefer verified rows; an unverified row answers only where no verified one does, and
// says so (`unverified`). changes.yaml keeps the history of rows, so a lock made with older facts
// can be told which rows changed (changes.cpp).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resolver/lock/target.hpp"

namespace envlock {
struct Lock;
}

namespace envlock::knowledge {

// Arch lists use sm numbers: 37, 50, 86, 90, 100, 120 (major * 10 + minor).
struct ArchList {
    std::vector<int> sass;   // SASS (cubin) for these sm
    std::vector<int> ptx;    // PTX for these compute_XX
    bool operator==(const ArchList&) const = default;
};

// A toolkit release and the driver it shipped with. `unknown`: no reachable source gives that
// driver (linux_driver is then empty and `why` says what was searched); queries skip such rows.
struct CudaDriverRow {
    std::string cuda, label, linux_driver, windows_driver, source;
    bool unknown = false;
    std::string why;
    bool operator==(const CudaDriverRow&) const = default;
};
struct MinorVersionRule { int cuda_major = 0; std::string min_driver, windows_min_driver, note, source; bool operator==(const MinorVersionRule&) const = default; };
struct NvccTargetsRow { std::string cuda; std::vector<std::string> sm; std::string note, source; bool operator==(const NvccTargetsRow&) const = default; };
struct GpuRow { std::string name; int major = 0, minor = 0; std::string source; bool unverified = false; std::string why; bool operator==(const GpuRow&) const = default; };
struct HostCompilerLimit {
    std::string cuda;
    int gcc_max = 0;
    std::string gcc_min;
    std::optional<int> clang_max;
    std::string clang_min, source;
    bool unverified = false;
    std::string why;
    bool operator==(const HostCompilerLimit&) const = default;
};
struct TorchRelease {
    std::string version;                       // "1.9.1", or a series row "2.1.x"
    std::string python_min, python_max;        // inclusive; empty where unknown
    std::vector<std::string> variants;         // pip wheel variants: cu102, cu111, cpu, rocm4.2 …
    std::string torchvision, torchaudio;
    std::string source;
    std::vector<std::string> conda_cuda;       // conda CUDA versions: "10.2", "11.3 (conda-forge)"
    std::string pypi_default;                  // variant of the plain PyPI wheel ("cu102"), where recorded
    std::string pypi_default_source;           // where pypi_default comes from, when not in `source`
    bool variants_unverified = false;
    std::string python_note, note, python_source;
    bool operator==(const TorchRelease&) const = default;
};
struct TorchArchRow {
    std::vector<std::string> torch;            // release series ("1.9") or exact releases ("1.8.1")
    std::string kind;                          // pip | conda
    std::vector<std::string> variants;         // cu111 …
    std::string arch_list;                     // TORCH_CUDA_ARCH_LIST form: "3.7;5.0;8.6+PTX"
    ArchList archs;
    std::string note, source;
    bool unverified = false;
    std::string why;
    bool operator==(const TorchArchRow&) const = default;
};
struct CppExtensionRow { std::vector<std::string> torch, arches; std::string source; bool unverified = false; std::string why; bool operator==(const CppExtensionRow&) const = default; };
struct CppExtensionRules {
    std::string unknown_arch, arch_list_unset, nvcc_major_mismatch, nvcc_minor_mismatch, source;
    bool unverified = false;
    std::string why;
    bool operator==(const CppExtensionRules&) const = default;
};
struct MmcvWheel {
    std::string mmcv_version, torch, cuda;     // torch series "1.9"; cuda "11.1" | "cpu" | "mps"
    std::string source;
    std::string package, os;                   // mmcv-full | mmcv; Linux | Windows | macOS
    std::string index_url;                     // find-links page; empty for mps
    bool operator==(const MmcvWheel&) const = default;
};
struct Gate {
    std::string package, version_spec;         // "mmdet3d", "==0.17.1"
    std::string requires_spec;                 // PEP 508: "mmcv-full>=1.3.8,<=1.4.0"
    std::string source;
    std::string kind;                          // import-check | requirement | doc-table
    bool unverified = false;
    std::string why;
    bool operator==(const Gate&) const = default;
};
struct Advisory {
    std::string id;
    std::vector<std::string> when;             // PEP 508 requirements that together are the bad combination
    std::string symptom, fix, source;
    // Extra conditions, comma-separated, all must hold (empty: none): "cuda-extensions",
    // "numba-cuda", "code-uses:NAME", "cuda<op>X.Y" (toolkit used), "sm<op>NN" (a target GPU).
    std::string needs;
    bool operator==(const Advisory&) const = default;
};
// A known failure of building, importing or running a compiled extension: `match` is an
// ECMAScript regex over the log; cause and fix may name its groups as {1}, {2} ….
struct BuildFailure {
    std::string id, where, match, cause, fix, source;   // where: build | import | run
    bool unverified = false;
    std::string why;
    bool operator==(const BuildFailure&) const = default;
};
// A machine on which a lock installs and then breaks at run time (target_warnings.yaml): the
// solve excludes nothing for it; the lock records it and `resolve` prints it.
struct TargetWarning {
    std::string id;
    std::vector<std::string> when;             // PEP 508 on locked packages, all must hold
    std::vector<std::string> unless;           // none of these may be locked
    std::string target;                        // "cpu-lacks:avx", "wsl, gpus>=2"
    std::string symptom, fix, source;
    bool operator==(const TargetWarning&) const = default;
};
struct NumbaRelease { std::string version, python, numpy, llvmlite, note, source; bool operator==(const NumbaRelease&) const = default; };   // PEP 440 specs
struct NumbaCudaLimit { std::string numba, cuda, effect, fix, source; bool unverified = false; std::string why; bool operator==(const NumbaCudaLimit&) const = default; };
struct UnverifiedClaim { std::string file, claim, why; bool operator==(const UnverifiedClaim&) const = default; };
// One row of the knowledge base that a knowledge release changed, added or removed.
struct KnowledgeChange {
    std::string release;                       // "2026-11 audit"
    std::string replaces;                      // the knowledge version (sha256) this release replaced
    std::string row;                           // "host_compilers cuda=12.3", "advisories id=…"
    std::string change;                        // "gcc_max: 13 -> 12", "added", "removed"
    std::vector<std::string> concerns;         // what the row is about: "cuda-12.3", "yapf", "mmdet>=2.14.0,<2.17.0"
    std::string source;
    bool operator==(const KnowledgeChange&) const = default;
};
struct Fact { std::string file, fact, source; bool operator==(const Fact&) const = default; };

struct Knowledge {
    std::string version;                       // sha256 over every loaded file's name and bytes
    std::vector<std::string> files;            // names of the loaded files, builtin first
    std::vector<CudaDriverRow> cuda_drivers;
    std::vector<MinorVersionRule> minor_version_rules;
    std::string no_mvc_up_to, no_mvc_source;   // no minor-version compatibility up to this CUDA
    std::vector<NvccTargetsRow> nvcc_targets;
    std::vector<GpuRow> gpus;
    std::vector<HostCompilerLimit> host_compilers;
    std::vector<TorchRelease> torch_releases;
    std::vector<TorchArchRow> torch_arch_lists;
    std::vector<CppExtensionRow> cpp_extension;
    CppExtensionRules cpp_extension_rules;
    std::vector<MmcvWheel> mmcv_wheels;
    std::vector<Gate> gates;
    std::vector<NumbaRelease> numba;
    std::vector<NumbaCudaLimit> numba_cuda;
    std::vector<Advisory> advisories;
    std::vector<BuildFailure> build_failures;  // in match order: the first row that matches explains
    std::vector<TargetWarning> target_warnings;
    std::vector<Fact> facts;                   // prose facts (driver limitations, platform notes …)
    std::vector<UnverifiedClaim> unverified;
    std::vector<KnowledgeChange> changes;      // release by release, oldest first
    bool operator==(const Knowledge&) const = default;
};

// The embedded files. Throws InputError only if the build embedded a bad file (a test catches that).
Knowledge load_builtin();
// Builtin, then each user file (--knowledge FILE) in order: a user row replaces a builtin row with
// the same key (GPU name, CUDA version, torch version, advisory id …) and is preferred in lookups.
// InputError naming file, line and the violated rule for an unreadable or invalid file.
Knowledge load(const std::vector<std::string>& extra_files);
// Same, from in-memory (name, yaml text) pairs; load() reads the files and calls this.
Knowledge load_texts(const std::vector<std::pair<std::string, std::string>>& extra);
// The *.yaml files of a user's knowledge folder (e.g. ~/.config/envlock/knowledge), sorted by
// name; empty when the folder does not exist. The CLI passes them to load() before --knowledge files.
std::vector<std::string> knowledge_files_in(const std::string& dir);

// ---- arch rules ----
// "3.7;5.0;8.6+PTX" (also spaces or commas between entries) -> sass {37,50,86}, ptx {86}.
// InputError on an entry that is not X.Y[+PTX].
ArchList parse_arch_list(std::string_view torch_cuda_arch_list);
// "sm_86", "sm86", "compute_86", "8.6", "86" -> 86; nullopt otherwise.
std::optional<int> parse_sm(std::string_view text);
std::string sm_name(int sm);                                   // 86 -> "sm_86"
std::string cc_name(int sm);                                   // 86 -> "8.6"
// SASS for sm_XY runs on the same major with minor >= Y; PTX compute_XY JITs on any sm >= XY.
bool sass_runs_on(int built_sm, int gpu_sm);
bool arch_list_runs_on(const ArchList&, int sm);
std::string describe(const ArchList&);                         // "sm_37 sm_50 … compute_86"

// ---- CUDA toolkit <-> driver ----
std::optional<std::string> driver_max_cuda(const Knowledge&, std::string_view driver_version);   // "525.60.13" -> "12.0"
// Same against the Windows driver column (win-64 targets, and WSL, whose driver is the Windows one).
std::optional<std::string> driver_max_cuda(const Knowledge&, std::string_view driver_version, bool windows);
// The toolkit's runtime runs on the driver: driver >= the driver that toolkit shipped with, or the
// minor-version compatibility range of its major (11.x: >= 450.80.02, 12.x: >= 525, 13.x: >= 580).
bool driver_runs_cuda(const Knowledge&, std::string_view driver_version, std::string_view cuda_runtime);
// Full feature set and PTX JIT of that toolkit's output need the toolkit's own driver (no MVC).
bool driver_runs_cuda_fully(const Knowledge&, std::string_view driver_version, std::string_view cuda_runtime);
std::optional<std::string> min_driver_for_cuda(const Knowledge&, std::string_view cuda, bool windows = false);
// The release rows of that toolkit (major.minor) whose driver is unknown; empty when none is.
std::vector<const CudaDriverRow*> unknown_driver_rows(const Knowledge&, std::string_view cuda);
// Toolkits newer than `cuda` whose driver is unknown: a driver past every known row may run them.
std::vector<const CudaDriverRow*> unknown_driver_rows_after(const Knowledge&, std::string_view cuda);
const MinorVersionRule* minor_version_rule(const Knowledge&, std::string_view cuda);

// ---- GPUs, nvcc, host compilers ----
std::optional<std::pair<int, int>> gpu_compute_capability(const Knowledge&, std::string_view gpu_name);
// By name only, as users type it or drivers report it: any case, with or without "NVIDIA",
// "GeForce", "Tesla", with a driver's memory and form-factor suffix ("A100-SXM4-80GB"); never
// by prefix ("RTX 3090 Ti" is not "RTX 3090").
const GpuRow* find_gpu(const Knowledge&, std::string_view gpu_name);
// The known names nearest to an unknown one, nearest first, for "did you mean".
std::vector<std::string> gpu_names_near(const Knowledge&, std::string_view gpu_name, std::size_t limit = 3);
// "unknown GPU 'X'; did you mean 'A' or 'B'?" (without the question when nothing is near).
std::string unknown_gpu_message(const Knowledge&, std::string_view gpu_name);
std::vector<int> nvcc_sm_targets(const Knowledge&, std::string_view cuda_version);
const NvccTargetsRow* nvcc_targets_row(const Knowledge&, std::string_view cuda_version);
std::optional<HostCompilerLimit> host_compiler_limit(const Knowledge&, std::string_view cuda_version);
std::optional<int> newest_gcc_major(const Knowledge&, std::string_view cuda_version);
std::optional<int> newest_clang_major(const Knowledge&, std::string_view cuda_version);
// Where a PyPI wheel of NVIDIA's puts a whole nvcc, relative to site-packages ("nvidia/cu13" for
// `nvidia-cuda-nvcc` 13.x); "" when the wheel holds no nvcc (the cu11/cu12 `nvidia-cuda-nvcc-cuXX`
// wheels carry only ptxas), so no CUDA before 13 gets its compiler from PyPI.
std::string pypi_nvcc_home(std::string_view project, std::string_view version);

// ---- torch ----
// torch_version may carry a local label ("1.9.1+cu111"); variant "" then comes from that label.
// variant: "cu111", "11.1" or "cpu" (cpu: an empty list); kind: "pip" or "conda".
std::optional<ArchList> torch_arch_list(const Knowledge&, std::string_view torch_version,
                                        std::string_view variant, std::string_view kind);
const TorchArchRow* torch_arch_row(const Knowledge&, std::string_view torch_version,
                                   std::string_view variant, std::string_view kind);
// An exact release ("2.7.1"), the series row that covers it ("2.1.x"), or for a series query ("2.7")
// the newest patch release of that series.
std::optional<TorchRelease> torch_release(const Knowledge&, std::string_view torch_version);
// The release rows a series query ("2.7") covers, oldest first: {"2.7.0", "2.7.1"}.
std::vector<std::string> torch_series_releases(const Knowledge&, std::string_view series);
// Arch names torch.utils.cpp_extension of that torch accepts in TORCH_CUDA_ARCH_LIST ("8.6", "9.0a").
std::vector<std::string> torch_cpp_extension_archs(const Knowledge&, std::string_view torch_version);
const CppExtensionRow* torch_cpp_extension_row(const Knowledge&, std::string_view torch_version);
// What cpp_extension does when the nvcc it finds (CUDA_HOME) differs from torch.version.cuda:
// "ok" (same major.minor), "warning" (minor differs) or "error" (major differs), per the rules.
std::string cpp_extension_cuda_check(const Knowledge&, std::string_view torch_cuda, std::string_view nvcc_cuda);

// ---- OpenMMLab, numba, advisories ----
std::vector<MmcvWheel> mmcv_wheels(const Knowledge&, std::string_view package /*"mmcv-full" | "mmcv"*/);
std::vector<Gate> gates(const Knowledge&);
// The requirements (PEP 508) the enforced gates put on one release of a project. FAQ
// compatibility tables (kind doc-table) are not enforced: they were written later and more
// conservatively than the packages' own import-time asserts (mmseg 0.14.1 runs with mmcv-full
// 1.4.0, as BEVFormer documents). An unparseable version or gate spec yields nothing.
std::vector<std::string> gate_requirements(const Knowledge&, std::string_view package, std::string_view version);
std::vector<Advisory> advisories(const Knowledge&);
// The target warnings that hold for this target and these locked packages (name, version; conda's
// pytorch counts as torch). A condition on something the target does not say (no CPU flags
// recorded) does not hold: the warning is for a fact, not a guess.
std::vector<TargetWarning> target_warnings(const Knowledge&, const Target&,
                                           const std::vector<std::pair<std::string, std::string>>& packages);
// The target facts (their keys in a lock: "wsl", "cpu-flags", "gpus") that decide whether a
// warning row applying to these locked packages holds, so a lock keeps them.
std::vector<std::string> target_facts_warnings_read(const Knowledge&, const std::vector<std::pair<std::string, std::string>>& packages);
std::vector<NumbaRelease> numba_releases(const Knowledge&);
std::optional<NumbaRelease> numba_release(const Knowledge&, std::string_view numba_version);
std::vector<NumbaCudaLimit> numba_cuda_limits(const Knowledge&);

// ---- changes between knowledge versions ----
// The rows changed since `old_version` (a Knowledge::version a lock was resolved with): every
// release from the one that replaced it on. nullopt when no release names that version (a lock
// made with user knowledge files, or a version older than the recorded history).
std::optional<std::vector<KnowledgeChange>> changes_since(const Knowledge&, std::string_view old_version);
// What `envlock check` says of a lock resolved with older knowledge: the versions, how many rows
// changed, and (up to max_rows) those about the lock's packages or CUDA versions. Ends in "\n".
std::string knowledge_change_report(const Knowledge&, const Lock& lock, std::size_t max_rows = 30);

// Dotted numeric comparison for driver/CUDA/torch release numbers ("525.60.13" < "535");
// missing components count as 0, a non-numeric tail is ignored. Returns <0, 0, >0.
int compare_dotted(std::string_view a, std::string_view b);
// "11.1.105" -> "11.1"
std::string major_minor(std::string_view version);

}  // namespace envlock::knowledge
