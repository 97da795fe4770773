#include "resolver/solve/pool.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <tuple>
#include <sstream>

#include "resolver/specs/conda_dist.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/wheel.hpp"

#include "resolver/solve/libsolv.hpp"

namespace envlock::solve_detail {

namespace {

bool is_conda_compiler(const std::string& name) {
    return name == "gcc" || name == "gxx" || name == "gcc_linux-64" || name == "gxx_linux-64" ||
           name == "gcc_impl_linux-64" || name == "gxx_impl_linux-64" || name == "gcc_linux-aarch64" ||
           name == "gxx_linux-aarch64";
}

int major_of(const std::string& version) {
    try {
        return std::stoi(version);
    } catch (...) {
        return 0;
    }
}

std::string join_ints(const std::vector<int>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
    return out;
}

std::vector<int> split_ints(const std::string& s) {
    std::vector<int> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(std::stoi(item));
    return out;
}

std::string sm_name(int sm) { return "sm_" + std::to_string(sm); }

// The CUDA variant a plain PyPI torch wheel (no +cuXYZ label) was built with, e.g. cu102 for
// torch 1.9.1: the knowledge base's row, else what the wheel's own requirements pin (torch 2.15
// needs cuda-toolkit[…]==13.2.2). "" when neither says.
std::string torch_pypi_default_variant(const knowledge::Knowledge& k, const IndexRecord& rec) {
    if (auto release = knowledge::torch_release(k, rec.version); release && !release->pypi_default.empty())
        return release->pypi_default;
    return cuda_variant_pinned_by(rec.depends);
}

}  // namespace

std::string conda_dist_name(const std::string& conda_name) { return conda::python_dist_name(conda_name); }

std::vector<int> all_gpu_sms(const SolveInput& input) {
    std::vector<int> out;
    for (const auto& t : input.targets)
        for (const auto& g : t.target.gpus) out.push_back(g.sm_major * 10 + g.sm_minor);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// Same-major SASS at or below the GPU's minor (8.6 runs on 8.9), among the archs both nvcc
// and torch's cpp_extension know.
std::optional<int> buildable_arch(const knowledge::Knowledge& k, const std::string& torch_series,
                                  const std::string& cuda, int sm) {
    auto nvcc = knowledge::nvcc_sm_targets(k, cuda);
    auto torch_names = knowledge::torch_cpp_extension_archs(k, torch_series);
    std::set<int> torch_knows;
    for (const auto& name : torch_names) {
        auto dot = name.find('.');
        if (dot == std::string::npos) continue;
        try {
            torch_knows.insert(std::stoi(name.substr(0, dot)) * 10 + std::stoi(name.substr(dot + 1)));
        } catch (...) {
        }
    }
    std::optional<int> best;
    for (int arch : nvcc) {
        if (arch / 10 != sm / 10 || arch > sm) continue;
        if (!torch_knows.empty() && !torch_knows.count(arch)) continue;
        if (!best || arch > *best) best = arch;
    }
    return best;
}

std::string Candidate::label() const {
    switch (kind) {
        case CandKind::conda: return record.name + " " + record.version + " (conda " + record.build + ")";
        case CandKind::pypi:
            return unread.empty() ? dist + " " + record.version + " (pypi)" : dist + " (a release whose metadata was not read)";
        case CandKind::source: return record.name + " " + record.version + " (git " + record.rev + ")";
        case CandKind::virtual_package: return "the machine's " + record.name + " " + record.version;
        case CandKind::system_nvcc: return "system nvcc " + record.version + " at " + record.url;
        case CandKind::system_compiler: return "system gcc " + record.version + " at " + record.url;
        case CandKind::extra: return solv_name.substr(solv_name.find(':') + 1) + " " + record.version;
    }
    return record.name;
}

bool Candidate::satisfies(const pep440::SpecifierSet& specifier, std::optional<bool> prereleases) const {
    if (pep440_version) return specifier.contains(*pep440_version, prereleases);
    return std::any_of(unread.begin(), unread.end(), [&](const pep440::Version& v) { return specifier.contains(v, prereleases); });
}

std::vector<std::string> pypi_dep_arguments(const std::string& requirement) {
    std::vector<std::string> out{"pypi\t" + requirement};
    try {
        auto req = pep508::Requirement::parse(requirement);
        for (const auto& e : req.extras) out.push_back("pypiextra\t" + pep508::normalize_name(e) + "\t" + requirement);
    } catch (const InputError&) {
    }
    return out;
}

std::vector<std::string> split_dep(const std::string& argument) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        auto tab = argument.find('\t', start);
        out.push_back(argument.substr(start, tab - start));
        if (tab == std::string::npos) break;
        start = tab + 1;
    }
    return out;
}

