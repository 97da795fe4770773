#pragma once
// `envlock verify`: proves that an installed lock builds its compiled extensions here, or says
// exactly why not. Toolchain checks (nvcc of the locked release, nvcc vs torch's CUDA, a host
// compiler nvcc accepts, every target sm in nvcc's list, driver, CPU flags), a CUDA probe
// compiled with one -gencode per sm, and the lock's extensions built and imported in the env.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "install/build_errors.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::install {

enum class CheckStatus { passed, failed, skipped };
std::string status_name(CheckStatus s);   // "passed" | "failed" | "skipped"

struct VerifyCheck {
    std::string name;        // "nvcc", "nvcc-torch", "host-compiler", "gpu-arch", "driver", "cpu", "probe",
                             // "clean <ext>", "build <ext>", "import <ext>"
    CheckStatus status = CheckStatus::passed;
    std::string what;        // one line: what was checked and what was found
    std::string cause;       // failed: why (skipped: why not checked)
    std::string fix;         // failed: what to run or change
    std::string source;      // where the rule comes from, when it is a fact
    std::string log;         // the log file of a build, import or probe
    std::vector<ExplainedFailure> explained;   // known failures the log shows
};

// What verify builds with, once the checks chose it.
struct ChosenToolchain {
    std::string cuda_home;                  // "" when no toolkit of the locked release is here
    std::string nvcc;                       // cuda_home/bin/nvcc
    std::string cuda;                       // its release, major.minor: "13.0"
    std::string cc, cxx;                    // host compiler paths; "" = the default on PATH
    std::string cxx_version;                // "12.2.0"
    std::vector<int> sms;                   // the GPUs to build for (this machine's, else the lock's)
    std::vector<int> nvcc_sms;              // what nvcc --list-gpu-arch offers
    std::string arch_list;                  // TORCH_CUDA_ARCH_LIST used for builds
    std::string torch_version, torch_cuda;  // the env's torch ("" absent; torch_cuda "" = CPU build)
    // A demo mirror's stand-ins (install/prefix_scan.hpp's kStandInMarker): the locked nvcc's package
    // ("cuda-nvcc 11.1.105 (conda-meta/…json)"; the probe then uses a real toolkit here) and torch.
    std::string stand_in;
    bool torch_stand_in = false;
};

// Everything verify reads of this machine and the env; the CLI fills it, tests write it.
struct VerifyInputs {
    Target machine;                                   // detect_target: toolkits, compilers on PATH, GPUs, driver, CPU
    std::map<std::string, std::string> env;           // the caller's environment (PATH, CC, CXX …)
    std::string prefix;                               // the installed env; "" = toolchain and probe only
    std::string lock_dir;                             // the lock's folder: extensions' `in` are looked up beside it too
    std::string work_dir;                             // logs and the probe; "" = <prefix>/.envlock/verify, else a temp dir kept only for a failed check's log
    bool probe = true;
    bool build_extensions = false;
    int build_timeout_seconds = 3600;
};

struct VerifyReport {
    ChosenToolchain toolchain;
    std::vector<VerifyCheck> checks;
    int exit_code() const;   // 0 when nothing failed, 1 otherwise
};

VerifyReport verify_lock(const Lock& lock, const VerifyInputs& in, const knowledge::Knowledge& k);

// The pieces, for tests and for doctor.
// Toolchain checks in order; fills `chosen`. `torch_version`/`torch_cuda` of `chosen` must be set
// by the caller (from the env's python, else the lock).
std::vector<VerifyCheck> check_toolchain(const Lock& lock, const VerifyInputs& in, const knowledge::Knowledge& k,
                                         ChosenToolchain& chosen);
// The host compiler a build picks (the lock's gcc, else $CXX/$CC, else g++ on PATH) against
// what nvcc `chosen.cuda` (else the lock's nvcc) accepts; on failure `chosen` names the newest
// compiler here that it accepts, when there is one. Doctor calls it with an empty Lock.
VerifyCheck check_host_compiler(const Lock& lock, const VerifyInputs& in, const knowledge::Knowledge& k,
                                ChosenToolchain& chosen);
// Compiles (and runs, when `run` and a GPU is here) the CUDA probe with `chosen`'s nvcc, host
// compiler and one -gencode per sm of `sms`, in `work_dir`.
VerifyCheck run_probe(const ChosenToolchain& chosen, const std::vector<int>& sms, const std::string& work_dir, bool run,
                      const knowledge::Knowledge& k);
// The probe's source: atomicAdd on float and half, __shfl_sync, a template kernel, a host launcher.
std::string probe_source();
// Removes an extension's stale artifacts: build/, *.egg-info at its top, *.so below it (not in
// .git). Returns what was removed, relative to `dir`.
std::vector<std::string> clean_extension_dir(const std::string& dir);
// The torch the env's python imports: {version, cuda} ("" cuda for a CPU build); {"", ""} without torch.
std::pair<std::string, std::string> env_torch(const std::map<std::string, std::string>& env, const std::string& python);

nlohmann::json report_json(const VerifyReport& r);

// The lock's `verified:` block for this report (`--record`); `date_utc` like "2026-11-24T05:40:12Z".
LockVerified verification_record(const VerifyReport& r, const std::string& date_utc);

}  // namespace envlock::install
