#include "install/doctor.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "fetch/process.hpp"
#include "install/elf.hpp"
#include "install/install.hpp"
#include "install/run_env.hpp"
#include "install/verify.hpp"
#include "resolver/knowledge/detect.hpp"
#include "resolver/knowledge/public_source.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::install {

namespace fs = std::filesystem;

std::string severity_name(Severity s) {
    switch (s) {
        case Severity::error: return "error";
        case Severity::warning: return "warning";
        case Severity::note: return "note";
    }
    return "error";
}

int DoctorReport::exit_code() const {
    for (const auto& f : findings)
        if (f.severity != Severity::note) return 1;
    return 0;
}

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return in ? std::string(std::istreambuf_iterator<char>(in), {}) : "";
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
    return out;
}

// A knowledge row's source as doctor prints it: " [a ; b]", each part as users can open it.
std::string cite(const std::string& source) {
    std::vector<std::string> kept;
    size_t pos = 0;
    while (pos <= source.size()) {
        size_t end = source.find(';', pos);
        if (end == std::string::npos) end = source.size();
        std::string part = source.substr(pos, end - pos);
        size_t b = part.find_first_not_of(' '), e = part.find_last_not_of(' ');
        part = b == std::string::npos ? "" : part.substr(b, e - b + 1);
        part = knowledge::public_source(part);
        if (!part.empty()) kept.push_back(part);
        pos = end + 1;
    }
    return kept.empty() ? "" : " [" + join(kept, " ; ") + "]";
}

// One installed thing a name can resolve to: a Python distribution's metadata, or a conda
// record (whose metadata pip may have removed).
struct Provider {
    std::string version;
    bool conda = false;           // installed by conda (its record, or metadata a record owns)
    std::string where;            // metadata dir or conda-meta json
    std::string installer;        // "pip", "conda", "debian", "" …
    std::string name;             // as spelled
};

// The CUDA toolkit torch.utils.cpp_extension builds with in this prefix: $CUDA_HOME (else
// $CUDA_PATH), else the nvcc first on PATH (the env's own bin/nvcc once it is active), else
// /usr/local/cuda (_find_cuda_home, pytorch/pytorch@v1.13.1:torch/utils/cpp_extension.py).
struct BuildToolkit {
    std::string home, version, from;   // version major.minor, "" when unknown
    std::string stand_in;              // the lock's nvcc package when it is a stand-in (no compiler in it)
};

bool repair_would_change_nothing(const InstallResult& r) {
    return r.plan.add.empty() && r.plan.remove.empty() && r.damage.empty() && r.foreign.empty();
}

struct Env {
    const PrefixScan& scan;
    const DoctorMachine& machine;
    const knowledge::Knowledge& k;
    const Lock* lock;
    std::string lock_file;
    const RepairPreview* repair_plan = nullptr;
    const CodeUses* code = nullptr;
    std::map<std::string, std::vector<Provider>> python;   // PEP 503 name -> providers
    std::map<std::string, const CondaMetaRecord*> conda;   // conda name -> record
    std::optional<pep508::MarkerEnv> markers;
    std::vector<Finding> findings;
    BuildToolkit build;

    std::string python_cmd() const {
        for (const char* p : {"bin/python", "bin/python3"})
            if (fs::exists(fs::path(scan.prefix) / p)) return (fs::path(scan.prefix) / p).string();
        return "python3";
    }
    // PEP 668: the distributor manages this Python (Debian's /usr); pip refuses to install into it.
    bool externally_managed() const {
        std::string mm = knowledge::major_minor(scan.python_version);
        return !mm.empty() && fs::exists(fs::path(scan.prefix) / "lib" / ("python" + mm) / "EXTERNALLY-MANAGED");
    }
    std::string repair() const {
        if (repair_plan && !repair_plan->refused.empty())
            return "install the lock into a new prefix: envlock install " + (lock_file.empty() ? std::string("envlock.yaml") : lock_file) +
                   " --prefix <new dir> (" + repair_plan->refused + ")";
        // --repair puts the prefix back to the lock; when it would change nothing, the lock itself
        // is this way, and only a new lock changes it.
        if (repair_plan && repair_would_change_nothing(repair_plan->plan))
            return "the lock itself installs this (`envlock install --repair` would change nothing): re-resolve it (`envlock resolve`), "
                   "then `envlock install` the new lock";
        return "envlock install " + (lock_file.empty() ? std::string("envlock.yaml") : lock_file) + " --repair --prefix " + scan.prefix;
    }
    // How to (re)install `req` in this prefix: conda's own when conda owns the name, else pip.
    std::string install_cmd(const std::string& normalized, const std::string& req) const {
        if (lock) return repair();
        auto it = python.find(normalized);
        bool by_conda = (it != python.end() && !it->second.empty() && it->second.front().conda) ||
                        (it == python.end() && conda.count(normalized));
        if (by_conda) return "conda install -p " + scan.prefix + " \"" + req + "\"";
        if (externally_managed())
            return "apt install the Debian package that ships " + normalized + " (`apt-cache search " + normalized +
                   "`): pip does not install into an externally managed Python (PEP 668), or use a venv";
        return python_cmd() + " -m pip install \"" + req + "\"";
    }
    void add(Severity s, std::string check, std::string what, std::string why, std::string fix) {
        findings.push_back({s, std::move(check), std::move(what), std::move(why), std::move(fix)});
    }
    // The installed version a name resolves to (a Python distribution first, then a conda record).
    const Provider* installed(const std::string& normalized) const {
        auto it = python.find(normalized);
        if (it != python.end() && !it->second.empty()) return &it->second.front();
        return nullptr;
    }
};

std::string installer_word(const Provider& p) {
    if (p.conda) return "conda";
    if (!p.installer.empty()) return p.installer;
    return "no INSTALLER";
}

