#pragma once
// Target detection: what this machine is (platform, kernel, WSL, glibc, CPU, memory), its NVIDIA
// driver and GPUs, its host compilers and CUDA toolkits. Every input is injectable through
// DetectRoots (the /proc and /sys trees, PATH, CUDA_HOME, uname), so tests run the real parsing on
// fake trees and fake nvidia-smi / nvcc / gcc executables. No driver and no GPU is a normal
// answer, never an error. Overrides (detect's flags) describe another machine to lock for.
#include <optional>
#include <string>
#include <vector>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/target.hpp"

namespace envlock {

struct DetectRoots {
    std::string proc = "/proc";
    std::string sys = "/sys";
    std::string usr_local = "/usr/local";       // cuda, cuda-X.Y toolkits live here
    std::string wsl_lib = "/usr/lib/wsl/lib";   // nvidia-smi on WSL
    // macOS's version (ProductVersion), what `sw_vers` and Python's platform.mac_ver() read.
    std::string mac_system_version = "/System/Library/CoreServices/SystemVersion.plist";
    std::string path_env;                       // PATH: gcc*, clang*, nvcc, nvidia-smi, ldd
    std::string cuda_home;                      // $CUDA_HOME (else $CUDA_PATH)
    std::string sysname, machine;               // uname: "Linux", "x86_64"
    int timeout_ms = 10000;                     // per probed command

    // The real machine: /proc, /sys, /usr/local, the process's PATH/CUDA_HOME and uname().
    static DetectRoots host();
};

Target detect_target(const DetectRoots& roots, const knowledge::Knowledge& k);
Target detect_target(const DetectRoots& roots);   // with the builtin knowledge

// detect's flags. Empty / nullopt: keep what was detected (or read from --target).
struct TargetOverrides {
    std::vector<std::string> gpus;                      // "RTX 4090" or "sm_89", repeatable; replaces the GPUs
    std::optional<std::string> driver;                  // "525.60.13"; also sets driver_cuda from knowledge
    std::optional<std::string> cuda_driver;             // "12.0": the driver's CUDA, wins over --driver's
    std::optional<std::string> glibc;                   // "2.31"
    std::optional<std::vector<std::string>> cpu_flags;  // replaces the CPU flags
    std::optional<std::string> platform;                // linux-64 …; another OS family drops the host's kernel/glibc/macOS facts
    std::optional<std::string> kernel;                  // "5.15.0": a linux target's kernel (conda's __linux)
    std::optional<std::string> osx;                     // "13.6": an osx target's macOS version (conda's __osx)
};

// A target file's GPUs given by name only ("name: NVIDIA A10G", no sm) get their sm from the
// knowledge base; an unknown name is an InputError naming the file and the nearest known names.
Target gpus_by_name(Target t, const knowledge::Knowledge& k, const std::string& filename);
// InputError for an unknown GPU name, a malformed or unknown driver, a bad version or platform.
Target apply_overrides(Target t, const TargetOverrides& o, const knowledge::Knowledge& k);

// Helpers the parsing is built from (exposed for tests).
std::string conda_platform(const std::string& sysname, const std::string& machine);   // "Linux","x86_64" -> "linux-64"
std::string parse_nvidia_proc_version(const std::string& text);   // /proc/driver/nvidia/version -> "535.104.05"
std::string parse_glibc_from_ldd(const std::string& ldd_version_output);   // "ldd (GNU libc) 2.31" -> "2.31"
std::string parse_nvcc_release(const std::string& nvcc_version_output);    // -> "11.1.105" (or "11.1")
std::string parse_mac_product_version(const std::string& system_version_plist);   // -> "13.6.1", "" when absent

}  // namespace envlock
