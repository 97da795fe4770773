#include "resolver/workflow/resolve_project.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>

#include "fetch/documents.hpp"
#include "fetch/index_closure.hpp"
#include "fetch/url.hpp"
#include "fetch/files.hpp"
#include "fetch/git_source.hpp"
#include "fetch/index_sources.hpp"
#include "fetch/transport.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/infer/infer.hpp"
#include "resolver/infer/recipe.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/specs/cuda_build.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/wheel.hpp"
#include "resolver/solve/solve.hpp"
#include "resolver/workflow/account.hpp"
#include "resolver/workflow/check_lock.hpp"
#include "resolver/workflow/reuse.hpp"
#include "resolver/specs/close_names.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/lock/spec_io.hpp"
#include "resolver/lock/target_io.hpp"

namespace envlock {

namespace fs = std::filesystem;

namespace {

const char* kDefaultIndex = "https://pypi.org/simple";

// Reports a stage to the options' on_step: running updates, then one finished report.
class StageReport {
public:
    StageReport(const ResolveOptions& o, ResolveStep::Stage stage) : o_(o), start_(std::chrono::steady_clock::now()) {
        step_.stage = stage;
    }
    void running() const {
        if (o_.on_step) o_.on_step(step_);
    }
    void finished() {
        if (!o_.on_step) return;
        step_.finished = true;
        step_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        o_.on_step(step_);
    }
    ResolveStep step_;

private:
    const ResolveOptions& o_;
    std::chrono::steady_clock::time_point start_;
};

bool looks_like_lock(const std::string& text) {
    return text.find("\npackages:") != std::string::npos && text.find("content-hash:") != std::string::npos;
}

std::optional<Lock> existing_lock(const std::string& path, const fs::path& cache_dir, std::optional<ResolveMemo>& memo) {
    memo.reset();
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    std::string text = read_text_file(path, "lock");
    // The file is the one the memo was made from: its lock, read without YAML.
    if (auto m = read_memo(cache_dir, path, text)) {
        memo = std::move(m);
        return memo->lock;
    }
    return read_lock(text, path);
}

bool is_pypi_requirement(const SpecRequirement& r) {
    if (r.ecosystem == "conda") return false;
    try {
        pep508::Requirement::parse(r.text);
        return true;
    } catch (const InputError&) {
        return false;
    }
}

std::string python_of(const Spec& spec) {
    if (!spec.python.empty() && std::isdigit(static_cast<unsigned char>(spec.python[0]))) return spec.python;
    for (const auto& r : spec.requirements) {
        if (r.ecosystem == "pypi") continue;
        try {
            auto ms = conda::MatchSpec::parse(r.text);
            if (ms.name != "python") continue;
            std::string v = ms.version.str();
            v.erase(0, v.find_first_of("0123456789"));
            auto end = v.find_first_not_of("0123456789.");
            v = v.substr(0, end);
            while (!v.empty() && v.back() == '.') v.pop_back();
            if (!v.empty()) return v;
        } catch (const InputError&) {
        }
    }
    return "";
}

bool bare_version(const std::string& v) {
    return !v.empty() && std::isdigit(static_cast<unsigned char>(v[0])) &&
           std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }) &&
           v.back() != '.';
}

// The spec's constraints on Python, each as a conda MatchSpec ("python >=3.9") with the words
// that name it for a user ("requires-python >=3.9 (pyproject.toml:4)").
std::vector<std::pair<std::string, conda::MatchSpec>> python_constraints(const Spec& spec) {
    std::vector<std::pair<std::string, conda::MatchSpec>> out;
    for (const auto& r : spec.requirements) {
        if (r.text.substr(0, r.text.find_first_of(" =<>!~[;@")) != "python") continue;
        std::string where = format_provenance(r.from);
        std::string said = r.text + (where.empty() ? "" : " (" + where + ")");
        try {
            if (r.ecosystem != "conda") {
                auto req = pep508::Requirement::parse(r.text);
                out.emplace_back(said, conda::MatchSpec::parse("python " + (req.specifier.empty() ? std::string("*") : req.specifier.str())));
                continue;
            }
        } catch (const InputError&) {
        }
        try {
            out.emplace_back(said, conda::MatchSpec::parse(r.text));
        } catch (const InputError&) {
        }
    }
    if (!spec.python.empty()) {
        std::string where = format_provenance(spec.python_from);
        std::string said = "python " + spec.python + (where.empty() ? "" : " (" + where + ")");
        out.emplace_back(said, conda::MatchSpec::parse("python " + (bare_version(spec.python) ? spec.python + ".*" : spec.python)));
    }
    return out;
}

bool python_allowed(const std::vector<std::pair<std::string, conda::MatchSpec>>& constraints, const std::string& version) {
    auto v = conda::Version::try_parse(version);
    return v && std::all_of(constraints.begin(), constraints.end(), [&](const auto& c) { return c.second.matches_version(*v); });
}

std::string major_minor_of(const std::string& version) {
    auto first = version.find('.');
    auto second = first == std::string::npos ? std::string::npos : version.find('.', first + 1);
    return version.substr(0, second);
}

// The Python a venv spec is solved for, in uv's order: --python (already in the spec), an exact
// version the spec names (.python-version, a Dockerfile's FROM python:X.Y, by hand), the previous
// lock's when the spec still allows it, else the interpreters this machine has that the spec's
// constraints (requires-python) allow, newest first; the solve takes the first under which
// every package's Requires-Python holds. Refused here, before any index is read, when none is left.
struct PythonChoice {
    std::vector<std::string> versions;   // to try, as the solve's venv_pythons
    std::string from;                    // where the choice comes from, for the lock
};

PythonChoice choose_venv_python(const Spec& spec, const std::optional<Lock>& previous, const ResolveOptions& o) {
    PythonChoice choice;
    if (bare_version(spec.python)) {
        choice.versions = {spec.python};
        std::string where = format_provenance(spec.python_from);
        choice.from = where.empty() ? "spec" : where;
        return choice;
    }
    auto constraints = python_constraints(spec);
    if (previous && previous->python && python_allowed(constraints, previous->python->version) && !o.update_all) {
        choice.versions = {previous->python->version};
        choice.from = previous->python->from;
        return choice;
    }
    std::vector<std::string> found = o.interpreters ? o.interpreters() : std::vector<std::string>{};
    std::set<std::string> minors;
    for (const auto& v : found)
        if (python_allowed(constraints, v)) minors.insert(major_minor_of(v));
    choice.versions.assign(minors.begin(), minors.end());
    std::string asked;
    for (const auto& [said, ms] : constraints) asked += (asked.empty() ? "" : ", ") + said;
    if (choice.versions.empty()) {
        std::string have;
        for (const auto& v : found) have += (have.empty() ? "" : ", ") + v;
        std::string why = "its PyPI requirements need a Python, and ";
        why += asked.empty() ? std::string("the spec names none") : "the spec asks for " + asked;
        why += have.empty() ? "; no Python interpreter was found on this machine (PATH, /usr/local/bin, /usr/bin, pyenv, uv)"
                            : "; this machine has Python " + have;
        why += ". Say which: `envlock resolve --python X.Y`, or write X.Y to .python-version";
        if (have.empty()) throw EnvironmentError(why);
        throw UnmetError(why);
    }
    choice.from = "the newest Python on this machine that " + (asked.empty() ? std::string() : "satisfies " + asked + " and ") +
                  "every package's Requires-Python allows";
    return choice;
}