void build_index(Env& e) {
    for (const auto& d : e.scan.dists) {
        Provider p{d.version, !d.conda_record.empty(), d.metadata, d.installer, d.name};
        e.python[d.normalized].push_back(p);
    }
    for (const auto& r : e.scan.conda_records) {
        e.conda[r.name] = &r;
        std::string py = r.python_dist;
        if (py.empty()) continue;
        auto& list = e.python[py];
        bool owns = std::any_of(list.begin(), list.end(), [&](const Provider& p) { return p.conda && p.version == r.version; });
        bool owns_any = false;
        for (const auto& d : e.scan.dists)
            if (d.conda_record == r.name) owns_any = true;
        if (!owns && !owns_any) list.push_back(Provider{r.version, true, r.json, "conda", r.name});
    }
    if (!e.scan.python_version.empty()) {
        std::string platform = e.machine.target.platform.empty() ? "linux-64" : e.machine.target.platform;
        try {
            e.markers = pep508::MarkerEnv::for_target(e.scan.python_version, platform);
        } catch (const Error&) {
            e.markers = pep508::MarkerEnv::for_target(e.scan.python_version, "linux-64");
        }
    }
}

// ---- the same distribution twice, and files two distributions both wrote ----

void check_duplicates(Env& e) {
    for (const auto& [name, list] : e.python) {
        if (list.size() < 2) continue;
        std::set<std::string> versions, installers;
        for (const auto& p : list) {
            versions.insert(p.version);
            installers.insert(installer_word(p));
        }
        std::vector<std::string> parts;
        for (const auto& p : list) parts.push_back(p.version + " (" + installer_word(p) + ", " + p.where + ")");
        if (versions.size() == 1 && installers.size() == 1) {
            // Debian ships some packages with both a .dist-info and an .egg-info of one release.
            e.add(Severity::note, "duplicate", name + " " + *versions.begin() + " has " + std::to_string(list.size()) +
                  " metadata directories: " + join(parts, ", "),
                  "same release from the same installer, so both describe the same files; harmless while they agree", "");
            continue;
        }
        const Provider* conda = nullptr;
        const Provider* other = nullptr;
        for (const auto& p : list) (p.conda ? conda : other) = &p;
        std::string fix;
        if (e.lock) fix = e.repair();
        else if (conda && other)
            fix = e.python_cmd() + " -m pip uninstall -y " + name + " && conda install -p " + e.scan.prefix +
                  " --force-reinstall \"" + (e.conda.count(name) ? name : list.front().name) + "=" + conda->version + "\"";
        else
            fix = e.python_cmd() + " -m pip uninstall -y " + name + " (repeat until `pip show " + name +
                  "` finds nothing), then " + e.python_cmd() + " -m pip install \"" + name + "==<the one you want>\"";
        e.add(Severity::error, "duplicate", name + " is installed " + std::to_string(list.size()) + " times: " + join(parts, "; "),
              conda && other ? "pip wrote its " + name + " over conda's: conda-meta still records " + conda->version +
                                   ", so conda's solver and `import " + name + "` disagree, and uninstalling either one deletes files the other needs"
                             : "`import " + name + "` loads whichever files were written last, and uninstalling one deletes files the other needs",
              fix);
    }
}

void check_overlaps(Env& e) {
    // Files listed by the RECORD of two distributions of different names (mmcv and mmcv-full
    // both install the mmcv package; opencv-python and opencv-python-headless both install cv2).
    std::map<std::string, std::string> owner;
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> shared;
    for (const auto& d : e.scan.dists) {
        for (const auto& f : d.files) {
            if (f.ends_with(".pyc") || f.find(".dist-info/") != std::string::npos) continue;
            auto [it, fresh] = owner.emplace(f, d.normalized);
            if (!fresh && it->second != d.normalized) shared[{it->second, d.normalized}].push_back(f);
        }
    }
    for (const auto& [pair, files] : shared) {
        const auto* a = e.installed(pair.first);
        const auto* b = e.installed(pair.second);
        std::string what = pair.first + (a ? " " + a->version : "") + " and " + pair.second + (b ? " " + b->version : "") +
                           " both install " + std::to_string(files.size()) + " file(s), e.g. " + files.front();
        e.add(Severity::error, "overlap", what,
              "each overwrote the other's files: what is on disk is a mix of both, and uninstalling one breaks the other",
              e.lock ? e.repair()
                     : e.python_cmd() + " -m pip uninstall -y " + pair.first + " " + pair.second + " && " + e.python_cmd() +
                           " -m pip install \"" + pair.second + (b ? "==" + b->version : "") + "\" (keep the one you need)");
    }
}

// ---- conda split packages (numpy / numpy-base) ----

void check_split(Env& e) {
    for (const auto& [name, rec] : e.conda) {
        if (!name.ends_with("-base")) continue;
        std::string top = name.substr(0, name.size() - 5);
        auto it = e.conda.find(top);
        if (it == e.conda.end() || it->second->version == rec->version) continue;
        e.add(Severity::error, "split-package",
              "conda " + top + " " + it->second->version + " but " + name + " " + rec->version,
              "conda's " + top + " is a metapackage over " + name + ", which holds the files; out of step, the code on disk is " +
                  rec->version + " while conda (and `" + top + " --version`-style checks) say " + it->second->version +
                  ", and the next conda solve sees an inconsistent env",
              e.lock ? e.repair()
                     : "conda install -p " + e.scan.prefix + " \"" + top + "=" + it->second->version + "\" \"" + name + "=" +
                           it->second->version + "\"");
    }
}

// ---- every requirement met (pip check), across pip and conda ----

