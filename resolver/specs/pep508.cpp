#include "resolver/specs/pep508.hpp"

#include <algorithm>
#include <cctype>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/utf8.hpp"

namespace envlock::pep508 {

namespace {

// PEP 503's normalized form of `name`, one character at a time: runs of '-', '_' and '.' become
// one '-', letters lower case. `emit` returns false to stop; the result says whether it ran out.
template <class Emit>
bool each_normalized_char(std::string_view name, Emit&& emit) {
    bool in_sep = false;
    for (char c : name) {
        if (c == '-' || c == '_' || c == '.') {
            if (in_sep) continue;
            in_sep = true;
            c = '-';
        } else {
            in_sep = false;
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (!emit(c)) return false;
    }
    return true;
}

}  // namespace

std::string normalize_name(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    each_normalized_char(name, [&](char c) {
        out += c;
        return true;
    });
    return out;
}

bool has_normalized_name(std::string_view name, std::string_view normalized) {
    std::size_t at = 0;
    return each_normalized_char(name, [&](char c) { return at < normalized.size() && normalized[at++] == c; }) &&
           at == normalized.size();
}

// ---------------------------------------------------------------------------------------------
// Target environments

MarkerEnv MarkerEnv::for_target(std::string_view python_version, std::string_view conda_platform) {
    auto v = pep440::Version::try_parse(python_version);
    if (!v || v->release().size() < 2 || v->is_prerelease() || v->is_postrelease() || !v->local().empty() || v->epoch() != "0")
        throw InputError("invalid Python version '" + std::string(python_version) + "': expected MAJOR.MINOR or MAJOR.MINOR.PATCH");
    const auto& r = v->release();
    MarkerEnv env;
    env.python_version = std::to_string(r[0]) + "." + std::to_string(r[1]);
    env.python_full_version = env.python_version + "." + std::to_string(r.size() > 2 ? r[2] : 0);
    env.implementation_name = "cpython";
    env.implementation_version = env.python_full_version;
    env.platform_python_implementation = "CPython";

    std::string_view os = conda_platform.substr(0, conda_platform.find('-'));
    std::string_view arch = conda_platform.find('-') == std::string_view::npos ? std::string_view{}
                                                                                : conda_platform.substr(conda_platform.find('-') + 1);
    // Values are what CPython reports there: sys.platform, platform.machine(), platform.system().
    struct Row { std::string_view os, arch, machine; };
    static const Row rows[] = {
        {"linux", "64", "x86_64"},    {"linux", "32", "i686"},       {"linux", "aarch64", "aarch64"},
        {"linux", "ppc64le", "ppc64le"}, {"linux", "s390x", "s390x"}, {"linux", "armv7l", "armv7l"},
        {"linux", "armv6l", "armv6l"}, {"linux", "riscv64", "riscv64"}, {"osx", "64", "x86_64"},
        {"osx", "arm64", "arm64"},    {"win", "64", "AMD64"},        {"win", "32", "x86"},
        {"win", "arm64", "ARM64"},
    };
    const Row* row = nullptr;
    for (const auto& rr : rows)
        if (rr.os == os && rr.arch == arch) row = &rr;
    if (!row)
        throw InputError("unknown platform '" + std::string(conda_platform) +
                         "': expected a conda platform such as linux-64, linux-aarch64, osx-arm64 or win-64");
    env.platform_machine = std::string(row->machine);
    if (os == "linux") {
        env.sys_platform = "linux";
        env.platform_system = "Linux";
        env.os_name = "posix";
    } else if (os == "osx") {
        env.sys_platform = "darwin";
        env.platform_system = "Darwin";
        env.os_name = "posix";
    } else {
        env.sys_platform = "win32";
        env.platform_system = "Windows";
        env.os_name = "nt";
    }
    return env;
}

namespace {

// Canonical marker variable names, with the legacy dotted aliases PEP 345 used.
std::optional<std::string_view> canonical_variable(std::string_view name) {
    static const std::string_view names[] = {"python_version", "python_full_version", "os_name", "sys_platform",
                                             "platform_release", "platform_system", "platform_version",
                                             "platform_machine", "platform_python_implementation",
                                             "implementation_name", "implementation_version", "extra"};
    for (auto n : names)
        if (n == name) return n;
    static const std::pair<std::string_view, std::string_view> aliases[] = {
        {"os.name", "os_name"},
        {"sys.platform", "sys_platform"},
        {"platform.version", "platform_version"},
        {"platform.machine", "platform_machine"},
        {"platform.python_implementation", "platform_python_implementation"},
        {"python_implementation", "platform_python_implementation"},
    };
    for (auto [alias, canonical] : aliases)
        if (alias == name) return canonical;
    return std::nullopt;
}

}  // namespace

std::optional<std::string> MarkerEnv::get(std::string_view variable) const {
    auto name = canonical_variable(variable);
    if (!name) return std::nullopt;
    if (*name == "python_version") return python_version;
    if (*name == "python_full_version") return python_full_version;
    if (*name == "os_name") return os_name;
    if (*name == "sys_platform") return sys_platform;
    if (*name == "platform_release") return platform_release;
    if (*name == "platform_system") return platform_system;
    if (*name == "platform_version") return platform_version;
    if (*name == "platform_machine") return platform_machine;
    if (*name == "platform_python_implementation") return platform_python_implementation;
    if (*name == "implementation_name") return implementation_name;
    if (*name == "implementation_version") return implementation_version;
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Markers

struct MarkerNode {
    enum class Kind { all, any, compare } kind = Kind::compare;
    std::vector<std::shared_ptr<const MarkerNode>> children;  // all / any
    // compare: each side is a variable (canonical name) or a string literal
    bool lhs_is_var = false, rhs_is_var = false;
    std::string lhs, op, rhs;
};

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string quote(const std::string& s) { return s.find('"') == std::string::npos ? "\"" + s + "\"" : "'" + s + "'"; }

// Recursive descent over the PEP 508 marker grammar:
//   or := and ('or' and)* ; and := atom ('and' atom)* ; atom := '(' or ')' | var op var
//   var := env_var | quoted string ; op := version_cmp | 'in' | 'not' 'in'
class MarkerParser {
public:
    MarkerParser(std::string_view whole, std::size_t pos, std::string what) : s_(whole), pos_(pos), what_(std::move(what)) {}

    std::shared_ptr<const MarkerNode> parse_all() {
        // Marker strings are Python str: UTF-8 text, which the lock's YAML and JSON can hold.
        if (auto bad = utf8::invalid_at(s_.substr(pos_))) {
            pos_ += *bad;
            fail("UTF-8 text");
        }
        auto node = parse_or();
        skip();
        if (pos_ != s_.size()) fail("'and', 'or' or the end of the marker");
        return node;
    }

private:
    [[noreturn]] void fail(const std::string& expected) const {
        throw InputError("invalid " + what_ + " '" + std::string(s_) + "': expected " + expected + " at column " +
                         std::to_string(pos_ + 1));
    }
    void skip() {
        while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
    }
    // A keyword must not run on into a longer word ("order" is not "or").
    bool keyword(std::string_view word) {
        skip();
        if (!s_.substr(pos_).starts_with(word)) return false;
        std::size_t end = pos_ + word.size();
        if (end < s_.size() && (is_alnum(s_[end]) || s_[end] == '_' || s_[end] == '.')) return false;
        pos_ = end;
        return true;
    }

    std::shared_ptr<const MarkerNode> parse_or() {
        auto first = parse_and();
        if (!peek_keyword("or")) return first;
        auto node = std::make_shared<MarkerNode>();
        node->kind = MarkerNode::Kind::any;
        node->children.push_back(first);
        while (keyword("or")) node->children.push_back(parse_and());
        return node;
    }

    std::shared_ptr<const MarkerNode> parse_and() {
        auto first = parse_atom();
        if (!peek_keyword("and")) return first;
        auto node = std::make_shared<MarkerNode>();
        node->kind = MarkerNode::Kind::all;
        node->children.push_back(first);
        while (keyword("and")) node->children.push_back(parse_atom());
        return node;
    }

    bool peek_keyword(std::string_view word) {
        std::size_t save = pos_;
        bool yes = keyword(word);
        pos_ = save;
        return yes;
    }

    std::shared_ptr<const MarkerNode> parse_atom() {
        skip();
        if (pos_ < s_.size() && s_[pos_] == '(') {
            ++pos_;
            auto inner = parse_or();
            skip();
            if (pos_ >= s_.size() || s_[pos_] != ')') fail("')' to close the parenthesis");
            ++pos_;
            return inner;
        }
        auto node = std::make_shared<MarkerNode>();
        node->lhs_is_var = value(node->lhs);
        node->op = op();
        node->rhs_is_var = value(node->rhs);
        return node;
    }

    // Returns true for a variable (name stored canonical), false for a string literal.
    bool value(std::string& out) {
        skip();
        if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
            char q = s_[pos_];
            std::size_t close = s_.find(q, pos_ + 1);
            if (close == std::string_view::npos) fail(std::string("a closing ") + q + " for the string");
            out = std::string(s_.substr(pos_ + 1, close - pos_ - 1));
            pos_ = close + 1;
            return false;
        }
        std::size_t start = pos_;
        while (pos_ < s_.size() && (is_alnum(s_[pos_]) || s_[pos_] == '_' || s_[pos_] == '.')) ++pos_;
        auto name = canonical_variable(s_.substr(start, pos_ - start));
        if (!name) {
            pos_ = start;
            fail("a marker variable (python_version, python_full_version, sys_platform, platform_machine, "
                 "platform_system, os_name, implementation_name, extra, …) or a quoted string");
        }
        out = std::string(*name);
        return true;
    }

    std::string op() {
        skip();
        for (std::string_view o : {"===", "==", "!=", "<=", ">=", "~=", "<", ">"})
            if (s_.substr(pos_).starts_with(o)) {
                pos_ += o.size();
                return std::string(o);
            }
        if (keyword("in")) return "in";
        std::size_t save = pos_;
        if (keyword("not")) {
            if (keyword("in")) return "not in";
            pos_ = save;
        }
        fail("a comparison (==, !=, <, <=, >, >=, ~=, ===, in, not in)");
    }

    std::string_view s_;
    std::size_t pos_;
    std::string what_;
};

// PEP 508: when both sides read as PEP 440, compare as versions (the operator applied like a
// specifier, pre-releases allowed); otherwise fall back to Python string comparison.
bool compare(const std::string& lhs, const std::string& op, const std::string& rhs) {
    if (op == "in") return rhs.find(lhs) != std::string::npos;
    if (op == "not in") return rhs.find(lhs) == std::string::npos;
    if (auto lv = pep440::Version::try_parse(lhs)) {
        try {
            return pep440::Specifier::parse(op + rhs).contains(*lv, true);
        } catch (const InputError&) {
        }
    }
    // Dependency specifiers ("Environment Markers", the living spec as revised in 2026,
    // pypa/packaging.python.org#1988): strings that are not versions have no order, so `<` and
    // `>` between them are false and `<=`/`>=` hold only for equal strings (packaging 26's
    // marker `_operators`); `sys_platform < "win"` is false, not Python's "linux" < "win".
    // `~=` has no string meaning at all: an error (packaging raises UndefinedComparison).
    if (op == "~=")
        throw InputError("invalid marker comparison '" + lhs + "' ~= '" + rhs +
                         "': ~= compares PEP 440 versions, and one side is not a version");
    if (op == "==" || op == "===" || op == "<=" || op == ">=") return lhs == rhs;
    if (op == "!=") return lhs != rhs;
    return false;   // "<", ">"
}

bool eval(const MarkerNode& n, const MarkerEnv& env, const std::string& extra) {
    switch (n.kind) {
        case MarkerNode::Kind::all:
            return std::all_of(n.children.begin(), n.children.end(), [&](const auto& c) { return eval(*c, env, extra); });
        case MarkerNode::Kind::any:
            return std::any_of(n.children.begin(), n.children.end(), [&](const auto& c) { return eval(*c, env, extra); });
        case MarkerNode::Kind::compare: break;
    }
    auto side = [&](bool is_var, const std::string& v) { return !is_var ? v : v == "extra" ? extra : env.get(v).value_or(""); };
    std::string lhs = side(n.lhs_is_var, n.lhs), rhs = side(n.rhs_is_var, n.rhs);
    // PEP 685: extra names compare normalized.
    if ((n.lhs_is_var && n.lhs == "extra") || (n.rhs_is_var && n.rhs == "extra")) {
        lhs = normalize_name(lhs);
        rhs = normalize_name(rhs);
    }
    return compare(lhs, n.op, rhs);
}

// "and" binds tighter than "or", so only an "or" inside an "and" needs parentheses.
std::string render(const MarkerNode& n, bool inside_and) {
    if (n.kind == MarkerNode::Kind::compare) {
        auto side = [](bool is_var, const std::string& v) { return is_var ? v : quote(v); };
        return side(n.lhs_is_var, n.lhs) + " " + n.op + " " + side(n.rhs_is_var, n.rhs);
    }
    bool is_and = n.kind == MarkerNode::Kind::all;
    std::string out;
    for (const auto& c : n.children) {
        if (!out.empty()) out += is_and ? " and " : " or ";
        out += render(*c, is_and);
    }
    return !is_and && inside_and ? "(" + out + ")" : out;
}

}  // namespace

Marker Marker::parse(std::string_view text) { return parse_at(text, 0, "marker"); }

Marker Marker::parse_at(std::string_view whole, std::size_t offset, const std::string& what) {
    Marker m;
    m.root_ = MarkerParser(whole, offset, what).parse_all();
    return m;
}

bool Marker::evaluate(const MarkerEnv& env, const std::set<std::string>& extras) const {
    try {
        if (extras.empty()) return eval(*root_, env, "");
        return std::any_of(extras.begin(), extras.end(), [&](const std::string& e) { return eval(*root_, env, e); });
    } catch (const InputError& e) {
        throw InputError("marker '" + str() + "': " + e.what());
    }
}

std::string Marker::str() const { return render(*root_, false); }

// ---------------------------------------------------------------------------------------------
// Requirements

namespace {

class RequirementParser {
public:
    explicit RequirementParser(std::string_view text) : s_(text) {}

