#include "fetch/git_source.hpp"

#include <filesystem>
#include <sstream>

#include "fetch/process.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock {

bool is_git_commit(const std::string& rev) {
    return rev.size() == 40 && rev.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::optional<std::string> resolve_git_rev(const std::string& url, const std::string& rev) {
    if (is_git_commit(rev)) return rev;
    // An annotated tag lists its object and, as "TAG^{}", the commit it points at: prefer that.
    auto r = run_process({"git", "ls-remote", "--", url, rev, rev + "^{}"}, 30);
    if (r.exit_code != 0) return std::nullopt;
    std::istringstream lines(r.out);
    std::string line, found;
    while (std::getline(lines, line)) {
        auto tab = line.find('\t');
        if (tab != 40) continue;
        std::string commit = line.substr(0, 40), ref = line.substr(41);
        if (ref.size() > 3 && ref.compare(ref.size() - 3, 3, "^{}") == 0) return commit;
        if (found.empty()) found = commit;
    }
    if (found.empty()) return std::nullopt;
    return found;
}

void clone_at(const std::string& url, const std::string& rev, const std::string& dir) {
    std::error_code ec;
    if (std::filesystem::exists(dir, ec) && !std::filesystem::is_empty(dir, ec)) return;
    auto clone = run_process({"git", "clone", "--quiet", "--", url, dir}, 600);
    if (clone.exit_code != 0) throw EnvironmentError("git clone " + url + " failed: " + clone.out);
    if (rev.empty()) return;
    auto checkout = run_process({"git", "-C", dir, "checkout", "--quiet", rev}, 120);
    if (checkout.exit_code != 0) throw EnvironmentError("git checkout " + rev + " in " + dir + " failed: " + checkout.out);
}

}  // namespace envlock
