#include "fetch/mirrors.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "fetch/url.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

std::string Mirrors::apply(std::string_view url) const {
    if (rules.empty()) return std::string(url);
    // Rules match the URL without its userinfo ("https://user:token@host/simple" is the same
    // index as "https://host/simple"), and the URL's credentials stay behind: a mirror gets
    // only what its rule's TO carries (or what the transport sends to the mirror's own host).
    std::string bare;
    std::string_view match = url;
    if (url.find('@') != std::string_view::npos) match = bare = strip_userinfo(url);
    const MirrorRule* best = nullptr;
    std::size_t best_length = 0;
    for (const auto& rule : rules) {
        if (best && rule.origin != best->origin) break;
        std::string from_bare;
        std::string_view from = rule.from;
        if (from.find('@') != std::string_view::npos) from = from_bare = strip_userinfo(from);
        if (match.substr(0, from.size()) == from && (!best || from.size() > best_length)) {
            best = &rule;
            best_length = from.size();
        }
    }
    if (!best) return std::string(url);
    return best->to + std::string(match.substr(best_length));
}

MirrorRule parse_mirror_rule(std::string_view text, std::string_view origin) {
    auto eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
        throw InputError(std::string(origin) + ": mirror '" + std::string(text) +
                         "' is not FROM=TO (a URL prefix, '=', and its replacement)");
    return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)), std::string(origin)};
}

void check_unique_prefixes(const std::vector<MirrorRule>& rules) {
    for (size_t i = 0; i < rules.size(); ++i)
        for (size_t j = i + 1; j < rules.size(); ++j)
            if (rules[i].origin == rules[j].origin && rules[i].from == rules[j].from)
                throw InputError(rules[i].origin + ": the mirror prefix " + rules[i].from + " is given twice (=" +
                                 rules[i].to + " and =" + rules[j].to + "); keep one");
}

std::vector<MirrorRule> parse_mirror_list(std::string_view text, std::string_view origin) {
    std::vector<MirrorRule> rules;
    while (!text.empty()) {
        auto semi = text.find(';');
        auto item = text.substr(0, semi);
        while (!item.empty() && (item.front() == ' ')) item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ')) item.remove_suffix(1);
        if (!item.empty()) rules.push_back(parse_mirror_rule(item, origin));
        if (semi == std::string_view::npos) break;
        text.remove_prefix(semi + 1);
    }
    return rules;
}

namespace {

// A TO with no scheme and no leading '/' names a folder beside the mirrors file.
std::string beside(const std::string& to, const std::filesystem::path& dir) {
    if (to.find("://") != std::string::npos || to.front() == '/') return to;
    return "file://" + (dir / to).lexically_normal().string();
}

}  // namespace

std::vector<MirrorRule> read_mirrors_file(const std::string& path) {
    namespace fs = std::filesystem;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw EnvironmentError(path + ": cannot read the mirrors file (no such file, or no permission)");
    std::stringstream text;
    text << in.rdbuf();
    YAML::Node root;
    try {
        root = YAML::Load(text.str());
    } catch (const YAML::Exception& e) {
        throw InputError(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
    }
    auto m = root.IsMap() ? root["mirrors"] : YAML::Node();
    if (!m || !(m.IsMap() || m.IsSequence()))
        throw InputError(path + ": expected a mirrors file: `mirrors:` mapping URL prefixes to replacements "
                                "(https://pypi.org/simple: file:///srv/pypi/simple)");
    std::error_code ec;
    fs::path dir = fs::absolute(fs::path(path), ec).parent_path();
    std::vector<MirrorRule> rules;
    auto line_of = [&](const YAML::Node& n) { return path + ":" + std::to_string(n.Mark().line + 1); };
    if (m.IsMap()) {
        for (const auto& kv : m) {
            if (!kv.first.IsScalar() || !kv.second.IsScalar() || kv.first.Scalar().empty() || kv.second.Scalar().empty())
                throw InputError(line_of(kv.first) + ": a mirror maps a URL prefix to its replacement, both non-empty text");
            rules.push_back({kv.first.Scalar(), beside(kv.second.Scalar(), dir), path});
        }
    } else {
        for (const auto& item : m) {
            if (!item.IsScalar()) throw InputError(line_of(item) + ": expected \"FROM=TO\"");
            MirrorRule r = parse_mirror_rule(item.Scalar(), line_of(item));
            r.to = beside(r.to, dir);
            r.origin = path;
            rules.push_back(std::move(r));
        }
    }
    check_unique_prefixes(rules);
    return rules;
}

}  // namespace envlock::fetch
