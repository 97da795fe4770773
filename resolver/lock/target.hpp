#pragma once
// Target: the machine a lock is for. Detected (detect.hpp) or given (--target FILE,
// detect's override flags). A plain value; the solver turns it into virtual solvables.
#include <cstdint>
#include <string>
#include <vector>

namespace envlock {

struct Gpu {
    std::string name;        // "NVIDIA GeForce RTX 3090"
    int sm_major = 0;        // compute capability 8.6 -> 8, 6
    int sm_minor = 0;
};

struct CudaToolkit {
    std::string path;                   // /usr/local/cuda-11.1
    std::string version;                // release, e.g. "11.1" (full "11.1.105" where known)
    std::vector<std::string> gpu_archs; // nvcc --list-gpu-arch: compute_50 …
};

struct HostCompiler {
    std::string kind;        // "gcc", "g++", "clang", "clang++"
    std::string path;
    std::string version;     // "12.2.0"
};

struct Target {
    std::string platform;               // linux-64, linux-aarch64, osx-arm64, win-64 …
    std::string kernel;                 // uname release; conda's __linux is read from it (linux_version)
    std::string osx;                    // macOS version of an osx target, "13.6": conda's __osx
    bool wsl = false;
    std::string glibc;                  // "2.36"; empty where there is none
    std::string cpu_model;
    std::vector<std::string> cpu_flags; // sse4_2, avx, avx2, fma, avx512f …
    int cores = 0;
    std::uint64_t memory_bytes = 0;
    std::string driver_version;         // NVIDIA driver, "535.104.05"; empty when absent
    std::string driver_cuda;            // highest CUDA the driver runs, "12.2"
    std::vector<Gpu> gpus;
    std::vector<HostCompiler> compilers;
    std::vector<CudaToolkit> toolkits;
    // Facts given by flags (--gpu, --driver …) over a detected or read target, by their key in
    // the target file ("gpus", "driver"); every other fact is the detecting host's own.
    std::vector<std::string> given;
    // Facts a lock left out because nothing it locks depends on them (leave_out), by their key
    // in the lock: a re-resolve takes them from the machine it runs on (with_left_out).
    std::vector<std::string> left_out;
};

// The facts a lock keeps of a target: what the solve and the toolchain depend on (platform,
// glibc, macOS version, WSL, the driver and its CUDA, each GPU's sm, the CPU feature levels
// binaries need, compilers by kind and version, toolkits), in a stable order. Not the inventory
// `detect` shows (CPU model, cores, memory, compiler paths, ~90 CPU flags), so that a colleague
// on an equivalent machine re-resolves to the same bytes. A linux target's kernel stays, as
// conda's __linux version ("5.15.0"), for the solve; the lock keeps it only where a chosen
// package depends on __linux's version (the solve drops it otherwise: without_kernel).
Target locked_facts(Target t);

// conda's __linux version of a kernel release (conda's linux virtual package plugin: the first
// three or four numeric components, "5.15.0" of "5.15.0-91-generic"; "0" when the release does
// not start with one, as conda; "" for an unknown kernel).
std::string linux_version(const std::string& kernel_release);

// A target with neither an NVIDIA GPU nor a driver (a laptop, a CPU node, a CI runner): a CUDA
// build of a wheel installs there and runs on the CPU (torch imports and computes, with
// torch.cuda.is_available() False), as pip and uv install one. Its driver can refuse nothing;
// a target with a GPU and no driver, or too old a driver, still does.
bool cpu_only(const Target& t);

// The target as a lock records it when nothing chosen depends on the kernel.
Target without_kernel(Target t);

// The facts a lock may leave out, by their key in the lock: "glibc", "osx", "wsl",
// "cpu-flags", "driver" (with driver-cuda), "gpus", "compilers", "cuda-toolkits".
const std::vector<std::string>& facts_a_lock_may_leave_out();

// The target without the facts named by `keys` (cleared, and listed in left_out), so that two
// machines that differ only there lock the same bytes. A fact the user gave (`given`) stays:
// it is an input, not the resolving host's.
Target leave_out(Target t, const std::vector<std::string>& keys);

// A lock's target with its left-out facts taken from `machine`, for the solve of a re-resolve
// (which leaves them out again where still nothing depends on them).
Target with_left_out(Target t, const Target& machine);

}  // namespace envlock
