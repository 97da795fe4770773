#pragma once
// Everything a fetch needs to know about the user's network setup, gathered from the
// command line, the environment and $XDG_CONFIG_HOME/envlock/config.yaml, in that order
// of precedence. config.yaml (every key optional):
//
//   mirrors:                       # URL prefix -> replacement (a list of "FROM=TO" works too)
//     https://conda.anaconda.org/: https://mirrors.example.edu/anaconda/cloud/
//     https://pypi.org/simple: file:///srv/pypi/simple
//   cache-dir: /scratch/envlock-cache
//   ca-bundle: /etc/ssl/site-ca.pem
//   offline: false
//   jobs: 8
//   retries: 4
//   backoff-ms: 500
//   connect-timeout: 30           # seconds
//   low-speed-limit: 1024         # bytes/s ...
//   low-speed-time: 30            # ... for this many seconds aborts a transfer (and retries it)
//   min-rate: 10240               # bytes/s a whole transfer, resumes and retries included, must
//   transfer-grace: 60            # average after this many seconds (0: no such deadline)
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fetch/mirrors.hpp"
#include "fetch/transport.hpp"

namespace envlock::fetch {

struct DocumentLog;   // fetch/documents.hpp

struct FetchContext {
    TransportOptions transport;
    std::filesystem::path cache_dir;   // empty: no cache
    Mirrors mirrors;
    bool offline = false;              // cache only; nothing goes on the network
    std::shared_ptr<DocumentLog> read_log;   // set: every index document used is stamped into it
};

// ENVLOCK_MIRRORS holds "FROM=TO" rules and mirrors files (an item without '='), ';'-separated.
// What the command line said; unset fields fall through to the environment and the config.
struct CommandLineSettings {
    std::optional<int> jobs;
    std::optional<std::string> cache_dir;
    std::vector<std::string> mirrors;  // "FROM=TO" each
    std::vector<std::string> mirrors_files;   // --mirrors-file: after --mirror, before ENVLOCK_MIRRORS
    bool offline = false;
};

// $XDG_CONFIG_HOME/envlock/config.yaml, else ~/.config/envlock/config.yaml.
std::filesystem::path default_config_path();

// Throws InputError naming the file and key for a malformed config or --mirror.
FetchContext load_fetch_context(const CommandLineSettings& cli);
FetchContext load_fetch_context(const CommandLineSettings& cli, const std::filesystem::path& config_path);

}  // namespace envlock::fetch
