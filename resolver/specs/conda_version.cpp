#include "resolver/specs/conda_version.hpp"

#include <algorithm>
#include <cstdio>
#include <regex>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/utf8.hpp"

namespace envlock::conda {

namespace {

[[noreturn]] void invalid_version(std::string_view text, std::string_view why) {
    throw InputError("invalid conda version '" + std::string(text) + "': " + std::string(why));
}

[[noreturn]] void invalid_spec(std::string_view text, std::string_view why) {
    throw InputError("invalid conda version spec '" + std::string(text) + "': " + std::string(why));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

bool valid_version_char(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || c == '*' || c == '.' || c == '+' || c == '!' || c == '_';
}

}  // namespace

// Comparison helpers need the private representation.
struct VersionAccess {
    using Atom = Version::Atom;
    using Kind = Version::AtomKind;
    using Segment = Version::Segment;

    static constexpr Atom zero{Kind::number, 0, 0};

    static std::string_view text(const Version& v, const Atom& a) {
        if (a.kind == Kind::dev) return "DEV";   // upper case sorts it below every other string
        return std::string_view(v.norm_).substr(a.offset, a.length);
    }
    static bool is_string(const Atom& a) { return a.kind == Kind::text || a.kind == Kind::dev; }

    // conda compares: strings < numbers; strings lexicographically; numbers numerically with
    // "post" as infinity.
    static int compare_atoms(const Version& va, const Atom& a, const Version& vb, const Atom& b) {
        bool sa = is_string(a), sb = is_string(b);
        if (sa && sb) {
            int c = text(va, a).compare(text(vb, b));
            return c < 0 ? -1 : (c > 0 ? 1 : 0);
        }
        if (sa) return -1;
        if (sb) return 1;
        if (a.kind == Kind::post || b.kind == Kind::post) {
            if (a.kind == b.kind) return 0;
            return a.kind == Kind::post ? 1 : -1;
        }
        // Numbers: digits without leading zeros, so the longer one is larger.
        if (a.length != b.length) return a.length < b.length ? -1 : 1;
        int c = text(va, a).compare(text(vb, b));
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }

    // One segment against another; missing atoms are 0.
    static int compare_segment(const Version& va, const Atom* a, std::size_t na,
                               const Version& vb, const Atom* b, std::size_t nb) {
        std::size_t n = std::max(na, nb);
        for (std::size_t i = 0; i < n; ++i) {
            const Atom& x = i < na ? a[i] : zero;
            const Atom& y = i < nb ? b[i] : zero;
            if (int c = compare_atoms(va, x, vb, y)) return c;
        }
        return 0;
    }

    // Segment lists [ba, ea) and [bb, eb); missing segments are empty.
    static int compare_range(const Version& va, std::uint32_t ba, std::uint32_t ea,
                             const Version& vb, std::uint32_t bb, std::uint32_t eb) {
        std::uint32_t na = ea - ba, nb = eb - bb;
        std::uint32_t n = std::max(na, nb);
        for (std::uint32_t i = 0; i < n; ++i) {
            const Atom* pa = nullptr; std::size_t la = 0;
            const Atom* pb = nullptr; std::size_t lb = 0;
            if (i < na) { auto s = va.segments_[ba + i]; pa = va.atoms_.data() + s.begin; la = s.end - s.begin; }
            if (i < nb) { auto s = vb.segments_[bb + i]; pb = vb.atoms_.data() + s.begin; lb = s.end - s.begin; }
            if (int c = compare_segment(va, pa, la, vb, pb, lb)) return c;
        }
        return 0;
    }

    static std::uint32_t seg_count(const Version& v) { return static_cast<std::uint32_t>(v.segments_.size()); }
};

Version Version::parse(std::string_view text) {
    std::string_view trimmed = trim(text);
    if (trimmed.empty()) invalid_version(text, "empty version string");
    std::string s(trimmed);
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');

    auto all_valid = [](const std::string& str) { return std::all_of(str.begin(), str.end(), valid_version_char); };
    if (!all_valid(s)) {
        // Dashes are accepted as separators as long as no underscore is present.
        if (s.find('-') != std::string::npos && s.find('_') == std::string::npos) {
            std::replace(s.begin(), s.end(), '-', '_');
        }
        if (!all_valid(s)) {
            std::size_t bad = std::find_if_not(s.begin(), s.end(), valid_version_char) - s.begin();
            // The whole character, not its first byte: the message is quoted into specs and
            // JSON, which need UTF-8 (found by fuzz/infer_docs).
            std::size_t len = 1;
            while (bad + len < s.size() && len < 4 && (static_cast<unsigned char>(s[bad + len]) & 0xC0) == 0x80) ++len;
            std::string shown = s.substr(bad, len);
            if (utf8::invalid_at(shown)) {
                char hex[8];
                std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(s[bad]));
                shown = hex;
            }
            invalid_version(text, "invalid character '" + shown +
                                      "' (allowed: letters, digits, '.', '_', '-', '+', '!', '*')");
        }
    }