std::string describe_dep(const std::string& argument) {
    auto f = split_dep(argument);
    const std::string& kind = f[0];
    if ((kind == "pypi" || kind == "conda" || kind == "either") && f.size() > 1) return f[1];
    if (kind == "cudavariant" && f.size() > 1) return f[1] + " (the build for the CUDA the environment uses)";
    if (kind == "fact" && f.size() > 2) {
        if (f[1] == "driver") return "a driver that runs CUDA " + f[2];
        if (f[1] == "gpu") {
            std::string ptx = f.size() > 3 ? f[3] : "";
            std::string out = "kernels for every GPU of the target (its build carries SASS for";
            for (int sm : split_ints(f[2])) out += " " + sm_name(sm);
            out += ptx.empty() ? " and no PTX)" : " and PTX for compute_" + ptx + ")";
            return out;
        }
        if (f[1] == "extarch") return "an nvcc " + f[3] + " arch that torch " + f[2] + "'s cpp_extension accepts for every GPU";
        if (f[1] == "cpu") return "a CPU with " + f[2];
        if (f[1] == "advisory") return "nothing: advisory " + f[2] + " rules it out";
        if (f[1] == "unknown-build") return "a known CUDA variant: the knowledge base does not say which CUDA the plain PyPI " + f[2] + " wheel was built with";
    }
    if (kind == "source" && f.size() > 1) return f[1] + " from its git source";
    if (kind == "nvcc" && f.size() > 1) return "nvcc of CUDA " + f[1] + " for the repo's CUDA extensions";
    if (kind == "hostcc" && f.size() > 1) return "a host gcc that nvcc accepts (gcc <= " + f[1] + ")";
    if (kind == "torchbuild" && f.size() > 2)
        return f[1].empty() ? "a torch build for CUDA " + f[2] : "a torch " + f[1] + ".x build for CUDA " + f[2];
    if (kind == "advisory" && f.size() > 3 && f[2] == "cudaat") return "a CUDA build or toolkit with CUDA " + f[3] + " (advisory " + f[1] + ")";
    if (kind == "advisory" && f.size() > 2) return f[2] + " (advisory " + f[1] + ")";
    if (kind == "cudaat" && f.size() > 1) return "a CUDA build or toolkit with CUDA " + f[1];
    if (kind == "constrains" && f.size() > 1) return "a version outside " + f[1];
    if (kind == "otherdist" && f.size() > 1) return "another installed copy of " + f[1];
    if (kind == "feature" && f.size() > 1) return "a package that tracks the feature " + f[1] + " (conda's `features`)";
    if (kind == "pypiextra" && f.size() > 2) return f[2] + " with its extra " + f[1];
    if (kind == "exactly") return "its own release";
    return argument;
}

SolvPool::SolvPool(const PoolContext& ctx) : ctx_(ctx) {
    pool_ = pool_create();
    ns_ = pool_str2id(pool_, "envlock", 1);
    pool_setnamespacecallback(pool_, &SolvPool::namespace_callback, this);
    add_candidates();
    add_knowledge_clauses();
    add_to_pool();
}

SolvPool::~SolvPool() { pool_free(pool_); }

Id SolvPool::dep_id(const std::string& argument) {
    return pool_rel2id(pool_, ns_, pool_str2id(pool_, argument.c_str(), 1), REL_NAMESPACE, 1);
}

const Candidate* SolvPool::candidate(Id solvable) const {
    if (solvable < first_id_ || solvable >= first_id_ + static_cast<Id>(cands_.size())) return nullptr;
    return &cands_[solvable - first_id_];
}

Id SolvPool::namespace_callback(Pool* pool, void* data, Id name, Id evr) {
    auto* self = static_cast<SolvPool*>(data);
    if (name != self->ns_) return 0;
    auto ids = self->matching(pool_id2str(pool, evr));
    if (ids.empty()) return 0;
    if (ids.size() == 1 && ids[0] == SYSTEMSOLVABLE) return SYSTEMSOLVABLE;
    Queue q;
    queue_init(&q);
    for (Id id : ids) queue_push(&q, id);
    Id off = pool_queuetowhatprovides(pool, &q);
    queue_free(&q);
    return off;
}

std::vector<Id> SolvPool::matching(const std::string& argument) {
    if (auto it = cache_.find(argument); it != cache_.end()) return it->second;
    auto ids = compute(argument);
    cache_.emplace(argument, ids);
    return ids;
}

