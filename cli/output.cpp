#include "cli/output.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace envlock::cli {

namespace {

const char* code_of(Output::Style style) {
    switch (style) {
        case Output::Style::bold: return "\033[1m";
        case Output::Style::green: return "\033[32m";
        case Output::Style::red: return "\033[31m";
        case Output::Style::yellow: return "\033[33m";
        case Output::Style::dim: return "\033[2m";
        case Output::Style::plain: return "";
    }
    return "";
}

std::string paint(bool on, const std::string& text, Output::Style style) {
    if (!on || style == Output::Style::plain) return text;
    return code_of(style) + text + "\033[0m";
}

bool colour_allowed(int fd) {
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color && *no_color) return false;
    const char* term = std::getenv("TERM");
    if (term && std::string(term) == "dumb") return false;
    return ::isatty(fd) == 1;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// Every long and short name of a command's options, as typed: "--json", "-o".
std::vector<std::string> flag_names(const CLI::App& cmd) {
    std::vector<std::string> names;
    for (const CLI::Option* opt : cmd.get_options()) {
        for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
        for (const auto& s : opt->get_snames()) names.push_back("-" + s);
    }
    return names;
}

bool takes_positionals(const CLI::App& cmd) {
    for (const CLI::Option* opt : cmd.get_options())
        if (opt->get_positional()) return true;
    return false;
}

// "envlock", "envlock inspect"
std::string command_path(const CLI::App& cmd) {
    std::string path;
    for (const CLI::App* a = &cmd; a; a = a->get_parent()) {
        std::string name = a->get_parent() ? a->get_name() : std::string("envlock");
        path = path.empty() ? name : name + " " + path;
    }
    return path;
}

}  // namespace

std::string Output::out(const std::string& text, Style style) const { return paint(color_out, text, style); }
std::string Output::err(const std::string& text, Style style) const { return paint(color_err, text, style); }

void add_output_flags(CLI::App& root) {
    root.add_flag("-q,--quiet")->description("print results only: no notes, no change summary, no progress");
    root.add_flag("-v,--verbose")->description("print the full derivation where a command has one");
    // Let `envlock resolve -q` reach the root's flags.
    root.fallthrough();
}

Output output_of(const CLI::App& cmd) {
    const CLI::App* root = &cmd;
    while (root->get_parent()) root = root->get_parent();
    Output o;
    o.quiet = root->get_option("--quiet")->count() > 0;
    o.verbose = root->get_option("--verbose")->count() > 0 && !o.quiet;
    o.color_out = colour_allowed(STDOUT_FILENO);
    o.color_err = colour_allowed(STDERR_FILENO);
    const char* term = std::getenv("TERM");
    o.tty_err = ::isatty(STDERR_FILENO) == 1 && !(term && std::string(term) == "dumb");
    return o;
}

std::string nearest(const std::string& typed, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_distance = std::string::npos;
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(typed, c);
        if (d < best_distance) {
            best_distance = d;
            best = c;
        }
    }
    std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(1, typed.size() / 3));
    return best_distance <= limit ? best : "";
}

std::string suggestion_for(const CLI::App& root, int argc, char** argv) {
    const CLI::App* current = &root;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--") break;
        if (!arg.empty() && arg[0] == '-') {
            std::string flag = arg.substr(0, arg.find('='));
            std::vector<std::string> names;
            for (const CLI::App* a = current; a; a = a->get_parent()) {
                auto more = flag_names(*a);
                names.insert(names.end(), more.begin(), more.end());
            }
            if (std::find(names.begin(), names.end(), flag) != names.end()) continue;
            std::string close = nearest(flag, names);
            if (!close.empty()) return "unknown flag '" + flag + "' for `" + command_path(*current) + "`; did you mean '" + close + "'?";
            return "";
        }
        // A word where the command expects a subcommand (it has some and takes no positional).
        std::vector<std::string> commands;
        for (const CLI::App* sub : current->get_subcommands([](const CLI::App*) { return true; })) commands.push_back(sub->get_name());
        if (commands.empty() || takes_positionals(*current)) continue;
        if (std::find(commands.begin(), commands.end(), arg) != commands.end()) {
            current = current->get_subcommand(arg);
            continue;
        }
        std::string where = command_path(*current);
        std::string close = nearest(arg, commands);
        if (!close.empty()) return "unknown command '" + arg + "' for `" + where + "`; did you mean '" + close + "'?";
        return "unknown command '" + arg + "' for `" + where + "`; see `" + where + " --help`";
    }
    return "";
}

std::string human_bytes(unsigned long long bytes) {
    char buf[32];
    if (bytes >= 1000ull * 1000 * 1000) std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
    else if (bytes >= 1000ull * 1000) std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
    else if (bytes >= 1000) std::snprintf(buf, sizeof buf, "%llu kB", bytes / 1000);
    else std::snprintf(buf, sizeof buf, "%llu B", bytes);
    return buf;
}

std::string seconds_text(double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, seconds < 10 ? "%.2f s" : "%.1f s", seconds);
    return buf;
}

std::string fetching_indexes_text(std::size_t documents, unsigned long long bytes) {
    return "Fetching indexes: " + std::to_string(documents) + " documents, " + human_bytes(bytes);
}

std::string fetched_indexes_text(std::size_t documents, unsigned long long bytes, double seconds) {
    return "Fetched " + std::to_string(documents) + " index documents (" + human_bytes(bytes) + ") in " + seconds_text(seconds);
}

void Progress::update(const std::string& text) {
    if (o_.quiet || !o_.tty_err) return;
    long long now = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    if (drawn_ && now - last_draw_ms_ < 100) return;
    last_draw_ms_ = now;
    // \r and "erase to end of line" (ECMA-48 EL): the line is rewritten, never scrolled.
    std::cerr << "\r\033[K" << o_.err(text, Output::Style::dim) << std::flush;
    drawn_ = true;
}

void Progress::finish(const std::string& text, double seconds) {
    if (o_.quiet || (!o_.tty_err && seconds < 1.0)) return;
    clear();
    std::cerr << text << "\n" << std::flush;
}

void Progress::clear() {
    if (!drawn_) return;
    std::cerr << "\r\033[K" << std::flush;
    drawn_ = false;
}

}  // namespace envlock::cli
