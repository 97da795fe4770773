#include "resolver/specs/matchspec.hpp"

#include <algorithm>
#include <charconv>
#include <regex>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/utf8.hpp"

namespace envlock::conda {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

bool is_regex(std::string_view pattern) {
    return pattern.size() >= 2 && pattern.front() == '^' && pattern.back() == '$';
}

std::shared_ptr<const std::regex> compile_regex(std::string_view pattern, std::string_view what) {
    if (auto why = unsafe_regex(pattern))
        throw InputError("invalid " + std::string(what) + " regex '" + std::string(pattern) + "': " + *why);
    try {
        return std::make_shared<const std::regex>(std::string(pattern), std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
        throw InputError("invalid " + std::string(what) + " regex '" + std::string(pattern) + "': " + e.what());
    }
}

const std::vector<std::string_view>& known_subdirs() {
    static const std::vector<std::string_view> subdirs = {
        "noarch",       "linux-32",     "linux-64",    "linux-aarch64", "linux-armv6l", "linux-armv7l",
        "linux-ppc64",  "linux-ppc64le", "linux-s390x", "linux-riscv64", "osx-64",       "osx-arm64",
        "win-32",       "win-64",       "win-arm64",   "zos-z",         "freebsd-64",   "emscripten-wasm32",
        "wasi-wasm32"};
    return subdirs;
}

bool is_subdir(std::string_view s) {
    const auto& all = known_subdirs();
    return std::find(all.begin(), all.end(), s) != all.end();
}

// "conda-forge/linux-64" → ("conda-forge", "linux-64"). Anaconda's own hosts reduce to the
// channel name conda shows ("https://conda.anaconda.org/conda-forge" → "conda-forge",
// "https://repo.anaconda.com/pkgs/main" → "pkgs/main"); other URLs stay URLs.
std::pair<std::string, std::string> split_channel(std::string_view channel) {
    while (!channel.empty() && channel.back() == '/') channel.remove_suffix(1);
    std::string subdir;
    std::size_t slash = channel.rfind('/');
    if (slash != std::string_view::npos && is_subdir(channel.substr(slash + 1))) {
        subdir = std::string(channel.substr(slash + 1));
        channel = channel.substr(0, slash);
    }
    for (std::string_view host : {"https://conda.anaconda.org/", "http://conda.anaconda.org/",
                                  "https://repo.anaconda.com/", "http://repo.anaconda.com/"}) {
        if (starts_with(channel, host) && channel.size() > host.size()) {
            channel.remove_prefix(host.size());
            break;
        }
    }
    return {std::string(channel), subdir};
}

// A record's channel without trailing '/' and subdir, as a view into it (no allocation).
std::string_view channel_base(std::string_view channel) {
    while (!channel.empty() && channel.back() == '/') channel.remove_suffix(1);
    std::size_t slash = channel.rfind('/');
    if (slash != std::string_view::npos && is_subdir(channel.substr(slash + 1))) channel = channel.substr(0, slash);
    while (!channel.empty() && channel.back() == '/') channel.remove_suffix(1);
    return channel;
}

// A spec channel given by name ("pytorch", "pkgs/main") matches a record whose channel is that
// name or any URL ending in "/<name>"; a URL must match the record's URL.
bool ends_with_segments(std::string_view whole, std::string_view tail) {
    return whole.size() > tail.size() && ends_with(whole, tail) && whole[whole.size() - tail.size() - 1] == '/';
}

bool channel_matches(std::string_view spec, std::string_view record_channel) {
    if (spec.empty() || spec == "*") return true;
    std::string_view rec = channel_base(record_channel);
    std::string_view want = channel_base(spec);
    if (rec == want) return true;
    bool want_url = want.find("://") != std::string_view::npos;
    bool rec_url = rec.find("://") != std::string_view::npos;
    if (want_url && rec_url) return false;
    if (want_url) return ends_with_segments(want, rec);   // record knows only the channel's name
    if (want == "defaults")                              // conda's multichannel
        return ends_with_segments(rec, "pkgs/main") || ends_with_segments(rec, "pkgs/r") ||
               ends_with_segments(rec, "pkgs/msys2") || rec == "pkgs/main" || rec == "pkgs/r";
    return ends_with_segments(rec, want);
}

// build_number constraints: "3", "*", ">3", ">=3", "<3", "<=3", "==3", "=3", "!=3".
enum class NumOp { any, eq, ne, lt, le, gt, ge, invalid };

struct BuildNumberSpec {
    NumOp op = NumOp::any;
    long long value = 0;
};

BuildNumberSpec parse_build_number(std::string_view text) {
    std::string_view s = trim(text);
    BuildNumberSpec b;
    if (s.empty() || s == "*") return b;
    std::size_t k = 0;
    if (starts_with(s, "==")) { b.op = NumOp::eq; k = 2; }
    else if (starts_with(s, "!=")) { b.op = NumOp::ne; k = 2; }
    else if (starts_with(s, "<=")) { b.op = NumOp::le; k = 2; }
    else if (starts_with(s, ">=")) { b.op = NumOp::ge; k = 2; }
    else if (starts_with(s, "<")) { b.op = NumOp::lt; k = 1; }
    else if (starts_with(s, ">")) { b.op = NumOp::gt; k = 1; }
    else if (starts_with(s, "=")) { b.op = NumOp::eq; k = 1; }   // conda's '=' is "starts with": for integers, equality
    else b.op = NumOp::eq;
    std::string_view num = s.substr(k);
    auto res = std::from_chars(num.data(), num.data() + num.size(), b.value);
    if (num.empty() || res.ec != std::errc() || res.ptr != num.data() + num.size())
        b.op = NumOp::invalid;
    return b;
}

bool build_number_matches(const BuildNumberSpec& b, long long n) {
    switch (b.op) {
        case NumOp::any: return true;
        case NumOp::eq: return n == b.value;
        case NumOp::ne: return n != b.value;
        case NumOp::lt: return n < b.value;
        case NumOp::le: return n <= b.value;
        case NumOp::gt: return n > b.value;
        case NumOp::ge: return n >= b.value;
        case NumOp::invalid: return false;
    }
    return false;
}

const std::vector<std::string_view>& field_names() {
    static const std::vector<std::string_view> names = {
        "channel", "subdir",   "name", "version", "build",   "build_number",   "track_features",
        "features", "url",     "md5",  "license", "license_family", "fn", "sha256"};
    return names;
}

bool is_field(std::string_view key) {
    const auto& all = field_names();
    return std::find(all.begin(), all.end(), key) != all.end();
}

// The key=value list of a bracket or parenthesis section: values may be quoted with ' or ",
// unquoted ones end at ',' or a space.
std::vector<std::pair<std::string, std::string>> parse_key_values(std::string_view whole, std::string_view body,
                                                                  bool allow_bare_words) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t i = 0;
    auto fail = [&](const std::string& why) -> void {
        throw InputError("invalid conda match spec '" + std::string(whole) + "': " + why);
    };
    while (true) {
        while (i < body.size() && (body[i] == ',' || is_space(body[i]))) ++i;
        if (i >= body.size()) break;
        std::size_t k = i;
        while (i < body.size() && (std::isalnum(static_cast<unsigned char>(body[i])) || body[i] == '_' || body[i] == '-')) ++i;
        std::string key(body.substr(k, i - k));
        if (i >= body.size() || body[i] != '=') {
            if (allow_bare_words && !key.empty() && (i >= body.size() || body[i] == ',' || is_space(body[i]))) {
                out.emplace_back(key, "");
                continue;
            }
            fail("expected key=value in '" + std::string(body) + "'");
        }
        if (key.empty()) fail("key-value mismatch in '" + std::string(body) + "'");
        ++i;
        std::string value;
        if (i < body.size() && (body[i] == '\'' || body[i] == '"')) {
            char q = body[i++];
            std::size_t end = body.find(q, i);
            if (end == std::string_view::npos) fail("unterminated quote in '" + std::string(body) + "'");
            value = std::string(body.substr(i, end - i));
            i = end + 1;
            if (i < body.size() && body[i] != ',' && !is_space(body[i]))
                fail("expected ',' after the quoted value of '" + key + "'");
        } else {
            std::size_t v = i;
            while (i < body.size() && body[i] != ',' && !is_space(body[i])) ++i;
            value = std::string(body.substr(v, i - v));
        }
        if (value.empty()) fail("key-value mismatch: '" + key + "' has no value");
        out.emplace_back(std::move(key), std::move(value));
    }
    return out;
}

// conda's _parse_version_plus_build: the build is the shortest trailing part that follows a
// ' ' or '=' (itself not following an operator character) and holds no operator characters.
std::pair<std::string, std::string> split_version_build(std::string_view s) {
    auto operator_char = [](char c) {
        return c == '=' || c == '!' || c == '|' || c == ',' || c == '<' || c == '>' || c == '~';
    };
    for (std::size_t i = 1; i + 1 < s.size(); ++i) {
        if (s[i] != ' ' && s[i] != '=') continue;
        if (operator_char(s[i - 1])) continue;
        std::string_view build = s.substr(i + 1);
        bool ok = std::none_of(build.begin(), build.end(),
                               [&](char c) { return c == '-' || c == '=' || c == ',' || c == '|' || c == '<' || c == '>' || c == '~'; });
        if (!ok) continue;
        build = trim(build);
        if (build.empty()) continue;
        std::string version;
        for (char c : s.substr(0, i))
            if (!is_space(c)) version += c;
        return {version, std::string(build)};
    }
    std::string version;
    for (char c : s)
        if (!is_space(c)) version += c;
    return {version, ""};
}

std::vector<std::string_view> split_features(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ',' || is_space(s[i]))) ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ',' && !is_space(s[j])) ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& ch : out)
        if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    return out;
}