std::vector<Id> SolvPool::compute(const std::string& argument) {
    auto f = split_dep(argument);
    const std::string& kind = f[0];
    const auto& k = ctx_.input->knowledge;
    std::vector<Id> out;
    auto id_of = [&](size_t index) { return first_id_ + static_cast<Id>(index); };

    // stand_ins: whether a stand-in for unread versions may match. Not where the match is what a
    // candidate conflicts with (an advisory's other member): a stand-in binds to no advisory.
    auto pypi_matches = [&](const std::string& text, bool stand_ins = true) {
        std::vector<Id> ids;
        auto req = pep508::Requirement::parse(text);
        auto it = by_dist_.find(req.normalized_name);
        if (it == by_dist_.end()) return ids;
        // PEP 440: pre-releases only when the specifier names one, or nothing else matches.
        for (int pass = 0; pass < 2 && ids.empty(); ++pass) {
            std::optional<bool> pre = pass == 0 ? std::nullopt : std::optional<bool>(true);
            for (size_t i : it->second) {
                const auto& c = cands_[i];
                if (!req.url.empty() && c.kind != CandKind::source) continue;
                if ((stand_ins || c.unread.empty()) && c.satisfies(req.specifier, pre)) ids.push_back(id_of(i));
            }
        }
        return ids;
    };
    auto conda_matches = [&](const std::string& text, bool negate) {
        std::vector<Id> ids;
        auto ms = conda::MatchSpec::parse(text);
        auto it = by_conda_name_.find(ms.name);
        if (it == by_conda_name_.end()) return ids;
        for (size_t i : it->second) {
            const auto& c = cands_[i];
            if (!c.conda_version) continue;
            if (ms.matches(c.record, *c.conda_version) != negate) ids.push_back(id_of(i));
        }
        return ids;
    };

    if (kind == "pypi") return pypi_matches(f.at(1));
    // A CUDA-variant placeholder ("spconv-cuxxx==2.1.21"): every project that fills it, at the
    // versions the specifier allows.
    if (kind == "cudavariant") {
        auto req = pep508::Requirement::parse(f.at(1));
        auto placeholder = cuda_placeholder(req.normalized_name);
        if (!placeholder) return out;
        for (const auto& [dist, members] : by_dist_) {
            if (!fills_cuda_placeholder(*placeholder, dist)) continue;
            for (size_t i : members)
                if (cands_[i].kind == CandKind::pypi && cands_[i].satisfies(req.specifier, std::nullopt)) out.push_back(id_of(i));
        }
        return out;
    }
    if (kind == "conda") return conda_matches(f.at(1), false);
    if (kind == "constrains") return conda_matches(f.at(1), true);
    if (kind == "either") {
        std::set<Id> ids;
        try {
            for (Id id : pypi_matches(f.at(1))) ids.insert(id);
        } catch (const InputError&) {
        }
        try {
            for (Id id : conda_matches(f.at(1), false)) ids.insert(id);
        } catch (const InputError&) {
        }
        return {ids.begin(), ids.end()};
    }
    // "advisory\tID\tREQUIREMENT" or "advisory\tID\tcudaat\tSPEC": the other member of the pair.
    if (kind == "advisory") return f.at(2) == "cudaat" ? compute("cudaat\t" + f.at(3)) : pypi_matches(f.at(2), false);
    if (kind == "exactly") return {id_of(std::stoul(f.at(1)))};
    if (kind == "pypiextra") {
        auto req = pep508::Requirement::parse(f.at(2));
        auto it = extras_.find(req.normalized_name + "[" + f.at(1) + "]");
        if (it == extras_.end()) return out;
        for (int pass = 0; pass < 2 && out.empty(); ++pass) {
            std::optional<bool> pre = pass == 0 ? std::nullopt : std::optional<bool>(true);
            for (size_t i : it->second)
                if (cands_[i].satisfies(req.specifier, pre)) out.push_back(id_of(i));
        }
        return out;
    }
    if (kind == "feature") {
        for (size_t i = 0; i < cands_.size(); ++i) {
            const auto& tf = cands_[i].record.track_features;
            if (cands_[i].kind == CandKind::conda && std::find(tf.begin(), tf.end(), f.at(1)) != tf.end()) out.push_back(id_of(i));
        }
        return out;
    }
    if (kind == "otherdist") {
        if (auto it = by_dist_.find(f.at(1)); it != by_dist_.end())
            for (size_t i : it->second)
                if (cands_[i].kind == CandKind::pypi || cands_[i].kind == CandKind::source) out.push_back(id_of(i));
        return out;
    }
    if (kind == "cudaat") {
        auto spec = conda::VersionSpec::parse(f.at(1));
        for (size_t i = 0; i < cands_.size(); ++i) {
            const auto& c = cands_[i];
            std::string cuda;
            if (c.cuda) cuda = c.cuda->runtime;
            else if (c.kind == CandKind::system_nvcc || c.record.name == "cuda-nvcc" || c.record.name == "cudatoolkit")
                cuda = major_minor(c.record.version);
            auto v = conda::Version::try_parse(cuda);
            if (!cuda.empty() && v && spec.contains(*v)) out.push_back(id_of(i));
        }
        return out;
    }
    if (kind == "source") {
        if (auto it = by_dist_.find(f.at(1)); it != by_dist_.end())
            for (size_t i : it->second)
                if (cands_[i].kind == CandKind::source) out.push_back(id_of(i));
        return out;
    }
    if (kind == "nvcc") {
        for (size_t i : nvcc_providers_) {
            const auto& c = cands_[i];
            if (major_minor(c.record.version) == f.at(1)) out.push_back(id_of(i));
        }
        return out;
    }
    if (kind == "hostcc") {
        int newest = std::stoi(f.at(1));
        for (size_t i : compiler_providers_)
            if (cands_[i].compiler_major > 0 && cands_[i].compiler_major <= newest) out.push_back(id_of(i));
        return out;
    }
    if (kind == "torchbuild") {
        const std::string& series = f.at(1);
        const std::string& runtime = f.at(2);
        if (auto it = by_dist_.find("torch"); it != by_dist_.end())
            for (size_t i : it->second) {
                const auto& c = cands_[i];
                // torch's stand-in may hold that build among its unread versions: it stays a relaxation.
                if (!c.unread.empty()) {
                    out.push_back(id_of(i));
                    continue;
                }
                if (!c.cuda || c.cuda->runtime != runtime) continue;
                if (!series.empty() && major_minor(c.record.version.substr(0, c.record.version.find('+'))) != series) continue;
                out.push_back(id_of(i));
            }
        return out;
    }
    if (kind == "fact") {
        bool holds = true;
        const std::string& what = f.at(1);
        if (what == "driver") {
            for (const auto& t : ctx_.input->targets)
                if (!cpu_only(t.target) &&
                    (t.target.driver_version.empty() || !knowledge::driver_runs_cuda(k, t.target.driver_version, f.at(2))))
                    holds = false;
        } else if (what == "gpu") {
            knowledge::ArchList arch{split_ints(f.at(2)), f.size() > 3 ? split_ints(f[3]) : std::vector<int>{}};
            for (int sm : all_gpu_sms(*ctx_.input))
                if (!knowledge::arch_list_runs_on(arch, sm)) holds = false;
        } else if (what == "extarch") {
            for (int sm : all_gpu_sms(*ctx_.input))
                if (!buildable_arch(k, f.at(2), f.at(3), sm)) holds = false;
        } else if (what == "advisory" || what == "unknown-build") {
            holds = false;
        } else if (what == "cpu") {
            for (const auto& t : ctx_.input->targets)
                if (std::find(t.target.cpu_flags.begin(), t.target.cpu_flags.end(), f.at(2)) == t.target.cpu_flags.end())
                    holds = false;
        }
        if (holds) out.push_back(SYSTEMSOLVABLE);
        return out;
    }
    return out;
}