    Version v;
    v.norm_ = s;
    std::string_view view(v.norm_);

    // Epoch.
    std::size_t bang = view.find('!');
    std::string_view epoch;
    std::size_t body_start = 0;
    if (bang != std::string_view::npos) {
        if (view.find('!', bang + 1) != std::string_view::npos) invalid_version(text, "duplicated epoch separator '!'");
        epoch = view.substr(0, bang);
        if (epoch.empty() || !std::all_of(epoch.begin(), epoch.end(), is_digit))
            invalid_version(text, "epoch must be an integer");
        body_start = bang + 1;
    }
    std::string_view body = view.substr(body_start);
    std::size_t plus = body.find('+');
    std::string_view main = body, local;
    bool has_local = false;
    if (plus != std::string_view::npos) {
        if (body.find('+', plus + 1) != std::string_view::npos)
            invalid_version(text, "duplicated local version separator '+'");
        main = body.substr(0, plus);
        local = body.substr(plus + 1);
        has_local = true;
    }
    if (main.empty()) invalid_version(text, "empty version component");

    auto offset_of = [&](std::string_view part) { return static_cast<std::uint32_t>(part.data() - view.data()); };

    // Splits one segment into atoms: runs of digits, runs of '*', runs of anything else.
    auto add_segment = [&](std::string_view seg) {
        if (seg.empty()) invalid_version(text, "empty version component");
        Segment out{static_cast<std::uint32_t>(v.atoms_.size()), 0};
        if (!is_digit(seg.front())) v.atoms_.push_back(VersionAccess::zero);   // keep numbers and strings in phase
        std::size_t i = 0;
        while (i < seg.size()) {
            std::size_t j = i;
            if (is_digit(seg[i])) {
                while (j < seg.size() && is_digit(seg[j])) ++j;
                std::size_t k = i;
                while (k + 1 < j && seg[k] == '0') ++k;
                if (seg[k] == '0') k = j;   // all zeros: the value 0
                v.atoms_.push_back({AtomKind::number, offset_of(seg.substr(k)), static_cast<std::uint32_t>(j - k)});
            } else if (seg[i] == '*') {
                while (j < seg.size() && seg[j] == '*') ++j;
                v.atoms_.push_back({AtomKind::text, offset_of(seg.substr(i)), static_cast<std::uint32_t>(j - i)});
            } else {
                while (j < seg.size() && !is_digit(seg[j]) && seg[j] != '*') ++j;
                std::string_view run = seg.substr(i, j - i);
                AtomKind kind = run == "post" ? AtomKind::post : run == "dev" ? AtomKind::dev : AtomKind::text;
                v.atoms_.push_back({kind, offset_of(run), static_cast<std::uint32_t>(run.size())});
            }
            i = j;
        }
        out.end = static_cast<std::uint32_t>(v.atoms_.size());
        v.segments_.push_back(out);
    };
    auto add_segments = [&](std::string_view part, bool keep_trailing_underscore) {
        // A trailing '_' stays attached to the last segment: conda's work-around for openssl,
        // whose letter releases come after the plain one ("1.0.1_" < "1.0.1a").
        std::size_t end = part.size();
        bool trailing = keep_trailing_underscore && !part.empty() && part.back() == '_';
        if (trailing) --end;
        std::size_t start = 0;
        for (std::size_t i = 0; i <= end; ++i) {
            if (i == end || part[i] == '.' || part[i] == '_') {
                std::size_t seg_end = (i == end && trailing) ? end + 1 : i;
                add_segment(part.substr(start, seg_end - start));
                start = i + 1;
            }
        }
    };