    Requirement run() {
        if (auto bad = utf8::invalid_at(s_)) {
            pos_ = *bad;
            fail("UTF-8 text");
        }
        Requirement r;
        skip();
        r.name = identifier("a package name (letters, digits, '.', '-', '_')");
        r.normalized_name = normalize_name(r.name);
        skip();
        if (peek() == '[') extras(r);
        skip();
        if (peek() == '@') {
            ++pos_;
            url(r);
        } else {
            versions(r);
        }
        skip();
        if (peek() == ';') {
            ++pos_;
            skip();
            if (pos_ >= s_.size()) fail("a marker after ';'");
            r.marker = Marker::parse_at(s_, pos_, "requirement");
            pos_ = s_.size();
        }
        skip();
        if (pos_ != s_.size()) fail("';' and a marker, or the end of the requirement");
        return r;
    }

private:
    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    void skip() {
        while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
    }
    [[noreturn]] void fail(const std::string& expected) const {
        throw InputError("invalid requirement '" + std::string(s_) + "': expected " + expected + " at column " +
                         std::to_string(pos_ + 1));
    }

    // [A-Za-z0-9] ([A-Za-z0-9._-]* [A-Za-z0-9])?
    std::string identifier(const std::string& what) {
        if (!is_alnum(peek())) fail(what);
        std::size_t start = pos_;
        while (is_alnum(peek()) || peek() == '.' || peek() == '-' || peek() == '_') ++pos_;
        while (!is_alnum(s_[pos_ - 1])) --pos_;  // must end with a letter or digit
        return std::string(s_.substr(start, pos_ - start));
    }