long long trailing_build_number(std::string_view build) {
    std::size_t us = build.rfind('_');
    std::string_view digits = us == std::string_view::npos ? build : build.substr(us + 1);
    long long n = -1;
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (digits.empty() || res.ec != std::errc() || res.ptr != digits.data() + digits.size()) return -1;
    return n;
}

}  // namespace

// Regexes compiled at parse time, keyed by the pattern they came from (fields are public and
// may be changed; a pattern that no longer matches its key is compiled on the spot).
struct MatchSpec::Compiled {
    std::vector<std::pair<std::string, std::shared_ptr<const std::regex>>> regexes;

    const std::regex* find(std::string_view pattern) const {
        for (const auto& [p, r] : regexes)
            if (p == pattern) return r.get();
        return nullptr;
    }
};

namespace {

bool string_matches(std::string_view pattern, std::string_view value, const MatchSpec::Compiled* compiled,
                    std::string_view what) {
    if (pattern.empty() || pattern == "*") return true;
    if (is_regex(pattern)) {
        if (const std::regex* r = compiled ? compiled->find(pattern) : nullptr)
            return std::regex_match(value.begin(), value.end(), *r);
        auto r = compile_regex(pattern, what);
        return std::regex_match(value.begin(), value.end(), *r);
    }
    if (pattern.find('*') != std::string_view::npos) return glob_match(pattern, value);
    return pattern == value;
}

}  // namespace

