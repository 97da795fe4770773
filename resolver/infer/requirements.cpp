// requirements.txt as pip reads it: `\` continuations, comments, options (-r, -c, -f,
// --index-url, --extra-index-url, -e) and per-requirement options such as --hash.
#include <algorithm>
#include <sstream>

#include "resolver/infer/parts.hpp"

namespace envlock::infer {

namespace {

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// A comment starts at '#' at the line start or after whitespace (URLs keep their #egg=).
std::string strip_comment(const std::string& line) {
    for (std::size_t i = 0; i < line.size(); ++i)
        if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) return line.substr(0, i);
    return line;
}

// Options pip allows after a requirement on the same line; they do not change what is required.
std::string strip_requirement_options(const std::string& line) {
    for (const char* opt : {" --hash", "\t--hash", " --install-option", " --global-option", " --config-settings"}) {
        auto at = line.find(opt);
        if (at != std::string::npos) return trim(line.substr(0, at));
    }
    return line;
}

}  // namespace

PipItem classify_pip_argument(const std::string& raw, bool editable) {
    PipItem item;
    item.editable = editable;
    auto arg = trim(raw);
    item.value = arg;
    auto lower = lowercase(arg);
    if (starts_with(lower, "git+") || starts_with(lower, "hg+") || starts_with(lower, "svn+") ||
        starts_with(lower, "bzr+")) {
        item.kind = PipItem::Kind::vcs;
        std::string url = arg;
        auto hash = url.find('#');
        if (hash != std::string::npos) {
            auto fragment = url.substr(hash + 1);
            url = url.substr(0, hash);
            auto egg = fragment.find("egg=");
            if (egg != std::string::npos) {
                item.egg = fragment.substr(egg + 4);
                auto amp = item.egg.find('&');
                if (amp != std::string::npos) item.egg.resize(amp);
            }
        }
        // git+https://host/owner/repo.git@v1.0 — an '@' after the last '/' is a revision.
        auto at = url.rfind('@');
        auto slash = url.rfind('/');
        if (at != std::string::npos && slash != std::string::npos && at > slash) {
            item.rev = url.substr(at + 1);
            url = url.substr(0, at);
        }
        item.value = url;
        return item;
    }
    // PEP 508 direct reference "name @ url" is a requirement; a bare URL (an archive) is not.
    auto scheme = arg.find("://");
    if (scheme != std::string::npos) {
        auto at = arg.find('@');
        if (at == std::string::npos || at > scheme) {
            item.kind = PipItem::Kind::url;
            return item;
        }
        item.kind = PipItem::Kind::requirement;
        return item;
    }
    if (arg == "." || arg == ".." || starts_with(arg, "./") || starts_with(arg, "../") || starts_with(arg, "/") ||
        starts_with(arg, "~") || (arg.find('/') != std::string::npos && arg.find_first_of("<>=!;[ ") == std::string::npos)) {
        item.kind = PipItem::Kind::local;
        return item;
    }
    if (editable) {
        // `pip install -e detectron2`: a bare directory name after -e is a path.
        item.kind = PipItem::Kind::local;
        return item;
    }
    item.kind = PipItem::Kind::requirement;
    return item;
}

std::vector<PipItem> read_requirements_txt(std::string_view text) {
    std::vector<PipItem> out;
    std::istringstream in{std::string(text)};
    std::string physical;
    std::string logical;
    int number = 0;
    int start = 0;
    auto flush = [&] {
        auto line = trim(strip_comment(logical));
        logical.clear();
        if (line.empty()) return;
        PipItem item;
        item.line = start;
        if (line[0] != '-') {
            item = classify_pip_argument(strip_requirement_options(line), false);
            item.line = start;
            out.push_back(item);
            return;
        }
        // Option lines: "-r file", "-rfile", "--requirement=file", "--requirement file".
        std::string opt, value;
        auto eq = line.find('=');
        auto space = line.find_first_of(" \t");
        if (starts_with(line, "--")) {
            auto cut = std::min(eq, space);
            opt = line.substr(0, cut);
            value = cut == std::string::npos ? "" : trim(line.substr(cut + 1));
        } else {
            opt = line.substr(0, 2);
            value = trim(line.substr(2));
        }
        using K = PipItem::Kind;
        if (opt == "-r" || opt == "--requirement") item.kind = K::include;
        else if (opt == "-c" || opt == "--constraint") item.kind = K::constraint;
        else if (opt == "-f" || opt == "--find-links") item.kind = K::find_links;
        else if (opt == "-i" || opt == "--index-url") item.kind = K::index_url;
        else if (opt == "--extra-index-url") item.kind = K::extra_index_url;
        else if (opt == "-e" || opt == "--editable") {
            item = classify_pip_argument(value, true);
            item.line = start;
            out.push_back(item);
            return;
        } else {
            item.kind = K::ignored;   // --trusted-host, --pre, --no-binary ...: no effect on what is required
            value = line;
        }
        item.value = value;
        // pip stops at "-r" with nothing after it ("-r option requires 1 argument"); so does the
        // item, rather than reading the requirements file "" or an index "" (found by fuzzing).
        if (value.empty() && item.kind != K::ignored) {
            item.kind = K::missing_value;
            item.value = opt;
        }
        out.push_back(item);
    };
    while (std::getline(in, physical)) {
        ++number;
        if (!physical.empty() && physical.back() == '\r') physical.pop_back();
        if (logical.empty()) start = number;
        // A comment line ending in '\' is still a comment, not a continuation.
        bool continued = !physical.empty() && physical.back() == '\\' &&
                         trim(strip_comment(physical)) == trim(physical);
        if (continued) {
            logical += physical.substr(0, physical.size() - 1) + " ";
            continue;
        }
        logical += physical;
        flush();
    }
    if (!logical.empty()) flush();
    return out;
}

}  // namespace envlock::infer
