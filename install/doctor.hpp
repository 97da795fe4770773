#pragma once
// `envlock doctor`: what is wrong with an existing prefix, why, and the one command that fixes it.
// Checks a PrefixScan against itself (duplicates, split packages, unmet requirements, extensions
// built against another torch/CUDA/GPU), the knowledge base (advisories, numba's numpy range,
// torch's CUDA vs driver and GPU, target warnings), the machine (the nvcc and host compiler
// extensions build with, CPU flags, the open-file limit), what the code uses, and, when given,
// the lock it was installed from (drift, and the plan `install --repair` would carry out).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "install/prefix_scan.hpp"
#include "install/transaction.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::install {

enum class Severity { error, warning, note };   // error: breaks now; warning: may break; note: for the record
std::string severity_name(Severity s);          // "error" | "warning" | "note"

struct Finding {
    Severity severity = Severity::error;
    std::string check;      // "duplicate", "split-package", "requirement", "advisory:<id>", "numba-numpy",
                            // "torch-driver", "torch-gpu", "cuda-home", "host-compiler", "extension-cuda",
                            // "extension-torch", "extension-gpu", "target:<id>", "open-files",
                            // "lock-drift", "lock-files", "metadata"
    std::string what;       // one line naming the packages or files
    std::string why;        // what breaks, with the source of the fact where there is one
    std::string fix;        // a command, or what to change
};

// What doctor needs of the machine the prefix runs on; the CLI fills it from detect, the
// environment and getrlimit, tests write it.
struct DoctorMachine {
    Target target;                          // driver, GPUs, toolkits
    bool cuda_home_set = false;
    std::string cuda_home;                  // $CUDA_HOME (else $CUDA_PATH)
    std::string cuda_home_version;          // its toolkit's release ("12.4"), "" when unknown
    std::uint64_t nofile_soft = 0, nofile_hard = 0;   // RLIMIT_NOFILE; 0 when unknown
    std::string path_nvcc;                  // nvcc found on $PATH (absolute), "" when none
    std::map<std::string, std::string> env; // PATH, CC, CXX: the host compiler a build picks
};

// This machine: detect_target on the host, $CUDA_HOME/$CUDA_PATH and its version, RLIMIT_NOFILE.
DoctorMachine this_machine(const knowledge::Knowledge& k);
// A toolkit directory's release: version.json (CUDA >= 11.1), version.txt, else bin/nvcc --version.
std::string cuda_toolkit_version(const std::string& dir);

struct LockDrift {
    std::vector<std::string> added;       // "name version" installed, not locked
    std::vector<std::string> removed;     // "name version" locked, not installed
    std::vector<std::string> changed;     // "name locked -> installed"
};

// What `envlock install --repair` would do to the prefix (its dry run: the same plan, every
// file checked), or why it cannot (a prefix envlock did not make).
struct RepairPreview {
    std::string refused;                    // "" when it would run
    InstallResult plan;
};

// The code that runs in the prefix: where it is and what it uses (resolver/infer's code_uses).
struct CodeUses {
    std::string dir;                        // "" when no code was read
    std::string why;                        // how the directory was chosen ("--code", "the lock's checkout" …)
    std::map<std::string, std::string> uses;   // use -> "file:line"
};

struct DoctorReport {
    std::string prefix, python;
    std::size_t python_dists = 0, conda_records = 0;
    std::vector<CompiledExtension> extensions;   // the compiled modules read (torch's own included)
    std::string torch, torch_cuda;
    std::string lock_file;                // "" when no lock was given
    std::optional<LockDrift> drift;
    std::optional<RepairPreview> repair;  // with a lock: what --repair would do
    std::string code_dir;                 // "" when no code was read
    std::string build_nvcc;               // the toolkit CUDA extensions would build with: "CUDA 13.0 at … (CUDA_HOME)"
    std::vector<Finding> findings;        // errors first, then warnings, then notes
    // 0 healthy (notes only), 1 when an error or a warning was found.
    int exit_code() const;
};

// `lock` may be null; `lock_file` names it in the fix (`envlock install --repair --lock …`).
// `repair` is the preview of --repair (repair_preview), `code` what the code uses; both optional.
DoctorReport diagnose(const PrefixScan& scan, const DoctorMachine& machine, const knowledge::Knowledge& k,
                      const Lock* lock = nullptr, const std::string& lock_file = "",
                      const RepairPreview* repair = nullptr, const CodeUses* code = nullptr);

// `envlock install --repair --dry-run` of `lock` on `prefix`: nothing is fetched or written,
// every recorded file is hashed.
RepairPreview repair_preview(const Lock& lock, const std::string& prefix);

// What moved between a lock and a prefix (PyPI names by PEP 503; conda by name).
LockDrift lock_drift(const Lock& lock, const PrefixScan& scan);

nlohmann::json report_json(const DoctorReport& r);

}  // namespace envlock::install