// ---------------------------------------------------------------------------------------

MatchSpec MatchSpec::parse(std::string_view text) {
    const std::string whole(text);
    auto fail = [&](const std::string& why) -> void {
        throw InputError("invalid conda match spec '" + whole + "': " + why);
    };
    MatchSpec m;
    m.original_ = whole;
    auto compiled = std::make_shared<Compiled>();

    // A spec is one line of text: a control character or a byte that is not UTF-8 cannot be
    // printed back in a spec (found by fuzz/matchspec).
    if (auto bad = utf8::invalid_at(text)) fail("expected UTF-8 text at column " + std::to_string(*bad + 1));
    for (std::size_t i = 0; i < text.size(); ++i) {
        auto c = static_cast<unsigned char>(text[i]);
        if ((c < 0x20 && c != '\t') || c == 0x7f) fail("expected a printable character at column " + std::to_string(i + 1));
    }
    std::string_view s = trim(text);
    if (auto hash = s.find('#'); hash != std::string_view::npos) s = trim(s.substr(0, hash));
    if (auto cond = s.find(" if "); cond != std::string_view::npos) s = trim(s.substr(0, cond));   // future conditionals
    if (s.empty()) fail("empty spec");

    // Legacy "feature@": a track_features query.
    if (s.back() == '@' && s.find_first_of(" =<>[") == std::string_view::npos) {
        std::string_view feature = s.substr(0, s.size() - 1);
        // A feature is a name ("mkl", "cuda80"): anything else could not be printed back.
        if (feature.empty() || feature.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                                   std::string_view::npos)
            fail("a feature name (letters, digits, '.', '_', '-') before '@'");
        m.name = "*";
        m.extra["track_features"] = std::string(feature);
        m.compiled_ = compiled;
        return m;
    }

    // A package file, its URL or path, or "channel::file" pins name, version and build exactly.
    // A URL may contain spaces (file:///…/my dir/x-1-0.tar.bz2); a plain spec with a file-like
    // version cannot, so spaces only rule out the short forms.
    bool is_url = s.find("://") != std::string_view::npos || s.front() == '/';
    if (PackageFilename::is_package_filename(s) && (is_url || s.find_first_of(" [") == std::string_view::npos)) {
        std::string_view file = s, location;
        std::size_t colons = s.rfind("::");
        if (colons != std::string_view::npos) {
            location = s.substr(0, colons);
            file = s.substr(colons + 2);
        } else if (std::size_t slash = s.rfind('/'); slash != std::string_view::npos) {
            location = s.substr(0, slash);
        }
        PackageFilename f;
        try {
            f = PackageFilename::parse(file);
        } catch (const InputError& e) {
            fail(e.what());
        }
        m.name = lower(f.name);   // folded as any spec's name (found by fuzz/matchspec: "numpyJ-1-0.tar.bz2")
        m.version = VersionSpec::parse(f.version);
        m.build = f.build;
        m.extra["fn"] = f.name + "-" + f.version + "-" + f.build + f.extension;
        if (is_url && colons == std::string_view::npos) m.extra["url"] = std::string(s);
        // A location with a space or a bracket stays in the URL only: as a channel it would print
        // as "my dir::x==1=0", which reads back as another spec (found by fuzz/matchspec).
        const bool printable = location.find_first_of(" \t[]") == std::string_view::npos;
        if (!location.empty() && !printable && !m.extra.count("url"))
            fail("a space or a bracket in the channel '" + std::string(location) + "'");
        if (!location.empty() && printable) {
            auto [channel, subdir] = split_channel(location);
            m.channel = channel;
            m.subdir = subdir;
        }
        m.compiled_ = compiled;
        return m;
    }

    std::string rest(s);
    std::vector<std::pair<std::string, std::string>> brackets;
    if (std::size_t open = rest.find('['); open != std::string::npos) {
        // The section ends at the ']' that closes it; quotes and nested '[…]' (regexes) are skipped.
        std::size_t close = std::string::npos;
        int depth = 0;
        char quote = 0;
        for (std::size_t i = open; i < rest.size(); ++i) {
            char c = rest[i];
            if (quote) {
                if (c == quote) quote = 0;
            } else if (c == '\'' || c == '"') {
                quote = c;
            } else if (c == '[') {
                ++depth;
            } else if (c == ']' && --depth == 0) {
                close = i;
                break;
            }
        }
        if (close == std::string::npos) fail(quote ? "unterminated quote in brackets" : "missing ']'");
        brackets = parse_key_values(whole, std::string_view(rest).substr(open + 1, close - open - 1), false);
        // Like conda, the section is cut out wherever it is ("numpy[…] (optional)").
        std::string tail = rest.substr(close + 1);
        if (tail.find_first_of("[]") != std::string::npos) fail("multiple bracket sections not allowed");
        rest = rest.substr(0, open) + (trim(tail).empty() ? "" : " " + tail);
    }
    // A ']' left outside the section ("ufnm17][]" once read as the name "ufnm17]", which printed
    // back does not parse: found by fuzz/matchspec).
    if (rest.find(']') != std::string::npos) fail("unbalanced ']'");

    // A trailing "(optional)" / "(key=value, …)" section, as conda writes in conda-meta. A
    // parenthesised version expression ("numpy (>=1.0,<1.5)|>2") is left for the version.
    if (std::size_t open = rest.rfind('('); open != std::string::npos) {
        std::size_t close = rest.rfind(')');
        if (close != std::string::npos && close > open && trim(std::string_view(rest).substr(close + 1)).empty()) {
            std::string_view body = std::string_view(rest).substr(open + 1, close - open - 1);
            std::vector<std::pair<std::string, std::string>> parens;
            bool is_kv = false;
            try {
                parens = parse_key_values(whole, body, true);
                is_kv = !parens.empty() &&
                        std::all_of(parens.begin(), parens.end(),
                                    [](const auto& kv) { return !kv.second.empty() || kv.first == "optional"; });
            } catch (const InputError&) {
                is_kv = false;
            }
            if (is_kv) {
                for (auto& [k, v] : parens) {
                    if (k == "optional") m.optional = true;
                    // Other parenthesised keys (target=…) describe installation, not matching.
                }
                rest = rest.substr(0, open);
            }
        }
    }

    // channel::name, channel/subdir::name, ns:name
    std::string channel_text;
    bool has_channel = false;
    if (std::size_t c2 = rest.rfind(':'); c2 != std::string::npos) {
        std::size_t c1 = c2 == 0 ? std::string::npos : rest.rfind(':', c2 - 1);
        if (c1 != std::string::npos) {
            channel_text = rest.substr(0, c1);
            m.ns = rest.substr(c1 + 1, c2 - c1 - 1);
            has_channel = true;
        } else {
            m.ns = rest.substr(0, c2);
        }
        rest = rest.substr(c2 + 1);
    }
    if (has_channel) {
        if (trim(channel_text).empty()) fail("empty channel before '::'");
        auto [channel, subdir] = split_channel(trim(channel_text));
        m.channel = channel;
        m.subdir = subdir;
    }

    // Name: everything up to the first space or operator character.
    std::string_view r = rest;
    std::size_t name_end = 0;
    while (name_end < r.size() && std::string_view(" =<>!~\t").find(r[name_end]) == std::string_view::npos) ++name_end;
    m.name = std::string(r.substr(0, name_end));
    if (m.name.empty()) fail("no package name found");
    std::string_view vb = r.substr(name_end);
    if (vb.size() == 1 && !is_space(vb[0])) vb = {};   // conda accepts "numpy=" as "numpy"
    vb = trim(vb);

    std::string version_text, build_text;
    if (!vb.empty()) {
        auto [version, build] = split_version_build(vb);
        if (build.find_first_of(" \t") != std::string::npos)
            fail("expected 'name [version [build]]', got extra text '" + build + "'");
        // "=>" and "=<" are no operator of conda's (docs: "Package match specifications"); the
        // "=1.9 means 1.9*" rule would turn "torch=>1.9" into ">1.9*", which nobody meant.
        if (starts_with(version, "=>") || starts_with(version, "=<"))
            fail("invalid operator '" + version.substr(0, 2) + "' (did you mean '" + version.substr(1, 1) + "='?)");
        if (version != "==" && version != "=" && !version.empty() && version[0] == '=') {
            std::string_view tail = std::string_view(version).substr(1);
            if (starts_with(version, "==") && build.empty()) {
                version = version.substr(2);
            } else if (tail.find_first_of("=,|") == std::string_view::npos) {
                // "=1.9" means "1.9.*"; with a build ("=1.9=py38*") conda keeps just "1.9".
                version = (build.empty() && tail.back() != '*') ? std::string(tail) + "*" : std::string(tail);
            }
        }
        version_text = version;
        build_text = build;
    }

    // Bracket keys override what the text said.
    std::string build_number;
    for (auto& [key, value] : brackets) {
        if (!is_field(key)) fail("cannot match on field '" + key + "'");
        if (key == "version") version_text = value;
        else if (key == "build") build_text = value;
        else if (key == "build_number") build_number = value;
        else if (key == "name") m.name = value;
        else if (key == "channel") {
            auto [channel, subdir] = split_channel(value);
            m.channel = channel;
            if (!subdir.empty()) m.subdir = subdir;
        } else if (key != "subdir") m.extra[key] = value;
    }
    for (auto& [key, value] : brackets)   // an explicit subdir wins over one inside channel=
        if (key == "subdir") m.subdir = value;
    // Package names are lower case; conda folds the spec's name.
    if (!is_regex(m.name))
        for (char& ch : m.name)
            if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');

    try {
        m.version = VersionSpec::parse(version_text);
    } catch (const InputError& e) {
        fail(e.what());
    }
    m.build = build_text == "*" ? "" : build_text;
    if (!build_number.empty()) {
        if (parse_build_number(build_number).op == NumOp::invalid)
            fail("invalid build_number constraint '" + build_number + "' (expected an integer, optionally after ==, !=, <, <=, >, >=)");
        m.build_number = build_number;
    }
    // A bracket value is quoted with ' or "; one holding both could not be printed back
    // (found by fuzz/matchspec).
    // A name holding '@' prints like the legacy "feature@" form ("&@~" is the name "&@": found
    // by fuzz/matchspec); conda package names never hold one.
    if (m.name.find('@') != std::string::npos) fail("'@' in the package name '" + m.name + "'");
    // Nor, outside a regex, a character the spec grammar reads as something else: '(' ')' began a
    // trailing "(key=value)" section ("numnubumpyr(get ta=nol)"), "name==" in brackets gave the
    // name "=" (both found by fuzz/matchspec). Package names are [a-z0-9_.-] (conda-build's
    // metadata checks); globs add '*'.
    if (!is_regex(m.name) && m.name.find_first_of("() \t=<>!~,|[]:'\"") != std::string::npos)
        fail("the package name '" + m.name + "' holds a character a spec reads as an operator or separator");
    // A channel or subdir holding brackets reads back as a bracket section (found by
    // fuzz/matchspec: "numpy[channel=a[channel=a]]"); no channel name or URL holds one.
    if (m.channel.find_first_of("[]") != std::string::npos || m.subdir.find_first_of("[]") != std::string::npos)
        fail("'[' or ']' in a channel or subdir");
    // A subdir is one path segment (linux-64, noarch): "subdir=os////" printed as "chan/os////::"
    // reads back as another channel and subdir (found by fuzz/matchspec).
    if (m.subdir.find('/') != std::string::npos) fail("'/' in the subdir '" + m.subdir + "'");
    // Nor a space before "::" ("nupkL*G :://p" printed back without it: found by fuzz/matchspec).
    if (m.channel.find_first_of(" \t") != std::string::npos || m.subdir.find_first_of(" \t") != std::string::npos)
        fail("a space in a channel or subdir");
    auto both_quotes = [](std::string_view v) { return v.find('\'') != std::string_view::npos && v.find('"') != std::string_view::npos; };
    if (both_quotes(m.version.str()) || both_quotes(m.build) || both_quotes(m.build_number))
        fail("a version or build holding both ' and \"");
    for (const auto& [key, value] : m.extra)
        if (both_quotes(value)) fail("a value of '" + key + "' holding both ' and \"");
    for (std::string_view pattern : {std::string_view(m.name), std::string_view(m.build)})
        if (is_regex(pattern)) compiled->regexes.emplace_back(std::string(pattern), compile_regex(pattern, "match spec"));
    for (const auto& [key, value] : m.extra)
        if (is_regex(value)) compiled->regexes.emplace_back(value, compile_regex(value, key));
    m.compiled_ = compiled;
    return m;
}