void check_requirements(Env& e) {
    for (const auto& d : e.scan.dists) {
        for (const auto& text : d.requires_dist) {
            std::optional<pep508::Requirement> req;
            try {
                req = pep508::Requirement::parse(text);
            } catch (const Error&) {
                continue;   // pip check skips what it cannot parse too
            }
            if (req->marker) {
                if (!e.markers) continue;
                if (!req->applies(*e.markers)) continue;
            }
            const Provider* have = e.installed(req->normalized_name);
            if (!have) {
                e.add(Severity::error, "requirement", d.name + " " + d.version + " requires " + req->str() + ", which is not installed",
                      d.metadata + " lists it in Requires-Dist; importing the parts of " + d.name + " that use it fails",
                      e.install_cmd(req->normalized_name, req->str()));
                continue;
            }
            auto v = pep440::Version::try_parse(have->version);
            if (!v || req->specifier.empty() || req->specifier.contains(*v, true)) continue;
            e.add(Severity::error, "requirement",
                  d.name + " " + d.version + " requires " + req->str() + ", but " + have->name + " " + have->version + " is installed",
                  d.metadata + " asks for " + req->specifier.str() + "; " + have->where + " holds " + have->version,
                  e.install_cmd(req->normalized_name, req->normalized_name + req->specifier.str()));
        }
    }
    for (const auto& r : e.scan.conda_records) {
        for (const auto& text : r.depends) {
            std::optional<conda::MatchSpec> spec;
            try {
                spec = conda::MatchSpec::parse(text);
            } catch (const Error&) {
                continue;
            }
            if (spec->name.empty() || spec->name.starts_with("__")) continue;   // virtual packages: the machine's
            std::string version;
            std::string where;
            auto it = e.conda.find(spec->name);
            if (it != e.conda.end()) {
                version = it->second->version;
                where = "conda " + it->second->json;
            } else if (const Provider* p = e.installed(pep508::normalize_name(spec->name))) {
                version = p->version;   // pip installed it; conda's depends read across ecosystems
                where = p->where;
            } else {
                e.add(Severity::error, "requirement", "conda " + r.name + " " + r.version + " depends on " + text + ", which is not installed",
                      r.json + " lists it in depends", e.lock ? e.repair() : "conda install -p " + e.scan.prefix + " \"" + text + "\"");
                continue;
            }
            auto cv = conda::Version::try_parse(version);
            if (!cv || spec->matches_version(*cv)) continue;
            e.add(Severity::error, "requirement",
                  "conda " + r.name + " " + r.version + " depends on " + text + ", but " + spec->name + " " + version + " is installed",
                  r.json + " asks for " + spec->version.str() + "; " + where + " holds " + version,
                  e.lock ? e.repair() : "conda install -p " + e.scan.prefix + " \"" + text + "\"");
        }
    }
}

// ---- the knowledge base: advisories, numba's numpy range ----

bool holds(const Env& e, const std::string& text, std::string& seen) {
    pep508::Requirement req = pep508::Requirement::parse(text);
    const Provider* p = e.installed(req.normalized_name);
    if (!p) return false;
    if (!req.specifier.empty()) {
        auto v = pep440::Version::try_parse(p->version);
        if (!v || !req.specifier.contains(*v, true)) return false;
    }
    seen = p->name + " " + p->version;
    return true;
}

// An advisory's needs: (what the code does, the toolkit, the GPUs), each with what shows it;
// false when one does not hold or cannot be told.
bool needs_hold(const Env& e, const std::string& needs, std::vector<std::string>& seen) {
    std::stringstream in(needs);
    for (std::string c; std::getline(in, c, ',');) {
        c.erase(0, c.find_first_not_of(' '));
        c.erase(c.find_last_not_of(' ') + 1);
        if (c.empty()) continue;
        auto used = e.code ? e.code->uses.find(c) : std::map<std::string, std::string>::const_iterator{};
        if (e.code && used != e.code->uses.end()) {
            std::string what = c.rfind("code-uses:", 0) == 0 ? "code using " + c.substr(10)
                               : c == "numba-cuda"           ? "code running numba.cuda kernels"
                               : c == "cuda-extensions"      ? "code building CUDA/C++ extensions"
                                                             : c;
            seen.push_back(what + " (" + used->second + ")");
            continue;
        }
        if (c == "cuda-extensions") {
            auto it = std::find_if(e.scan.extensions.begin(), e.scan.extensions.end(),
                                   [](const CompiledExtension& x) { return x.torch_checked; });
            if (it == e.scan.extensions.end()) return false;
            seen.push_back("extensions built here (" + it->path + ")");
            continue;
        }
        auto compare = [](const std::string& spec, const std::string& version) {
            auto v = pep440::Version::try_parse(version);
            try {
                return v && pep440::SpecifierSet::parse(spec).contains(*v, true);
            } catch (const Error&) {
                return false;
            }
        };
        if (c.rfind("cuda", 0) == 0 && c.size() > 4 && std::string("<>=!").find(c[4]) != std::string::npos) {
            if (e.build.version.empty() || !compare(c.substr(4), e.build.version)) return false;
            seen.push_back("CUDA " + e.build.version + " at " + e.build.home);
            continue;
        }
        if (c.rfind("sm", 0) == 0 && c.size() > 2 && std::string("<>=!").find(c[2]) != std::string::npos) {
            bool any = false;
            for (const auto& g : e.machine.target.gpus)
                if (compare(c.substr(2), std::to_string(g.sm_major * 10 + g.sm_minor))) {
                    seen.push_back(g.name + " (" + knowledge::sm_name(g.sm_major * 10 + g.sm_minor) + ")");
                    any = true;
                    break;
                }
            if (!any) return false;
            continue;
        }
        return false;   // what the code does, and no code was read (or it does not)
    }
    return true;
}

void check_advisories(Env& e) {
    for (const auto& a : knowledge::advisories(e.k)) {
        if (a.when.empty() && a.needs.empty()) continue;
        std::vector<std::string> seen;
        bool all = true;
        try {
            for (const auto& w : a.when) {
                std::string s;
                if (!holds(e, w, s)) { all = false; break; }
                seen.push_back(s);
            }
        } catch (const Error&) {
            all = false;
        }
        if (!all) continue;
        std::vector<std::string> because;
        if (!a.needs.empty() && !needs_hold(e, a.needs, because)) continue;
        seen.insert(seen.end(), because.begin(), because.end());
        // The advisory's fix is "req, or other": the first alternative as a command, the rest as words.
        std::string first = a.fix.substr(0, a.fix.find(", or "));
        std::string rest = first.size() < a.fix.size() ? a.fix.substr(first.size() + 2) : "";
        std::string fix;
        try {
            auto r = pep508::Requirement::parse(first);
            fix = e.install_cmd(r.normalized_name, r.str());
            if (!rest.empty()) fix += " (" + rest + ")";
        } catch (const Error&) {
            fix = a.fix;
        }
        e.add(Severity::error, "advisory:" + a.id, join(seen, " with "), a.symptom + cite(a.source), fix);
    }
}