// Does the spec fix one Python minor ("3.10", `python=3.10`, `python 3.10.*`, `python==3.10.12`)?
bool single_python_minor(const Spec& spec) {
    auto exact = [](std::string v) {
        while (!v.empty() && (v[0] == '=' || v[0] == ' ')) v.erase(0, 1);
        if (v.size() > 2 && v.compare(v.size() - 2, 2, ".*") == 0) v.resize(v.size() - 2);
        return !v.empty() && v.find('.') != std::string::npos &&
               std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
    };
    if (!spec.python.empty()) return exact(spec.python);
    for (const auto& r : spec.requirements) {
        if (r.ecosystem == "pypi") continue;
        try {
            auto ms = conda::MatchSpec::parse(r.text);
            if (ms.name == "python" && exact(ms.version.str())) return true;
        } catch (const InputError&) {
        }
    }
    return false;
}

// "v0.17.1" -> "0.17.1"; a commit or branch -> "0+g<first 7>", which any unversioned
// requirement accepts.
std::string version_of_rev(const std::string& rev) {
    std::string v = rev;
    if (!v.empty() && (v[0] == 'v' || v[0] == 'V')) v.erase(0, 1);
    if (pep440::Version::try_parse(v)) return pep440::Version::parse(v).str();
    std::string tag;
    for (char c : rev)
        if (std::isalnum(static_cast<unsigned char>(c))) tag.push_back(static_cast<char>(std::tolower(c)));
    return "0+g" + (tag.empty() ? std::string("head") : tag.substr(0, 7));
}

// Adds what a flag asked for to a list in the spec, once each, sorted.
void remember_in(std::vector<std::string>& list, const std::set<std::string>& added) {
    for (const auto& a : added)
        if (std::find(list.begin(), list.end(), a) == list.end()) list.push_back(a);
    std::sort(list.begin(), list.end());
}

// -c/-i/-f on the command line, remembered in the spec so a re-resolve and `check` see them.
void add_sources(Spec& spec, const ResolveOptions& o) {
    std::vector<std::string> channels;
    for (const auto& c : o.channels)
        if (std::find(channels.begin(), channels.end(), c) == channels.end()) channels.push_back(c);
    for (const auto& c : spec.channels)
        if (std::find(channels.begin(), channels.end(), c) == channels.end()) channels.push_back(c);
    spec.channels = std::move(channels);
    auto append = [](std::vector<std::string>& list, const std::vector<std::string>& added) {
        for (const auto& a : added)
            if (std::find(list.begin(), list.end(), a) == list.end()) list.push_back(a);
    };
    append(spec.indexes, o.indexes);
    append(spec.find_links, o.find_links);
}

// A source the existing lock already pinned to a commit keeps that commit, as locked versions
// do (minimal change), with the name and requirements it was locked with: asking the remote
// again costs a round trip per source and could move a branch under the user, and offline
// it is the only way. --update NAME or --update-all asks again.
std::optional<LockedPackage> previous_source(const std::optional<Lock>& previous, const SpecSource& s, const ResolveOptions& o) {
    if (!previous || o.update_all) return std::nullopt;
    for (const auto& p : previous->packages)
        if (p.kind == Ecosystem::source && p.url == s.git && p.build == s.rev && is_git_commit(p.rev)) {
            if (o.update.count(s.name) || o.update.count(p.name)) return std::nullopt;
            return p;
        }
    return std::nullopt;
}

struct SourceRead {
    IndexRecord record;
    bool depends_known = true;
    std::string error;     // not lockable: why
};

// One git source: its commit, then its packaging files at that commit.
// "--mirror, /srv/mirror/mirrors.yaml": where the mirror rules in use were written, in order.
std::string mirror_origins(const fetch::Mirrors& mirrors) {
    std::vector<std::string> seen;
    for (const auto& r : mirrors.rules)
        if (std::find(seen.begin(), seen.end(), r.origin) == seen.end()) seen.push_back(r.origin);
    std::string out;
    for (const auto& o : seen) out += (out.empty() ? "" : ", ") + o;
    return out;
}

SourceRead read_source(const SpecSource& s, const std::optional<LockedPackage>& kept, const fetch::FetchContext& ctx) {
    SourceRead out;
    IndexRecord& r = out.record;
    r.ecosystem = Ecosystem::source;
    r.name = s.name;
    r.git = s.git;
    r.build = s.rev;
    r.version = version_of_rev(s.rev);
    std::string asked = s.rev.empty() ? "HEAD" : s.rev;
    if (kept) {
        r.rev = kept->rev;
        r.name = kept->name;
        r.depends = kept->depends;
        out.depends_known = !kept->depends_unknown;
        r.depends_known = out.depends_known;
        return out;
    }
    std::string url = ctx.mirrors.apply(s.git);
    auto commit = ctx.offline ? std::optional<std::string>() : resolve_git_rev(url, asked);
    if (!commit) {
        out.error = s.name + ": " + s.git + (url != s.git ? " (mirrored to " + url + ")" : std::string()) + ": " +
                    (ctx.offline ? "offline, and no previous lock pinned " + asked + " to a commit"
                                 : "cannot reach it, or it has no " + asked);
        // Behind a firewall or on a mirror the usual cause is a mirror that does not cover this
        // source: say which rules are in use and how to add one.
        if (!ctx.offline && url == s.git)
            out.error += ctx.mirrors.rules.empty()
                             ? "; without network access, point it at a local clone: --mirror " + s.git + "=/path/to/clone, or a mirrors file (--mirrors-file, ENVLOCK_MIRRORS)"
                             : "; no mirror rule covers it (rules in use from " + mirror_origins(ctx.mirrors) + "): add --mirror " + s.git +
                                   "=/path/to/clone, or a line for it in the mirrors file";
        else if (!ctx.offline)
            out.error += "; the mirror has no repository there, or not that revision";
        return out;
    }
    r.rev = *commit;
    auto files = ctx.offline ? std::nullopt : git_packaging_files(url, *commit, asked, source_project_dir(s), ctx.cache_dir);
    if (!files) {
        out.error = s.name + ": " + s.git + ": commit " + *commit + " could not be fetched to read its setup files";
        return out;
    }
    auto pkg = read_package_requirements(*files);
    // Known by the distribution name its setup files declare (mmdetection3d's is mmdet3d), so
    // the knowledge base's gates and advisories on that name apply.
    if (!pkg.name.empty()) r.name = pkg.name;
    r.depends = pkg.requires_dist;
    r.requires_python = pkg.requires_python;
    out.depends_known = pkg.known;
    r.depends_known = pkg.known;
    return out;
}

// The leading name of a requirement line, as far as it reads ("torch" of "torch=>1.9").
std::string leading_name(const std::string& text) {
    auto end = text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
    return text.substr(0, end);
}