void SolvPool::add_candidates() {
    const SolveInput& in = *ctx_.input;
    const Target& t = ctx_.combined;
    const auto& k = in.knowledge;

    auto add_virtual = [&](const std::string& name, const std::string& version) {
        Candidate c;
        c.kind = CandKind::virtual_package;
        c.record.name = name;
        c.record.version = version;
        c.solv_name = name;
        c.conda_version = conda::Version::try_parse(version);
        if (c.conda_version) cands_.push_back(std::move(c));
    };
    if (!t.driver_cuda.empty()) add_virtual("__cuda", t.driver_cuda);
    if (!t.glibc.empty()) add_virtual("__glibc", t.glibc);
    // conda's virtual packages (conda/plugins/virtual_packages/{linux,osx}.py): __linux is the
    // kernel release, __osx the macOS version; "0" where the target does not say (conda's own
    // fallback for a kernel it cannot read), so a bare `__linux` holds and `__linux >=4.18` not.
    if (t.platform.rfind("linux", 0) == 0) {
        add_virtual("__linux", t.kernel.empty() ? "0" : linux_version(t.kernel));
        add_virtual("__unix", "0");
    } else if (t.platform.rfind("osx", 0) == 0) {
        add_virtual("__osx", t.osx.empty() ? "0" : t.osx);
        add_virtual("__unix", "0");
    } else if (t.platform.rfind("win", 0) == 0) {
        add_virtual("__win", "0");
    }

    // A machine's own toolkits and compilers: fixed, so in the highest-priority repo.
    auto system_tool = [](CandKind kind, const char* name, const std::string& version, const std::string& path) {
        Candidate c;
        c.kind = kind;
        c.record.name = name;
        c.record.version = version;
        c.record.url = path;
        c.solv_name = std::string("system:") + name;
        c.repo_priority = 1000;
        return c;
    };
    for (const auto& tk : t.toolkits) {
        Candidate c = system_tool(CandKind::system_nvcc, "nvcc", tk.version, tk.path);
        if (auto gcc = knowledge::newest_gcc_major(k, major_minor(tk.version)))
            c.deps.push_back("hostcc\t" + std::to_string(*gcc));
        nvcc_providers_.push_back(cands_.size());
        cands_.push_back(std::move(c));
    }
    std::set<int> seen_majors;
    for (const auto& cc : t.compilers) {
        if (cc.kind != "gcc" && cc.kind != "g++") continue;
        int major = major_of(cc.version);
        if (major == 0 || !seen_majors.insert(major).second) continue;
        Candidate c = system_tool(CandKind::system_compiler, "gcc", cc.version, cc.path);
        c.compiler_major = major;
        compiler_providers_.push_back(cands_.size());
        cands_.push_back(std::move(c));
    }

    // conda: strict channel priority drops a name from every channel below the first that has
    // it (conda's docs, "Strict channel priority"); what it drops is kept to explain with.
    // Flexible keeps every channel, the higher one in a higher libsolv repo priority, so it is
    // preferred and a lower one supplies a name only where the higher cannot (libmamba sets repo
    // priorities so). Disabled puts every channel in one repo priority: version decides.
    // Of one build offered as .conda and .tar.bz2, the .conda is taken (as conda and mamba do).
    std::set<std::string> names_in_higher;
    for (size_t ch = 0; ch < in.channels.size(); ++ch) {
        std::set<std::string> names_here;
        std::set<std::string> conda_builds;   // subdir/name-version-build offered as .conda
        auto build_key = [](const IndexRecord& r) { return r.subdir + "/" + r.name + "-" + r.version + "-" + r.build; };
        for (const auto& rec : in.channels[ch].records)
            if (rec.filename.size() > 6 && rec.filename.compare(rec.filename.size() - 6, 6, ".conda") == 0)
                conda_builds.insert(build_key(rec));
        for (const auto& rec : in.channels[ch].records) {
            if (in.channel_priority == ChannelPriority::strict && names_in_higher.count(rec.name)) {
                masked_.push_back({rec, ch});
                continue;
            }
            if (rec.filename.size() > 8 && rec.filename.compare(rec.filename.size() - 8, 8, ".tar.bz2") == 0 &&
                conda_builds.count(build_key(rec)))
                continue;
            auto version = conda::Version::try_parse(rec.version);
            if (!version) continue;
            names_here.insert(rec.name);
            Candidate c;
            c.kind = CandKind::conda;
            c.record = rec;
            c.solv_name = "conda:" + rec.name;
            c.dist = conda_dist_name(rec.name);
            c.conda_version = std::move(version);
            c.pep440_version = pep440::Version::try_parse(rec.version);
            c.cuda = cuda_build_of(rec);
            c.channel = static_cast<int>(ch);
            c.repo_priority = in.channel_priority == ChannelPriority::disabled ? 100 : 100 - static_cast<int>(ch);
            // conda's classic resolve: a record's `features` each need a package that tracks
            // the feature (track_features), e.g. pytorch *_cpu builds need `cpuonly`.
            for (const auto& f : rec.features) c.deps.push_back("feature\t" + f);
            for (const auto& d : rec.depends) c.deps.push_back("conda\t" + d);
            for (const auto& d : rec.constrains) c.conflicts.push_back("constrains\t" + d);
            if (!c.dist.empty()) c.conflicts.push_back("otherdist\t" + c.dist);
            if (c.dist == "torch" && c.cuda) c.arch = knowledge::torch_arch_list(k, rec.version, c.cuda->variant, "conda");
            if (rec.name == "cuda-nvcc") {
                if (auto gcc = knowledge::newest_gcc_major(k, major_minor(rec.version)))
                    c.deps.push_back("hostcc\t" + std::to_string(*gcc));
                nvcc_providers_.push_back(cands_.size());
            }
            if (is_conda_compiler(rec.name)) {
                c.compiler_major = major_of(rec.version);
                compiler_providers_.push_back(cands_.size());
            }
            cands_.push_back(std::move(c));
        }
        names_in_higher.insert(names_here.begin(), names_here.end());
    }

    // PyPI: per project and version, the best wheel this target runs, else the sdist.
    const wheel::TagRanks tags(wheel::compatible_tags(ctx_.python_minor, t.platform, t.glibc));
    // Files of one project share their Requires-Python: each distinct one is checked once.
    std::unordered_map<std::string, bool> python_allowed;
    auto python = pep440::Version::parse(ctx_.python_full);
    auto marker_env = pep508::MarkerEnv::for_target(ctx_.python_full, t.platform);
    // A file this target can install: its version and rank (a wheel's tag rank; an sdist ranks
    // after every wheel, 1 << 20); none when yanked, of an unreadable version or name, for
    // another Python, or of tags the target does not run.
    auto installable = [&](const IndexRecord& rec) -> std::optional<std::pair<pep440::Version, int>> {
        if (rec.yanked) return std::nullopt;
        auto version = pep440::Version::try_parse(rec.version);
        if (!version) return std::nullopt;
        if (!rec.requires_python.empty()) {
            auto [it, added] = python_allowed.try_emplace(rec.requires_python, true);
            if (added) {
                try {
                    it->second = pep440::SpecifierSet::parse(rec.requires_python).contains(python, true);
                } catch (const InputError&) {
                }
            }
            if (!it->second) return std::nullopt;
        }
        int rank = -1;
        try {
            if (rec.filename.size() > 4 && rec.filename.compare(rec.filename.size() - 4, 4, ".whl") == 0)
                rank = tags.best(wheel::WheelName::parse(rec.filename));
            else if (wheel::SdistName::try_parse(rec.filename))
                rank = 1 << 20;
        } catch (const InputError&) {
            return std::nullopt;
        }
        if (rank < 0) return std::nullopt;
        return std::make_pair(std::move(*version), rank);
    };
    std::map<std::tuple<std::string, std::string, bool>, std::pair<int, size_t>> best;  // (dist, version, torch-bound wheel) -> (rank, input index)
    for (size_t i = 0; i < in.pypi.size(); ++i) {
        const auto& rec = in.pypi[i];
        auto fit = installable(rec);
        if (!fit) continue;
        const auto& [version, rank] = *fit;
        // A wheel built against one torch (mmcv-full from a cu111/torch1.9.0 page) does not stand
        // for its release: the sdist of that release stays a candidate beside it, for any other
        // torch (built from source, ranked after every wheel of the project).
        bool torch_bound = rank < (1 << 20) && [&] {
            auto cb = cuda_build_of(rec);
            return cb && !cb->torch_series.empty();
        }();
        auto key = std::make_tuple(pep508::normalize_name(rec.name), version.str(), torch_bound);
        auto it = best.find(key);
        if (it == best.end() || rank < it->second.first) best[key] = {rank, i};
    }
    for (const auto& [key, chosen] : best) {
        const auto& rec = in.pypi[chosen.second];
        Candidate c;
        c.kind = CandKind::pypi;
        c.record = rec;
        c.solv_name = "pypi:" + std::get<0>(key);
        c.dist = std::get<0>(key);
        c.pep440_version = pep440::Version::parse(rec.version);
        std::string default_variant;
        if (c.dist == "torch") default_variant = torch_pypi_default_variant(k, rec);
        c.cuda = cuda_build_of(rec, default_variant);
        c.repo_priority = 200;
        // A plain torch wheel whose CUDA nobody recorded: do not guess what GPUs it runs on.
        if (c.dist == "torch" && !c.cuda && rec.version.find('+') == std::string::npos && default_variant != "cpu")
            c.deps.push_back("fact\tunknown-build\ttorch " + rec.version);
        if (c.dist == "torch" && c.cuda)
            c.arch = knowledge::torch_arch_list(k, c.pep440_version->public_version().str(), c.cuda->variant, "pip");
        // NVIDIA's nvcc wheel of CUDA 13 and later is a whole compiler: it provides the nvcc of
        // its CUDA, as conda's cuda-nvcc does.
        if (!knowledge::pypi_nvcc_home(c.dist, rec.version).empty()) {
            if (auto gcc = knowledge::newest_gcc_major(k, major_minor(rec.version))) c.deps.push_back("hostcc\t" + std::to_string(*gcc));
            nvcc_providers_.push_back(cands_.size());
        }
        for (const auto& d : rec.depends) {
            try {
                auto req = pep508::Requirement::parse(d);
                if (!req.applies(marker_env)) continue;
                for (auto& arg : pypi_dep_arguments(d)) c.deps.push_back(std::move(arg));
            } catch (const InputError&) {
                // An unparseable Requires-Dist line is the index's fault; pip skips it too.
            }
        }
        cands_.push_back(std::move(c));
    }

    // The versions no window read: one stand-in per project, through the same filters as the
    // files read (yanked, Requires-Python, tags), with no requirements of its own.
    std::map<std::string, std::set<pep440::Version>> unread;
    for (const auto& rec : in.unread)
        if (auto fit = installable(rec)) unread[pep508::normalize_name(rec.name)].insert(std::move(fit->first));
    for (auto& [dist, versions] : unread) {
        Candidate c;
        c.kind = CandKind::pypi;
        c.record.ecosystem = Ecosystem::pypi;
        c.record.name = dist;
        c.solv_name = "pypi:" + dist;
        c.dist = dist;
        c.unread.assign(versions.rbegin(), versions.rend());
        c.repo_priority = 200;
        cands_.push_back(std::move(c));
    }

    // A CUDA-variant placeholder of the spec ("spconv-cuxxx"): each project that fills it is a
    // build for the CUDA its name says, so it needs a driver that runs that CUDA and, where the
    // spec asks for torch, the torch build of that CUDA ("xxx" is the CUDA the environment uses).
    std::vector<CudaPlaceholder> placeholders;
    bool wants_torch = false;
    for (const auto& r : in.spec.requirements) {
        if (r.ecosystem == "conda") {
            try {
                wants_torch = wants_torch || conda::MatchSpec::parse(r.text).name == "pytorch";
            } catch (const InputError&) {
            }
            continue;
        }
        try {
            auto req = pep508::Requirement::parse(r.text);
            if (auto p = cuda_placeholder(req.normalized_name)) placeholders.push_back(*p);
            wants_torch = wants_torch || req.normalized_name == "torch" || req.normalized_name == "pytorch";
        } catch (const InputError&) {
        }
    }
    for (auto& c : cands_) {
        if (c.kind != CandKind::pypi || !c.unread.empty()) continue;
        for (const auto& p : placeholders) {
            auto runtime = fills_cuda_placeholder(p, c.dist);
            if (!runtime) continue;
            if (!c.cuda) c.cuda = CudaBuild{*runtime, variant_of_cuda_runtime(*runtime), ""};
            if (wants_torch) c.deps.push_back("torchbuild\t\t" + *runtime);
            break;
        }
    }

    for (const auto& rec : in.sources) {
        Candidate c;
        c.kind = CandKind::source;
        c.record = rec;
        c.dist = pep508::normalize_name(rec.name);
        c.solv_name = "source:" + c.dist;
        c.pep440_version = pep440::Version::try_parse(rec.version);
        c.repo_priority = 300;
        for (const auto& d : rec.depends) {
            try {
                if (pep508::Requirement::parse(d).applies(marker_env))
                    for (auto& arg : pypi_dep_arguments(d)) c.deps.push_back(std::move(arg));
            } catch (const InputError&) {
            }
        }
        cands_.push_back(std::move(c));
    }

    // Extras: for each extra some requirement asks of a project, a candidate per release that
    // requires that release and the Requires-Dist lines the extra turns on (PEP 508 `extra`).
    std::map<std::string, std::set<std::string>> asked;   // dist -> extras
    auto note_extras = [&](const std::string& text) {
        try {
            auto req = pep508::Requirement::parse(text);
            for (const auto& e : req.extras) asked[req.normalized_name].insert(pep508::normalize_name(e));
        } catch (const InputError&) {
        }
    };
    for (const auto& r : in.spec.requirements) note_extras(r.text);
    for (const auto& c : cands_)
        if (c.kind == CandKind::pypi || c.kind == CandKind::source)
            for (const auto& d : c.record.depends) note_extras(d);
    size_t bases = cands_.size();
    for (size_t i = 0; i < bases; ++i) {
        if (cands_[i].kind != CandKind::pypi && cands_[i].kind != CandKind::source) continue;
        auto it = asked.find(cands_[i].dist);
        if (it == asked.end()) continue;
        for (const auto& e : it->second) {
            Candidate x;
            x.kind = CandKind::extra;
            x.record = cands_[i].record;
            x.dist = "";
            x.solv_name = "extra:" + cands_[i].dist + "[" + e + "]";
            x.pep440_version = cands_[i].pep440_version;
            x.unread = cands_[i].unread;
            x.repo_priority = cands_[i].repo_priority;
            x.deps.push_back("exactly\t" + std::to_string(i));
            for (const auto& d : cands_[i].record.depends) {
                try {
                    auto req = pep508::Requirement::parse(d);
                    if (req.applies(marker_env, {e}) && !req.applies(marker_env))
                        for (auto& arg : pypi_dep_arguments(d)) x.deps.push_back(std::move(arg));
                } catch (const InputError&) {
                }
            }
            extras_[cands_[i].dist + "[" + e + "]"].push_back(cands_.size());
            cands_.push_back(std::move(x));
        }
    }

    for (size_t i = 0; i < cands_.size(); ++i) {
        const auto& c = cands_[i];
        if (c.kind == CandKind::conda || c.kind == CandKind::virtual_package) by_conda_name_[c.record.name].push_back(i);
        if (!c.dist.empty()) by_dist_[c.dist].push_back(i);
    }
}

