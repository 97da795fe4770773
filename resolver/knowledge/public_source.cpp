#include "resolver/knowledge/public_source.hpp"

#include <regex>

namespace envlock::knowledge {

std::string public_source(std::string_view source) {
    // How the developers read a fact, which no user can follow.
    static const std::regex internal[] = {
        std::regex(R"([;,]?\s*(read via\s+)?stored copy,?\s*search-index file id \d+)", std::regex::icase),
        std::regex(R"([;,]?\s*(read via\s+)?stored copy id \d+)", std::regex::icase),
        std::regex(R"([;,]?\s*scraped copy dated [0-9-]+,\s*stored file id \d+)", std::regex::icase),
        std::regex(R"(,?\s*read through verbatim quotes in the index\s*\([^)]*\))", std::regex::icase),
        std::regex(R"(,?\s*as quoted in stored ids? \d+(,\s*\d+)*)", std::regex::icase),
        std::regex(R"(\s*\((e\.g\.\s*)?stored ids? \d+(,\s*\d+)*\))", std::regex::icase),
        std::regex(R"([;,]?[^;,()]*\bthe \d{4}-\d{2} audit,?\s*rows? \d+(-\d+)?)", std::regex::icase),
        std::regex(R"([;,]?\s*(\.\./)?shared/(cases|facts)/[^;)\s]*(\s*\([^)]*\))?)"),
    };
    static const std::pair<std::regex, const char*> tidy[] = {
        {std::regex(R"(\s+)"), " "},
        {std::regex(R"(\(\s*[;,]?\s*\))"), ""},
        {std::regex(R"(\(\s*[;,]\s*)"), "("},
        {std::regex(R"(\s*[;,]\s*\))"), ")"},
        {std::regex(R"(\s+([;,)]))"), "$1"},
        {std::regex(R"(^[\s;,]+|[\s;,]+$)"), ""},
        {std::regex(R"(\s*;\s*;\s*)"), " ; "},
    };
    std::string s(source);
    for (const auto& re : internal) s = std::regex_replace(s, re, "");
    for (const auto& [re, with] : tidy) s = std::regex_replace(s, re, with);
    return s;
}

}  // namespace envlock::knowledge