// Lines inference could not read as requirements: the spec cannot be resolved as if they were
// not there. Each is named with its file:line; --allow-missing NAME lets one go.
void refuse_unreadable(const Spec& spec) {
    std::string msg;
    for (const auto& n : spec.notes) {
        if (n.kind != "unreadable" || allowed_missing(spec, leading_name(n.text))) continue;
        std::string where = format_provenance(n.from);
        msg += (where.empty() ? "spec" : where) + ": \"" + n.text + "\": " + n.why + "\n";
    }
    if (!msg.empty())
        throw InputError(msg + "fix these lines (or go on without one: --allow-missing NAME)");
}

// What the spec alone can refuse is refused before anything is fetched: a requirement that
// reads as neither PEP 508 nor a conda MatchSpec, and PyPI requirements with no Python named
// and no channel that could offer one (the solve would say the same after every fetch).
// Unknown GPU names are refused earlier still, when the targets are read.
void refuse_before_fetching(const Spec& spec, const std::vector<std::string>& channels, bool venv_python_chosen) {
    bool wants_python = !spec.sources.empty() || !spec.python.empty(), names_python = !spec.python.empty();
    for (const auto& r : spec.requirements) {
        std::string where = format_provenance(r.from);
        try {
            bool conda = r.ecosystem == "conda";
            if (!conda) {
                try {
                    auto req = pep508::Requirement::parse(r.text);
                    names_python = names_python || req.normalized_name == "python";
                    wants_python = true;
                    continue;
                } catch (const InputError&) {
                    if (r.ecosystem == "pypi") throw;
                }
            }
            auto ms = conda::MatchSpec::parse(r.text);
            names_python = names_python || ms.name == "python";
            wants_python = wants_python || !conda;
        } catch (const InputError& e) {
            throw InputError((where.empty() ? "spec" : where) + ": " + e.what());
        }
    }
    // A venv spec's Python was chosen already (choose_venv_python refuses where none fits).
    if (wants_python && !names_python && !venv_python_chosen && channels.empty())
        throw UnmetError("No environment satisfies the spec: its PyPI requirements need a Python, the spec names none, and no "
                         "channel offers python. Say which: `python: \"3.8\"` in the spec (a virtual environment on that "
                         "interpreter), or a conda requirement such as `python=3.8` with a channel that has it");
}

// --allow-missing names a requirement of the spec; anything else is a typo.
void check_allow_missing(const Spec& spec, const std::set<std::string>& names) {
    std::vector<std::string> known;
    for (const auto& r : spec.requirements) {
        std::string n = leading_name(r.text);
        if (!n.empty()) known.push_back(n);
    }
    for (const auto& n : spec.notes)
        if (n.kind == "unreadable") known.push_back(leading_name(n.text));
    for (const auto& name : names) {
        bool found = std::any_of(known.begin(), known.end(),
                                 [&](const std::string& k) { return pep508::normalize_name(k) == pep508::normalize_name(name); });
        if (found) continue;
        auto close = close_names(name, known);
        std::string hint;
        for (const auto& c : close) hint += (hint.empty() ? "" : ", ") + c;
        throw InputError("--allow-missing " + name + ": the spec has no requirement of that name" +
                         (hint.empty() ? std::string() : " (did you mean " + hint + "?)"));
    }
}

// OpenMMLab's wheel index is one page per CUDA x torch series; `mim install` and the docs'
// "{cu_version}/{torch_version}" template mean "the page for the torch and CUDA at hand". The
// solver decides those, so every Linux page the knowledge base lists for an mmcv version the
// spec allows is read, and each wheel carries its page's CUDA and torch into the solve.
std::vector<std::string> find_links_for(const Spec& spec, const knowledge::Knowledge& k) {
    std::vector<std::string> out;
    bool templated = false;
    for (const auto& link : spec.find_links) {
        if (link.find("download.openmmlab.com/mmcv/dist/") != std::string::npos && link.find('{') != std::string::npos) templated = true;
        else out.push_back(link);
    }
    if (!templated) return out;
    std::vector<pep508::Requirement> wanted;
    for (const auto& r : spec.requirements) {
        if (r.ecosystem == "conda") continue;
        try {
            auto req = pep508::Requirement::parse(r.text);
            if (req.normalized_name == "mmcv" || req.normalized_name == "mmcv-full") wanted.push_back(req);
        } catch (const InputError&) {
        }
    }
    std::set<std::string> pages;
    for (const auto& w : k.mmcv_wheels) {
        if (w.os != "Linux" || w.index_url.empty()) continue;
        auto v = pep440::Version::try_parse(w.mmcv_version);
        bool allowed = wanted.empty() || std::any_of(wanted.begin(), wanted.end(), [&](const pep508::Requirement& r) {
            return r.normalized_name == pep508::normalize_name(w.package) && v && r.specifier.contains(*v, true);
        });
        if (allowed) pages.insert(w.index_url);
    }
    for (const auto& p : pages)
        if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    return out;
}

std::vector<NamedTarget> all_facts_of_targets(const ResolveOptions& o, const std::optional<Lock>& previous,
                                              const knowledge::Knowledge& k) {
    std::vector<NamedTarget> out;
    for (const auto& [name, file] : o.target_files)
        out.push_back({name.empty() ? "default" : name, apply_overrides(gpus_by_name(target_from_text(read_text_file(file, "target file"), file), k, file), o.overrides, k)});
    if (!out.empty()) return out;
    bool overridden = !o.overrides.gpus.empty() || o.overrides.driver || o.overrides.cuda_driver || o.overrides.glibc ||
                      o.overrides.cpu_flags || o.overrides.platform || o.overrides.kernel || o.overrides.osx;
    // A lock's targets are inputs like its spec: re-resolving keeps them unless told otherwise.
    // The facts it left out (nothing it locked depended on them) come from this machine, as on
    // a first resolve; the solve leaves them out again where still nothing depends on them.
    if (previous && !overridden && !o.redetect) {
        out = previous->targets;
        std::optional<Target> here;
        for (auto& t : out) {
            if (t.target.left_out.empty()) continue;
            if (!here) here = detect_target(DetectRoots::host(), k);
            t.target = with_left_out(std::move(t.target), *here);
        }
        return out;
    }
    out.push_back({"default", apply_overrides(detect_target(DetectRoots::host(), k), o.overrides, k)});
    return out;
}

// The solve sees only what the lock will record, so a lock re-resolves from its own targets.
std::vector<NamedTarget> targets_for(const ResolveOptions& o, const std::optional<Lock>& previous,
                                     const knowledge::Knowledge& k) {
    auto targets = all_facts_of_targets(o, previous, k);
    for (auto& t : targets) t.target = locked_facts(std::move(t.target));
    return targets;
}

}  // namespace

std::map<std::string, std::string> inferred_hashes(const std::string& root, const std::vector<std::string>& files) {
    std::map<std::string, std::string> out;
    for (const auto& f : files) {
        std::string text;
        try {
            text = read_text_file((fs::path(root) / f).string(), "inferred-from file");
        } catch (const InputError&) {
            continue;   // gone or no longer a regular file: `check` reports it as changed
        }
        out[f] = sha256_hex(text);
    }
    return out;
}