void check_numba(Env& e) {
    const Provider* numba = e.installed("numba");
    if (!numba) return;
    auto rel = knowledge::numba_release(e.k, numba->version);
    if (!rel) return;
    for (const auto& f : e.findings)
        if (f.check.starts_with("advisory:") && f.what.find("numba") != std::string::npos && f.what.find("numpy") != std::string::npos)
            return;   // an advisory already named this pair
    const Provider* numpy = e.installed("numpy");
    if (numpy && !rel->numpy.empty()) {
        auto v = pep440::Version::try_parse(numpy->version);
        auto spec = pep440::SpecifierSet::parse(rel->numpy);
        if (v && !spec.contains(*v, true))
            e.add(Severity::error, "numba-numpy", "numba " + numba->version + " with numpy " + numpy->version,
                  "numba " + rel->version + " supports numpy " + rel->numpy + "; outside it numba refuses to import or miscompiles" +
                      cite(rel->source),
                  e.install_cmd("numpy", "numpy" + rel->numpy));
    }
    if (!rel->python.empty() && !e.scan.python_version.empty()) {
        auto v = pep440::Version::try_parse(e.scan.python_version);
        auto spec = pep440::SpecifierSet::parse(rel->python);
        if (v && !spec.contains(*v, true))
            e.add(Severity::error, "numba-python", "numba " + numba->version + " on Python " + e.scan.python_version,
                  "numba " + rel->version + " supports Python " + rel->python + cite(rel->source),
                  e.lock ? e.repair() : "a numba release for Python " + e.scan.python_version + " (`envlock inspect advisories` lists the ranges)");
    }
}

// ---- torch's CUDA against this machine ----

std::string cuda_major(const std::string& v) { return v.substr(0, v.find('.')); }

void check_torch(Env& e) {
    const auto& t = e.scan.torch;
    if (t.version.empty() || t.cuda.empty()) return;
    const Target& m = e.machine.target;
    std::string torch = "torch " + t.version + " (CUDA " + t.cuda + ")";
    if (m.driver_version.empty()) {
        // With no GPU either, the target warning torch-without-gpu says it (check_target_warnings).
        if (!cpu_only(m)) e.add(Severity::note, "torch-driver", torch + " on a machine without an NVIDIA driver",
              "no driver was found (nvidia-smi, /proc/driver/nvidia), so torch.cuda.is_available() is False and it runs on the CPU", "");
        return;
    }
    if (!knowledge::driver_runs_cuda(e.k, m.driver_version, t.cuda)) {
        auto need = knowledge::min_driver_for_cuda(e.k, t.cuda);
        e.add(Severity::error, "torch-driver", torch + " with NVIDIA driver " + m.driver_version +
              (m.driver_cuda.empty() ? "" : " (runs CUDA <= " + m.driver_cuda + ")"),
              "the driver is older than CUDA " + t.cuda + "'s runtime needs" + (need ? " (>= " + *need + ")" : "") +
                  ": torch.cuda.is_available() is False (\"The NVIDIA driver on your system is too old\")",
              e.lock ? e.repair() + " after `envlock resolve` on this machine"
                     : (need ? "a driver >= " + *need + ", or " : "") + "a torch built for CUDA <= " +
                           (m.driver_cuda.empty() ? "the driver's" : m.driver_cuda));
    }
    std::string kind = e.scan.conda_records.empty() || !e.conda.count("pytorch") ? "pip" : "conda";
    auto arch = knowledge::torch_arch_list(e.k, t.version, t.cuda, kind);
    if (!arch) return;
    for (const auto& gpu : m.gpus) {
        int sm = gpu.sm_major * 10 + gpu.sm_minor;
        if (knowledge::arch_list_runs_on(*arch, sm)) continue;
        e.add(Severity::error, "torch-gpu", torch + " has no code for " + knowledge::sm_name(sm) + " (" + gpu.name + ")",
              "its kernels are built for " + knowledge::describe(*arch) +
                  ": CUDA calls fail with \"no kernel image is available for execution on the device\"",
              e.lock ? e.repair() + " after `envlock resolve` on this machine"
                     : "a torch build whose arch list covers " + knowledge::sm_name(sm) + " (`envlock inspect torch " +
                           t.version.substr(0, t.version.find('+')) + "` lists them)");
    }
}

// What torch.utils.cpp_extension does when CUDA_HOME's nvcc is another release than torch's.
std::string mismatch_why(const knowledge::Knowledge& k, const std::string& verdict, const std::string& nvcc, const std::string& torch) {
    const auto& rules = k.cpp_extension_rules;
    std::string why = verdict == "error"
        ? "torch.utils.cpp_extension refuses to build CUDA extensions: \"The detected CUDA version (" + nvcc +
              ") mismatches the version that was used to compile PyTorch (" + torch + ")\""
        : "torch.utils.cpp_extension warns and builds; the extension then links CUDA " + nvcc + "'s runtime beside torch's " + torch;
    if (rules.unverified) why += " (knowledge row unverified)";
    else why += cite(rules.source);
    return why;
}

