#include "resolver/knowledge/detect.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>

#include "resolver/specs/errors.hpp"

extern char** environ;

namespace envlock {
namespace fs = std::filesystem;
namespace kb = knowledge;

namespace {

std::string trim(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::optional<std::string> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        out.push_back(line);
    }
    return out;
}

struct Output {
    int status = -1;   // exit status; -1: could not run or timed out
    std::string out;
};

// Runs an executable with arguments (no shell), stdout captured, stderr discarded, killed after
// the timeout. A probe that fails just yields status -1.
Output run(const std::string& exe, const std::vector<std::string>& args, int timeout_ms) {
    Output result;
    // Environment built before fork (the child only execs): the caller's, with LC_ALL=C so tool
    // output comes in one language.
    std::vector<std::string> env_strings;
    for (char** e = environ; e && *e; ++e)
        if (std::string_view(*e).rfind("LC_ALL=", 0) != 0) env_strings.emplace_back(*e);
    env_strings.emplace_back("LC_ALL=C");
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return result;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return result;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) { dup2(devnull, 2); dup2(devnull, 0); }
        execve(exe.c_str(), argv.data(), envp.data());
        _exit(127);
    }
    close(fds[1]);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    bool timed_out = false;
    char buf[4096];
    while (true) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) { timed_out = true; break; }
        pollfd p{fds[0], POLLIN, 0};
        int r = poll(&p, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { timed_out = r == 0; break; }
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (result.out.size() < (1u << 20)) result.out.append(buf, static_cast<std::size_t>(n));
    }
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!timed_out && WIFEXITED(status)) result.status = WEXITSTATUS(status);
    return result;
}