std::vector<std::string> changed_inputs(const Lock& lock, const std::string& lock_dir) {
    std::vector<std::string> changed;
    if (lock.inferred_sha256.empty()) return changed;
    fs::path root = fs::path(lock_dir.empty() ? "." : lock_dir) / (lock.checkout.empty() ? "." : lock.checkout);
    std::vector<std::string> files;
    for (const auto& [f, hex] : lock.inferred_sha256) files.push_back(f);
    auto now = inferred_hashes(root.string(), files);
    for (const auto& [f, hex] : lock.inferred_sha256) {
        auto it = now.find(f);
        if (it == now.end() || it->second != hex) changed.push_back(f);
    }
    return changed;
}

namespace {

// What resolve's flags remembered in `old`, carried into a spec read again.
Spec keep_remembered(Spec spec, const Spec& old) {
    spec.allow_advisories = old.allow_advisories;
    spec.allow_missing = old.allow_missing;
    spec.channel_priority = old.channel_priority;
    spec.uses = old.uses;
    if (old.python_from.file == "--python") {   // resolve --python, remembered over what the files say
        spec.python = old.python;
        spec.python_from = old.python_from;
    }
    return spec;
}

}  // namespace

Spec reinferred(const std::string& dir, const Spec& old) {
    std::string name = fs::weakly_canonical(fs::absolute(dir)).filename().string();
    return keep_remembered(infer_spec(collect_repo_files(dir), name), old);
}

Spec without_lines(Spec spec) {
    spec.python_from.line = 0;
    for (auto& r : spec.requirements) r.from.line = 0;
    for (auto& s : spec.sources) s.from.line = 0;
    for (auto& e : spec.extensions) e.from.line = 0;
    for (auto& n : spec.notes) n.from.line = 0;
    for (auto& c : spec.contradictions) c.first.from.line = c.second.from.line = 0;
    return spec;
}

bool venv_spec(const Spec& spec) {
    if (!spec.channels.empty()) return false;
    // CUDA extensions need an nvcc: conda's cuda-nvcc in a conda env, unless the spec takes its
    // nvcc from PyPI (CUDA 13's `nvidia-cuda-nvcc`, alone or as `cuda-toolkit[nvcc]`).
    auto pypi_nvcc = [](const SpecRequirement& r) {
        if (r.ecosystem == "conda") return false;
        try {
            auto req = pep508::Requirement::parse(r.text);
            return req.normalized_name == "nvidia-cuda-nvcc" ||
                   (req.normalized_name == "cuda-toolkit" && std::find(req.extras.begin(), req.extras.end(), "nvcc") != req.extras.end());
        } catch (const InputError&) {
            return false;
        }
    };
    if (std::any_of(spec.extensions.begin(), spec.extensions.end(), [](const SpecExtension& e) { return e.cuda; }) &&
        std::none_of(spec.requirements.begin(), spec.requirements.end(), pypi_nvcc))
        return false;
    return std::none_of(spec.requirements.begin(), spec.requirements.end(), [](const SpecRequirement& r) { return r.ecosystem == "conda"; });
}

SpecLocation locate_spec(const std::string& path, const std::string& output, const fs::path& cache_dir) {
    SpecLocation loc;
    std::string p = path.empty() ? "." : path;
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
        loc.lock_path = (fs::path(p) / "envlock.yaml").string();
        loc.previous = existing_lock(loc.lock_path, cache_dir, loc.memo);
        loc.checkout = p;
        if (loc.previous) {
            const Lock& prev = *loc.previous;
            loc.spec = prev.spec;
            if (!prev.spec_file.empty()) {
                // The spec came from a spec file: that file is the input, read again (never the
                // lock's copy silently), and said so.
                loc.checkout.clear();
                fs::path file = fs::path(p) / prev.spec_file;
                if (fs::is_regular_file(file, ec)) {
                    loc.spec = keep_remembered(spec_from_yaml_text(read_text_file(file.string(), "spec"), file.string()), prev.spec);
                    loc.spec_file = file.string();
                    loc.notes.push_back("the spec comes from " + prev.spec_file + " (the lock's spec-file), read again; the checkout's own files are not");
                    // A spec written by `envlock spec` names what it was read from: newer files are not in it.
                    auto written = fs::last_write_time(file, ec);
                    for (const auto& f : loc.spec.inferred_from) {
                        auto t = fs::last_write_time(fs::path(p) / f, ec);
                        if (!ec && t > written)
                            loc.notes.push_back(f + " is newer than " + prev.spec_file + ", which was inferred from it: `envlock spec " + p +
                                                " > " + prev.spec_file + "` reads it again");
                    }
                } else {
                    loc.notes.push_back(prev.spec_file + ", which the lock's spec came from, is gone: the spec kept in the lock is used");
                }
            } else if (!prev.inferred_sha256.empty()) {
                // The files the spec was read from changed, or the checkout has files it did not
                // have then (a new requirements file, .python-version): read it again.
                loc.changed = changed_inputs(prev, p);
                Spec fresh = reinferred(p, prev.spec);
                for (const auto& f : fresh.inferred_from)
                    if (!prev.inferred_sha256.count(f)) loc.changed.push_back(f);
                if (!loc.changed.empty()) loc.spec = std::move(fresh);
            } else {
                loc.checkout.clear();   // a spec the user keeps by hand, in the lock itself
            }
        } else {
            std::string name = fs::weakly_canonical(fs::absolute(p)).filename().string();
            loc.spec = infer_spec(collect_repo_files(p), name);
            // A folder with nothing to lock is a mistake (the wrong folder), not an empty lock.
            if (loc.spec.requirements.empty() && loc.spec.sources.empty() && loc.spec.extensions.empty() && loc.spec.notes.empty())
                throw InputError(p + ": nothing to lock here: no requirements*.txt, pyproject.toml, setup.py/setup.cfg, "
                                 "environment.yml or install docs with pip/conda commands (write requirements.txt, or pass a spec file)");
        }
    } else if (fs::is_regular_file(p, ec)) {
        std::string text = read_text_file(p, "spec");
        if (looks_like_lock(text)) {
            loc.memo = read_memo(cache_dir, p, text);
            loc.previous = loc.memo ? loc.memo->lock : read_lock(text, p);
            loc.spec = loc.previous->spec;
            loc.lock_path = p;
        } else {
            loc.spec = spec_from_yaml_text(text, p);
            loc.spec_file = p;
            fs::path dir = fs::path(p).has_parent_path() ? fs::path(p).parent_path() : fs::path(".");
            loc.lock_path = (dir / "envlock.yaml").string();
            loc.previous = existing_lock(loc.lock_path, cache_dir, loc.memo);
        }
    } else if (auto recipe = load_recipe(p)) {
        loc.spec = recipe->spec;
        loc.recipe_repo = recipe->repo;
        loc.recipe_rev = recipe->rev;
        loc.lock_path = (fs::path(recipe->name) / "envlock.yaml").string();
        loc.previous = existing_lock(loc.lock_path, cache_dir, loc.memo);
    } else {
        std::string names;
        for (const auto& r : embedded_recipes()) names += (names.empty() ? "" : ", ") + r.name;
        throw InputError(p + ": no such file or directory, and no recipe of that name (recipes: " + names + ")");
    }
    if (!output.empty()) {
        check_output_path(output, "lock");   // before reading it as the previous lock
        loc.lock_path = output;
        loc.previous = existing_lock(output, cache_dir, loc.memo);
    }
    return loc;
}