    if (bang == std::string_view::npos) {
        // No epoch written: epoch 0 (not in norm_, so not an atom pointing into it).
        v.atoms_.push_back(VersionAccess::zero);
        v.segments_.push_back({0, 1});
    } else {
        add_segment(epoch);
    }
    add_segments(main, true);
    v.local_begin_ = static_cast<std::uint32_t>(v.segments_.size());
    if (has_local) {
        if (local.empty()) invalid_version(text, "empty local version after '+'");
        add_segments(local, false);
    }
    return v;
}

std::optional<Version> Version::try_parse(std::string_view text) noexcept {
    try {
        return parse(text);
    } catch (...) {
        return std::nullopt;
    }
}

int Version::compare(const Version& o) const {
    if (int c = VersionAccess::compare_range(*this, 0, local_begin_, o, 0, o.local_begin_)) return c;
    return VersionAccess::compare_range(*this, local_begin_, VersionAccess::seg_count(*this), o, o.local_begin_,
                                        VersionAccess::seg_count(o));
}

bool Version::starts_with(const Version& prefix) const {
    const Version& p = prefix;
    std::uint32_t b1, e1, b2, e2;
    if (p.local_begin_ < p.segments_.size()) {
        if (VersionAccess::compare_range(*this, 0, local_begin_, p, 0, p.local_begin_) != 0) return false;
        b1 = local_begin_; e1 = static_cast<std::uint32_t>(segments_.size());
        b2 = p.local_begin_; e2 = static_cast<std::uint32_t>(p.segments_.size());
    } else {
        b1 = 0; e1 = local_begin_;
        b2 = 0; e2 = p.local_begin_;
    }
    // All but the last segment of the prefix must be equal.
    std::uint32_t nt = e2 - b2 - 1;
    std::uint32_t head1 = std::min(e1 - b1, nt);
    if (VersionAccess::compare_range(*this, b1, b1 + head1, p, b2, b2 + nt) != 0) return false;
    // Within the last prefix segment: all but its last atom equal, the last one a prefix.
    Segment s2 = p.segments_[b2 + nt];
    const Atom* a2 = p.atoms_.data() + s2.begin;
    std::size_t n2 = s2.end - s2.begin;
    const Atom* a1 = nullptr;
    std::size_t n1 = 0;
    if (b1 + nt < e1) {
        Segment s1 = segments_[b1 + nt];
        a1 = atoms_.data() + s1.begin;
        n1 = s1.end - s1.begin;
    }
    std::size_t k = n2 - 1;
    if (VersionAccess::compare_segment(*this, a1, std::min(n1, k), p, a2, k) != 0) return false;
    const Atom& c1 = k < n1 ? a1[k] : VersionAccess::zero;
    const Atom& c2 = a2[k];
    if (VersionAccess::is_string(c2)) {
        if (!VersionAccess::is_string(c1)) return false;
        std::string_view t1 = VersionAccess::text(*this, c1), t2 = VersionAccess::text(p, c2);
        return t1.substr(0, std::min(t1.size(), t2.size())) == t2 && t1.size() >= t2.size();
    }
    return VersionAccess::compare_atoms(*this, c1, p, c2) == 0;
}

}  // namespace envlock::conda

// ---------------------------------------------------------------------------------------
// VersionSpec

namespace envlock::conda {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

struct VersionSpec::Node {
    enum class Kind { all_of, any_of, leaf } kind = Kind::leaf;
    enum class Op { any, eq, ne, lt, le, gt, ge, starts_with, not_starts_with, compatible, glob, regex, text_eq };
    std::vector<Node> children;
    Op op = Op::any;
    std::optional<Version> version;        // operand of comparisons
    std::optional<Version> compat_prefix;  // "~=1.4.2": the prefix 1.4
    std::string text;                      // leaf text as conda prints it; glob/exact operand
    std::shared_ptr<const std::regex> regex;

