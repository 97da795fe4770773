#include "resolver/specs/pep440.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "resolver/specs/errors.hpp"

namespace envlock::pep440 {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_sep(char c) { return c == '-' || c == '_' || c == '.'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_alnum_lower(char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); }

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view strip(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// Numeric local segments are numbers: "+cu.05" normalizes to "+cu.5", as pip prints it.
std::string strip_local_zeros(const std::string& local) {
    std::string out;
    std::size_t start = 0;
    while (start <= local.size()) {
        std::size_t dot = local.find('.', start);
        if (dot == std::string::npos) dot = local.size();
        std::string_view seg = std::string_view(local).substr(start, dot - start);
        if (std::all_of(seg.begin(), seg.end(), is_digit))
            while (seg.size() > 1 && seg.front() == '0') seg.remove_prefix(1);
        if (!out.empty() || start > 0) out += '.';
        out += seg;
        start = dot + 1;
    }
    return out;
}

// Two numbers written as digits without leading zeros: the longer is larger, else the text decides.
int compare_digits(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    return a.compare(b) < 0 ? -1 : a.compare(b) > 0 ? 1 : 0;
}

// What a failed parse reports: the 1-based column in the original text and what was expected.
struct ParseFailure {
    std::size_t column;
    std::string expected;
};

// A hand-written parser equivalent to the canonical PEP 440 pattern (Appendix B), case
// insensitive. Works on the lowercased text; `offset` maps back to columns of the original.
class VersionParser {
public:
    explicit VersionParser(std::string_view lowered) : s_(lowered) {}

    struct Parts {
        std::string epoch = "0";
        std::vector<std::string> release;   // digits without leading zeros: PEP 440 sets no limit
        int pre_kind = 0;
        std::optional<std::string> pre, post, dev;   // digits likewise
        std::string local;
    };

    std::optional<ParseFailure> run(Parts& out) {
        if (peek() == 'v') ++pos_;
        if (!is_digit(peek())) return fail("a digit");
        std::string first = digits();
        if (peek() == '!') {
            out.epoch = first;
            ++pos_;
            if (!is_digit(peek())) return fail("a release number after the epoch '!'");
            first = digits();
        }
        out.release.push_back(first);
        while (peek() == '.' && is_digit(peek(1))) {
            ++pos_;
            out.release.push_back(digits());
        }
        if (auto f = pre_release(out)) return f;
        if (auto f = post_release(out)) return f;
        if (auto f = dev_release(out)) return f;
        if (peek() == '+') {
            ++pos_;
            if (auto f = local_label(out)) return f;
        }
        if (pos_ != s_.size()) {
            if (peek() == '*' || (peek() == '.' && peek(1) == '*'))
                return fail("a version without a wildcard ('.*' only follows == or != in a specifier)");
            return fail("end of version (a release like 1.2, then optional aN/bN/rcN, .postN, .devN, +local)");
        }
        return std::nullopt;
    }

    std::size_t pos() const { return pos_; }

private:
    char peek(std::size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
    bool starts(std::string_view word, std::size_t at) const { return s_.substr(std::min(at, s_.size())).starts_with(word); }
    ParseFailure fail_at(std::size_t at, std::string expected) const { return {at + 1, std::move(expected)}; }
    std::optional<ParseFailure> fail(std::string expected) const { return fail_at(pos_, std::move(expected)); }

    // A number (release segment, epoch, pre/post/dev): any number of digits, kept as text
    // without leading zeros.
    std::string digits() {
        std::string out;
        while (is_digit(peek())) {
            if (!(out.empty() && peek() == '0')) out += peek();
            ++pos_;
        }
        return out.empty() ? "0" : out;
    }

    // [-_.]? then a label from `labels` (longest first); returns the label index or -1.
    int label(const std::vector<std::string_view>& labels, std::size_t& after) const {
        for (std::size_t start : {pos_, is_sep(peek()) ? pos_ + 1 : std::string_view::npos}) {
            if (start == std::string_view::npos) continue;
            for (std::size_t i = 0; i < labels.size(); ++i)
                if (starts(labels[i], start)) {
                    after = start + labels[i].size();
                    return static_cast<int>(i);
                }
        }
        return -1;
    }

    // After a label: [-_.]? digits? ; the number defaults to 0.
    std::optional<ParseFailure> label_number(std::optional<std::string>& out) {
        // The pattern allows a separator with no number; what follows may start with its own
        // optional separator, so taking it here never rejects a valid version.
        if (is_sep(peek())) ++pos_;
        out = is_digit(peek()) ? digits() : std::string("0");
        return std::nullopt;
    }

    std::optional<ParseFailure> pre_release(Parts& out) {
        static const std::vector<std::string_view> labels = {"alpha", "a", "beta", "b", "preview", "pre", "c", "rc"};
        static const int kinds[] = {0, 0, 1, 1, 2, 2, 2, 2};
        std::size_t after = 0;
        int i = label(labels, after);
        // "pre" must not swallow the start of "post"/"preview" handled by order; "r" alone is post.
        if (i < 0) return std::nullopt;
        pos_ = after;
        out.pre_kind = kinds[i];
        return label_number(out.pre);
    }

    std::optional<ParseFailure> post_release(Parts& out) {
        if (peek() == '-' && is_digit(peek(1))) {
            ++pos_;
            out.post = digits();
            return std::nullopt;
        }
        static const std::vector<std::string_view> labels = {"post", "rev", "r"};
        std::size_t after = 0;
        if (label(labels, after) < 0) return std::nullopt;
        pos_ = after;
        return label_number(out.post);
    }

    std::optional<ParseFailure> dev_release(Parts& out) {
        static const std::vector<std::string_view> labels = {"dev"};
        std::size_t after = 0;
        if (label(labels, after) < 0) return std::nullopt;
        pos_ = after;
        return label_number(out.dev);
    }

    std::optional<ParseFailure> local_label(Parts& out) {
        if (!is_alnum_lower(peek())) return fail("a local version label (letters and digits) after '+'");
        while (true) {
            while (is_alnum_lower(peek())) out.local += s_[pos_++];
            if (is_sep(peek()) && is_alnum_lower(peek(1))) {
                out.local += '.';
                ++pos_;
                continue;
            }
            if (is_sep(peek())) return fail_at(pos_ + 1, "letters or digits after the separator in the local label");
            out.local = strip_local_zeros(out.local);
            return std::nullopt;
        }
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

struct ParsedOrFailure {
    std::optional<VersionParser::Parts> parts;
    ParseFailure failure{0, {}};
};

ParsedOrFailure parse_parts(std::string_view text, std::size_t& lead) {
    std::string_view stripped = strip(text);
    lead = static_cast<std::size_t>(stripped.data() - text.data());
    std::string lowered = lower(stripped);
    VersionParser p(lowered);
    VersionParser::Parts parts;
    ParsedOrFailure r;
    if (auto f = p.run(parts)) {
        r.failure = *f;
        r.failure.column += lead;
        return r;
    }
    r.parts = std::move(parts);
    return r;
}

int compare_local(const std::string& a, const std::string& b) {
    // Per PEP 440: segments compare numerically when both are numbers, a number sorts after
    // a string, strings compare lexicographically, and a shorter prefix sorts first.
    auto split = [](const std::string& s) {
        std::vector<std::string_view> out;
        std::size_t start = 0;
        while (start <= s.size()) {
            std::size_t dot = s.find('.', start);
            if (dot == std::string::npos) dot = s.size();
            out.emplace_back(std::string_view(s).substr(start, dot - start));
            start = dot + 1;
        }
        return out;
    };
    auto numeric = [](std::string_view s) { return std::all_of(s.begin(), s.end(), is_digit); };
    auto as_number_cmp = [](std::string_view x, std::string_view y) {
        while (x.size() > 1 && x.front() == '0') x.remove_prefix(1);
        while (y.size() > 1 && y.front() == '0') y.remove_prefix(1);
        if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
        int c = x.compare(y);
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    };
    auto sa = split(a), sb = split(b);
    for (std::size_t i = 0; i < std::min(sa.size(), sb.size()); ++i) {
        bool na = numeric(sa[i]), nb = numeric(sb[i]);
        int c = 0;
        if (na && nb) c = as_number_cmp(sa[i], sb[i]);
        else if (na) c = 1;
        else if (nb) c = -1;
        else c = sa[i].compare(sb[i]) < 0 ? -1 : (sa[i].compare(sb[i]) > 0 ? 1 : 0);
        if (c != 0) return c;
    }
    if (sa.size() == sb.size()) return 0;
    return sa.size() < sb.size() ? -1 : 1;
}

std::strong_ordering from_int(int c) {
    return c < 0 ? std::strong_ordering::less : (c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal);
}

}  // namespace

std::optional<Version> Version::try_parse(std::string_view text) {
    std::size_t lead = 0;
    auto r = parse_parts(text, lead);
    if (!r.parts) return std::nullopt;
    Version v;
    v.epoch_ = r.parts->epoch;
    v.release_digits_ = std::move(r.parts->release);
    // The integer view saturates: its users (Python and wheel tag versions) never see a
    // number that large; ordering and text use the digits.
    for (const auto& d : v.release_digits_)
        v.release_.push_back(d.size() > 18 ? std::numeric_limits<long long>::max() : std::stoll(d));
    v.pre_kind_ = r.parts->pre_kind;
    v.pre_ = r.parts->pre;
    v.post_ = r.parts->post;
    v.dev_ = r.parts->dev;
    v.local_ = std::move(r.parts->local);
    return v;
}

Version Version::parse(std::string_view text) {
    if (auto v = try_parse(text)) return std::move(*v);
    std::size_t lead = 0;
    auto r = parse_parts(text, lead);  // again, for the message: failures are rare
    throw InputError("invalid PEP 440 version '" + std::string(text) + "': expected " + r.failure.expected +
                     " at column " + std::to_string(r.failure.column));
}

std::optional<std::pair<std::string, std::string>> Version::pre() const {
    if (!pre_) return std::nullopt;
    static const char* names[] = {"a", "b", "rc"};
    return std::make_pair(std::string(names[pre_kind_]), *pre_);
}

std::string Version::str() const {
    std::string out;
    if (epoch_ != "0") out += epoch_ + "!";
    for (std::size_t i = 0; i < release_.size(); ++i) {
        if (i) out += '.';
        out += release_digits_[i];
    }
    if (auto p = pre()) out += p->first + p->second;
    if (post_) out += ".post" + *post_;
    if (dev_) out += ".dev" + *dev_;
    if (!local_.empty()) out += "+" + local_;
    return out;
}

Version Version::public_version() const {
    Version v = *this;
    v.local_.clear();
    return v;
}

Version Version::base_version() const {
    Version v;
    v.epoch_ = epoch_;
    v.release_ = release_;
    v.release_digits_ = release_digits_;
    return v;
}

std::strong_ordering Version::operator<=>(const Version& o) const {
    if (int c = compare_digits(epoch_, o.epoch_); c != 0) return from_int(c);
    // Release: trailing zeros do not count (1.0 == 1.0.0).
    std::size_t n = std::max(release_.size(), o.release_.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (int c = compare_digits(i < release_digits_.size() ? release_digits_[i] : "0",
                                   i < o.release_digits_.size() ? o.release_digits_[i] : "0");
            c != 0)
            return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
    }
    // Pre-release key: a dev release of a final sorts before its pre-releases (1.0.dev0 < 1.0a0);
    // no pre-release sorts after every pre-release.
    auto pre_key = [](const Version& v) -> std::pair<int, int> {
        if (!v.pre_ && !v.post_ && v.dev_) return {-1, 0};
        if (!v.pre_) return {1, 0};
        return {0, v.pre_kind_};
    };
    if (auto c = pre_key(*this) <=> pre_key(o); c != 0) return c;
    if (pre_ && o.pre_)
        if (int c = compare_digits(*pre_, *o.pre_); c != 0) return from_int(c);
    // Post: none sorts first. Dev: none sorts last.
    if (post_.has_value() != o.post_.has_value()) return post_ ? std::strong_ordering::greater : std::strong_ordering::less;
    if (post_)
        if (int c = compare_digits(*post_, *o.post_); c != 0) return from_int(c);
    if (dev_.has_value() != o.dev_.has_value()) return dev_ ? std::strong_ordering::less : std::strong_ordering::greater;
    if (dev_)
        if (int c = compare_digits(*dev_, *o.dev_); c != 0) return from_int(c);
    // Local: none sorts first.
    if (local_.empty() != o.local_.empty()) return local_.empty() ? std::strong_ordering::less : std::strong_ordering::greater;
    if (local_.empty()) return std::strong_ordering::equal;
    return from_int(compare_local(local_, o.local_));
}

// ---------------------------------------------------------------------------------------------
// Specifiers

namespace {

struct OpText {
    std::string_view text;
    Specifier::Op op;
};
// Longest first, so "===" is not read as "==" and "<=" not as "<".
constexpr OpText kOps[] = {
    {"===", Specifier::Op::arbitrary}, {"~=", Specifier::Op::compatible}, {"==", Specifier::Op::equal},
    {"!=", Specifier::Op::not_equal},  {"<=", Specifier::Op::less_equal}, {">=", Specifier::Op::greater_equal},
    {"<", Specifier::Op::less},        {">", Specifier::Op::greater},
};

std::string_view op_text(Specifier::Op op) {
    for (const auto& o : kOps)
        if (o.op == op) return o.text;
    return "";
}

[[noreturn]] void bad_specifier(std::string_view text, const std::string& why, std::size_t column) {
    throw InputError("invalid version specifier '" + std::string(text) + "': expected " + why + " at column " +
                     std::to_string(column));
}

// Whether `candidate`'s release, padded with zeros, starts with `want` (same epoch).
bool prefix_match(const Version& candidate, const std::string& epoch, const std::vector<std::string>& want, std::size_t n) {
    if (candidate.epoch() != epoch) return false;
    const auto& have = candidate.release_digits();
    for (std::size_t i = 0; i < n; ++i)
        if (compare_digits(i < have.size() ? have[i] : "0", want[i]) != 0) return false;
    return true;
}

}  // namespace

Specifier Specifier::parse(std::string_view text) {
    std::string_view s = strip(text);
    std::size_t lead = static_cast<std::size_t>(s.data() - text.data());
    Specifier spec;
    bool found = false;
    for (const auto& o : kOps)
        if (s.starts_with(o.text)) {
            spec.op_ = o.op;
            s.remove_prefix(o.text.size());
            lead += o.text.size();
            found = true;
            break;
        }
    if (!found) bad_specifier(text, "an operator (==, !=, <=, >=, <, >, ~=, ===)", lead + 1);
    std::string_view v = strip(s);
    std::size_t vcol = lead + static_cast<std::size_t>(v.data() - s.data()) + 1;
    if (v.empty()) bad_specifier(text, "a version after '" + std::string(op_text(spec.op_)) + "'", vcol);
    spec.version_text_ = std::string(v);

    if (spec.op_ == Op::arbitrary) {
        for (std::size_t i = 0; i < v.size(); ++i)
            if (is_space(v[i]) || v[i] == ',' || v[i] == ';')
                bad_specifier(text, "a version without spaces, ',' or ';' after '==='", vcol + i);
        return spec;
    }

    std::string_view body = v;
    if (v.ends_with(".*")) {
        if (spec.op_ != Op::equal && spec.op_ != Op::not_equal)
            bad_specifier(text, "no '.*' wildcard (only == and != take one)", vcol + v.size() - 2);
        spec.wildcard_ = true;
        body = v.substr(0, v.size() - 2);
    }
    spec.version_ = Version::try_parse(body);
    if (!spec.version_) {
        std::size_t lead_ignored = 0;
        auto r = parse_parts(body, lead_ignored);
        bad_specifier(text, r.failure.expected, vcol + r.failure.column - 1);
    }
    const Version& ver = *spec.version_;
    if (spec.wildcard_ && (ver.pre() || ver.post() || ver.dev() || !ver.local().empty()))
        bad_specifier(text, "only a release (like 1.9) before '.*'", vcol);
    if (!ver.local().empty() && spec.op_ != Op::equal && spec.op_ != Op::not_equal)
        bad_specifier(text, "no local label '+" + ver.local() + "' (only == and != take one)", vcol);
    if (spec.op_ == Op::compatible && ver.release().size() < 2)
        bad_specifier(text, "at least two release numbers after '~=' (like ~=1.4)", vcol);
    return spec;
}

bool Specifier::names_prerelease() const {
    // As pip does since packaging 24.2: every operator but != admits pre-releases when its
    // version is one (so "<2.0rc1" may pick 1.9rc1).
    switch (op_) {
        case Op::not_equal:
            return false;
        case Op::arbitrary: {
            auto v = Version::try_parse(version_text_);
            return v && v->is_prerelease();
        }
        default:
            return version_ && version_->is_prerelease();
    }
}

bool Specifier::matches(const Version& c) const {
    switch (op_) {
        case Op::arbitrary:
            return lower(c.str()) == lower(version_text_);
        case Op::equal:
        case Op::not_equal: {
            bool eq;
            if (wildcard_) eq = prefix_match(c, version_->epoch(), version_->release_digits(), version_->release().size());
            else if (version_->local().empty()) eq = c.public_version() == *version_;  // local label ignored
            else eq = c == *version_;
            return op_ == Op::equal ? eq : !eq;
        }
        case Op::compatible: {
            // ~=V.N means >=V.N and ==V.*, the prefix dropping V.N's last release number.
            if (c.public_version() < *version_) return false;
            return prefix_match(c, version_->epoch(), version_->release_digits(), version_->release().size() - 1);
        }
        case Op::less_equal:
            return c.public_version() <= *version_;
        case Op::greater_equal:
            return c.public_version() >= *version_;
        case Op::less:
            // <V excludes pre-releases of V itself unless V is one: <1.20 excludes 1.20.0rc1.
            if (!(c < *version_)) return false;
            if (!version_->is_prerelease() && c.is_prerelease() && c.base_version() == version_->base_version())
                return false;
            return true;
        case Op::greater:
            // >V excludes post-releases of V unless V is one (>1.7 excludes 1.7.post1), and
            // local versions of V (>1.7 excludes 1.7+local).
            if (!(c > *version_)) return false;
            if (!version_->is_postrelease() && c.is_postrelease() && c.base_version() == version_->base_version())
                return false;
            if (!c.local().empty() && c.base_version() == version_->base_version()) return false;
            return true;
    }
    return false;
}

bool Specifier::contains(const Version& c, std::optional<bool> prereleases) const {
    bool allow = prereleases.value_or(names_prerelease());
    if (c.is_prerelease() && !allow) return false;
    return matches(c);
}

std::string Specifier::str() const { return std::string(op_text(op_)) + version_text_; }

SpecifierSet SpecifierSet::parse(std::string_view text) { return parse_within(text, 0, text.size(), "version specifier"); }

SpecifierSet SpecifierSet::parse_within(std::string_view whole, std::size_t offset, std::size_t length,
                                        std::string_view what) {
    std::string_view text = whole.substr(offset, length);
    auto fail = [&](const std::string& expected, std::size_t column_in_text) {
        throw InputError("invalid " + std::string(what) + " '" + std::string(whole) + "': expected " + expected +
                         " at column " + std::to_string(offset + column_in_text));
    };
    SpecifierSet set;
    if (strip(text).empty()) return set;
    std::size_t start = 0;
    while (true) {
        std::size_t comma = text.find(',', start);
        std::string_view clause = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        if (strip(clause).empty()) fail("a clause like '>=1.0'", start + 1);
        try {
            set.specs_.push_back(Specifier::parse(clause));
        } catch (const InputError& e) {
            // Re-anchor Specifier's message ("…'CLAUSE': expected X at column N") to the whole
            // text. The clause is the user's text and may itself hold "': expected " or " at
            // column " (found by fuzz/pep508), so the message is taken apart from both ends.
            std::string msg = e.what();
            const std::string head = "invalid version specifier '" + std::string(clause) + "': expected ";
            auto at = msg.rfind(" at column ");
            std::string column = at == std::string::npos ? "" : msg.substr(at + 11);
            bool numeric = !column.empty() && column.size() <= 9 &&
                           column.find_first_not_of("0123456789") == std::string::npos;
            if (msg.rfind(head, 0) != 0 || !numeric || at < head.size()) throw;
            fail(msg.substr(head.size(), at - head.size()), start + std::stoul(column));
        }
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return set;
}

bool SpecifierSet::prereleases_named() const {
    return std::any_of(specs_.begin(), specs_.end(), [](const Specifier& s) { return s.names_prerelease(); });
}

bool SpecifierSet::contains(const Version& c, std::optional<bool> prereleases) const {
    bool allow = prereleases.value_or(prereleases_named());
    if (c.is_prerelease() && !allow) return false;
    return std::all_of(specs_.begin(), specs_.end(), [&](const Specifier& s) { return s.matches(c); });
}

std::vector<Version> SpecifierSet::filter(const std::vector<Version>& candidates, std::optional<bool> prereleases) const {
    std::vector<Version> finals, pres;
    bool allow = prereleases.value_or(prereleases_named());
    for (const auto& c : candidates) {
        if (!contains(c, true)) continue;
        if (c.is_prerelease() && !allow) pres.push_back(c);
        else finals.push_back(c);
    }
    // Pre-releases are accepted when nothing else matches, unless they were refused outright.
    if (finals.empty() && prereleases.value_or(true)) return pres;
    return finals;
}

std::string SpecifierSet::str() const {
    std::string out;
    for (const auto& s : specs_) {
        if (!out.empty()) out += ',';
        out += s.str();
    }
    return out;
}

}  // namespace envlock::pep440
