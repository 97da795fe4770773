// Path and URL helpers shared by the inference readers.
#include <cctype>
#include <sstream>

#include "resolver/infer/parts.hpp"
#include "resolver/specs/utf8.hpp"

namespace envlock::infer {

const RepoFiles& as_utf8(const RepoFiles& given, RepoFiles& fixed) {
    bool all_valid = true;
    for (const auto& [path, text] : given.files) all_valid = all_valid && !utf8::invalid_at(text);
    if (all_valid) return given;
    fixed = given;
    for (auto& [path, text] : fixed.files)
        if (utf8::invalid_at(text)) text = utf8::valid(text);
    return fixed;
}

std::string lowercase(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string normalize_git_url(const std::string& url) {
    std::string u = url;
    if (u.rfind("git+", 0) == 0) u = u.substr(4);
    // scp-like form: git@github.com:owner/repo.git
    if (u.rfind("git@", 0) == 0) {
        auto colon = u.find(':');
        if (colon != std::string::npos) u = "https://" + u.substr(4, colon - 4) + "/" + u.substr(colon + 1);
    }
    if (u.rfind("ssh://git@", 0) == 0) u = "https://" + u.substr(10);
    if (u.rfind("git://", 0) == 0) u = "https://" + u.substr(6);
    while (!u.empty() && u.back() == '/') u.pop_back();
    if (u.size() > 4 && u.compare(u.size() - 4, 4, ".git") == 0) u.resize(u.size() - 4);
    return u;
}

std::string repo_basename(const std::string& url) {
    auto u = normalize_git_url(url);
    auto slash = u.rfind('/');
    return slash == std::string::npos ? u : u.substr(slash + 1);
}

std::string join_path(const std::string& dir, const std::string& rel) {
    std::string combined = rel.empty() ? dir : (rel[0] == '/' ? rel : (dir.empty() ? rel : dir + "/" + rel));
    bool absolute = !combined.empty() && combined[0] == '/';
    std::vector<std::string> parts;
    std::stringstream ss(combined);
    std::string part;
    while (std::getline(ss, part, '/')) {
        if (part.empty() || part == ".") continue;
        if (part == ".." && !parts.empty() && parts.back() != "..") {
            parts.pop_back();
            continue;
        }
        if (part == ".." && absolute) continue;
        parts.push_back(part);
    }
    std::string out = absolute ? "/" : "";
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
    return out;
}

std::string parent_dir(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

}  // namespace envlock::infer