namespace {

// A find-links folder of local files (file:///usr/share/python-wheels) offers no hashes, and a
// lock names the sha256 of every file it installs: resolve hashes the local files it chose.
void hash_local_files(Lock& lock) {
    for (auto& p : lock.packages) {
        if (p.kind == Ecosystem::source || !p.sha256.empty() || !fetch::is_file_url(p.url)) continue;
        const std::string path = fetch::file_url_path(p.url.substr(0, p.url.find_first_of("?#")));
        std::ifstream in(path, std::ios::binary);
        if (!in) throw EnvironmentError("cannot read " + path + " to record its sha256 in the lock (" + p.name + " " + p.version + ")");
        Sha256 hash;
        std::uint64_t size = 0;
        std::vector<char> buffer(1 << 16);
        while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
            hash.update(std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
            size += static_cast<std::uint64_t>(in.gcount());
        }
        p.sha256 = hash.hex_digest();
        p.size = size;
    }
}

// The previous lock is the result when nothing it was solved from changed (resolver/workflow/
// reuse.hpp): same binary, same spec + targets + knowledge (the content hash), the update
// flags unused, the checkout's files unchanged, every index document unchanged. It is proved
// again before it is used, like a solve's result; anything short of all that solves.
bool reuse_previous(const SpecLocation& loc, const SolveInput& in, const ResolveOptions& o, const fetch::FetchContext& ctx,
                    ResolveResult& result) {
    if (!loc.previous || !loc.memo || o.update_all || !o.update.empty() || !loc.changed.empty()) return false;
    const Lock& lock = *loc.previous;
    bool kept_kernel = std::any_of(lock.targets.begin(), lock.targets.end(), [](const NamedTarget& t) { return !t.target.kernel.empty(); });
    if ((kept_kernel ? lock_content_hash(in.spec, in.targets, in.knowledge.version) : in.content_hash) != lock.content_hash ||
        lock.knowledge_version != in.knowledge.version)
        return false;
    if (!loc.checkout.empty()) {
        fs::path parent = fs::path(loc.lock_path).parent_path();
        fs::path lock_dir = fs::absolute(parent.empty() ? fs::path(".") : parent);
        std::string checkout = fs::absolute(loc.checkout).lexically_normal().lexically_relative(lock_dir.lexically_normal()).generic_string();
        if ((checkout.empty() ? "." : checkout) != lock.checkout) return false;
    }
    if (!fetch::changed_documents(loc.memo->read, ctx).empty()) return false;
    // The proof: every entry complete and true to its file name, everything the spec and each
    // package asks for provided, and the solve's self-check with the knowledge base.
    if (!incomplete_entries(lock).empty() || !unprovided_names(lock).empty() || !self_check_problems(lock, in.knowledge).empty())
        return false;
    result.solved = true;
    result.reused = true;
    result.file_unchanged = true;
    result.lock = lock;
    result.notes.insert(result.notes.end(), loc.memo->notes.begin(), loc.memo->notes.end());
    return true;
}

// The memo the next re-resolve reuses this one by. Not with credentials in a URL read: the
// cache would keep them.
void remember_resolve(const fetch::FetchContext& ctx, const ResolveResult& result, std::size_t changed_notes,
                      const std::string& lock_text) {
    if (!ctx.read_log) return;
    ResolveMemo memo;
    memo.build_id = binary_build_id();
    memo.lock_sha256 = sha256_hex(lock_text);
    {
        std::lock_guard lock(ctx.read_log->mutex);
        memo.read = ctx.read_log->read;
    }
    for (const auto& d : memo.read)
        if (fetch::strip_userinfo(d.url) != d.url || fetch::strip_userinfo(d.fetched_url) != d.fetched_url) return;
    // The notes that the inputs, not this run, give rise to ("X changed since the lock" is not one).
    memo.notes.assign(result.notes.begin() + static_cast<std::ptrdiff_t>(std::min(changed_notes, result.notes.size())),
                      result.notes.end());
    memo.lock = result.lock;
    write_memo(ctx.cache_dir, result.lock_path, memo);
}

}  // namespace