    bool eval(const Version& v) const {
        switch (kind) {
            case Kind::all_of:
                for (const Node& c : children)
                    if (!c.eval(v)) return false;
                return true;
            case Kind::any_of:
                for (const Node& c : children)
                    if (c.eval(v)) return true;
                return false;
            case Kind::leaf: break;
        }
        switch (op) {
            case Op::any: return true;
            case Op::eq: return v.compare(*version) == 0;
            case Op::ne: return v.compare(*version) != 0;
            case Op::lt: return v.compare(*version) < 0;
            case Op::le: return v.compare(*version) <= 0;
            case Op::gt: return v.compare(*version) > 0;
            case Op::ge: return v.compare(*version) >= 0;
            case Op::starts_with: return v.starts_with(*version);
            case Op::not_starts_with: return !v.starts_with(*version);
            case Op::compatible: return v.compare(*version) >= 0 && v.starts_with(*compat_prefix);
            case Op::glob: return glob_match(text, v.str());
            case Op::regex: return std::regex_match(v.str(), *regex);
            case Op::text_eq: return v.str() == text;
        }
        return false;
    }
};

namespace {

using Node = VersionSpec::Node;

// One constraint without ',', '|' or parentheses, e.g. ">=1.19", "1.9.*", "^1\.[0-9]$".
Node parse_leaf(std::string_view whole, std::string_view raw) {
    std::string_view s = trim(raw);
    if (s.empty()) invalid_spec(whole, "empty constraint");
    for (char c : s)
        if (is_space(c)) invalid_spec(whole, "unexpected space in '" + std::string(s) + "'");
    Node n;
    n.text = std::string(s);
    auto parse_operand = [&](std::string_view vo) {
        try {
            return Version::parse(vo);
        } catch (const InputError& e) {
            invalid_spec(whole, e.what());
        }
    };
    if (s.front() == '^' || s.back() == '$') {
        if (s.front() != '^' || s.back() != '$') invalid_spec(whole, "regex specs must start with '^' and end with '$'");
        if (auto why = unsafe_regex(s)) invalid_spec(whole, *why + " in a version regex");
        try {
            n.regex = std::make_shared<const std::regex>(std::string(s), std::regex::ECMAScript | std::regex::optimize);
        } catch (const std::regex_error& e) {
            invalid_spec(whole, std::string("invalid regex: ") + e.what());
        }
        n.op = Node::Op::regex;
        return n;
    }
    char c0 = s.front();
    if (c0 == '=' || c0 == '<' || c0 == '>' || c0 == '!' || c0 == '~') {
        std::size_t k = 1;
        if (s.size() > 1 && s[1] == '=' && c0 != '<' && c0 != '>') k = 2;   // ==, !=, ~=
        else if (s.size() > 1 && s[1] == '=') k = 2;                        // <=, >=
        std::string_view op = s.substr(0, k);
        std::string_view vo = s.substr(k);
        if (op == "!" || op == "~") invalid_spec(whole, "invalid operator '" + std::string(op) + "'");
        if (vo.empty()) invalid_spec(whole, "missing version after '" + std::string(op) + "'");
        if (vo.front() == '=' || vo.front() == '<' || vo.front() == '>' || vo.front() == '!' || vo.front() == '~')
            invalid_spec(whole, "invalid operator '" + std::string(s.substr(0, k + 1)) + "'");
        bool prefix_star = vo.size() >= 2 && vo.substr(vo.size() - 2) == ".*";
        // conda >= 25.9 reads "==1.0*" as the fuzzy "1.0*" (starts with 1.0), where older conda
        // compared with a version literally named "1.0*" and matched nothing (found by #31's
        // differential run against conda 25.7 and 26.7). "==1.9.*" keeps its exact reading.
        if (op == "==" && !prefix_star && vo.back() == '*') return parse_leaf(whole, vo);
        if (prefix_star) {
            if (op == "~=") invalid_spec(whole, "invalid operator with '.*'");
            vo.remove_suffix(2);   // "=1.9.*" and ">=1.9.*" mean "=1.9" and ">=1.9"; conda ignores it elsewhere
        }
        if (op == "==") n.op = Node::Op::eq;
        else if (op == "!=") n.op = prefix_star ? Node::Op::not_starts_with : Node::Op::ne;
        else if (op == "<") n.op = Node::Op::lt;
        else if (op == "<=") n.op = Node::Op::le;
        else if (op == ">") n.op = Node::Op::gt;
        else if (op == ">=") n.op = Node::Op::ge;
        else if (op == "=") n.op = Node::Op::starts_with;
        else n.op = Node::Op::compatible;
        n.version = parse_operand(vo);
        if (n.op == Node::Op::compatible) {
            // PEP 440's ~=: at least this version, and the same release prefix without its last part.
            std::string_view norm = n.version->str();
            std::size_t dot = norm.rfind('.');
            if (dot == std::string_view::npos) invalid_spec(whole, "'~=' needs a version with at least two components");
            n.compat_prefix = parse_operand(norm.substr(0, dot));
        }
        return n;
    }
    if (s == "*") {
        n.op = Node::Op::any;
        return n;
    }
    std::string_view stem = s;
    while (!stem.empty() && stem.back() == '*') stem.remove_suffix(1);
    if (stem.find('*') != std::string_view::npos) {
        n.op = Node::Op::glob;   // "1.*.3": matched against the version text
        for (char& ch : n.text)
            if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
        return n;
    }
    if (s.back() == '*') {
        // "1.9*" and "1.9.*" both mean: starts with 1.9.
        while (!stem.empty() && stem.back() == '.') stem.remove_suffix(1);
        // Printed as the stem and ".*" ("1.9**" and "1..*" too), so the text reads back as the
        // same prefix: MatchSpec prints "1..*" as "=1.", which would read back as "=1".
        n.text = std::string(stem) + ".*";
        n.op = Node::Op::starts_with;
        n.version = parse_operand(stem);
        return n;
    }
    if (s.find('@') != std::string_view::npos) {
        n.op = Node::Op::text_eq;
        return n;
    }
    n.op = Node::Op::eq;
    n.version = parse_operand(s);
    return n;
}

// Recursive descent over the conda grammar: or := and ('|' and)*; and := term (',' term)*;
// term := '(' or ')' | constraint. Regex constraints "^…$" may contain the operator characters.
class SpecParser {
public:
    explicit SpecParser(std::string_view text) : text_(text) {}