std::vector<std::string> path_dirs(const std::string& path_env) {
    std::vector<std::string> out;
    std::istringstream in(path_env);
    for (std::string d; std::getline(in, d, ':');)
        if (!d.empty() && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    return out;
}

bool is_executable(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

std::optional<std::string> find_program(const std::vector<std::string>& dirs, const std::string& name) {
    for (const auto& d : dirs) {
        fs::path p = fs::path(d) / name;
        if (is_executable(p)) return p.string();
    }
    return std::nullopt;
}

// ------------------------------------------------------------------ machine

void detect_machine(const DetectRoots& r, Target& t) {
    t.platform = conda_platform(r.sysname, r.machine);
    fs::path proc = r.proc;
    if (auto rel = read_file(proc / "sys/kernel/osrelease")) t.kernel = trim(*rel);
    std::string version = read_file(proc / "version").value_or("");
    std::string probe = lower(t.kernel + " " + version);
    t.wsl = probe.find("microsoft") != std::string::npos || probe.find("wsl") != std::string::npos;
    // conda's __osx is the macOS version (conda/plugins/virtual_packages/osx.py: mac_ver()).
    if (t.platform.rfind("osx", 0) == 0)
        if (auto plist = read_file(fs::path(r.mac_system_version))) t.osx = parse_mac_product_version(*plist);

    if (auto cpuinfo = read_file(proc / "cpuinfo")) {
        int processors = 0;
        for (const auto& line : lines_of(*cpuinfo)) {
            auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
            if (key == "processor") ++processors;
            else if ((key == "model name" || key == "Model" || key == "cpu model") && t.cpu_model.empty()) t.cpu_model = value;
            else if ((key == "flags" || key == "Features") && t.cpu_flags.empty()) {
                std::istringstream in(value);
                for (std::string f; in >> f;) t.cpu_flags.push_back(f);
            }
        }
        t.cores = processors;
    }
    if (auto meminfo = read_file(proc / "meminfo")) {
        std::smatch m;
        static const std::regex total(R"(MemTotal:\s*([0-9]+)\s*kB)");
        if (std::regex_search(*meminfo, m, total)) t.memory_bytes = std::stoull(m[1]) * 1024ULL;
    }
}

void detect_glibc(const std::vector<std::string>& dirs, int timeout_ms, Target& t) {
    if (auto ldd = find_program(dirs, "ldd")) {
        Output o = run(*ldd, {"--version"}, timeout_ms);
        t.glibc = parse_glibc_from_ldd(o.out);
    }
}

// ------------------------------------------------------------------ NVIDIA

struct SmiGpu { std::string name, cc; };

void detect_nvidia(const DetectRoots& r, const std::vector<std::string>& dirs, const kb::Knowledge& k, Target& t) {
    fs::path proc = r.proc, sys = r.sys;
    if (auto v = read_file(proc / "driver/nvidia/version")) t.driver_version = parse_nvidia_proc_version(*v);
    if (t.driver_version.empty())
        if (auto v = read_file(sys / "module/nvidia/version")) t.driver_version = trim(*v);

    std::vector<std::string> smi_dirs = dirs;
    if (t.wsl) smi_dirs.push_back(r.wsl_lib);
    auto smi = find_program(smi_dirs, "nvidia-smi");

    std::vector<SmiGpu> found;
    if (smi) {
        if (t.driver_version.empty()) {
            Output o = run(*smi, {"--query-gpu=driver_version", "--format=csv,noheader"}, r.timeout_ms);
            if (o.status == 0) {
                auto ls = lines_of(o.out);
                if (!ls.empty()) t.driver_version = trim(ls.front());
            }
        }
        Output o = run(*smi, {"--query-gpu=name,compute_cap", "--format=csv,noheader"}, r.timeout_ms);
        if (o.status == 0) {
            for (const auto& line : lines_of(o.out)) {
                auto comma = line.rfind(',');
                if (trim(line).empty() || comma == std::string::npos) continue;
                found.push_back({trim(line.substr(0, comma)), trim(line.substr(comma + 1))});
            }
        } else {
            // Drivers before compute_cap was a query field: names only, capability from knowledge.
            Output names = run(*smi, {"--query-gpu=name", "--format=csv,noheader"}, r.timeout_ms);
            if (names.status == 0)
                for (const auto& line : lines_of(names.out))
                    if (!trim(line).empty()) found.push_back({trim(line), ""});
        }
        Output header = run(*smi, {}, r.timeout_ms);
        std::smatch m;
        static const std::regex cuda(R"(CUDA Version:\s*([0-9]+\.[0-9]+))");
        if (header.status == 0 && std::regex_search(header.out, m, cuda)) t.driver_cuda = m[1];
    }
    if (found.empty()) {
        // No (working) nvidia-smi: the kernel module lists each GPU's model.
        std::error_code ec;
        std::vector<fs::path> infos;
        for (const auto& e : fs::directory_iterator(proc / "driver/nvidia/gpus", ec)) infos.push_back(e.path() / "information");
        std::sort(infos.begin(), infos.end());
        for (const auto& p : infos)
            if (auto text = read_file(p))
                for (const auto& line : lines_of(*text))
                    if (line.rfind("Model:", 0) == 0) found.push_back({trim(line.substr(6)), ""});
    }
    for (const auto& g : found) {
        Gpu gpu;
        gpu.name = g.name;
        std::optional<int> sm = kb::parse_sm(g.cc);
        if (!sm)
            if (auto cc = kb::gpu_compute_capability(k, g.name)) sm = cc->first * 10 + cc->second;
        if (sm) { gpu.sm_major = *sm / 10; gpu.sm_minor = *sm % 10; }
        t.gpus.push_back(gpu);
    }
    if (t.driver_cuda.empty() && !t.driver_version.empty())
        if (auto c = kb::driver_max_cuda(k, t.driver_version, t.wsl)) t.driver_cuda = *c;
}

// ------------------------------------------------------------------ compilers, toolkits

std::string compiler_kind(const std::string& name) {
    static const std::regex re(R"(^(gcc|g\+\+|clang|clang\+\+)(-[0-9]+(\.[0-9]+)*)?$)");
    std::smatch m;
    return std::regex_match(name, m, re) ? std::string(m[1]) : std::string();
}

std::string compiler_version(const std::string& path, const std::string& kind, int timeout_ms) {
    static const std::regex version(R"(([0-9]+\.[0-9]+(\.[0-9]+)?))");
    std::smatch m;
    if (kind == "gcc" || kind == "g++") {
        Output o = run(path, {"-dumpfullversion", "-dumpversion"}, timeout_ms);
        std::string v = trim(o.out);
        if (o.status == 0 && !v.empty() && std::isdigit(static_cast<unsigned char>(v[0]))) return lines_of(v).front();
    }
    Output o = run(path, {"--version"}, timeout_ms);
    if (o.status != 0) return "";
    auto ls = lines_of(o.out);
    if (ls.empty()) return "";
    static const std::regex clang_v(R"(clang version ([0-9]+\.[0-9]+(\.[0-9]+)?))");
    if (std::regex_search(ls.front(), m, clang_v)) return m[1];
    // gcc --version: "gcc (Debian 12.2.0-14) 12.2.0" -> the last version on the line
    std::string last;
    for (auto it = std::sregex_iterator(ls.front().begin(), ls.front().end(), version); it != std::sregex_iterator(); ++it)
        last = (*it)[1];
    return last;
}

void detect_compilers(const std::vector<std::string>& dirs, int timeout_ms, Target& t) {
    std::set<std::string> seen_names;
    for (const auto& d : dirs) {
        std::vector<std::string> names;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(d, ec)) {
            std::string name = e.path().filename().string();
            if (!compiler_kind(name).empty() && is_executable(e.path())) names.push_back(name);
        }
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            if (!seen_names.insert(name).second) continue;   // shadowed by an earlier PATH entry
            std::string path = (fs::path(d) / name).string(), kind = compiler_kind(name);
            std::string version = compiler_version(path, kind, timeout_ms);
            if (version.empty()) continue;   // not a working compiler
            t.compilers.push_back({kind, path, version});
        }
    }
}

