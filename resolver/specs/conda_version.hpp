#pragma once
// Conda's version semantics: VersionOrder (the total order conda sorts versions by) and
// VersionSpec (the version part of a MatchSpec: ">=1.19,<1.20.0a0", "1.9.*", "1.8.0|1.9.*").
// Both are parsed once and then compared/matched without allocating, because the solver
// evaluates specs against every candidate record of a name.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envlock::conda {

// A conda version as conda's VersionOrder sees it:
//   [epoch!]segment(.segment)*[+local(.local)*], '_' separates like '.', '-' too when no '_'
//   appears; each segment is a run of numbers and strings; a segment starting with a
//   string gets an implicit 0 in front; strings sort below numbers, "dev" below every other
//   string ('*' aside), "post" above every number; comparison is case-insensitive; a missing
//   atom counts as 0 (1.1 == 1.1.0, 1.0+0 == 1.0).
class Version {
public:
    static Version parse(std::string_view text);                 // throws InputError
    static std::optional<Version> try_parse(std::string_view text) noexcept;

    const std::string& str() const { return norm_; }   // as given: trimmed, lower case, '-' read as '_'
    int compare(const Version& other) const;                     // <0, 0, >0
    // conda's VersionOrder.startswith: every segment of `prefix` but the last is equal, and
    // the last one is a prefix atom-wise ("1.9" is a prefix of 1.9, 1.9.0, 1.9.5, 1.9a1; not 1.90).
    bool starts_with(const Version& prefix) const;

    bool operator==(const Version& o) const { return compare(o) == 0; }
    bool operator!=(const Version& o) const { return compare(o) != 0; }
    bool operator<(const Version& o) const { return compare(o) < 0; }
    bool operator<=(const Version& o) const { return compare(o) <= 0; }
    bool operator>(const Version& o) const { return compare(o) > 0; }
    bool operator>=(const Version& o) const { return compare(o) >= 0; }

    // Representation: atoms point into norm_, so a copy stays valid. (Comparison helpers in
    // the .cpp reach the private parts as a friend.)
    enum class AtomKind : std::uint8_t { number, post, dev, text };
    struct Atom {
        AtomKind kind;
        std::uint32_t offset;   // into norm_ (number: digits without leading zeros; text: the string)
        std::uint32_t length;   // number with length 0 is the value 0
    };
    struct Segment { std::uint32_t begin, end; };   // atom index range

private:
    std::string norm_;
    std::vector<Atom> atoms_;
    std::vector<Segment> segments_;   // epoch first, then the version's segments, then local's
    std::uint32_t local_begin_ = 0;   // index in segments_ where the local part starts
    friend struct VersionAccess;
};

// The version constraint of a MatchSpec, as a tree of `,` (and, binds tighter) and `|` (or)
// over single constraints, with parentheses. Single constraints:
//   "1.9" (== exact), "==1.9", "!=1.9", "<", "<=", ">", ">=", "=1.9" and "1.9.*" / "1.9*"
//   (prefix), "!=1.9.*" (not prefix), "~=1.4" (>=1.4 and prefix 1), "*" (any),
//   globs with an inner '*' ("1.*.3", matched against the version text), and regexes "^…$".
class VersionSpec {
public:
    VersionSpec();                                         // matches any version
    static VersionSpec parse(std::string_view text);       // throws InputError
    bool contains(const Version& v) const;
    std::string str() const { return text_; }              // normalized text, "*" when any
    bool is_any() const;
    // "==1.9.0" / "1.9.0": the one version it names (used for canonical text and pinning).
    bool is_exact() const;

    struct Node;   // defined in conda_version.cpp
private:
    std::string text_;
    std::shared_ptr<const Node> root_;   // null = any; shared because it is immutable
};

// conda's string globs: '*' matches any run of characters, nothing else is special, and the
// whole string must match ("py38*", "*cuda11.1*", "1.*.3"). No allocation.
bool glob_match(std::string_view pattern, std::string_view s) noexcept;

// Why a spec's "^…$" regex must not reach std::regex, or nullopt. libstdc++ reads a
// backreference number or a {n,m} count into an int without a bound (signed overflow inside
// its regex compiler, found by fuzzing), and matches by backtracking, exponential in nested
// or stacked repetition; conda's version, name and build regexes need none of these.
std::optional<std::string> unsafe_regex(std::string_view pattern);

}  // namespace envlock::conda
