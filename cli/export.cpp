#include <iostream>

#include "cli/commands.hpp"
#include "cli/lock_path.hpp"
#include "fetch/files.hpp"
#include "fetch/index_sources.hpp"
#include "fetch/settings.hpp"
#include "install/export.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::cli {
namespace {

struct ExportFlags {
    std::string format, file, output, python, platform, cache_dir;
    std::vector<std::string> mirrors, mirrors_files;
    bool locked_only = false, offline = false;
};

// Each locked PyPI release's files as its indexes list them now (through the HTTP cache and
// the mirrors, as resolve reads them), for the requirements export's hashes.
std::map<std::string, IndexRecords> release_files(const Lock& lock, const ExportFlags& f) {
    std::vector<std::string> names;
    for (const auto& p : lock.packages)
        if (p.kind == Ecosystem::pypi) names.push_back(pep508::normalize_name(p.name));
    std::map<std::string, IndexRecords> out;
    if (names.empty()) return out;
    fetch::CommandLineSettings settings;
    if (!f.cache_dir.empty()) settings.cache_dir = f.cache_dir;
    settings.mirrors = f.mirrors;
    settings.mirrors_files = f.mirrors_files;
    settings.offline = f.offline;
    auto ctx = fetch::load_fetch_context(settings);
    auto pip = install::pip_sources(lock);
    fetch::IndexSources sources;
    sources.index_urls = pip.indexes;
    sources.find_links = pip.find_links;
    if (sources.index_urls.empty() && sources.find_links.empty()) sources.index_urls.push_back("https://pypi.org/simple");
    auto records = fetch::find_pypi_records(sources, names, ctx);
    for (size_t i = 0; i < names.size(); ++i) out[names[i]] = std::move(records[i]);
    return out;
}

}  // namespace

void add_export(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("export", "Write the lock for pip or conda: a --require-hashes requirements file, "
                                             "a conda @EXPLICIT list, or an environment.yml with pins");
    auto f = std::make_shared<ExportFlags>();
    cmd->add_option("--format", f->format, "requirements | conda-explicit | environment-yml")->required();
    cmd->add_option("LOCK", f->file, "the lock, or a directory holding envlock.yaml (default ./envlock.yaml)");
    cmd->add_option("-o,--output", f->output, "write to FILE (atomically) instead of stdout");
    cmd->add_option("--python", f->python, "requirements: only the hashes of the files this Python (X.Y) installs (default: every file's)");
    cmd->add_option("--platform", f->platform, "requirements, with --python: the platform those files are for (default linux-64)");
    cmd->add_flag("--locked-only", f->locked_only, "requirements: only the locked files' hashes (valid for the lock's target; reads no index)");
    cmd->add_flag("--offline", f->offline, "read the index pages from the HTTP cache only");
    cmd->add_option("--cache-dir", f->cache_dir, "HTTP cache directory (default $XDG_CACHE_HOME/envlock)");
    cmd->add_option("--mirror", f->mirrors, "fetch URLs under FROM from TO instead (FROM=TO); repeatable")->allow_extra_args(false);
    cmd->add_option("--mirrors-file", f->mirrors_files, "a mirrors file (`mirrors:` FROM: TO); repeatable; ENVLOCK_MIRRORS may name one too")->allow_extra_args(false);
    cmd->callback([f] {
        auto format = install::parse_export_format(f->format);
        if (!f->platform.empty() && f->python.empty()) throw InputError("--platform needs --python: expected --python X.Y to choose files for");
        if (f->locked_only && !f->python.empty()) throw InputError("--locked-only and --python exclude each other: the locked files are for the lock's own Python");
        std::string path = lock_path(f->file);
        Lock lock = read_lock(read_text_file(path, "lock"), path);
        install::RequirementsOptions requirements;
        if (format == install::ExportFormat::requirements && !f->locked_only) {
            requirements.files = release_files(lock, *f);
            requirements.python = f->python;
            requirements.platform = f->platform;
        }
        std::string text = install::export_lock(lock, format, std::filesystem::path(path).filename().string(), requirements);
        if (f->output.empty()) std::cout << text;
        else write_file_atomically(f->output, text);
    });
    (void)exit_code;
}

}  // namespace envlock::cli