void detect_toolkits(const DetectRoots& r, const std::vector<std::string>& dirs, const kb::Knowledge& k, Target& t) {
    std::vector<fs::path> candidates;
    if (!r.cuda_home.empty()) candidates.push_back(r.cuda_home);
    if (auto nvcc = find_program(dirs, "nvcc")) candidates.push_back(fs::path(*nvcc).parent_path().parent_path());
    fs::path usr_local = r.usr_local;
    candidates.push_back(usr_local / "cuda");
    std::vector<fs::path> versioned;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(usr_local, ec)) {
        std::string name = e.path().filename().string();
        if (name.rfind("cuda-", 0) == 0) versioned.push_back(e.path());
    }
    std::sort(versioned.begin(), versioned.end(), [](const fs::path& a, const fs::path& b) {
        return kb::compare_dotted(a.filename().string().substr(5), b.filename().string().substr(5)) > 0;
    });
    candidates.insert(candidates.end(), versioned.begin(), versioned.end());

    std::set<std::string> seen;
    for (const auto& dir : candidates) {
        fs::path nvcc = dir / "bin" / "nvcc";
        if (!is_executable(nvcc)) continue;
        std::string canonical = fs::weakly_canonical(dir, ec).string();
        if (!seen.insert(canonical.empty() ? dir.string() : canonical).second) continue;
        CudaToolkit tk;
        tk.path = dir.lexically_normal().string();
        if (tk.path.size() > 1 && tk.path.back() == '/') tk.path.pop_back();
        tk.version = parse_nvcc_release(run(nvcc.string(), {"--version"}, r.timeout_ms).out);
        if (tk.version.empty()) continue;   // not a working nvcc
        Output archs = run(nvcc.string(), {"--list-gpu-arch"}, r.timeout_ms);
        if (archs.status == 0)
            for (const auto& line : lines_of(archs.out))
                if (trim(line).rfind("compute_", 0) == 0) tk.gpu_archs.push_back(trim(line));
        if (tk.gpu_archs.empty())   // nvcc before --list-gpu-arch: the knowledge base's list
            for (int sm : kb::nvcc_sm_targets(k, tk.version)) tk.gpu_archs.push_back("compute_" + std::to_string(sm));
        t.toolkits.push_back(tk);
    }
}

bool is_version(const std::string& s, int min_parts, int max_parts) {
    static const std::regex re(R"(^[0-9]+(\.[0-9]+)*$)");
    if (!std::regex_match(s, re)) return false;
    int parts = 1 + static_cast<int>(std::count(s.begin(), s.end(), '.'));
    return parts >= min_parts && parts <= max_parts;
}

}  // namespace

// ------------------------------------------------------------------ public