    void extras(Requirement& r) {
        ++pos_;  // '['
        skip();
        if (peek() == ']') {
            ++pos_;
            return;
        }
        while (true) {
            skip();
            r.extras.push_back(identifier("an extra name"));
            skip();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            if (peek() == ']') {
                ++pos_;
                return;
            }
            fail("',' or ']' in the extras");
        }
    }

    // A URL runs to the next whitespace; a marker after it needs whitespace before ';', since
    // ';' may be part of a URL.
    void url(Requirement& r) {
        skip();
        std::size_t start = pos_;
        while (pos_ < s_.size() && !is_space(s_[pos_])) ++pos_;
        if (pos_ == start) fail("a URL after '@'");
        r.url = std::string(s_.substr(start, pos_ - start));
        if (r.url.find(':') == std::string::npos) {
            pos_ = start;
            fail("a URL with a scheme (https://…, git+https://…, file://…) after '@'");
        }
        skip();
        if (pos_ < s_.size() && peek() != ';') fail("whitespace, then ';' and a marker, after the URL");
    }

    void versions(Requirement& r) {
        bool paren = peek() == '(';
        if (paren) ++pos_;
        std::size_t start = pos_;
        std::size_t end = s_.find_first_of(paren ? ");" : ";", pos_);
        if (end == std::string_view::npos) end = s_.size();
        std::string_view body = s_.substr(start, end - start);
        std::size_t first = body.find_first_not_of(" \t\r\n");
        if (first != std::string_view::npos && std::string_view("<>=!~").find(body[first]) == std::string_view::npos) {
            pos_ = start + first;
            fail("a version specifier (like >=1.0 or ==1.9.*), '@' and a URL, ';' and a marker, or the end");
        }
        r.specifier = pep440::SpecifierSet::parse_within(s_, start, end - start, "requirement");
        pos_ = end;
        if (paren) {
            if (peek() != ')') fail("')' to close the version specifier");
            ++pos_;
        }
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

}  // namespace

Requirement Requirement::parse(std::string_view text) { return RequirementParser(text).run(); }

bool Requirement::applies(const MarkerEnv& env, const std::set<std::string>& extras) const {
    return !marker || marker->evaluate(env, extras);
}

std::string Requirement::str() const {
    std::string out = name;
    if (!extras.empty()) {
        std::vector<std::string> sorted = extras;
        std::sort(sorted.begin(), sorted.end());
        out += "[";
        for (std::size_t i = 0; i < sorted.size(); ++i) out += (i ? "," : "") + sorted[i];
        out += "]";
    }
    out += specifier.str();
    if (!url.empty()) out += " @ " + url + (marker ? " " : "");
    if (marker) out += "; " + marker->str();
    return out;
}

nlohmann::json Requirement::to_json() const {
    nlohmann::json j;
    j["name"] = name;
    j["normalized-name"] = normalized_name;
    j["extras"] = extras;
    j["specifier"] = specifier.str();
    j["url"] = url.empty() ? nlohmann::json(nullptr) : nlohmann::json(url);
    j["marker"] = marker ? nlohmann::json(marker->str()) : nlohmann::json(nullptr);
    return j;
}

}  // namespace envlock::pep508
