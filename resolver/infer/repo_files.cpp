// The one place inference touches the filesystem: it reads the files inference looks at
// into a RepoFiles value, so every parser works on strings and tests need no disk.
#include <fstream>
#include <sstream>
#include <system_error>

#include "resolver/specs/errors.hpp"
#include "resolver/infer/infer.hpp"

namespace envlock {

namespace {

namespace fs = std::filesystem;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool wanted(const std::string& rel, const std::string& filename) {
    auto name = lower(filename);
    if (ends_with(name, ".cu")) return true;
    if (name == "setup.py" || name == "setup.cfg" || name == "pyproject.toml" || name == "make.sh") return true;
    if (rel == ".gitmodules") return true;
    if (rel == ".python-version") return true;   // the interpreter uv and pyenv use   // submodules a checkout without --recursive lacks
    if (name == "environment.yml" || name == "environment.yaml") return true;
    if (starts_with(name, "requirements") && ends_with(name, ".txt")) return true;
    // requirements/*.txt at any depth: mmdetection3d keeps its runtime pins there.
    if (ends_with(name, ".txt") && (starts_with(rel, "requirements/") || rel.find("/requirements/") != std::string::npos))
        return true;
    if (starts_with(name, "readme") || starts_with(name, "install")) return true;
    // Any markdown page: the README may point to a sub-page anywhere (docs/en/get_started.md).
    if (ends_with(name, ".md")) return true;
    // Shell scripts an install step may run, and Dockerfiles the docs may point to.
    if (ends_with(name, ".sh")) return true;
    if (name == "dockerfile" || starts_with(name, "dockerfile.") || ends_with(name, ".dockerfile")) return true;
    return false;
}

constexpr std::uintmax_t max_file_size = 2 * 1024 * 1024;

}  // namespace

RepoFiles collect_repo_files(const fs::path& root) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) throw InputError(root.string() + ": not a directory (expected a repo checkout)");
    RepoFiles repo;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    if (ec) throw InputError(root.string() + ": cannot read directory: " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) throw InputError(root.string() + ": cannot read directory: " + ec.message());
        auto filename = it->path().filename().string();
        if (it->is_directory(ec)) {
            if (filename.empty() || filename[0] == '.' || filename == "build" || filename == "dist" ||
                filename == "node_modules" || filename == "__pycache__" || filename.find(".egg-info") != std::string::npos)
                it.disable_recursion_pending();
            continue;
        }
        if (!it->is_regular_file(ec)) continue;
        auto rel = it->path().lexically_relative(root).generic_string();
        if (!wanted(rel, filename)) continue;
        if (ends_with(lower(filename), ".cu")) {
            repo.files[rel] = "";
            continue;
        }
        if (it->file_size(ec) > max_file_size) continue;  // not a hand-written install file
        std::ifstream in(it->path(), std::ios::binary);
        if (!in) continue;
        std::ostringstream buf;
        buf << in.rdbuf();
        repo.files[rel] = buf.str();
    }
    // The checkout's own remotes (`url = …` lines of .git/config): a doc that clones one of
    // them clones this repo, whatever the checkout's folder is called.
    std::ifstream config(root / ".git" / "config");
    for (std::string line; std::getline(config, line);) {
        auto at = line.find_first_not_of(" \t");
        if (at == std::string::npos || line.compare(at, 3, "url") != 0) continue;
        auto eq = line.find('=', at);
        if (eq == std::string::npos) continue;
        auto url = line.substr(line.find_first_not_of(" \t", eq + 1));
        while (!url.empty() && (url.back() == ' ' || url.back() == '\r')) url.pop_back();
        if (!url.empty()) repo.remotes.push_back(url);
    }
    return repo;
}

}  // namespace envlock