std::string conda_platform(const std::string& sysname, const std::string& machine) {
    std::string s = lower(sysname), m = lower(machine);
    std::string os = s == "linux" ? "linux" : s == "darwin" ? "osx" : s.rfind("mingw", 0) == 0 || s.rfind("msys", 0) == 0 || s == "windows" ? "win" : s;
    if (m == "x86_64" || m == "amd64") return os + "-64";
    if (m == "aarch64" || m == "arm64") return os == "linux" ? "linux-aarch64" : os + "-arm64";
    if (m == "ppc64le") return os + "-ppc64le";
    if (m == "s390x") return os + "-s390x";
    if (m == "i686" || m == "i386") return os + "-32";
    return os + "-" + m;
}

std::string parse_nvidia_proc_version(const std::string& text) {
    static const std::regex re(R"(Kernel Module(?: for \S+)?\s+([0-9]+\.[0-9]+(\.[0-9]+)?))");
    std::smatch m;
    return std::regex_search(text, m, re) ? std::string(m[1]) : std::string();
}

std::string parse_glibc_from_ldd(const std::string& output) {
    auto ls = lines_of(output);
    if (ls.empty()) return "";
    std::string first = lower(ls.front());
    if (first.find("glibc") == std::string::npos && first.find("gnu libc") == std::string::npos) return "";   // musl …
    static const std::regex re(R"(([0-9]+\.[0-9]+)\s*$)");
    std::smatch m;
    return std::regex_search(ls.front(), m, re) ? std::string(m[1]) : std::string();
}

std::string parse_mac_product_version(const std::string& plist) {
    static const std::regex re(R"(<key>ProductVersion</key>\s*<string>\s*([0-9]+(\.[0-9]+){0,2})\s*</string>)");
    std::smatch m;
    return std::regex_search(plist, m, re) ? std::string(m[1]) : std::string();
}

std::string parse_nvcc_release(const std::string& output) {
    static const std::regex full(R"(release ([0-9]+\.[0-9]+), V([0-9]+\.[0-9]+\.[0-9]+))");
    static const std::regex short_(R"(release ([0-9]+\.[0-9]+))");
    std::smatch m;
    if (std::regex_search(output, m, full)) return m[2];
    if (std::regex_search(output, m, short_)) return m[1];
    return "";
}

DetectRoots DetectRoots::host() {
    DetectRoots r;
    if (const char* p = std::getenv("PATH")) r.path_env = p;
    if (const char* c = std::getenv("CUDA_HOME")) r.cuda_home = c;
    else if (const char* c2 = std::getenv("CUDA_PATH")) r.cuda_home = c2;
    utsname u{};
    if (uname(&u) == 0) {
        r.sysname = u.sysname;
        r.machine = u.machine;
    }
    return r;
}

Target detect_target(const DetectRoots& roots, const kb::Knowledge& k) {
    Target t;
    auto dirs = path_dirs(roots.path_env);
    detect_machine(roots, t);
    detect_glibc(dirs, roots.timeout_ms, t);
    detect_nvidia(roots, dirs, k, t);
    detect_compilers(dirs, roots.timeout_ms, t);
    detect_toolkits(roots, dirs, k, t);
    return t;
}

Target detect_target(const DetectRoots& roots) { return detect_target(roots, kb::load_builtin()); }

Target gpus_by_name(Target t, const kb::Knowledge& k, const std::string& filename) {
    for (std::size_t i = 0; i < t.gpus.size(); ++i) {
        Gpu& g = t.gpus[i];
        if (g.sm_major != 0 || g.name.empty()) continue;
        auto cc = kb::gpu_compute_capability(k, g.name);
        if (!cc)
            throw InputError(filename + ": gpus[" + std::to_string(i) + "]: " + kb::unknown_gpu_message(k, g.name) +
                             " (or give its sm, e.g. sm: sm_86)");
        g.sm_major = cc->first;
        g.sm_minor = cc->second;
    }
    return t;
}

