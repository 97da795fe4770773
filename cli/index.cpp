// `envlock index list NAME`: every version the given sources offer, newest first, with its
// builds (conda) or files (PyPI), like `pip index versions` and `micromamba search`.
#include <chrono>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "fetch/index_listing.hpp"
#include "fetch/index_sources.hpp"
#include "fetch/transport.hpp"
#include "fetch/settings.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::cli {

namespace {

struct IndexListOptions {
    std::string name;
    std::vector<std::string> channels, index_urls, find_links, mirrors, mirrors_files;
    bool json = false;
    bool offline = false;
    std::string cache_dir;
    int jobs = 0;
};

const char* ecosystem_name(Ecosystem e) {
    switch (e) {
    case Ecosystem::conda: return "conda";
    case Ecosystem::pypi: return "pypi";
    default: return "source";
    }
}

nlohmann::json file_json(const IndexRecord& r) {
    nlohmann::json j = {{"ecosystem", ecosystem_name(r.ecosystem)}, {"name", r.name}, {"filename", r.filename},
                        {"url", r.url}, {"source", r.ecosystem == Ecosystem::conda ? r.channel : r.index}};
    if (r.ecosystem == Ecosystem::conda) {
        j["build"] = r.build;
        j["build-number"] = r.build_number;
        j["subdir"] = r.subdir;
        j["depends"] = r.depends;
        if (!r.track_features.empty()) j["track-features"] = r.track_features;
        if (!r.noarch.empty()) j["noarch"] = r.noarch;
    } else {
        j["tags"] = r.build;
        if (!r.requires_python.empty()) j["requires-python"] = r.requires_python;
        if (r.yanked) j["yanked"] = r.yanked_reason.empty() ? nlohmann::json(true) : nlohmann::json(r.yanked_reason);
    }
    if (!r.sha256.empty()) j["sha256"] = r.sha256;
    if (r.size) j["size"] = r.size;
    return j;
}

void print_text(const std::string& name, const std::vector<fetch::VersionGroup>& groups) {
    std::cout << name << ": " << groups.size() << (groups.size() == 1 ? " version" : " versions") << "\n";
    std::cout << "Available versions:";
    for (size_t i = 0; i < groups.size(); ++i) std::cout << (i ? ", " : " ") << groups[i].version;
    std::cout << "\n";
    for (const auto& g : groups) {
        std::cout << "\n" << g.version << "\n";
        for (const auto& r : g.files) {
            std::cout << "  " << ecosystem_name(r.ecosystem) << "  ";
            if (r.ecosystem == Ecosystem::conda) std::cout << r.subdir << "  " << r.build;
            else std::cout << (r.build.empty() ? std::string("sdist") : r.build);
            if (!r.requires_python.empty()) std::cout << "  requires-python " << r.requires_python;
            if (r.yanked) std::cout << "  YANKED" << (r.yanked_reason.empty() ? "" : " (" + r.yanked_reason + ")");
            std::cout << "  " << r.url << "\n";
        }
    }
}

void run_list(const IndexListOptions& o, const Output& out, int& exit_code) {
    fetch::CommandLineSettings cli;
    if (o.jobs) cli.jobs = o.jobs;
    if (!o.cache_dir.empty()) cli.cache_dir = o.cache_dir;
    cli.mirrors = o.mirrors;
    cli.mirrors_files = o.mirrors_files;
    cli.offline = o.offline;
    auto ctx = fetch::load_fetch_context(cli);

    fetch::IndexSources sources;
    sources.channels = o.channels;
    sources.index_urls = o.index_urls;
    sources.find_links = o.find_links;
    // Like `pip index versions`: PyPI unless told otherwise.
    if (sources.channels.empty() && sources.index_urls.empty() && sources.find_links.empty())
        sources.index_urls.push_back("https://pypi.org/simple");
    // An index's credentials go to its files and metadata on the same host too.
    {
        std::vector<std::string> urls = sources.index_urls;
        urls.insert(urls.end(), sources.find_links.begin(), sources.find_links.end());
        urls.insert(urls.end(), sources.channels.begin(), sources.channels.end());
        for (auto& c : fetch::credentials_of(urls)) ctx.transport.credentials.push_back(std::move(c));
    }

    // A cold fetch of a big channel takes seconds: the same progress line as resolve's.
    Progress progress(out);
    fetch::TransferTally tally;
    const auto start = std::chrono::steady_clock::now();
    ctx.transport.progress = [&](std::size_t index, std::uint64_t received, std::uint64_t, bool done) {
        tally.record(index, received, done);
        progress.update(fetching_indexes_text(tally.finished(), tally.bytes()));
        return true;
    };
    auto records = fetch::find_records(sources, o.name, ctx);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (tally.finished()) progress.finish(fetched_indexes_text(tally.finished(), tally.bytes(), seconds), seconds);
    auto groups = fetch::group_by_version(std::move(records));
    if (groups.empty()) {
        std::string where;
        for (const auto* list : {&sources.channels, &sources.index_urls, &sources.find_links})
            for (const auto& s : *list) where += (where.empty() ? "" : ", ") + s;
        throw UnmetError("no versions of '" + o.name + "' found in " + where);
    }
    if (o.json) {
        nlohmann::json out = {{"name", o.name}, {"versions", nlohmann::json::array()}};
        for (const auto& g : groups) {
            nlohmann::json files = nlohmann::json::array();
            for (const auto& r : g.files) files.push_back(file_json(r));
            out["versions"].push_back({{"version", g.version}, {"files", files}});
        }
        std::cout << out.dump(2) << "\n";
    } else {
        print_text(o.name, groups);
    }
    exit_code = 0;
}

}  // namespace

void add_index(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("index", "List what package indexes offer (index list NAME)");
    cmd->require_subcommand(1);
    auto opts = std::make_shared<IndexListOptions>();
    auto* list = cmd->add_subcommand("list", "Every version NAME offers in the given sources, newest first, "
                                             "with its builds or files");
    list->add_option("name", opts->name, "Package name (conda name for channels, project name for PyPI)")->required();
    list->add_option("-c,--channel", opts->channels, "Conda channel URL or name (repeatable)");
    list->add_option("-i,--index-url", opts->index_urls, "Simple index root, or a JSON API root ending in /pypi (repeatable)");
    list->add_option("-f,--find-links", opts->find_links, "HTML page of links, or a file:// directory (repeatable)");
    list->add_flag("--json", opts->json, "Machine-readable output");
    list->add_flag("--offline", opts->offline, "Use the HTTP cache only; name what is missing");
    list->add_option("--cache-dir", opts->cache_dir, "HTTP cache directory (default $XDG_CACHE_HOME/envlock)");
    list->add_option("--mirror", opts->mirrors, "FROM=TO: fetch URLs starting with FROM from TO instead (repeatable)");
    list->add_option("--mirrors-file", opts->mirrors_files, "a mirrors file (`mirrors:` FROM: TO, as `envlock-mirror build` writes one); repeatable; ENVLOCK_MIRRORS may name one too");
    list->add_option("-j,--jobs", opts->jobs, "Parallel downloads (default 8)")->check(CLI::PositiveNumber);
    list->callback([opts, list, &exit_code] { run_list(*opts, output_of(*list), exit_code); });
}

}  // namespace envlock::cli