    Node parse() {
        Node n = parse_or();
        skip_space();
        if (pos_ < text_.size()) {
            if (text_[pos_] == ')') invalid_spec(text_, "unbalanced ')'");
            invalid_spec(text_, "unexpected '" + std::string(1, text_[pos_]) + "'");
        }
        return n;
    }

private:
    void skip_space() {
        while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
    }
    bool peek(char c) {
        skip_space();
        return pos_ < text_.size() && text_[pos_] == c;
    }
    static Node combine(Node::Kind kind, std::vector<Node> parts) {
        if (parts.size() == 1) return std::move(parts.front());
        Node n;
        n.kind = kind;
        for (Node& p : parts) {
            // Fuse "a|(b|c)" into one list, as conda's treeify does.
            if (p.kind == kind) {
                for (Node& c : p.children) n.children.push_back(std::move(c));
            } else {
                n.children.push_back(std::move(p));
            }
        }
        return n;
    }
    Node parse_or() {
        std::vector<Node> parts;
        parts.push_back(parse_and());
        while (peek('|')) {
            ++pos_;
            parts.push_back(parse_and());
        }
        return combine(Node::Kind::any_of, std::move(parts));
    }
    Node parse_and() {
        std::vector<Node> parts;
        parts.push_back(parse_term());
        while (peek(',')) {
            ++pos_;
            parts.push_back(parse_term());
        }
        return combine(Node::Kind::all_of, std::move(parts));
    }
    Node parse_term() {
        skip_space();
        if (pos_ >= text_.size()) invalid_spec(text_, "expected a version constraint at the end");
        char c = text_[pos_];
        if (c == '(') {
            ++pos_;
            Node inner = parse_or();
            if (!peek(')')) invalid_spec(text_, "missing ')'");
            ++pos_;
            return inner;
        }
        if (c == ')' || c == '|' || c == ',')
            invalid_spec(text_, "expected a version constraint before '" + std::string(1, c) + "'");
        std::size_t start = pos_;
        if (c == '^') {
            std::size_t end = text_.find('$', pos_);
            if (end == std::string_view::npos) invalid_spec(text_, "regex specs must start with '^' and end with '$'");
            pos_ = end + 1;
        } else {
            while (pos_ < text_.size() && text_[pos_] != '(' && text_[pos_] != ')' && text_[pos_] != '|' &&
                   text_[pos_] != ',')
                ++pos_;
            if (pos_ < text_.size() && text_[pos_] == '(')
                invalid_spec(text_, "unexpected '(' after '" + std::string(trim(text_.substr(start, pos_ - start))) + "'");
        }
        return parse_leaf(text_, text_.substr(start, pos_ - start));
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

// Parentheses only where precedence needs them ('|' inside ','), so the text reads back as
// the same tree. conda prints nested groups without any, which loses "(1.6|1.7),1.8".
void render(const Node& n, std::string& out, bool in_and) {
    if (n.kind == Node::Kind::leaf) {
        out += n.text;
        return;
    }
    bool is_or = n.kind == Node::Kind::any_of;
    bool parens = is_or && in_and;
    if (parens) out += '(';
    for (std::size_t i = 0; i < n.children.size(); ++i) {
        if (i) out += is_or ? '|' : ',';
        render(n.children[i], out, !is_or);
    }
    if (parens) out += ')';
}

}  // namespace

std::optional<std::string> unsafe_regex(std::string_view pattern) {
    // std::regex matches by backtracking, exponential in the nesting of repetitions: "^1???????+"
    // or "(a+)+" never finish (found by fuzz/matchspec). Conda's name and build regexes are
    // flat ("^py(torch|thon)$", "^.*cuda.*$"), so repeating a repetition, or a group that
    // holds one or an alternation, is refused.
    struct Group { bool repeats = false, alternates = false; };
    std::vector<Group> groups(1);
    bool after_repeat = false, lazy_taken = false;
    Group closed;            // the group just closed, when the previous token was ')'
    bool just_closed = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        char c = pattern[i];
        bool repeat = c == '*' || c == '+' || c == '?' ||
                      (c == '{' && i + 1 < pattern.size() && pattern[i + 1] >= '0' && pattern[i + 1] <= '9');
        if (repeat) {
            if (after_repeat) {
                if (c == '?' && !lazy_taken) {   // "*?", "+?": the lazy form of the one before
                    lazy_taken = true;
                    continue;
                }
                return std::string("a repetition of a repetition");
            }
            // "(py|python)?" is fine: only unbounded repetition of an ambiguous group explodes.
            if (just_closed && c != '?' && (closed.repeats || closed.alternates))
                return std::string(closed.repeats ? "a repeated group that holds a repetition" : "a repeated group that holds an alternation");
            if (c == '{') {
                std::size_t run = 0, j = i + 1;
                for (; j < pattern.size() && ((pattern[j] >= '0' && pattern[j] <= '9') || pattern[j] == ','); ++j) {
                    run = pattern[j] == ',' ? 0 : run + 1;
                    if (run > 4) return std::string("a repeat count above 9999");
                }
                if (j < pattern.size() && pattern[j] == '}') i = j;
            }
            groups.back().repeats = true;
            after_repeat = true;
            lazy_taken = false;
            just_closed = false;
            continue;
        }
        after_repeat = false;
        just_closed = false;
        if (c == '\\' && i + 1 < pattern.size()) {
            if (pattern[i + 1] >= '0' && pattern[i + 1] <= '9') return std::string("a backreference or octal escape");
            ++i;
        } else if (c == '[') {
            // A class: its characters are literal. In ECMAScript (std::regex's grammar) "[]" is
            // an empty class, so the first ']' closes it (found by fuzz/matchspec: "[]?{1777…}").
            std::size_t j = i + 1;
            for (; j < pattern.size() && pattern[j] != ']'; ++j)
                if (pattern[j] == '\\') ++j;
            i = j;
        } else if (c == '(') {
            groups.emplace_back();
        } else if (c == ')' && groups.size() > 1) {
            closed = groups.back();
            groups.pop_back();
            groups.back().repeats |= closed.repeats;
            groups.back().alternates |= closed.alternates;
            just_closed = true;
        } else if (c == '|') {
            groups.back().alternates = true;
        }
    }
    return std::nullopt;
}

bool glob_match(std::string_view pattern, std::string_view s) noexcept {
    // Greedy scan with backtracking to the last '*': linear for the patterns conda uses.
    std::size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
    while (i < s.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = i;
        } else if (p < pattern.size() && pattern[p] == s[i]) {
            ++p;
            ++i;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            i = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

VersionSpec::VersionSpec() : text_("*") {}

VersionSpec VersionSpec::parse(std::string_view text) {
    VersionSpec spec;
    if (trim(text).empty()) return spec;
    Node root = SpecParser(text).parse();
    std::string rendered;
    render(root, rendered, false);
    spec.text_ = rendered;
    if (!(root.kind == Node::Kind::leaf && root.op == Node::Op::any))
        spec.root_ = std::make_shared<const Node>(std::move(root));
    return spec;
}

bool VersionSpec::contains(const Version& v) const { return !root_ || root_->eval(v); }

bool VersionSpec::is_any() const { return !root_; }

bool VersionSpec::is_exact() const {
    return root_ && root_->kind == Node::Kind::leaf &&
           (root_->op == Node::Op::eq || root_->op == Node::Op::text_eq);
}

}  // namespace envlock::conda