Target apply_overrides(Target t, const TargetOverrides& o, const kb::Knowledge& k) {
    if (!o.gpus.empty()) {
        t.gpus.clear();
        for (const auto& g : o.gpus) {
            auto cc = kb::gpu_compute_capability(k, g);
            if (!cc)
                throw InputError("--gpu: " + kb::unknown_gpu_message(k, g) + " (or give its compute capability, e.g. --gpu sm_86)");
            Gpu gpu;
            const kb::GpuRow* row = kb::parse_sm(g) ? nullptr : kb::find_gpu(k, g);
            gpu.name = row ? row->name : (kb::parse_sm(g) ? "" : g);
            gpu.sm_major = cc->first;
            gpu.sm_minor = cc->second;
            t.gpus.push_back(gpu);
        }
        t.given.push_back("gpus");
    }
    if (o.driver) {
        if (!is_version(*o.driver, 1, 3))
            throw InputError("--driver '" + *o.driver + "': expected an NVIDIA driver version such as 525.60.13");
        std::string platform = o.platform.value_or(t.platform);
        bool windows_driver = platform.rfind("win-", 0) == 0 || (t.wsl && !o.platform);
        auto cuda = kb::driver_max_cuda(k, *o.driver, windows_driver);
        if (!cuda)
            throw InputError("--driver '" + *o.driver + "': older than the driver of any CUDA toolkit the knowledge base knows (CUDA " +
                             (k.cuda_drivers.empty() ? std::string("?") : k.cuda_drivers.front().cuda) + " needs " +
                             (k.cuda_drivers.empty() ? std::string("?") : k.cuda_drivers.front().linux_driver) + ")");
        t.driver_version = *o.driver;
        t.driver_cuda = *cuda;
        t.given.push_back("driver");
        t.given.push_back("driver-cuda");
    }
    if (o.cuda_driver) {
        if (!is_version(*o.cuda_driver, 2, 2)) throw InputError("--cuda-driver '" + *o.cuda_driver + "': expected a CUDA version such as 12.0");
        t.driver_cuda = *o.cuda_driver;
        t.given.push_back("driver-cuda");
    }
    if (o.glibc) {
        if (!is_version(*o.glibc, 2, 3)) throw InputError("--glibc '" + *o.glibc + "': expected a glibc version such as 2.31");
        t.glibc = *o.glibc;
        t.given.push_back("glibc");
    }
    if (o.cpu_flags) {
        t.cpu_flags.clear();
        for (const auto& f : *o.cpu_flags) {
            std::string flag = lower(trim(f));
            if (flag.empty()) continue;
            if (!std::regex_match(flag, std::regex("^[a-z0-9_.]+$")))
                throw InputError("--cpu-flags: '" + f + "' is not a CPU flag name (expected e.g. avx,avx2,fma)");
            t.cpu_flags.push_back(flag);
        }
        t.given.push_back("cpu-flags");
    }
    if (o.kernel) {
        if (linux_version(*o.kernel) == "0") throw InputError("--kernel '" + *o.kernel + "': expected a Linux kernel release such as 5.15.0");
        t.kernel = *o.kernel;
        t.given.push_back("kernel");
    }
    if (o.osx) {
        if (!is_version(*o.osx, 1, 3)) throw InputError("--osx '" + *o.osx + "': expected a macOS version such as 13.6");
        t.osx = *o.osx;
        t.given.push_back("osx");
    }
    if (o.platform) {
        static const std::set<std::string> known = {"linux-64", "linux-aarch64", "linux-ppc64le", "linux-s390x", "linux-32",
                                                    "osx-64", "osx-arm64", "win-64", "win-32", "win-arm64"};
        if (!known.count(*o.platform))
            throw InputError("--platform '" + *o.platform + "': expected one of linux-64, linux-aarch64, linux-ppc64le, osx-64, osx-arm64, win-64");
        // The host's own OS facts do not describe a machine of another OS family: a linux host's
        // kernel and glibc are not an osx target's (conda has __glibc and __linux on linux only).
        auto family = [](const std::string& p) { return p.substr(0, p.find('-')); };
        if (family(*o.platform) != family(t.platform)) {
            if (!o.kernel) t.kernel.clear();
            if (!o.glibc) t.glibc.clear();
            if (!o.osx) t.osx.clear();
        }
        t.platform = *o.platform;
        t.given.push_back("platform");
    }
    std::sort(t.given.begin(), t.given.end());
    t.given.erase(std::unique(t.given.begin(), t.given.end()), t.given.end());
    return t;
}

}  // namespace envlock