BuildToolkit build_toolkit(const PrefixScan& scan, const DoctorMachine& m, const Lock* lock) {
    // An env installed from a lock is entered with `envlock run` or `shell-hook`, which set
    // CUDA_HOME to the lock's nvcc: that is the toolkit its builds use, whatever the shell has.
    if (lock && !lock->toolchain.nvcc.empty()) {
        std::string home = locked_cuda_home(scan.prefix, *lock);
        if (!home.empty()) {
            BuildToolkit b{home, cuda_toolkit_version(home), "the lock's " + lock->toolchain.nvcc_from + ", CUDA_HOME under `envlock run`", ""};
            if (lock->toolchain.nvcc_from.rfind("conda:", 0) == 0)
                for (const auto& r : scan.conda_records)
                    if (r.name == lock->toolchain.nvcc_from.substr(6) && r.stand_in) {
                        b.stand_in = r.name + " " + r.version + " (" + r.json + ")";
                        b.version = knowledge::major_minor(lock->toolchain.nvcc);
                        b.from += "; a stand-in with no compiler in it";
                    }
            return b;
        }
    }
    if (m.cuda_home_set) return {m.cuda_home, m.cuda_home_version, "CUDA_HOME", ""};
    std::error_code ec;
    fs::path own = fs::path(scan.prefix) / "bin/nvcc";
    if (scan.conda && fs::exists(own, ec))
        return {scan.prefix, cuda_toolkit_version(scan.prefix), "the env's own nvcc, first on PATH once the env is active", ""};
    auto known = [&](const std::string& home) {
        for (const auto& tk : m.target.toolkits)
            if (fs::path(tk.path).lexically_normal() == fs::path(home).lexically_normal()) return knowledge::major_minor(tk.version);
        return cuda_toolkit_version(home);
    };
    if (!m.path_nvcc.empty()) {
        std::string home = fs::path(m.path_nvcc).parent_path().parent_path().string();
        return {home, known(home), "nvcc on PATH", ""};
    }
    for (const auto& tk : m.target.toolkits)
        if (fs::path(tk.path).lexically_normal() == "/usr/local/cuda")
            return {tk.path, knowledge::major_minor(tk.version), "/usr/local/cuda, CUDA_HOME being unset and no nvcc on PATH", ""};
    return {};
}

void check_cuda_home(Env& e) {
    const auto& t = e.scan.torch;
    if (t.version.empty() || t.cuda.empty()) return;
    const DoctorMachine& m = e.machine;
    const BuildToolkit& b = e.build;
    if (!b.stand_in.empty()) {
        e.add(Severity::note, "cuda-home", "the lock's nvcc, " + b.stand_in + ", is a stand-in",
              "a test or demo mirror's package with no compiler in it (it lists " + std::string(kStandInMarker) +
                  "): building CUDA extensions against torch's CUDA " + t.cuda + " is not checked",
              "");
        return;
    }
    std::string fix_home;
    for (const auto& tk : m.target.toolkits)
        if (knowledge::major_minor(tk.version) == knowledge::major_minor(t.cuda)) fix_home = "export CUDA_HOME=" + tk.path;
    if (fix_home.empty()) fix_home = "install the CUDA " + t.cuda + " toolkit and export CUDA_HOME=<its directory>";
    if (b.home.empty()) {
        e.add(Severity::note, "cuda-home", "CUDA_HOME is unset and no CUDA toolkit was found",
              "CUDA extensions (mmcv-full, mmdet3d ops …) cannot be built against torch's CUDA " + t.cuda + " here", "");
        return;
    }
    std::string where = b.from == "CUDA_HOME" ? "CUDA_HOME=" + b.home : b.home + " (" + b.from + ")";
    if (b.version.empty()) {
        e.add(Severity::warning, "cuda-home", where + " is not a CUDA toolkit",
              "it has no version.json, version.txt or bin/nvcc, so building CUDA extensions fails", fix_home);
        return;
    }
    std::string verdict = knowledge::cpp_extension_cuda_check(e.k, t.cuda, b.version);
    if (verdict == "ok") return;
    std::string what = b.from == "CUDA_HOME" ? "CUDA_HOME=" + b.home + " is CUDA " + b.version + ", torch " + t.version + " was built with CUDA " + t.cuda
                                             : "extensions build with CUDA " + b.version + " at " + where + ", torch " + t.version + " has CUDA " + t.cuda;
    e.add(verdict == "error" ? Severity::error : Severity::warning, "cuda-home", what, mismatch_why(e.k, verdict, b.version, t.cuda), fix_home);
}

// The host compiler nvcc is handed (verify's rule: the newest gcc/clang each CUDA accepts).
void check_build_compiler(Env& e) {
    const auto& t = e.scan.torch;
    if (t.version.empty() || t.cuda.empty() || e.build.version.empty() || !e.build.stand_in.empty()) return;
    VerifyInputs in;
    in.machine = e.machine.target;
    in.env = e.machine.env;
    ChosenToolchain chosen;
    chosen.cuda = e.build.version;
    VerifyCheck c = install::check_host_compiler(Lock{}, in, e.k, chosen);
    if (c.status != CheckStatus::failed) return;
    std::string fix = c.fix;
    if (fix.rfind("build with ", 0) == 0)
        fix = "export " + (chosen.cc.empty() ? "" : "CC=" + chosen.cc + " ") + "CXX=" + chosen.cxx + " NVCC_CCBIN=" + chosen.cxx +
              " before building extensions (" + chosen.cxx_version + ", which nvcc " + e.build.version + " accepts; torch passes CC to nvcc as -ccbin)";
    // An error when the code builds CUDA extensions; otherwise it waits for the first build.
    bool builds = e.code && e.code->uses.count("cuda-extensions");
    e.add(builds ? Severity::error : Severity::warning, "host-compiler", c.what + " (CUDA " + e.build.version + " at " + e.build.home + ")",
          c.cause + ": every CUDA extension build stops there" + (c.source.empty() ? "" : cite(c.source)), fix);
}

// libcudart's soname carries major.minor up to CUDA 10.2 and only the major from 11 on
// (libcudart.so.11.0 serves every 11.x, libcudart.so.12 every 12.x).
bool same_runtime(const std::string& soname_version, const std::string& cuda) {
    std::string major = cuda_major(soname_version);
    if (major.empty() || major.find_first_not_of("0123456789") != std::string::npos) return true;
    if (std::stoi(major) >= 11) return major == cuda_major(cuda);
    return knowledge::major_minor(soname_version) == knowledge::major_minor(cuda);
}

