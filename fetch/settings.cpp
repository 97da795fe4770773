#include "fetch/settings.hpp"

#include <cstdlib>

#include <yaml-cpp/yaml.h>

#include "fetch/http_cache.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

namespace fs = std::filesystem;

fs::path default_config_path() {
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return fs::path(xdg) / "envlock" / "config.yaml";
    if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".config" / "envlock" / "config.yaml";
    return {};
}

FetchContext load_fetch_context(const CommandLineSettings& cli) { return load_fetch_context(cli, default_config_path()); }

FetchContext load_fetch_context(const CommandLineSettings& cli, const fs::path& config_path) {
    FetchContext ctx;
    ctx.cache_dir = default_cache_dir();
    ctx.transport.pool = make_connection_pool();
    ctx.transport.tally = std::make_shared<FetchTally>();
    std::vector<MirrorRule> config_rules;

    std::error_code ec;
    if (!config_path.empty() && fs::exists(config_path, ec)) {
        const std::string where = config_path.string();
        YAML::Node root;
        try {
            root = YAML::LoadFile(where);
        } catch (const YAML::Exception& e) {
            throw InputError(where + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
        }
        auto number = [&](const char* key, auto& out) {
            if (!root[key]) return;
            try {
                out = root[key].as<std::remove_reference_t<decltype(out)>>();
            } catch (const YAML::Exception&) {
                throw InputError(where + ":" + std::to_string(root[key].Mark().line + 1) + ": '" + key +
                                 "' must be a number");
            }
        };
        if (root && !root.IsNull() && !root.IsMap())
            throw InputError(where + ": expected a mapping of settings (mirrors, cache-dir, ...)");
        if (root && root.IsMap()) {
            if (auto m = root["mirrors"]) {
                std::string origin = where;
                if (m.IsMap()) {
                    for (const auto& kv : m)
                        config_rules.push_back({kv.first.as<std::string>(), kv.second.as<std::string>(), origin});
                } else if (m.IsSequence()) {
                    for (const auto& item : m) config_rules.push_back(parse_mirror_rule(item.as<std::string>(), origin));
                } else {
                    throw InputError(where + ":" + std::to_string(m.Mark().line + 1) +
                                     ": 'mirrors' must map URL prefixes to replacements");
                }
            }
            if (root["cache-dir"]) ctx.cache_dir = root["cache-dir"].as<std::string>();
            if (root["ca-bundle"]) ctx.transport.ca_bundle = root["ca-bundle"].as<std::string>();
            if (root["offline"]) ctx.offline = root["offline"].as<bool>();
            number("jobs", ctx.transport.jobs);
            number("retries", ctx.transport.retries);
            number("backoff-ms", ctx.transport.backoff_ms);
            number("connect-timeout", ctx.transport.connect_timeout_s);
            number("low-speed-limit", ctx.transport.low_speed_limit);
            number("low-speed-time", ctx.transport.low_speed_time_s);
            number("min-rate", ctx.transport.min_rate);
            number("transfer-grace", ctx.transport.grace_s);
        }
    }

    for (const auto& m : cli.mirrors) ctx.mirrors.rules.push_back(parse_mirror_rule(m, "--mirror"));
    for (const auto& file : cli.mirrors_files)
        for (auto& r : read_mirrors_file(file)) ctx.mirrors.rules.push_back(std::move(r));
    if (const char* env = std::getenv("ENVLOCK_MIRRORS"); env && *env) {
        // Each item in order: a rule, or a mirrors file (a path has no '=' in it).
        std::string_view text = env;
        while (!text.empty()) {
            auto semi = text.find(';');
            std::string item(text.substr(0, semi));
            while (!item.empty() && item.front() == ' ') item.erase(item.begin());
            while (!item.empty() && item.back() == ' ') item.pop_back();
            if (item.find('=') != std::string::npos) ctx.mirrors.rules.push_back(parse_mirror_rule(item, "ENVLOCK_MIRRORS"));
            else if (!item.empty())
                for (auto& r : read_mirrors_file(item)) ctx.mirrors.rules.push_back(std::move(r));
            if (semi == std::string_view::npos) break;
            text.remove_prefix(semi + 1);
        }
    }
    for (auto& r : config_rules) ctx.mirrors.rules.push_back(std::move(r));
    check_unique_prefixes(ctx.mirrors.rules);
    // A rule whose TO carries credentials says they go to the mirror: to every request there.
    {
        std::vector<std::string> targets;
        for (const auto& r : ctx.mirrors.rules) targets.push_back(r.to);
        ctx.transport.credentials = credentials_of(targets);
    }

    if (cli.jobs) {
        if (*cli.jobs < 1) throw InputError("--jobs must be at least 1");
        ctx.transport.jobs = *cli.jobs;
    }
    if (cli.cache_dir) ctx.cache_dir = *cli.cache_dir;
    if (cli.offline) ctx.offline = true;
    return ctx;
}

}  // namespace envlock::fetch