ResolveResult resolve_project(const ResolveOptions& o) {
    ResolveResult result;
    const bool to_stdout = o.output == "-";
    fetch::FetchContext ctx = fetch::load_fetch_context(o.fetch);
    result.fetched = ctx.transport.tally;
    // The knowledge base loads on the other core while the spec and the previous lock are read
    // (each a few ms; together most of a re-resolve that reuses its lock).
    auto knowledge_loading = std::async(std::launch::async, [&o] { return knowledge::load(o.knowledge_files); });
    SpecLocation loc = locate_spec(o.path, to_stdout ? "" : o.output, ctx.cache_dir);
    if (o.clone && !loc.recipe_repo.empty()) {
        fs::path dir = fs::path(loc.lock_path).parent_path();
        clone_at(loc.recipe_repo, loc.recipe_rev, dir.string());
    }
    result.lock_path = to_stdout ? "-" : loc.lock_path;
    result.previous = loc.previous;
    add_sources(loc.spec, o);
    for (const auto& f : loc.changed)
        result.notes.push_back(f + " changed since the lock was made: the spec was inferred from the checkout again");
    result.notes.insert(result.notes.end(), loc.notes.begin(), loc.notes.end());

    SolveInput in;
    in.knowledge = knowledge_loading.get();   // moved, not copied: the tables are large
    const knowledge::Knowledge& k = in.knowledge;
    in.spec = loc.spec;
    in.targets = targets_for(o, loc.previous, k);
    // The lock holds the facts that decide its solve: host compilers and CUDA toolkits decide
    // only how extensions build, so a spec without extensions keeps none (and two machines that
    // differ only in them lock the same bytes, as uv.lock and pixi.lock record no host tools).
    if (in.spec.extensions.empty())
        for (auto& t : in.targets) {
            t.target.compilers.clear();
            t.target.toolkits.clear();
        }
    in.update = o.update;
    in.update_all = o.update_all;
    in.verbose = o.verbose;
    // --uses is remembered in the spec, so a re-resolve and `check` see it too.
    remember_in(in.spec.uses, o.uses);
    in.uses.insert(in.spec.uses.begin(), in.spec.uses.end());
    // So is --allow-advisory; an id the knowledge base does not have is a typo, not a no-op.
    for (const auto& id : o.allow_advisories) {
        const auto& known = k.advisories;
        if (std::none_of(known.begin(), known.end(), [&](const knowledge::Advisory& a) { return a.id == id; })) {
            std::string ids;
            for (const auto& a : known) ids += "\n  " + a.id;
            throw InputError("--allow-advisory " + id + ": no advisory has that id; the knowledge base has:" + ids);
        }
    }
    if (!o.allow_advisories.empty()) remember_in(in.spec.allow_advisories, o.allow_advisories);
    // --update NAME lets a locked package move: a name the lock does not have is a typo.
    for (const auto& name : o.update) {
        if (!loc.previous) throw InputError("--update " + name + ": there is no lock at " + loc.lock_path + " to update");
        std::vector<std::string> locked;
        for (const auto& p : loc.previous->packages) locked.push_back(p.name);
        for (const auto& s : loc.spec.sources) locked.push_back(s.name);
        bool found = std::any_of(locked.begin(), locked.end(),
                                 [&](const std::string& l) { return pep508::normalize_name(l) == pep508::normalize_name(name); });
        if (found) continue;
        std::string hint;
        for (const auto& c : close_names(name, locked)) hint += (hint.empty() ? "" : ", ") + c;
        throw InputError("--update " + name + ": the lock has no package of that name" +
                         (hint.empty() ? std::string() : " (did you mean " + hint + "?)"));
    }
    // And --allow-missing, which must name a requirement the spec has.
    check_allow_missing(in.spec, o.allow_missing);
    if (!o.allow_missing.empty()) remember_in(in.spec.allow_missing, o.allow_missing);
    // --channel-priority is remembered too; the spec's value (default strict) decides the solve.
    if (!o.channel_priority.empty()) {
        if (!valid_channel_priority(o.channel_priority))
            throw InputError("--channel-priority " + o.channel_priority + ": expected strict, flexible or disabled");
        in.spec.channel_priority = o.channel_priority;
    }
    in.channel_priority = in.spec.channel_priority == "flexible"   ? ChannelPriority::flexible
                          : in.spec.channel_priority == "disabled" ? ChannelPriority::disabled
                                                                   : ChannelPriority::strict;
    // --python X.Y: the venv's interpreter, remembered in the spec over what the files say.
    if (!o.python.empty()) {
        if (!bare_version(o.python) || o.python.find('.') == std::string::npos)
            throw InputError("--python " + o.python + ": expected a version such as 3.12 or 3.12.4");
        in.spec.python = o.python;
        in.spec.python_from = {"--python", 0};
    }
    refuse_unreadable(in.spec);
    if (loc.previous)
        for (const auto& p : loc.previous->packages) {
            std::string key = (p.kind == Ecosystem::conda ? "conda:" : "pypi:") + (p.kind == Ecosystem::conda ? p.name : pep508::normalize_name(p.name));
            in.previous[key] = p.version;
            if (p.kind == Ecosystem::conda) in.previous[key + "#build"] = p.build;
            // PyPI: the locked file (a release may be a wheel for one torch and an sdist).
            if (p.kind == Ecosystem::pypi) in.previous[key + "#file"] = p.url.substr(p.url.rfind('/') + 1);
        }

    // Made once, for the reuse check: over the targets as the previous lock recorded them,
    // without their kernels unless a chosen package depends on __linux (the reuse check then
    // compares one made with the kernel), and without the facts it left out.
    std::vector<NamedTarget> hashed = in.targets;
    for (auto& t : hashed) {
        t.target = without_kernel(std::move(t.target));
        if (!loc.previous) continue;
        for (const auto& before : loc.previous->targets)
            if (before.name == t.name) t.target = leave_out(std::move(t.target), before.target.left_out);
    }
    in.content_hash = lock_content_hash(in.spec, hashed, in.knowledge.version);
    // An index's credentials (a token in --index-url) go to its files and metadata on the same
    // scheme, host and port too, whose URLs its pages give without them (the reuse check
    // revalidates those as well).
    {
        std::vector<std::string> urls = in.spec.indexes;
        urls.insert(urls.end(), in.spec.find_links.begin(), in.spec.find_links.end());
        urls.insert(urls.end(), in.spec.channels.begin(), in.spec.channels.end());
        for (auto& c : fetch::credentials_of(urls)) ctx.transport.credentials.push_back(std::move(c));
    }
    if (!to_stdout && reuse_previous(loc, in, o, ctx, result)) return result;
    // A venv spec's interpreter, chosen before any index is read (and refused there when none fits).
    std::optional<PythonChoice> venv_python;
    bool wants_python = !in.spec.sources.empty() || !in.spec.python.empty() ||
                        std::any_of(in.spec.requirements.begin(), in.spec.requirements.end(), [](const SpecRequirement& r) { return r.ecosystem != "conda"; });
    if (venv_spec(in.spec) && wants_python) {
        venv_python = choose_venv_python(in.spec, loc.previous, o);
        in.venv_pythons = venv_python->versions;
    }

    const Spec& spec = in.spec;
    bool cuda_extensions = std::any_of(spec.extensions.begin(), spec.extensions.end(), [](const SpecExtension& e) { return e.cuda; });
    bool conda_wanted = std::any_of(spec.requirements.begin(), spec.requirements.end(),
                                    [](const SpecRequirement& r) { return r.ecosystem == "conda"; });

    fetch::ClosureRequest request;
    request.sources.channels = spec.channels;
    // Without channels, conda requirements come from conda-forge; CUDA extensions of a conda
    // env also need an nvcc and a host gcc, which nvidia's and conda-forge's channels carry, at
    // lower priority. A venv takes its nvcc from the machine or from PyPI (CUDA 13's
    // nvidia-cuda-nvcc wheel), never from a conda channel it cannot install.
    if (request.sources.channels.empty() && conda_wanted) request.sources.channels.push_back("conda-forge");
    if (cuda_extensions && !venv_spec(spec))
        for (const char* ch : {"nvidia", "conda-forge"})
            if (std::find(request.sources.channels.begin(), request.sources.channels.end(), ch) == request.sources.channels.end())
                request.sources.channels.push_back(ch);
    // A `channel::package` requirement searches its channel too, after the listed ones (conda's
    // Solver._prepare adds spec channels to the index).
    for (const auto& r : spec.requirements) {
        if (r.ecosystem == "pypi" || r.text.find("::") == std::string::npos) continue;
        try {
            auto ms = conda::MatchSpec::parse(r.text);
            if (!ms.channel.empty()) request.sources.channels.push_back(ms.channel);
        } catch (const InputError&) {
        }
    }
    request.sources.channels = fetch::expand_channels(request.sources.channels);
    std::string platform = in.targets.front().target.platform.empty() ? "linux-64" : in.targets.front().target.platform;
    request.sources.subdirs = {platform, "noarch"};
    request.sources.index_urls = spec.indexes.empty() ? std::vector<std::string>{kDefaultIndex} : spec.indexes;
    request.sources.find_links = find_links_for(spec, k);
    for (const auto& r : spec.requirements) {
        if (!is_pypi_requirement(r)) continue;
        auto req = pep508::Requirement::parse(r.text);
        if (req.normalized_name == "python") continue;
        // "spconv-cuxxx": the solver picks among the projects that fill it, one per CUDA
        // release the knowledge base knows ("spconv-cu102" … "spconv-cu128"); those no index
        // has are simply not offered.
        if (auto placeholder = cuda_placeholder(req.normalized_name)) {
            std::set<std::string> names;
            for (const auto& row : k.cuda_drivers) {
                std::string variant = variant_of_cuda_runtime(knowledge::major_minor(row.cuda));
                std::string name = placeholder->stem + variant.substr(2);
                if (!fills_cuda_placeholder(*placeholder, name) || !names.insert(name).second) continue;
                request.pypi_names.push_back(name);
                if (!req.specifier.empty()) request.constraints[name].push_back(req.specifier.str());
            }
            continue;
        }
        request.pypi_names.push_back(req.normalized_name);
        if (!req.specifier.empty()) request.constraints[req.normalized_name].push_back(req.specifier.str());
        for (const auto& e : req.extras) request.extras[req.normalized_name].insert(pep508::normalize_name(e));
    }
    // conda: what the spec names, Python, and the toolchain an extension build may take.
    request.conda_names = {"python", "cuda-nvcc", "gcc", "gxx", "gcc_linux-64", "gxx_linux-64", "gcc_linux-aarch64", "gxx_linux-aarch64"};
    for (const auto& r : spec.requirements) {
        if (r.ecosystem == "pypi") continue;
        try {
            request.conda_names.push_back(conda::MatchSpec::parse(r.text).name);
        } catch (const InputError&) {
        }
        if (is_pypi_requirement(r)) {   // either ecosystem: the conda spelling of the project too
            std::string n = pep508::Requirement::parse(r.text).normalized_name;
            request.conda_names.push_back(n == "torch" ? "pytorch" : n);
        }
    }
    // A venv: the newest candidate's markers decide which conditional requirements are read.
    std::string python = venv_python ? std::string() : python_of(spec);
    if (venv_python)
        for (const auto& v : venv_python->versions)
            if (python.empty() || *conda::Version::try_parse(python) < *conda::Version::try_parse(v)) python = v;
    request.marker_env = pep508::MarkerEnv::for_target(python.empty() ? "3.8" : python, platform);
    // What a page alone tells of a version (Requires-Python, wheel tags) orders the windows only
    // where the spec fixes one Python; several are tried each with its own.
    if (single_python_minor(spec)) {
        request.python = request.marker_env.python_full_version;
        request.tags = wheel::compatible_tags(request.marker_env.python_version, platform, in.targets.front().target.glibc);
    }
    request.all_versions = o.all_versions;
    refuse_before_fetching(spec, request.sources.channels, venv_python.has_value());
    try {
        std::string minor = python.empty() ? "3.8" : python;
        if (auto dot = minor.find('.', minor.find('.') + 1); dot != std::string::npos) minor.resize(dot);
        request.target_tags = wheel::compatible_tags(minor, platform, in.targets.front().target.glibc);
    } catch (const InputError&) {
        // An unknown platform: metadata from the first wheel listed.
    }

    // Git sources: their version comes from the revision, their commit from the remote (or
    // the previous lock), their name and requirements from their own packaging files, plus
    // the knowledge base's gates on that project. A source with no reachable commit is not
    // lockable. They are read before the indexes, whose closure must follow what they need.
    ctx.read_log = std::make_shared<fetch::DocumentLog>();
    StageReport sources_stage(o, ResolveStep::Stage::sources);
    sources_stage.step_.total = spec.sources.size();
    if (!spec.sources.empty()) sources_stage.running();
    std::vector<std::future<SourceRead>> reads;
    for (const auto& s : spec.sources) {
        auto kept = previous_source(loc.previous, s, o);
        reads.push_back(std::async(std::launch::async, read_source, s, kept, ctx));
    }
    std::string unreachable;
    for (size_t i = 0; i < reads.size(); ++i) {
        SourceRead read = reads[i].get();
        ++sources_stage.step_.done;
        sources_stage.running();
        if (!read.error.empty()) {
            unreachable += "\n  " + read.error;
            continue;
        }
        IndexRecord& r = read.record;
        // A source whose requirements stay unknown is said once, with the others, after the solve.
        // What the source needs is read like what the spec names: its pins bound which versions'
        // metadata is read (numba==0.48.0 is far below a project's newest few).
        std::vector<std::string> needs = r.depends;
        for (const auto& gate : knowledge::gate_requirements(k, r.name, r.version)) needs.push_back(gate);
        for (const auto& d : needs) {
            try {
                auto req = pep508::Requirement::parse(d);
                if (!req.applies(request.marker_env)) continue;
                request.pypi_names.push_back(req.normalized_name);
                if (!req.specifier.empty()) request.constraints[req.normalized_name].push_back(req.specifier.str());
                for (const auto& e : req.extras) request.extras[req.normalized_name].insert(pep508::normalize_name(e));
            } catch (const InputError&) {
            }
        }
        in.sources.push_back(std::move(r));
    }
    if (!spec.sources.empty()) sources_stage.finished();
    if (!unreachable.empty())
        throw EnvironmentError("git sources that cannot be locked (no reachable commit):" + unreachable +
                               "\n(a source the previous lock pinned keeps its commit, offline too)");

    // sdists without core metadata: their setup files, read as inference reads a checkout.
    request.read_package = [](const std::map<std::string, std::string>& files) -> std::optional<std::vector<std::string>> {
        auto pkg = read_package_requirements(files);
        if (!pkg.known) return std::nullopt;
        return pkg.requires_dist;
    };
    // A release's import gates (mmdet 3.3.0 needs mmcv, which its Requires-Dist does not say):
    // the solve enforces them, so the closure reads what they name.
    request.implied_requirements = [&k](const std::string& name, const std::string& version) {
        return knowledge::gate_requirements(k, name, version);
    };
    StageReport index_stage(o, ResolveStep::Stage::indexes);
    fetch::TransferTally tally;
    std::mutex report_mutex;
    // Every transfer is counted, for the progress line and the bytes the summary prints.
    index_stage.running();
    ctx.transport.progress = [&](std::size_t index, std::uint64_t received, std::uint64_t, bool done) {
        tally.record(index, received, done);
        std::lock_guard lock(report_mutex);
        index_stage.step_.done = tally.finished();
        index_stage.step_.bytes = tally.bytes();
        index_stage.running();
        return true;
    };
    auto closure = fetch::collect_index_closure(request, ctx);
    index_stage.step_.pages = closure.pages_read;
    index_stage.step_.metadata = closure.metadata_read;
    index_stage.finished();
    // Every requirement must name something an index offers before the solver sees it.
    auto missing = missing_requirements(spec, closure, request.marker_env, [&] {
        std::vector<std::string> names;
        for (const auto& index : request.sources.index_urls) {
            auto listed = fetch::index_project_names(index, ctx);
            names.insert(names.end(), listed.begin(), listed.end());
        }
        return names;
    });
    std::vector<MissingRequirement> refused, allowed;
    for (auto& m : missing) (allowed_missing(spec, m.name) || allowed_missing(spec, leading_name(m.requirement.text)) ? allowed : refused).push_back(m);
    if (!refused.empty()) throw UnmetError(describe_missing(refused));
    const Spec full_spec = in.spec;
    for (const auto& m : allowed) {
        result.notes.push_back(format_provenance(m.requirement.from) + ": " + m.requirement.text +
                               ": nothing offers it; going on without it (--allow-missing " + m.name + ")");
        auto& reqs = in.spec.requirements;
        reqs.erase(std::remove_if(reqs.begin(), reqs.end(),
                                  [&](const SpecRequirement& r) { return r.text == m.requirement.text && r.ecosystem == m.requirement.ecosystem; }),
                   reqs.end());
    }

    in.channels = std::move(closure.channels);

    // Solve in rounds (DESIGN.md "Meeting the real index"): over the versions the windows read,
    // the rest standing in as one candidate per project; a solve that needs no stand-in is the
    // answer, one that does widens the windows it names (doubling) and solves again.
    StageReport solve_stage(o, ResolveStep::Stage::solve);
    auto report_reads = [&](StageReport& stage) {
        stage.step_.pages = closure.pages_read;
        stage.step_.metadata = closure.metadata_read;
        stage.step_.bytes = tally.bytes();
        stage.step_.done = tally.finished();
    };
    ctx.transport.progress = [&](std::size_t index, std::uint64_t received, std::uint64_t, bool done) {
        tally.record(index, received, done);
        std::lock_guard lock(report_mutex);
        solve_stage.step_.bytes = tally.bytes();
        solve_stage.running();
        return true;
    };
    SolveOutcome outcome;
    for (std::size_t round = 1;; ++round) {
        solve_stage.step_.round = round;
        report_reads(solve_stage);
        solve_stage.running();
        in.pypi = std::move(closure.pypi);
        in.unread = std::move(closure.unread);
        outcome = solve(in);
        if (outcome.widen.empty()) break;
        std::string widened;
        for (const auto& [name, specifier] : outcome.widen) {
            auto& w = request.windows[fetch::requirement_key(name, specifier)];
            w = (w ? w : request.initial_window) * 2;
            widened += std::string(widened.empty() ? "" : ", ") + name + (specifier.empty() ? "" : " " + specifier) + " (newest " +
                       std::to_string(w) + ")";
        }
        result.rounds.push_back("round " + std::to_string(round) + " reached versions not read; reading further: " + widened);
        std::size_t before = closure.metadata_read + closure.pages_read;
        fetch::read_more_pypi(request, closure, ctx);
        // Windows that reach nothing more (a requirement the closure's Python does not follow):
        // every allowed version, once, so the rounds end.
        if (closure.metadata_read + closure.pages_read == before) {
            if (request.all_versions) throw EnvironmentError("internal error: the solve asks for versions the indexes do not offer (a bug in envlock)");
            request.all_versions = true;
            fetch::read_more_pypi(request, closure, ctx);
        }
    }
    report_reads(solve_stage);
    solve_stage.step_.unsolved = !outcome.solved;
    solve_stage.finished();
    ctx.transport.progress = nullptr;
    in.unread.clear();
    result.notes.insert(result.notes.end(), closure.notes.begin(), closure.notes.end());
    result.downloads = closure.downloads;
    result.solved = outcome.solved;
    if (!outcome.solved) {
        result.explanation = outcome.explanation;
        // The pins bounded which releases were read; the nearest working set lies beyond them.
        // Read the newest releases of each named project besides (and the git sources' projects
        // from the indexes too), and let the explanation loosen the pins over them. A conda-only
        // spec read every record of its names already: the same pool, the same answer.
        if (request.pypi_names.empty() && spec.sources.empty()) return result;
        StageReport explain_stage(o, ResolveStep::Stage::explain);
        ctx.transport.progress = [&](std::size_t index, std::uint64_t received, std::uint64_t, bool done) {
            tally.record(index, received, done);
            std::lock_guard lock(report_mutex);
            explain_stage.step_.bytes = tally.bytes();
            explain_stage.running();
            return true;
        };
        report_reads(explain_stage);
        explain_stage.running();
        fetch::ClosureRequest wide = request;
        wide.beyond_constraints = true;
        for (const auto& s : spec.sources) wide.pypi_names.push_back(pep508::normalize_name(s.name));
        try {
            fetch::read_more_pypi(wide, closure, ctx);
            SolveInput again = in;
            again.pypi = std::move(closure.pypi);
            again.unread.clear();
            SolveOutcome second = solve(again);
            if (!second.solved) result.explanation = second.explanation;
        } catch (const std::exception&) {
            // The wider read is for a better explanation only; the first one stands.
        }
        report_reads(explain_stage);
        explain_stage.finished();
        ctx.transport.progress = nullptr;
        return result;
    }
    result.lock = std::move(outcome.lock);
    if (result.lock.python && venv_python) result.lock.python->from = venv_python->from;
    hash_local_files(result.lock);
    // Packages whose own requirements stayed unknown: said per package in the lock, and once here.
    std::string unknown;
    for (auto& p : result.lock.packages) {
        const IndexRecords& pool = p.kind == Ecosystem::source ? in.sources : in.pypi;
        bool is_unknown = std::any_of(pool.begin(), pool.end(), [&](const IndexRecord& r) {
            return !r.depends_known && (p.kind == Ecosystem::source ? r.git == p.url : r.url == p.url);
        });
        if (p.kind == Ecosystem::conda || !is_unknown) continue;
        p.depends_unknown = true;
        unknown += (unknown.empty() ? "" : ", ") + p.name + " " + p.version;
    }
    if (!unknown.empty())
        result.notes.push_back("warning: requirements unknown for " + unknown +
                               " (no PKG-INFO Requires-Dist, and no setup file that declares them statically); "
                               "the lock may be short of what installing them pulls in");
    if (!allowed.empty()) {
        // The lock keeps the spec as the user wrote it; the requirement gone without is in it,
        // and in its content hash (the solve made one over the reduced spec).
        result.lock.spec = full_spec;
        result.lock.content_hash = lock_content_hash(full_spec, result.lock.targets, k.version);
    }
    if (to_stdout) {
        result.lock_text = write_lock(result.lock);
        return result;
    }
    fs::path parent = fs::path(result.lock_path).parent_path();
    if (!loc.checkout.empty()) {
        // Remember the inferred-from files' content, so `check` and the next resolve see a change.
        result.lock.inferred_sha256 = inferred_hashes(loc.checkout, result.lock.spec.inferred_from);
        fs::path lock_dir = fs::absolute(parent.empty() ? fs::path(".") : parent);
        result.lock.checkout = fs::absolute(loc.checkout).lexically_normal().lexically_relative(lock_dir.lexically_normal()).generic_string();
        if (result.lock.checkout.empty()) result.lock.checkout = ".";
    }
    if (!loc.spec_file.empty()) {
        // The spec file, relative to the lock's folder, so a re-resolve of the folder reads it again.
        fs::path lock_dir = fs::absolute(parent.empty() ? fs::path(".") : parent).lexically_normal();
        result.lock.spec_file = fs::absolute(loc.spec_file).lexically_normal().lexically_relative(lock_dir).generic_string();
    }
    if (!parent.empty()) fs::create_directories(parent);
    std::string text = write_lock(result.lock);
    // "lock unchanged" means the file's bytes: a lock that would be written the same is left alone.
    std::error_code same_ec;
    result.file_unchanged = fs::is_regular_file(result.lock_path, same_ec) && read_text_file(result.lock_path, "lock") == text;
    if (!result.file_unchanged) write_file_atomically(result.lock_path, text);
    remember_resolve(ctx, result, loc.changed.size() + loc.notes.size(), text);
    return result;
}

}  // namespace envlock
