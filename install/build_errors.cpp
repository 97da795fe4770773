#include "install/build_errors.hpp"

#include <regex>

#include "resolver/specs/errors.hpp"

namespace envlock::install {

namespace {

std::string trim(std::string_view s) {
    size_t a = s.find_first_not_of(" \t\r\n");
    if (a == std::string_view::npos) return "";
    size_t b = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(a, b - a + 1));
}

std::string line_at(std::string_view log, size_t pos) {
    size_t start = log.rfind('\n', pos);
    start = start == std::string_view::npos ? 0 : start + 1;
    size_t end = log.find('\n', pos);
    return trim(log.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
}

// {1}, {2} … -> the match's groups ("" for a group that did not take part).
std::string fill(const std::string& text, const std::match_results<std::string_view::const_iterator>& m) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '{' && i + 2 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1])) && text[i + 2] == '}') {
            size_t g = static_cast<size_t>(text[i + 1] - '0');
            if (g < m.size()) out += m[g].str();
            i += 2;
        } else {
            out.push_back(text[i]);
        }
    }
    return out;
}

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

}  // namespace

std::vector<ExplainedFailure> explain_log(std::string_view log, const knowledge::Knowledge& k) {
    std::vector<std::pair<size_t, ExplainedFailure>> found;
    for (const auto& row : k.build_failures) {
        std::regex re;
        try {
            re = std::regex(row.match, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw InputError("knowledge: build_failures row " + row.id + ": `match` is not a valid regular expression: " + e.what());
        }
        std::match_results<std::string_view::const_iterator> m;
        if (!std::regex_search(log.begin(), log.end(), m, re)) continue;
        size_t pos = static_cast<size_t>(m[0].first - log.begin());
        found.push_back({pos, {row.id, row.where, line_at(log, pos), fill(row.cause, m), fill(row.fix, m), row.source}});
    }
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<ExplainedFailure> out;
    for (auto& f : found) out.push_back(std::move(f.second));
    return out;
}

std::string first_error_line(std::string_view log) {
    std::string compiler, exception, other;
    bool after_failed = false;
    size_t pos = 0;
    while (pos < log.size()) {
        size_t end = log.find('\n', pos);
        if (end == std::string_view::npos) end = log.size();
        std::string line = trim(log.substr(pos, end - pos));
        pos = end + 1;
        if (line.empty()) continue;
        // ninja prints the failing command after FAILED:; the compiler's words come below it.
        if (line.rfind("FAILED:", 0) == 0) {
            after_failed = true;
            continue;
        }
        bool is_compiler = contains(line, ": error:") || contains(line, "fatal error") || contains(line, "nvcc fatal") ||
                           contains(line, "#error") || contains(line, ": error #") || (after_failed && contains(line, "error: "));
        if (compiler.empty() && is_compiler) compiler = line;
        // A Python traceback ends in "SomeError: why"; the last one is the one that stopped it.
        static const std::regex exc(R"(^([A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Exit)|KeyboardInterrupt)(: .*)?$)");
        if (std::regex_match(line, exc)) exception = line;
        if (other.empty() && (line.rfind("error:", 0) == 0 || contains(line, "Illegal instruction") ||
                              contains(line, "Segmentation fault") || contains(line, "Killed")))
            other = line;
    }
    if (!compiler.empty()) return compiler;
    if (!exception.empty()) return exception;
    return other;
}

}  // namespace envlock::install