bool MatchSpec::matches(const envlock::IndexRecord& record) const {
    if (!matches_except_version(record)) return false;
    if (version.is_any()) return true;
    auto v = Version::try_parse(record.version);
    return v && version.contains(*v);
}

bool MatchSpec::matches(const envlock::IndexRecord& record, const Version& record_version) const {
    return matches_except_version(record) && version.contains(record_version);
}

bool MatchSpec::matches_except_version(const envlock::IndexRecord& record) const {
    const Compiled* c = compiled_.get();
    if (!string_matches(name, record.name, c, "name")) return false;
    if (!string_matches(build, record.build, c, "build")) return false;
    if (!build_number.empty() && !build_number_matches(parse_build_number(build_number), record.build_number))
        return false;
    if (!channel_matches(channel, record.channel)) return false;
    if (!subdir.empty() && subdir != "*") {
        std::string_view rec_subdir = record.subdir;
        if (rec_subdir.empty()) {
            // Some readers keep the subdir only in the channel URL.
            std::string_view ch = record.channel;
            while (!ch.empty() && ch.back() == '/') ch.remove_suffix(1);
            std::size_t slash = ch.rfind('/');
            if (slash != std::string_view::npos && is_subdir(ch.substr(slash + 1))) rec_subdir = ch.substr(slash + 1);
        }
        if (!string_matches(subdir, rec_subdir, c, "subdir")) return false;
    }
    for (const auto& [key, value] : extra) {
        if (key == "md5") {
            if (record.md5 != value) return false;
        } else if (key == "sha256") {
            if (record.sha256 != value) return false;
        } else if (key == "fn") {
            if (!string_matches(value, record.filename, c, key)) return false;
        } else if (key == "url") {
            if (!string_matches(value, record.url, c, key)) return false;
        } else if (key == "license") {
            // conda compares licenses case-insensitively ("*gpl*" matches "LGPLv3+").
            if (is_regex(value)) {
                if (!string_matches(value, record.license, c, key)) return false;
            } else if (!glob_match(lower(value), lower(record.license))) {
                return false;
            }
        } else if (key == "features") {
            // IndexRecord keeps no `features`, i.e. a record has none, and conda's features
            // match needs the named ones present.
            if (!split_features(value).empty()) return false;
        } else if (key == "track_features") {
            // conda compares the feature sets.
            auto want = split_features(value);
            if (want.size() != record.track_features.size()) return false;
            for (std::string_view f : want)
                if (std::find(record.track_features.begin(), record.track_features.end(), f) == record.track_features.end())
                    return false;
        }
        // license_family: IndexRecord does not carry it, so it cannot exclude.
    }
    return true;
}