std::string sm_list(const std::vector<int>& sass, const std::vector<int>& ptx) {
    std::vector<std::string> parts;
    for (int sm : sass) parts.push_back(knowledge::sm_name(sm));
    for (int sm : ptx) parts.push_back("compute_" + std::to_string(sm));
    return parts.empty() ? "no GPU code" : join(parts, " ");
}

void check_extensions(Env& e) {
    const auto& t = e.scan.torch;
    for (const auto& x : e.scan.extensions) {
        bool torchs_own = x.dist == "torch" || x.dist.starts_with("nvidia-") || x.path.find("/torch/") != std::string::npos;
        if (torchs_own) continue;
        std::string owner = x.dist.empty() ? x.path : x.dist;
        const Provider* p = x.dist.empty() ? nullptr : e.installed(x.dist);
        std::string rebuild = e.lock ? e.repair()
                              : p ? e.python_cmd() + " -m pip install --force-reinstall --no-deps --no-build-isolation \"" + x.dist + "==" +
                                        p->version + "\" (rebuilds it against the installed torch" +
                                        (t.cuda.empty() ? "" : "; CUDA_HOME must be CUDA " + t.cuda) + ")"
                                  : "rebuild " + x.path + " against the installed torch (in its checkout: python setup.py develop)";
        if (!t.version.empty() && !x.cudart.empty() && !(!t.cuda.empty() && same_runtime(x.cudart, t.cuda)))
            e.add(Severity::error, "extension-cuda",
                  x.path + " links libcudart.so." + x.cudart + ", torch " + t.version + " is " + (t.cuda.empty() ? "a CPU build" : "CUDA " + t.cuda),
                  owner + " was built against another torch/CUDA: it loads a second CUDA runtime beside torch's and fails to import "
                          "(undefined symbol) or fails at its first kernel",
                  rebuild);
        if (x.torch_checked && !x.missing_torch_symbols.empty()) {
            const std::string& first = x.missing_torch_symbols.front();
            std::string n = std::to_string(x.missing_torch_symbols.size());
            e.add(Severity::error, "extension-torch",
                  x.path + " needs " + n + " of its " + std::to_string(x.torch_symbols) + " torch symbols that torch " +
                      (t.version.empty() ? "" : t.version + " ") + "does not export, first " + demangle(first),
                  owner + " was built against another torch: `import` fails with \"ImportError: " + x.path.substr(x.path.rfind('/') + 1) +
                      ": undefined symbol: " + first + "\" (torch's libraries read in " + x.torch_lib_dir + ")",
                  rebuild);
        }
        if (x.fatbin && (!x.sass.empty() || !x.ptx.empty())) {
            knowledge::ArchList archs{x.sass, x.ptx};
            for (const auto& gpu : e.machine.target.gpus) {
                int sm = gpu.sm_major * 10 + gpu.sm_minor;
                if (knowledge::arch_list_runs_on(archs, sm)) continue;
                e.add(Severity::error, "extension-gpu", x.path + " has no code for " + knowledge::sm_name(sm) + " (" + gpu.name + ")",
                      "its CUDA fat binary holds " + sm_list(x.sass, x.ptx) +
                          ": its kernels fail with \"no kernel image is available for execution on the device\"",
                      "TORCH_CUDA_ARCH_LIST=\"" + knowledge::cc_name(sm) + "\" " + rebuild);
            }
        }
    }
}

// ---- the machine: CPU flags, WSL and NCCL (knowledge: target_warnings) ----

void check_target_warnings(Env& e) {
    std::vector<std::pair<std::string, std::string>> packages;
    for (const auto& d : e.scan.dists) packages.emplace_back(d.name, d.version);
    for (const auto& r : e.scan.conda_records) packages.emplace_back(r.name, r.version);
    for (const auto& w : knowledge::target_warnings(e.k, e.machine.target, packages)) {
        // A CPU build of torch on a machine without a GPU is what it was made for.
        bool cpu_only_machine = w.target.find("no-gpu") != std::string::npos;
        if (cpu_only_machine && e.scan.torch.cuda.empty()) continue;
        std::vector<std::string> seen;
        for (const auto& req : w.when) {
            std::string s;
            try {
                if (holds(e, req, s)) seen.push_back(s);
                else if (auto it = e.conda.find(pep508::Requirement::parse(req).name); it != e.conda.end())
                    seen.push_back("conda " + it->second->name + " " + it->second->version);
            } catch (const Error&) {
            }
        }
        std::vector<std::string> machine;
        std::stringstream in(w.target);
        for (std::string c; std::getline(in, c, ',');) {
            c.erase(0, c.find_first_not_of(' '));
            if (c.rfind("cpu-lacks:", 0) == 0) machine.push_back("a CPU without " + c.substr(10));
            else if (c == "wsl") machine.push_back("WSL");
            else if (c.rfind("gpus>=", 0) == 0) machine.push_back(std::to_string(e.machine.target.gpus.size()) + " GPUs");
            else if (c == "no-gpu") machine.push_back("a machine with no NVIDIA GPU or driver");
        }
        // A crash is an error; a machine that runs the env on its CPU only is said, not a problem.
        bool crash = w.target.find("cpu-lacks:") != std::string::npos;
        e.add(crash ? Severity::error : cpu_only_machine ? Severity::note : Severity::warning, "target:" + w.id,
              (seen.empty() ? join(w.when, ", ") : join(seen, ", ")) + " on " + join(machine, ", "), w.symptom + cite(w.source), w.fix);
    }
}

// ---- the machine: open files ----

