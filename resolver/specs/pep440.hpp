#pragma once
// PEP 440 versions and version specifiers, with the semantics pip applies (as implemented by
// the `packaging` library): normalization, total ordering, and the special rules for local
// labels, pre-releases and post-releases in specifiers.
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envlock::pep440 {

class Version {
public:
    // Throws envlock::InputError("invalid PEP 440 version 'x': expected … at column N").
    static Version parse(std::string_view text);
    static std::optional<Version> try_parse(std::string_view text);

    // Normalized form: "1.0.post1", "1.0rc1", "1!2.0", "1.9.0+cu111".
    std::string str() const;

    // The epoch as its digits without leading zeros, "0" when none: PEP 440 sets no bound on
    // any number of a version (packaging and uv take "1000000000!1" and 2^64 alike), so the
    // epoch and the pre/post/dev numbers are digits too, and compare by length, then text.
    const std::string& epoch() const { return epoch_; }
    // Release segments as integers (saturated at 2^63-1: for Python and wheel tag versions),
    // and as their digits (PEP 440 sets no limit; ordering and text use these).
    const std::vector<long long>& release() const { return release_; }
    const std::vector<std::string>& release_digits() const { return release_digits_; }
    // A dev release counts as a pre-release, as PEP 440 says.
    bool is_prerelease() const { return pre_.has_value() || dev_.has_value(); }
    bool is_devrelease() const { return dev_.has_value(); }
    bool is_postrelease() const { return post_.has_value(); }
    const std::string& local() const { return local_; }  // "cu111" or ""

    // "a", "b" or "rc" and its number's digits, when this is a pre-release.
    std::optional<std::pair<std::string, std::string>> pre() const;
    const std::optional<std::string>& post() const { return post_; }
    const std::optional<std::string>& dev() const { return dev_; }

    Version public_version() const;  // without the local label
    Version base_version() const;    // epoch and release only

    std::strong_ordering operator<=>(const Version& other) const;
    bool operator==(const Version& other) const { return (*this <=> other) == 0; }

private:
    std::string epoch_ = "0";
    std::vector<long long> release_;
    std::vector<std::string> release_digits_;
    int pre_kind_ = 0;  // 0 a, 1 b, 2 rc (only meaningful when pre_ is set)
    std::optional<std::string> pre_;    // digits without leading zeros, as every number here
    std::optional<std::string> post_;
    std::optional<std::string> dev_;
    std::string local_;
};

// One clause such as ">=1.19", "==1.9.*", "~=2.2", "===foo".
class Specifier {
public:
    enum class Op { compatible, equal, not_equal, less_equal, greater_equal, less, greater, arbitrary };

    static Specifier parse(std::string_view text);  // throws InputError

    Op op() const { return op_; }
    const std::string& version_text() const { return version_text_; }  // as written, "1.9.*"
    bool wildcard() const { return wildcard_; }

    // Whether the clause itself names a pre-release (then it admits pre-releases).
    bool names_prerelease() const;
    // The operator's rule alone, pre-release exclusion not applied.
    bool matches(const Version& candidate) const;
    bool contains(const Version& candidate, std::optional<bool> prereleases = std::nullopt) const;

    std::string str() const;

private:
    Op op_ = Op::equal;
    std::string version_text_;
    bool wildcard_ = false;
    std::optional<Version> version_;  // absent only for ===
};

class SpecifierSet {
public:
    // "==1.9.*,!=1.9.2"; "" is the empty set. Throws InputError naming the bad clause.
    static SpecifierSet parse(std::string_view text);
    // For parsers of larger texts (PEP 508): parses whole[offset, offset+length) and reports
    // errors as "invalid <what> '<whole>': expected … at column N" with N counted in `whole`.
    static SpecifierSet parse_within(std::string_view whole, std::size_t offset, std::size_t length,
                                     std::string_view what);

    // PEP 440 pre-release rule: a pre-release is excluded unless `prereleases` is true, or
    // (nullopt) a clause of the set itself names a pre-release. The empty set contains every
    // final release.
    bool contains(const Version& candidate, std::optional<bool> prereleases = std::nullopt) const;

    // The full rule as pip applies it when choosing among candidates: also "if nothing else
    // matches, pre-releases are accepted". Keeps the input order.
    std::vector<Version> filter(const std::vector<Version>& candidates,
                                std::optional<bool> prereleases = std::nullopt) const;

    bool prereleases_named() const;
    const std::vector<Specifier>& specifiers() const { return specs_; }
    std::string str() const;  // clauses joined by ",", in the order given
    bool empty() const { return specs_.empty(); }

private:
    std::vector<Specifier> specs_;
};

}  // namespace envlock::pep440