bool MatchSpec::matches(const DistName& dist) const {
    const Compiled* c = compiled_.get();
    if (!string_matches(name, dist.name, c, "name")) return false;
    if (!version.is_any()) {
        auto v = Version::try_parse(dist.version);
        if (!v || !version.contains(*v)) return false;
    }
    if (!string_matches(build, dist.build, c, "build")) return false;
    if (!build_number.empty()) {
        long long n = trailing_build_number(dist.build);
        if (n < 0 || !build_number_matches(parse_build_number(build_number), n)) return false;
    }
    return true;
}

namespace {

// A bracket value in quotes: ' unless the value holds one, then " (parse refuses both).
std::string quoted(std::string_view value) {
    char q = value.find('\'') == std::string_view::npos ? '\'' : '"';
    return q + std::string(value) + q;
}

// The characters that end or nest an unquoted bracket value when the spec is read back: the
// separators ',' and blanks, '=', the quotes, and '[' ']', which the reader counts to find the
// section's end ("license=y[fo" printed unquoted lost its ']': found by fuzz/matchspec).
constexpr std::string_view kEndsBareValue = ", \t='\"[]";

std::string key_value(std::string_view key, std::string_view value) {
    bool bare = value.find_first_of(kEndsBareValue) == std::string_view::npos;
    return std::string(key) + "=" + (bare ? std::string(value) : quoted(value));
}

}  // namespace