void SolvPool::add_knowledge_clauses() {
    const SolveInput& in = *ctx_.input;
    const auto& k = in.knowledge;
    auto advisories = knowledge::advisories(k);
    std::set<std::string> allowed(in.spec.allow_advisories.begin(), in.spec.allow_advisories.end());

    for (auto& c : cands_) {
        if (c.kind == CandKind::virtual_package || c.kind == CandKind::system_nvcc || c.kind == CandKind::system_compiler)
            continue;
        if (c.cuda) {
            c.deps.push_back("fact\tdriver\t" + c.cuda->runtime);
            if (c.dist == "torch") {
                if (c.arch) {
                    std::string ptx = c.arch->ptx.empty() ? "" : "\t" + join_ints(c.arch->ptx);
                    c.deps.push_back("fact\tgpu\t" + join_ints(c.arch->sass) + ptx);
                }
                if (ctx_.cuda_extensions) {
                    std::string series = major_minor(c.record.version.substr(0, c.record.version.find('+')));
                    c.deps.push_back("nvcc\t" + c.cuda->runtime);
                    c.deps.push_back("fact\textarch\t" + series + "\t" + c.cuda->runtime);
                }
            } else if (c.dist == "torchvision" || c.dist == "torchaudio" || c.dist == "mmcv-full" || c.dist == "mmcv") {
                c.deps.push_back("torchbuild\t" + c.cuda->torch_series + "\t" + c.cuda->runtime);
            }
        }
        if (!c.pep440_version || c.dist.empty()) continue;
        for (const auto& req : knowledge::gate_requirements(k, c.dist, c.record.version)) c.deps.push_back("pypi\t" + req);
    }
    for (const auto& adv : advisories) {
        if (allowed.count(adv.id)) continue;
        auto rule = advisory_rule(adv);
        if (!rule) continue;
        apply_advisory(adv.id, *rule);
    }
}

