#pragma once
// `envlock doctor`: what is wrong with an existing prefix, why, and the one command that fixes it.
// Checks a PrefixScan against itself (duplicates, split packages, unmet requirements), the
// knowledge base (advisories, numba's numpy range, torch's CUDA vs driver and GPU), the machine
// (CUDA_HOME, the open-file limit) and, when given, the lock it was installed from (drift).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "install/prefix_scan.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::install {

enum class Severity { error, warning, note };   // error: breaks now; warning: may break; note: for the record
std::string severity_name(Severity s);          // "error" | "warning" | "note"

struct Finding {
    Severity severity = Severity::error;
    std::string check;      // "duplicate", "split-package", "requirement", "advisory:<id>", "numba-numpy",
                            // "torch-driver", "torch-gpu", "cuda-home", "extension-cuda", "open-files",
                            // "lock-drift", "metadata"
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

struct DoctorReport {
    std::string prefix, python;
    std::size_t python_dists = 0, conda_records = 0, cuda_extensions = 0;
    std::string torch, torch_cuda;
    std::string lock_file;                // "" when no lock was given
    std::optional<LockDrift> drift;
    std::vector<Finding> findings;        // errors first, then warnings, then notes
    // 0 healthy (notes only), 1 when an error or a warning was found.
    int exit_code() const;
};

// `lock` may be null; `lock_file` names it in the fix (`envlock install --repair --lock …`).
DoctorReport diagnose(const PrefixScan& scan, const DoctorMachine& machine, const knowledge::Knowledge& k,
                      const Lock* lock = nullptr, const std::string& lock_file = "");

// What moved between a lock and a prefix (PyPI names by PEP 503; conda by name).
LockDrift lock_drift(const Lock& lock, const PrefixScan& scan);

nlohmann::json report_json(const DoctorReport& r);

}  // namespace envlock::install