std::string MatchSpec::str() const {
    std::string out;
    std::vector<std::string> brackets;
    bool channel_exact = !channel.empty() && channel != "*";
    if (channel_exact) out += channel;
    if (!subdir.empty()) {
        if (channel_exact) out += "/" + subdir;
        else brackets.push_back(key_value("subdir", subdir));
    }
    out += (channel_exact ? "::" : "") + (name.empty() ? std::string("*") : name);

    bool version_exact = false;
    if (!version.is_any()) {
        std::string v = version.str();
        std::string_view stem = v;
        if (ends_with(stem, ".*")) stem.remove_suffix(2);
        else if (ends_with(stem, "*")) stem.remove_suffix(1);
        // An inner '*' ("1.*.*") is a text glob; "=1.*" would read back as a prefix, so quote it.
        // A version holding '@' compares as text, which only the bracket form keeps ("==@" is
        // a version the parser refuses).
        // An operator before a trailing '*' ("==1.9.*" beside a build, "=1.9.*" from brackets)
        // would print as "===1.9" (found by fuzz/matchspec): conda keeps such a text as written.
        // So would one '=' before anything ("=p9" beside a build printed as "===p9=yu").
        bool lone_equals = v.front() == '=' && (v.back() == '*' || !starts_with(v, "=="));
        if (v.find_first_of("><$^|,@") != std::string::npos || stem.find('*') != std::string_view::npos || lone_equals) {
            brackets.push_back("version=" + quoted(v));
        } else if (starts_with(v, "!=") || starts_with(v, "~=")) {
            if (!build.empty()) brackets.push_back("version=" + quoted(v));
            else out += v;
        } else if (ends_with(v, ".*")) {
            out += "=" + v.substr(0, v.size() - 2);
        } else if (ends_with(v, "*")) {
            out += "=" + v.substr(0, v.size() - 1);
        } else if (starts_with(v, "==")) {
            out += v;
            version_exact = true;
        } else {
            out += "==" + v;
            version_exact = true;
        }
    }
    if (!build.empty()) {
        // ':' would read back as a channel separator, ' ' and '=' as field separators, '[' ']'
        // as brackets, '(' ')' as a trailing section: such a build is only safe quoted inside brackets.
        // And what split_version_build does not take as a build ('-', '~', '!', and the operators:
        // "==2.01=py~38_0" read back as one version, found by fuzz/matchspec).
        // Any blank, not only ' ': the reader splits the compact form at whitespace ("x==1=a\tb",
        // found by fuzz/matchspec in CI).
        if (build.find_first_of(std::string_view("><$^|,: =[]()'\"~!-\t\n\r\v\f")) != std::string::npos)
            brackets.push_back("build=" + quoted(build));
        else if (version_exact && build.find('*') == std::string::npos) out += "=" + build;
        else brackets.push_back(key_value("build", build));
    }
    if (!build_number.empty()) {
        brackets.push_back(key_value("build_number", build_number));
    }
    for (std::string_view key : field_names()) {
        auto it = extra.find(std::string(key));
        if (it == extra.end()) continue;
        if (key == "fn" && extra.count("url")) continue;
        if (key == "url" && channel_exact) continue;
        brackets.push_back(key_value(key, it->second));
    }
    if (!brackets.empty()) {
        out += "[";
        for (std::size_t i = 0; i < brackets.size(); ++i) out += (i ? "," : "") + brackets[i];
        out += "]";
    } else if (PackageFilename::is_package_filename(out)) {
        // "x==1_0.conda" would read back as a package file (conda reads a spec ending in .conda
        // or .tar.bz2 as a path: conda/models/match_spec.py, _parse_spec_str); brackets, even
        // empty ones, keep it a spec.
        out += "[]";
    }
    if (optional) out += " (optional)";
    return out;
}

}  // namespace envlock::conda