void check_open_files(Env& e) {
    // DataLoader workers hand each batch's shared-memory tensors over as file descriptors
    // (torch.multiprocessing's default file_descriptor strategy); with many workers the soft
    // limit runs out: "received 0 items of ancdata" / "Too many open files"
    // (https://github.com/pytorch/pytorch/issues/973). 4096 is our threshold, not torch's.
    const std::uint64_t enough = 4096;
    if (e.scan.torch.version.empty() || e.machine.nofile_soft == 0 || e.machine.nofile_soft >= enough) return;
    std::uint64_t hard = e.machine.nofile_hard;
    e.add(Severity::warning, "open-files", "the open-file limit is " + std::to_string(e.machine.nofile_soft) + " (ulimit -n)",
          "DataLoader workers pass tensors as file descriptors; with many workers torch fails with \"received 0 items of "
          "ancdata\" or \"Too many open files\" (pytorch/pytorch#973)",
          hard >= enough || hard == RLIM_INFINITY
              ? "ulimit -n " + std::to_string(hard == RLIM_INFINITY || hard > 65536 ? 65536 : hard) + " (in the shell that runs training)"
              : "torch.multiprocessing.set_sharing_strategy('file_system') in the training script (the hard limit is " +
                    std::to_string(hard) + ")");
}

void check_metadata(Env& e) {
    for (const auto& u : e.scan.unreadable)
        e.add(Severity::warning, "metadata", u, "pip and conda cannot tell what this installed, so they cannot upgrade or remove it",
              e.lock ? e.repair() : "reinstall the package it belongs to");
}

// ---- the lock ----

void check_drift(Env& e, DoctorReport& report) {
    if (!e.lock) return;
    LockDrift d = lock_drift(*e.lock, e.scan);
    report.drift = d;
    std::string fix = e.repair();
    auto listed = [](const std::vector<std::string>& v) {
        std::vector<std::string> head(v.begin(), v.begin() + std::min<size_t>(v.size(), 8));
        return join(head, ", ") + (v.size() > head.size() ? ", … (" + std::to_string(v.size()) + " in all)" : "");
    };
    if (!d.changed.empty())
        e.add(Severity::error, "lock-drift", std::to_string(d.changed.size()) + " package(s) differ from " + e.lock_file + ": " + listed(d.changed),
              "the prefix is no longer what the lock says; the lock's versions were solved together, these were not", fix);
    if (!d.removed.empty())
        e.add(Severity::error, "lock-drift", std::to_string(d.removed.size()) + " locked package(s) missing: " + listed(d.removed),
              "imports of them fail, and what requires them is unmet", fix);
    // What --repair's own check found: files of locked packages that are gone or were edited.
    if (e.repair_plan && !e.repair_plan->plan.damage.empty()) {
        const auto& damage = e.repair_plan->plan.damage;
        e.add(Severity::error, "lock-files", std::to_string(damage.size()) + " installed file(s) missing or modified: " + listed(damage),
              "they are not what the locked packages installed (sha256 and size as recorded at install), so what imports them "
              "breaks or behaves differently",
              fix);
    }
    if (!d.added.empty())
        e.add(Severity::warning, "lock-drift", std::to_string(d.added.size()) + " package(s) not in " + e.lock_file + ": " + listed(d.added),
              "installed by hand after the lock; they may pull the env away from what was solved", fix);
}

}  // namespace

LockDrift lock_drift(const Lock& lock, const PrefixScan& scan) {
    // Installed: conda records by name; Python distributions conda does not own, by PEP 503 name.
    std::map<std::string, std::string> conda, pypi;
    for (const auto& r : scan.conda_records) conda[r.name] = r.version;
    for (const auto& d : scan.dists)
        if (d.conda_record.empty()) pypi.emplace(d.normalized, d.version);
    std::set<std::string> seen_conda, seen_pypi;
    LockDrift out;
    for (const auto& p : lock.packages) {
        if (p.kind == Ecosystem::conda) {
            seen_conda.insert(p.name);
            auto it = conda.find(p.name);
            if (it == conda.end()) out.removed.push_back(p.name + " " + p.version + " (conda)");
            else if (it->second != p.version) out.changed.push_back(p.name + " " + p.version + " -> " + it->second);
            continue;
        }
        std::string n = pep508::normalize_name(p.name);
        seen_pypi.insert(n);
        auto it = pypi.find(n);
        if (it == pypi.end()) {
            out.removed.push_back(p.name + " " + p.version);
            continue;
        }
        auto a = pep440::Version::try_parse(p.version), b = pep440::Version::try_parse(it->second);
        bool same = a && b ? *a == *b : p.version == it->second;
        // A git source at a commit no tag versions is locked as "0+g<commit>" (resolve's
        // placeholder, which any requirement without a version accepts): its build says its
        // version, so any installed version of it is the locked one.
        if (p.kind == Ecosystem::source && p.version.rfind("0+g", 0) == 0) same = true;
        if (!same) out.changed.push_back(p.name + " " + p.version + " -> " + it->second);
    }
    for (const auto& [n, v] : conda)
        if (!seen_conda.count(n)) out.added.push_back(n + " " + v + " (conda)");
    for (const auto& [n, v] : pypi)
        if (!seen_pypi.count(n)) out.added.push_back(n + " " + v);
    return out;
}

DoctorReport diagnose(const PrefixScan& scan, const DoctorMachine& machine, const knowledge::Knowledge& k, const Lock* lock,
                      const std::string& lock_file, const RepairPreview* repair, const CodeUses* code) {
    Env e{scan, machine, k, lock, lock_file.empty() && lock ? "envlock.yaml" : lock_file, repair, code, {}, {}, {}, {}, {}};
    build_index(e);
    e.build = build_toolkit(scan, machine, lock);
    DoctorReport r;
    r.prefix = scan.prefix;
    r.python = scan.python_version;
    r.python_dists = scan.dists.size();
    r.conda_records = scan.conda_records.size();
    r.extensions = scan.extensions;
    if (lock && repair) r.repair = *repair;
    if (code) r.code_dir = code->dir;
    if (!e.build.home.empty())
        r.build_nvcc = (e.build.version.empty() ? "no CUDA release" : "CUDA " + e.build.version) + " at " + e.build.home + " (" + e.build.from + ")";
    r.torch = scan.torch.version;
    r.torch_cuda = scan.torch.cuda;
    r.lock_file = lock ? e.lock_file : "";
    check_drift(e, r);
    check_duplicates(e);
    check_overlaps(e);
    check_split(e);
    check_requirements(e);
    check_advisories(e);
    check_numba(e);
    check_torch(e);
    check_cuda_home(e);
    check_build_compiler(e);
    check_extensions(e);
    check_target_warnings(e);
    check_open_files(e);
    check_metadata(e);
    std::stable_sort(e.findings.begin(), e.findings.end(),
                     [](const Finding& a, const Finding& b) { return static_cast<int>(a.severity) < static_cast<int>(b.severity); });
    r.findings = std::move(e.findings);
    return r;
}