// An advisory becomes clauses when its static conditions hold (the spec builds CUDA
// extensions, uses numba.cuda, a GPU's sm …). Its members are the PEP 508 requirements of
// `when`, plus a CUDA condition ("cuda>=11.2") that selects CUDA builds and toolkits.
std::optional<SolvPool::AdvisoryRule> SolvPool::advisory_rule(const knowledge::Advisory& adv) const {
    AdvisoryRule rule;
    std::stringstream needs(adv.needs);
    std::string cond;
    auto sms = all_gpu_sms(*ctx_.input);
    while (std::getline(needs, cond, ',')) {
        cond.erase(0, cond.find_first_not_of(' '));
        cond.erase(cond.find_last_not_of(' ') + 1);
        if (cond.empty()) continue;
        if (cond == "cuda-extensions") {
            if (!ctx_.cuda_extensions) return std::nullopt;
        } else if (cond.rfind("cuda", 0) == 0 && cond.size() > 4 && std::string("<>=!").find(cond[4]) != std::string::npos) {
            rule.members.push_back("cudaat\t" + cond.substr(4));
        } else if (cond.rfind("sm", 0) == 0 && cond.size() > 2 && std::string("<>=!").find(cond[2]) != std::string::npos) {
            auto spec = conda::VersionSpec::parse(cond.substr(2));
            bool any = std::any_of(sms.begin(), sms.end(),
                                   [&](int sm) { return spec.contains(conda::Version::parse(std::to_string(sm))); });
            if (!any) return std::nullopt;
        } else if (!ctx_.input->uses.count(cond)) {
            return std::nullopt;   // numba-cuda, code-uses:…: only when the spec says the code does
        }
    }
    rule.members.insert(rule.members.begin(), adv.when.begin(), adv.when.end());
    // Members beyond two must be facts the spec states outright (a requested name), since a
    // conflict clause ties only two packages.
    while (rule.members.size() > 2) {
        if (rule.members.back().rfind("cudaat\t", 0) == 0) return std::nullopt;
        std::string name = pep508::Requirement::parse(rule.members.back()).normalized_name;
        bool requested = std::any_of(ctx_.input->spec.requirements.begin(), ctx_.input->spec.requirements.end(),
                                     [&](const SpecRequirement& r) {
                                         try {
                                             return pep508::Requirement::parse(r.text).normalized_name == name;
                                         } catch (const InputError&) {
                                             return false;
                                         }
                                     });
        if (!requested) return std::nullopt;
        rule.members.pop_back();
    }
    if (rule.members.empty()) return std::nullopt;
    return rule;
}

