#include "fetch/mirrors.hpp"

#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

std::string Mirrors::apply(std::string_view url) const {
    const MirrorRule* best = nullptr;
    for (const auto& rule : rules) {
        if (best && rule.origin != best->origin) break;
        if (url.substr(0, rule.from.size()) == rule.from && (!best || rule.from.size() > best->from.size()))
            best = &rule;
    }
    if (!best) return std::string(url);
    return best->to + std::string(url.substr(best->from.size()));
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

}  // namespace envlock::fetch