nlohmann::json report_json(const DoctorReport& r) {
    nlohmann::json j = {{"prefix", r.prefix},
                        {"python", r.python},
                        {"python-distributions", r.python_dists},
                        {"conda-records", r.conda_records},
                        {"extensions", nlohmann::json::array()},
                        {"torch", r.torch},
                        {"torch-cuda", r.torch_cuda},
                        {"healthy", r.exit_code() == 0},
                        {"findings", nlohmann::json::array()}};
    for (const auto& f : r.findings)
        j["findings"].push_back({{"severity", severity_name(f.severity)}, {"check", f.check}, {"what", f.what}, {"why", f.why}, {"fix", f.fix}});
    if (!r.lock_file.empty()) j["lock"] = r.lock_file;
    if (r.drift) j["drift"] = {{"added", r.drift->added}, {"removed", r.drift->removed}, {"changed", r.drift->changed}};
    for (const auto& x : r.extensions) {
        nlohmann::json e = {{"path", x.path}, {"distribution", x.dist}, {"cudart", x.cudart}, {"torch-libraries", x.torch_libs}};
        if (x.fatbin) e["gpu-code"] = {{"sass", x.sass}, {"ptx", x.ptx}};
        if (x.torch_checked)
            e["torch-symbols"] = {{"imported", x.torch_symbols}, {"missing", x.missing_torch_symbols}, {"read-in", x.torch_lib_dir}};
        j["extensions"].push_back(e);
    }
    if (!r.code_dir.empty()) j["code"] = r.code_dir;
    if (!r.build_nvcc.empty()) j["build-nvcc"] = r.build_nvcc;
    if (r.repair) {
        const auto& p = r.repair->plan;
        auto names = [](const std::vector<PlannedPackage>& v) {
            std::vector<std::string> out;
            for (const auto& x : v) out.push_back(x.name + " " + x.version + " (" + x.kind + ")");
            return out;
        };
        j["repair"] = {{"refused", r.repair->refused}, {"add", names(p.plan.add)}, {"remove", names(p.plan.remove)},
                       {"keep", p.plan.keep}, {"restore", p.damage}, {"remove-foreign", p.removed_foreign}, {"foreign", p.foreign}};
    }
    return j;
}

std::string cuda_toolkit_version(const std::string& dir) {
    fs::path d(dir);
    std::error_code ec;
    if (fs::exists(d / "version.json", ec)) {
        auto j = nlohmann::json::parse(slurp(d / "version.json"), nullptr, false);
        if (j.is_object() && j.contains("cuda") && j["cuda"].is_object() && j["cuda"].contains("version") && j["cuda"]["version"].is_string())
            return knowledge::major_minor(j["cuda"]["version"].get<std::string>());
    }
    static const std::regex txt(R"(CUDA Version (\d+\.\d+))");
    std::smatch m;
    std::string text = slurp(d / "version.txt");
    if (std::regex_search(text, m, txt)) return m[1];
    if (fs::exists(d / "bin/nvcc", ec)) {
        auto r = run_process({(d / "bin/nvcc").string(), "--version"}, 20);
        if (r.exit_code == 0) {
            std::string v = parse_nvcc_release(r.out);
            if (!v.empty()) return knowledge::major_minor(v);
        }
    }
    return "";
}

RepairPreview repair_preview(const Lock& lock, const std::string& prefix) {
    RepairPreview out;
    std::error_code ec;
    if (!fs::exists(fs::path(prefix) / kStateFile, ec)) {
        out.refused = "envlock install --repair only repairs prefixes envlock installed, and " + prefix + " has no " + kStateFile;
        return out;
    }
    InstallOptions o;
    o.prefix = prefix;
    o.dry_run = true;
    o.repair = true;
    use_default_installers(o);
    try {
        out.plan = install_lock(lock, o);
    } catch (const Error& err) {
        out.refused = err.what();
    }
    return out;
}

DoctorMachine this_machine(const knowledge::Knowledge& k) {
    DoctorMachine m;
    m.target = detect_target(DetectRoots::host(), k);
    const char* home = std::getenv("CUDA_HOME");
    if (!home || !*home) home = std::getenv("CUDA_PATH");
    if (home && *home) {
        m.cuda_home_set = true;
        m.cuda_home = home;
        m.cuda_home_version = cuda_toolkit_version(home);
    }
    for (const char* key : {"PATH", "CC", "CXX"})
        if (const char* v = std::getenv(key)) m.env[key] = v;
    std::string path = m.env["PATH"];
    for (size_t pos = 0; pos <= path.size();) {
        size_t end = path.find(':', pos);
        if (end == std::string::npos) end = path.size();
        fs::path nvcc = fs::path(path.substr(pos, end - pos)) / "nvcc";
        std::error_code ec;
        if (end > pos && fs::is_regular_file(nvcc, ec) && ::access(nvcc.c_str(), X_OK) == 0) {
            m.path_nvcc = fs::absolute(nvcc, ec).lexically_normal().string();
            break;
        }
        pos = end + 1;
    }
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        m.nofile_soft = rl.rlim_cur;
        m.nofile_hard = rl.rlim_max;
    }
    return m;
}

}  // namespace envlock::install
