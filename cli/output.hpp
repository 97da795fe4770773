#pragma once
// How a command prints: quiet or verbose (root flags -q/-v, accepted after the subcommand too),
// colour only on a terminal and never with NO_COLOR (https://no-color.org), and the nearest
// command or flag when a user mistypes one.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace envlock::cli {

struct Output {
    bool quiet = false;      // results only; no notes, no summaries
    bool verbose = false;    // the full derivation where a command has one
    bool color_out = false;  // stdout is a terminal and NO_COLOR is unset
    bool color_err = false;  // the same for stderr
    bool tty_err = false;    // stderr is a terminal (progress is drawn in place only there)

    enum class Style { plain, bold, green, red, yellow, dim };
    // `text` in that style when the stream is coloured, else unchanged.
    std::string out(const std::string& text, Style style) const;
    std::string err(const std::string& text, Style style) const;
};

// Progress on stderr for steps that can take over a second: on a terminal one line redrawn in
// place (at most ten times a second) and replaced by the step's outcome; otherwise only the
// outcome lines of steps that took a second or more, one per step; nothing with --quiet.
class Progress {
public:
    explicit Progress(const Output& o) : o_(o) {}
    ~Progress() { clear(); }
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    void update(const std::string& text);    // the step as it runs
    void finish(const std::string& text, double seconds);    // the step's outcome line
    void clear();                            // the running line gone, no outcome line

private:
    const Output o_;
    bool drawn_ = false;
    long long last_draw_ms_ = 0;
};

// "35.2 MB", "812 kB", "96 B".
std::string human_bytes(unsigned long long bytes);
// "0.31 s", "12.4 s".
std::string seconds_text(double seconds);
// The index-fetch step as resolve and index list show it: running, and its outcome.
std::string fetching_indexes_text(std::size_t documents, unsigned long long bytes);
std::string fetched_indexes_text(std::size_t documents, unsigned long long bytes, double seconds);

// The root's -q/-v flags (registered by add_output_flags) as seen from a subcommand's callback.
void add_output_flags(CLI::App& root);
Output output_of(const CLI::App& cmd);

// The candidate closest to `typed` by edit distance, if it is close enough to be a likely typo
// (at most a third of its length, and at most 3 edits); "" otherwise.
std::string nearest(const std::string& typed, const std::vector<std::string>& candidates);

// "unknown command 'reslove'; did you mean 'resolve'?" for an argv whose command or flag the
// parser refused; "" when no suggestion fits.
std::string suggestion_for(const CLI::App& root, int argc, char** argv);

}  // namespace envlock::cli
