// Version statements in the prose of install docs ("PyTorch >= 1.9.0", "pytorch == 1.9.0, CUDA
// 11.2", "Python ≥ 3.6"): read only for torch and Python, and only when no command the docs run
// pins them, since a repo that says its torch in a sentence and never installs it otherwise
// would leave the spec without one.
#include <regex>
#include <sstream>

#include "resolver/infer/context.hpp"

namespace envlock::infer {

namespace {

// "≥"/"≤" (UTF-8) and "=" as PEP 440 operators.
std::string pep440_op(std::string op) {
    if (op == "\xE2\x89\xA5") return ">=";
    if (op == "\xE2\x89\xA4") return "<=";
    if (op == "=") return "==";
    return op;
}

bool names_package(const std::string& requirement, const std::string& name) {
    if (!starts_with(requirement, name)) return false;
    if (requirement.size() == name.size()) return true;
    char c = requirement[name.size()];
    return !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
}

}  // namespace

void Inference::prose_versions(const std::vector<std::string>& docs) {
    bool has_torch = false, has_python = !spec.python.empty();
    for (const auto& r : spec.requirements) {
        if (names_package(r.text, "torch") || names_package(r.text, "pytorch")) has_torch = true;
        if (names_package(r.text, "python")) has_python = true;
    }
    if (has_torch && has_python) return;

    static const std::string op = "(==|>=|<=|\xE2\x89\xA5|\xE2\x89\xA4|=|>|<)";
    static const std::string ver = "v?([0-9]+\\.[0-9]+(?:\\.[0-9]+)?)";
    static const std::regex torch_re("(?:^|[^A-Za-z0-9_./-])(?:py)?torch\\s*(?:version\\s*)?" + op + "\\s*" + ver + "(\\+cu[0-9]+)?" +
                                         "(?:\\s*(?:,|and|&)?\\s*(<=|<|\xE2\x89\xA4)\\s*" + ver + ")?",
                                     std::regex::icase);
    static const std::regex python_re("(?:^|[^A-Za-z0-9_./-])python\\s*(?:version\\s*)?" + op + "\\s*" + "(3\\.[0-9]+(?:\\.[0-9]+)?)",
                                      std::regex::icase);
    for (const auto& doc : docs) {
        const std::string* text = repo.get(doc);
        if (!text) continue;
        std::istringstream in(*text);
        std::string line;
        int n = 0;
        bool fence = false;
        while (std::getline(in, line)) {
            ++n;
            auto t = trimmed(line);
            if (starts_with(t, "```") || starts_with(t, "~~~")) {
                fence = !fence;
                continue;
            }
            // Code (fenced or indented) is read as commands elsewhere; links' targets are not prose.
            if (fence || starts_with(line, "    ") || starts_with(line, "\t")) continue;
            line = std::regex_replace(line, std::regex("\\]\\([^)]*\\)|https?://\\S+"), "]");
            std::smatch m;
            if (!has_torch && std::regex_search(line, m, torch_re)) {
                std::string req = "torch" + pep440_op(m[1].str()) + m[2].str() + m[3].str();
                if (m[4].matched) req += "," + pep440_op(m[4].str()) + m[5].str();
                requirement({req, "pypi", {doc, n}});
                note("prose", req, "read from the install doc's prose (no command installs torch): \"" + trimmed(line) + "\"", {doc, n});
                has_torch = true;
            }
            if (!has_python && std::regex_search(line, m, python_re)) {
                std::string o = pep440_op(m[1].str());
                python(o == "==" ? m[2].str() : o + m[2].str(), {doc, n}, "conda");
                note("prose", "python" + o + m[2].str(), "read from the install doc's prose (no command pins Python): \"" + trimmed(line) + "\"",
                     {doc, n});
                has_python = true;
            }
        }
    }
}

}  // namespace envlock::infer
