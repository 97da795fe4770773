#pragma once
// URL prefix mirrors: a channel or index URL that starts with FROM is fetched from TO
// instead, so the same lock works behind a university mirror or on an air-gapped site
// (TO may be a file:// URL). The lock always records the original URL.
#include <string>
#include <string_view>
#include <vector>

namespace envlock::fetch {

struct MirrorRule {
    std::string from;
    std::string to;
    std::string origin;   // where the rule was written ("--mirror", "ENVLOCK_MIRRORS", a config path)
};

// Rules in priority order: --mirror first, then --mirrors-file, then ENVLOCK_MIRRORS (its rules
// and files in order), then the config file. The first origin with any matching rule decides; within it the longest FROM wins.
struct Mirrors {
    std::vector<MirrorRule> rules;
    std::string apply(std::string_view url) const;
};

// "FROM=TO" (the first '=' splits; both sides required). Throws InputError naming `origin`.
MirrorRule parse_mirror_rule(std::string_view text, std::string_view origin);
// Two rules for one FROM in one origin leave it unclear which was meant: InputError naming both.
// (The same FROM in two origins is how the command line overrides a config file.)
void check_unique_prefixes(const std::vector<MirrorRule>& rules);

// "FROM=TO;FROM2=TO2" as in ENVLOCK_MIRRORS; empty items are ignored.
std::vector<MirrorRule> parse_mirror_list(std::string_view text, std::string_view origin);

// A mirrors file (`--mirrors-file`, an ENVLOCK_MIRRORS item without '=', or what
// `envlock-mirror build` writes beside its tree): YAML with one key, `mirrors:`, mapping URL
// prefixes to replacements (a list of "FROM=TO" works too). A relative TO is taken from the
// file's own folder, so a mirror tree and its file move together. Each rule's origin is the
// file's path. InputError naming the file and line for anything else; EnvironmentError when
// the file cannot be read.
std::vector<MirrorRule> read_mirrors_file(const std::string& path);

}  // namespace envlock::fetch