void SolvPool::apply_advisory(const std::string& id, const AdvisoryRule& rule) {
    // Runs before the solvables exist (first_id_ is still 0), so ids here are indexes; the
    // cache is not used, and is cleared once the pool is built.
    const std::string& first = rule.members[0];
    for (Id p : compute(first.rfind("cudaat\t", 0) == 0 ? first : "pypi\t" + first)) {
        if (p == SYSTEMSOLVABLE && first_id_ != 0) continue;
        Candidate& c = cands_[static_cast<size_t>(p - first_id_)];
        // A stand-in is many versions, some perhaps outside the advisory: it stays unbound.
        if (!c.unread.empty()) continue;
        if (rule.members.size() == 1)
            c.deps.push_back("fact\tadvisory\t" + id);
        else
            c.conflicts.push_back("advisory\t" + id + "\t" + rule.members[1]);
    }
}

namespace {

// The best version a conda dependency can reach: the candidates it selects, ranked as
// candidates are (no track_features first, then the higher version).
struct Reach {
    bool tracked = false;
    conda::Version version;
};

// <0 when a is better than b. A dependency that reaches something beats one that reaches nothing.
int compare_reach(const std::optional<Reach>& a, const std::optional<Reach>& b) {
    if (a.has_value() != b.has_value()) return a ? -1 : 1;
    if (!a) return 0;
    if (a->tracked != b->tracked) return a->tracked ? 1 : -1;
    return -a->version.compare(b->version);
}

}  // namespace

