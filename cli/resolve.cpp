#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/shared_flags.hpp"
#include "install/python_env.hpp"
#include "resolver/lock/diff.hpp"
#include "resolver/workflow/resolve_project.hpp"

namespace envlock::cli {

namespace {

// ", 12 PyPI pages, 30 metadata reads": what the PyPI part of the indexes read so far.
std::string reads_text(const ResolveStep& s) {
    if (!s.pages && !s.metadata) return "";
    return ", " + std::to_string(s.pages) + " PyPI page" + (s.pages == 1 ? "" : "s") + ", " + std::to_string(s.metadata) +
           " metadata read" + (s.metadata == 1 ? "" : "s");
}

void show_step(Progress& p, const ResolveStep& s) {
    using Stage = ResolveStep::Stage;
    std::string count = std::to_string(s.done);
    switch (s.stage) {
        case Stage::sources:
            if (!s.finished) p.update("Reading git sources " + count + "/" + std::to_string(s.total));
            else p.finish("Read " + std::to_string(s.total) + " git source" + (s.total == 1 ? "" : "s") + " in " + seconds_text(s.seconds), s.seconds);
            break;
        case Stage::indexes:
            if (!s.finished) p.update(fetching_indexes_text(s.done, s.bytes));
            else if (s.done == 0) p.finish("Indexes read from the cache in " + seconds_text(s.seconds) + reads_text(s), s.seconds);
            else p.finish(fetched_indexes_text(s.done, s.bytes, s.seconds) + reads_text(s), s.seconds);
            break;
        case Stage::solve:
            // Rounds after the first read further what a solve reached unread.
            if (!s.finished) p.update(s.round <= 1 ? std::string("Solving") : "Solving, round " + std::to_string(s.round) + ": " + human_bytes(s.bytes) + reads_text(s));
            else if (s.unsolved) p.clear();   // the explanation follows; "Solved in" would say the opposite
            else p.finish("Solved in " + seconds_text(s.seconds) + (s.round > 1 ? " (" + std::to_string(s.round) + " rounds" + reads_text(s) + ")" : std::string()), s.seconds);
            break;
        case Stage::explain:
            if (!s.finished) p.update("Unsatisfiable; reading releases beyond the pins to explain it: " + human_bytes(s.bytes) + reads_text(s));
            else p.finish("Read releases beyond the pins in " + seconds_text(s.seconds) + reads_text(s), s.seconds);
            break;
    }
}

struct ResolveFlags {
    ResolveOptions options;
    MachineFlags machine;
    std::vector<std::string> targets;      // FILE or NAME=FILE
    std::vector<std::string> update;
    std::vector<std::string> uses;
    std::vector<std::string> allow_advisories;
    std::vector<std::string> allow_missing;
    std::vector<std::string> knowledge_files;
    std::string cache_dir;
    int jobs = 0;
    bool json = false;
};

Output::Style style_of(PackageChange::Kind kind) {
    switch (kind) {
        case PackageChange::Kind::added: return Output::Style::green;
        case PackageChange::Kind::removed: return Output::Style::red;
        case PackageChange::Kind::downgraded: return Output::Style::yellow;
        default: return Output::Style::bold;
    }
}

nlohmann::json json_of(const ResolveResult& r, const LockDiff* diff) {
    nlohmann::json j;
    j["solved"] = r.solved;
    j["notes"] = r.notes;
    if (!r.solved) {
        j["explanation"] = r.explanation;
        return j;
    }
    j["lock"] = r.lock_path;
    j["reused"] = r.reused;   // the lock was current: proved again and kept, nothing solved
    j["content-hash"] = r.lock.content_hash;
    j["packages"] = r.lock.packages.size();
    if (r.lock.python) j["python"] = {{"version", r.lock.python->version}, {"from", r.lock.python->from}};
    j["toolchain"] = {{"nvcc", r.lock.toolchain.nvcc}, {"gcc", r.lock.toolchain.gcc},
                      {"cuda-arch-list", r.lock.toolchain.cuda_arch_list}};
    nlohmann::json changes = nlohmann::json::array();
    if (diff) {
        for (const auto& c : diff->packages)
            changes.push_back({{"change", to_string(c.kind)}, {"name", c.name}, {"before", c.before}, {"after", c.after}});
        for (const auto& t : diff->toolchain)
            changes.push_back({{"change", "toolchain"}, {"name", t.field}, {"before", t.before}, {"after", t.after}});
    }
    j["changes"] = changes;
    nlohmann::json decisions = nlohmann::json::array();
    for (const auto& d : r.lock.decisions) decisions.push_back({{"id", d.id}, {"excluded", d.excluded}, {"reason", d.reason}});
    j["decisions"] = decisions;
    nlohmann::json warnings = nlohmann::json::array();
    for (const auto& w : r.lock.warnings)
        warnings.push_back({{"id", w.id}, {"target", w.target}, {"symptom", w.symptom}, {"fix", w.fix}, {"source", w.source}});
    j["warnings"] = warnings;
    return j;
}

}  // namespace

void add_resolve(CLI::App& app, int& exit_code) {
    auto f = std::make_shared<ResolveFlags>();
    auto* cmd = app.add_subcommand("resolve",
        "Solve a repo's environment for a target machine and write envlock.yaml (PATH: a checkout, a spec or lock file, or a recipe name)");
    cmd->add_option("PATH", f->options.path, "repo checkout, spec/lock file, or built-in recipe (BEVFormer, Mask2Former …); default .");
    cmd->add_option("-o,--output", f->options.output, "where to write the lock (default: envlock.yaml beside the spec; - for stdout)");
    cmd->add_option("-c,--channel", f->options.channels, "conda channel to add before the spec's (remembered in the spec); repeatable")->allow_extra_args(false);
    cmd->add_option("-i,--index-url", f->options.indexes, "PyPI index to add (remembered in the spec); repeatable")->allow_extra_args(false);
    cmd->add_option("-f,--find-links", f->options.find_links, "find-links page to add (remembered in the spec); repeatable")->allow_extra_args(false);
    cmd->add_option("-p,--python", f->options.python,
                    "the Python of a virtual-environment spec, X.Y or X.Y.Z (remembered in the spec; before .python-version and requires-python)");
    cmd->add_flag("--json", f->json, "print the result as JSON (keys as the lock spells them)");
    cmd->add_option("--target", f->targets, "target file from `envlock detect` (NAME=FILE to lock several machines); repeatable")->allow_extra_args(false);
    add_machine_flags(cmd, f->machine);
    cmd->add_flag("--detect", f->options.redetect, "describe this machine again instead of reusing the existing lock's targets");
    cmd->add_option("--update", f->update, "let these packages move away from the existing lock; repeatable")->allow_extra_args(false);
    cmd->add_flag("--update-all", f->options.update_all, "ignore the existing lock's versions");
    cmd->add_option("--uses", f->uses, "what the code does that advisories depend on: numba-cuda, code-uses:torch.utils.tensorboard …; repeatable")->allow_extra_args(false);
    cmd->add_option("--allow-advisory", f->allow_advisories,
                    "advisory id to stop enforcing (see `envlock inspect advisories`); remembered in the spec; repeatable")->allow_extra_args(false);
    cmd->add_option("--allow-missing", f->allow_missing,
                    "go on without this requirement when no index offers it; remembered in the spec; repeatable")->allow_extra_args(false);
    cmd->add_option("--channel-priority", f->options.channel_priority,
                    "conda channel priority: strict (default), flexible (conda's default) or disabled; remembered in the spec")
        ->check(CLI::IsMember({"strict", "flexible", "disabled"}));
    cmd->add_flag("--clone", f->options.clone, "recipe: git clone the repo at the recipe's commit and write the lock there");
    cmd->add_flag("--all-versions", f->options.all_versions,
                  "read the metadata of every version the requirements allow before solving, instead of the newest few "
                  "widened as needed (same lock, more reads: a check of the lazy answer)");
    cmd->add_option("--knowledge", f->knowledge_files, "extra knowledge file (YAML); repeatable")->allow_extra_args(false);
    cmd->add_option("--mirror", f->options.fetch.mirrors, "fetch URLs under FROM from TO instead (FROM=TO); repeatable")->allow_extra_args(false);
    cmd->add_option("--mirrors-file", f->options.fetch.mirrors_files, "a mirrors file (`mirrors:` FROM: TO, as `envlock-mirror build` writes one); repeatable; ENVLOCK_MIRRORS may name one too")->allow_extra_args(false);
    cmd->add_flag("--offline", f->options.fetch.offline, "use the HTTP cache only");
    cmd->add_option("--cache-dir", f->cache_dir, "HTTP cache folder (default $XDG_CACHE_HOME/envlock)");
    cmd->add_option("-j,--jobs", f->jobs, "parallel downloads (default 8)");
    const CLI::App* cmd_ref = cmd;
    cmd->callback([f, cmd_ref, &exit_code] {
        ResolveOptions o = f->options;
        o.overrides = overrides_of(f->machine);
        for (const auto& t : f->targets) {
            auto eq = t.find('=');
            if (eq == std::string::npos) o.target_files.push_back({"", t});
            else o.target_files.push_back({t.substr(0, eq), t.substr(eq + 1)});
        }
        o.update.insert(f->update.begin(), f->update.end());
        o.uses.insert(f->uses.begin(), f->uses.end());
        o.allow_advisories.insert(f->allow_advisories.begin(), f->allow_advisories.end());
        o.allow_missing.insert(f->allow_missing.begin(), f->allow_missing.end());
        o.knowledge_files = user_knowledge_files(f->knowledge_files);
        if (!f->cache_dir.empty()) o.fetch.cache_dir = f->cache_dir;
        if (f->jobs > 0) o.fetch.jobs = f->jobs;
        // The interpreters this machine has, for a venv spec that names no exact Python.
        o.interpreters = [] {
            std::vector<std::string> versions;
            for (const auto& b : install::find_interpreters(install::default_interpreter_dirs())) versions.push_back(b.version);
            return versions;
        };

        const Output out = output_of(*cmd_ref);
        o.verbose = out.verbose;   // an unsatisfiable spec: the full derivation, not one screen
        Progress progress(out);
        o.on_step = [&](const ResolveStep& s) { show_step(progress, s); };
        ResolveResult r = resolve_project(o);
        std::optional<LockDiff> diff;
        if (r.solved && r.previous) diff = diff_locks(*r.previous, r.lock);
        // With the lock on stdout, everything else goes to stderr.
        std::ostream& info = r.lock_path == "-" ? std::cerr : std::cout;
        if (r.solved && r.lock_path == "-") std::cout << r.lock_text;
        if (f->json) {
            info << json_of(r, diff ? &*diff : nullptr).dump(2) << "\n";
            if (!r.solved) exit_code = 1;
            return;
        }
        if (out.verbose)
            for (const auto& line : r.rounds) std::cerr << "  " << line << "\n";
        if (out.verbose)
            for (const auto& line : r.downloads) std::cerr << "  " << line << "\n";
        if (!out.quiet)
            for (const auto& note : r.notes) std::cerr << out.err("note: ", Output::Style::yellow) << note << "\n";
        if (!r.solved) {
            std::cerr << r.explanation;
            exit_code = 1;
            return;
        }
        if (r.lock_path != "-") info << "wrote " << out.out(r.lock_path, Output::Style::bold) << ": ";
        info << r.lock.packages.size() << " packages";
        if (!r.lock.toolchain.nvcc.empty())
            info << "; nvcc " << r.lock.toolchain.nvcc << " (" << r.lock.toolchain.nvcc_from << "), gcc "
                 << r.lock.toolchain.gcc << ", TORCH_CUDA_ARCH_LIST=" << r.lock.toolchain.cuda_arch_list;
        info << "\n";
        if (r.fetched && r.fetched->transfers > 0 && !out.quiet) {
            char mb[32];
            std::snprintf(mb, sizeof mb, "%.1f", static_cast<double>(r.fetched->bytes) / 1e6);
            info << "  fetched " << r.fetched->documents << " index documents, " << r.fetched->metadata_reads << " metadata reads";
            if (r.fetched->whole_files > 0) info << " (" << r.fetched->whole_files << " of them whole files)";
            info << " (" << mb << " MB)\n";
        }
        // Printed even with -q: the lock installs, and then this machine breaks it.
        for (const auto& w : r.lock.warnings)
            std::cerr << out.err("warning: ", Output::Style::yellow) << "target " << w.target << ": " << w.symptom
                      << "\n  fix: " << w.fix << "\n  source: " << w.source << " [" << w.id << "]\n";
        if (out.quiet) return;
        if (diff) {
            if (diff->empty() && r.file_unchanged) info << "  lock unchanged\n";
            else if (diff->empty()) info << "  packages unchanged; the lock's inputs changed, and it was written again\n";
            auto lines = describe(*diff);
            for (size_t i = 0; i < lines.size(); ++i) {
                auto style = i < diff->packages.size() ? style_of(diff->packages[i].kind) : Output::Style::bold;
                info << "  " << out.out(lines[i], style) << "\n";
            }
        } else {
            if (r.lock.python) info << "  python " << r.lock.python->version << " (venv; " << r.lock.python->from << ")\n";
            for (const auto& p : r.lock.packages)
                if (p.name == "torch" || p.name == "pytorch" || p.name == "mmcv-full" || p.name == "python")
                    info << "  " << p.name << " " << p.version << "\n";
        }
        for (const auto& d : r.lock.decisions) info << "  excluded " << d.excluded << " [" << d.id << "]\n";
    });
}

}  // namespace envlock::cli
