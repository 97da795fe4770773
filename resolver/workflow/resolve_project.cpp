#include "resolver/workflow/resolve_project.hpp"

#include <algorithm>
#include <filesystem>
#include <future>

#include "fetch/index_closure.hpp"
#include "fetch/files.hpp"
#include "fetch/git_source.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/infer/infer.hpp"
#include "resolver/infer/recipe.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/solve/solve.hpp"
#include "resolver/lock/spec_io.hpp"
#include "resolver/lock/target_io.hpp"

namespace envlock {

namespace fs = std::filesystem;

namespace {

const char* kDefaultIndex = "https://pypi.org/simple";

bool looks_like_lock(const std::string& text) {
    return text.find("\npackages:") != std::string::npos && text.find("content-hash:") != std::string::npos;
}

std::optional<Lock> existing_lock(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    return read_lock(read_text_file(path, "lock"), path);
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
// do (minimal change): asking the remote again costs a round trip per source and could move
// a branch under the user. --update NAME or --update-all asks again.
std::optional<std::string> previous_commit(const std::optional<Lock>& previous, const SpecSource& s, const ResolveOptions& o) {
    if (!previous || o.update_all || o.update.count(s.name)) return std::nullopt;
    for (const auto& p : previous->packages)
        if (p.kind == Ecosystem::source && p.name == s.name && p.url == s.git && p.build == s.rev && is_git_commit(p.rev))
            return p.rev;
    return std::nullopt;
}

std::vector<NamedTarget> targets_for(const ResolveOptions& o, const std::optional<Lock>& previous,
                                     const knowledge::Knowledge& k) {
    std::vector<NamedTarget> out;
    for (const auto& [name, file] : o.target_files)
        out.push_back({name.empty() ? "default" : name, apply_overrides(read_target_file(file), o.overrides, k)});
    if (!out.empty()) return out;
    bool overridden = !o.overrides.gpus.empty() || o.overrides.driver || o.overrides.cuda_driver || o.overrides.glibc ||
                      o.overrides.cpu_flags || o.overrides.platform;
    // A lock's targets are inputs like its spec: re-resolving keeps them unless told otherwise.
    if (previous && !overridden && !o.redetect) return previous->targets;
    out.push_back({"default", apply_overrides(detect_target(DetectRoots::host(), k), o.overrides, k)});
    return out;
}

}  // namespace

SpecLocation locate_spec(const std::string& path, const std::string& output) {
    SpecLocation loc;
    std::string p = path.empty() ? "." : path;
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
        loc.lock_path = (fs::path(p) / "envlock.yaml").string();
        loc.previous = existing_lock(loc.lock_path);
        if (loc.previous) {
            loc.spec = loc.previous->spec;
        } else {
            std::string name = fs::weakly_canonical(fs::absolute(p)).filename().string();
            loc.spec = infer_spec(collect_repo_files(p), name);
        }
    } else if (fs::is_regular_file(p, ec)) {
        std::string text = read_text_file(p, "spec");
        if (looks_like_lock(text)) {
            loc.previous = read_lock(text, p);
            loc.spec = loc.previous->spec;
            loc.lock_path = p;
        } else {
            loc.spec = spec_from_yaml_text(text, p);
            fs::path dir = fs::path(p).has_parent_path() ? fs::path(p).parent_path() : fs::path(".");
            loc.lock_path = (dir / "envlock.yaml").string();
            loc.previous = existing_lock(loc.lock_path);
        }
    } else if (auto recipe = load_recipe(p)) {
        loc.spec = recipe->spec;
        loc.recipe_repo = recipe->repo;
        loc.recipe_rev = recipe->rev;
        loc.lock_path = (fs::path(recipe->name) / "envlock.yaml").string();
        loc.previous = existing_lock(loc.lock_path);
    } else {
        std::string names;
        for (const auto& r : embedded_recipes()) names += (names.empty() ? "" : ", ") + r.name;
        throw InputError(p + ": no such file or directory, and no recipe of that name (recipes: " + names + ")");
    }
    if (!output.empty()) {
        loc.lock_path = output;
        loc.previous = existing_lock(output);
    }
    return loc;
}

ResolveResult resolve_project(const ResolveOptions& o) {
    ResolveResult result;
    const bool to_stdout = o.output == "-";
    SpecLocation loc = locate_spec(o.path, to_stdout ? "" : o.output);
    if (o.clone && !loc.recipe_repo.empty()) {
        fs::path dir = fs::path(loc.lock_path).parent_path();
        clone_at(loc.recipe_repo, loc.recipe_rev, dir.string());
    }
    result.lock_path = to_stdout ? "-" : loc.lock_path;
    result.previous = loc.previous;
    add_sources(loc.spec, o);

    auto k = knowledge::load(o.knowledge_files);
    SolveInput in;
    in.spec = loc.spec;
    in.targets = targets_for(o, loc.previous, k);
    in.knowledge = k;
    in.update = o.update;
    in.update_all = o.update_all;
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
    if (loc.previous)
        for (const auto& p : loc.previous->packages)
            in.previous[(p.kind == Ecosystem::conda ? "conda:" : "pypi:") +
                        (p.kind == Ecosystem::conda ? p.name : pep508::normalize_name(p.name))] = p.version;

    const Spec& spec = in.spec;
    bool cuda_extensions = std::any_of(spec.extensions.begin(), spec.extensions.end(), [](const SpecExtension& e) { return e.cuda; });
    bool conda_wanted = std::any_of(spec.requirements.begin(), spec.requirements.end(),
                                    [](const SpecRequirement& r) { return r.ecosystem == "conda"; });

    fetch::ClosureRequest request;
    request.sources.channels = spec.channels;
    // Without channels, conda requirements come from conda-forge; CUDA extensions also need an
    // nvcc and a host gcc, which nvidia's and conda-forge's channels carry, at lower priority.
    if (request.sources.channels.empty() && conda_wanted) request.sources.channels.push_back("conda-forge");
    if (cuda_extensions)
        for (const char* ch : {"nvidia", "conda-forge"})
            if (std::find(request.sources.channels.begin(), request.sources.channels.end(), ch) == request.sources.channels.end())
                request.sources.channels.push_back(ch);
    std::string platform = in.targets.front().target.platform.empty() ? "linux-64" : in.targets.front().target.platform;
    request.sources.subdirs = {platform, "noarch"};
    request.sources.index_urls = spec.indexes.empty() ? std::vector<std::string>{kDefaultIndex} : spec.indexes;
    request.sources.find_links = spec.find_links;
    for (const auto& r : spec.requirements) {
        if (!is_pypi_requirement(r)) continue;
        auto req = pep508::Requirement::parse(r.text);
        if (req.normalized_name == "python") continue;
        request.pypi_names.push_back(req.normalized_name);
        if (!req.specifier.empty()) request.constraints[req.normalized_name].push_back(req.specifier.str());
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
    std::string python = python_of(spec);
    request.marker_env = pep508::MarkerEnv::for_target(python.empty() ? "3.8" : python, platform);

    // Git sources: their version comes from the revision, their commit from the remote, and
    // their requirements from the knowledge base's gates on that project.
    fetch::FetchContext ctx = fetch::load_fetch_context(o.fetch);
    std::vector<std::future<std::optional<std::string>>> pins;
    for (const auto& s : spec.sources) {
        IndexRecord r;
        r.ecosystem = Ecosystem::source;
        r.name = s.name;
        r.git = s.git;
        r.build = s.rev;
        r.version = version_of_rev(s.rev);
        r.rev = s.rev.empty() ? "HEAD" : s.rev;
        // Asking a remote takes a round trip or a DNS timeout: it runs while the indexes are read.
        if (auto pinned = previous_commit(loc.previous, s, o))
            pins.push_back(std::async(std::launch::deferred, [pinned] { return pinned; }));
        else
            pins.push_back(std::async(std::launch::async, resolve_git_rev, ctx.mirrors.apply(s.git), r.rev));
        for (const auto& req : knowledge::gate_requirements(k, s.name, r.version)) {
            try {
                request.pypi_names.push_back(pep508::Requirement::parse(req).normalized_name);
            } catch (const InputError&) {
            }
        }
        in.sources.push_back(std::move(r));
    }

    auto closure = fetch::collect_index_closure(request, ctx);
    for (size_t i = 0; i < in.sources.size(); ++i) {
        IndexRecord& r = in.sources[i];
        if (auto commit = pins[i].get()) r.rev = *commit;
        else result.notes.push_back(r.name + ": could not reach " + r.git + " to pin " + r.rev + " to a commit; the lock keeps the name");
    }
    in.channels = std::move(closure.channels);
    in.pypi = std::move(closure.pypi);
    result.notes.insert(result.notes.end(), closure.notes.begin(), closure.notes.end());

    SolveOutcome outcome = solve(in);
    result.solved = outcome.solved;
    if (!outcome.solved) {
        result.explanation = outcome.explanation;
        return result;
    }
    result.lock = std::move(outcome.lock);
    if (to_stdout) {
        result.lock_text = write_lock(result.lock);
        return result;
    }
    fs::path parent = fs::path(result.lock_path).parent_path();
    if (!parent.empty()) fs::create_directories(parent);
    write_file_atomically(result.lock_path, write_lock(result.lock));
    return result;
}

}  // namespace envlock