void SolvPool::add_to_pool() {
    // Our preference becomes libsolv's: within one name, a higher EVR is a better candidate.
    std::map<std::string, std::vector<size_t>> by_name;
    for (size_t i = 0; i < cands_.size(); ++i) by_name[cands_[i].solv_name].push_back(i);
    std::vector<std::string> evr(cands_.size());

    std::unordered_map<std::string, std::optional<Reach>> reach_cache;
    auto reach = [&](const std::string& spec) -> std::optional<Reach> {
        if (auto it = reach_cache.find(spec); it != reach_cache.end()) return it->second;
        std::optional<Reach> best;
        try {
            auto ms = conda::MatchSpec::parse(spec);
            if (auto it = by_conda_name_.find(ms.name); it != by_conda_name_.end())
                for (size_t i : it->second) {
                    const auto& c = cands_[i];
                    if (!c.conda_version || !ms.matches(c.record, *c.conda_version)) continue;
                    Reach r{!c.record.track_features.empty(), *c.conda_version};
                    if (compare_reach(r, best) < 0) best = r;
                }
        } catch (const InputError&) {
        }
        reach_cache.emplace(spec, best);
        return best;
    };
    // conda, as libsolv's conda mode orders candidates (policy.c, prune_to_highest_prio then
    // prune_to_best_version): the higher channel first (unless channel priority is disabled),
    // fewer track_features, the higher version, the higher channel when disabled (conda's
    // "Managing channels": build numbers are not comparable across channels), the higher build number.
    const bool by_channel_first = ctx_.input->channel_priority != ChannelPriority::disabled;
    auto conda_primary = [by_channel_first](const Candidate& x, const Candidate& y) {
        if (by_channel_first && x.channel != y.channel) return x.channel < y.channel ? -1 : 1;
        if (x.record.track_features.size() != y.record.track_features.size())
            return x.record.track_features.size() < y.record.track_features.size() ? -1 : 1;
        if (int cmp = x.conda_version->compare(*y.conda_version); cmp != 0) return cmp > 0 ? -1 : 1;
        if (x.channel != y.channel) return x.channel < y.channel ? -1 : 1;
        if (x.record.build_number != y.record.build_number) return x.record.build_number > y.record.build_number ? -1 : 1;
        return 0;
    };

    auto is_sdist = [](const Candidate& c) {
        return c.kind == CandKind::pypi && !(c.record.filename.size() > 4 && c.record.filename.compare(c.record.filename.size() - 4, 4, ".whl") == 0);
    };
    for (auto& [name, members] : by_name) {
        // A project with wheels built against one torch (mmcv-full, torchvision …): a wheel that
        // fits is taken over building any release from source (pip's --prefer-binary).
        bool torch_bound = std::any_of(members.begin(), members.end(), [&](size_t m) {
            const auto& c = cands_[m];
            return c.kind == CandKind::pypi && !is_sdist(c) && c.cuda && !c.cuda->torch_series.empty();
        });
        std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) {
            const auto& x = cands_[a];
            const auto& y = cands_[b];
            if (x.kind == CandKind::conda && y.kind == CandKind::conda) {
                if (int cmp = conda_primary(x, y); cmp != 0) return cmp < 0;
                return x.record.filename < y.record.filename;
            }
            if (x.unread.empty() != y.unread.empty()) return x.unread.empty();   // a stand-in last
            if (torch_bound && is_sdist(x) != is_sdist(y)) return !is_sdist(x);
            if (x.pep440_version && y.pep440_version && *x.pep440_version != *y.pep440_version)
                return *x.pep440_version > *y.pep440_version;
            if (x.conda_version && y.conda_version && x.conda_version->compare(*y.conda_version) != 0)
                return x.conda_version->compare(*y.conda_version) > 0;
            return x.record.url < y.record.url;
        });
        // Builds equal so far: the one whose dependencies reach higher versions, compared over
        // the dependency names they all share in name order, then the newer timestamp (rattler's
        // conda_sorting.rs; conda-forge's libsolv patch conda_variant_priorization, which
        // Debian's libsolv lacks). Filename last, so the order is total and the lock stable.
        for (size_t begin = 0; begin < members.size();) {
            size_t end = begin + 1;
            const auto& first = cands_[members[begin]];
            while (end < members.size() && first.kind == CandKind::conda && cands_[members[end]].kind == CandKind::conda &&
                   conda_primary(first, cands_[members[end]]) == 0)
                ++end;
            if (end - begin > 1) {
                std::map<size_t, std::map<std::string, std::vector<std::string>>> deps_by_name;
                std::map<std::string, size_t> seen;
                for (size_t m = begin; m < end; ++m) {
                    auto& mine = deps_by_name[members[m]];
                    for (const auto& d : cands_[members[m]].record.depends) {
                        try {
                            mine[conda::MatchSpec::parse(d).name].push_back(d);
                        } catch (const InputError&) {
                        }
                    }
                    for (const auto& [n, specs] : mine) ++seen[n];
                }
                std::vector<std::string> shared;
                for (const auto& [n, count] : seen)
                    if (count == end - begin) shared.push_back(n);
                std::map<size_t, std::vector<std::optional<Reach>>> key;
                for (size_t m = begin; m < end; ++m) {
                    auto& k = key[members[m]];
                    for (const auto& n : shared) {
                        // Several requirements on one name: the most restrictive of their reaches.
                        std::optional<Reach> least;
                        bool any = false;
                        for (const auto& spec : deps_by_name[members[m]][n]) {
                            auto r = reach(spec);
                            if (!any || compare_reach(r, least) > 0) least = r;
                            any = true;
                        }
                        k.push_back(least);
                    }
                }
                std::stable_sort(members.begin() + static_cast<long>(begin), members.begin() + static_cast<long>(end), [&](size_t a, size_t b) {
                    const auto& ka = key[a];
                    const auto& kb = key[b];
                    for (size_t i = 0; i < ka.size(); ++i)
                        if (int cmp = compare_reach(ka[i], kb[i]); cmp != 0) return cmp < 0;
                    if (cands_[a].record.timestamp != cands_[b].record.timestamp) return cands_[a].record.timestamp > cands_[b].record.timestamp;
                    return cands_[a].record.filename < cands_[b].record.filename;
                });
            }
            begin = end;
        }
        for (size_t rank = 0; rank < members.size(); ++rank) {
            cands_[members[rank]].rank = static_cast<int>(members.size() - rank);
            evr[members[rank]] = std::to_string(members.size() - rank);
        }
    }

    std::map<int, Repo*> repos;
    Repo* installed = repo_create(pool_, "target");
    pool_set_installed(pool_, installed);
    auto repo_for = [&](const Candidate& c) {
        if (c.kind == CandKind::virtual_package) return installed;
        auto it = repos.find(c.repo_priority);
        if (it != repos.end()) return it->second;
        Repo* r = repo_create(pool_, ("priority-" + std::to_string(c.repo_priority)).c_str());
        r->priority = c.repo_priority;
        repos[c.repo_priority] = r;
        return r;
    };
    // Solvable ids must be consecutive so candidate(id) is an index: create repos first.
    for (const auto& c : cands_) repo_for(c);
    for (size_t i = 0; i < cands_.size(); ++i) {
        const auto& c = cands_[i];
        Repo* repo = repo_for(c);
        Id p = repo_add_solvable(repo);
        if (i == 0) first_id_ = p;
        if (p != first_id_ + static_cast<Id>(i)) throw std::logic_error("solvable ids are not consecutive");
        Solvable* s = pool_id2solvable(pool_, p);
        s->name = pool_str2id(pool_, c.solv_name.c_str(), 1);
        s->evr = pool_str2id(pool_, evr[i].c_str(), 1);
        s->arch = ARCH_NOARCH;
        s->provides = repo_addid_dep(repo, s->provides, pool_rel2id(pool_, s->name, s->evr, REL_EQ, 1), 0);
        for (const auto& d : c.deps) s->requires_ = repo_addid_dep(repo, s->requires_, dep_id(d), 0);
        for (const auto& d : c.conflicts) s->conflicts = repo_addid_dep(repo, s->conflicts, dep_id(d), 0);
    }
    cache_.clear();
    for (auto& [prio, repo] : repos) repo_internalize(repo);
    repo_internalize(installed);
    pool_createwhatprovides(pool_);
}

}  // namespace envlock::solve_detail
