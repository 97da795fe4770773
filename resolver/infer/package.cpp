// A package's own requirements from its packaging files (git sources and sdists at resolve
// time), with the same readers inference uses for a checkout.
#include <regex>
#include <set>

#include "resolver/infer/infer.hpp"
#include "resolver/infer/parts.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock {

namespace {

// Requirement lines of a requirements file, following -r includes inside the package.
void requirement_lines(const std::map<std::string, std::string>& files, const std::string& path,
                       std::vector<std::string>& out, std::set<std::string>& seen) {
    auto it = files.find(path);
    if (it == files.end() || !seen.insert(path).second) return;
    std::string dir = infer::parent_dir(path);
    for (const auto& item : infer::read_requirements_txt(it->second)) {
        if (item.kind == infer::PipItem::Kind::requirement) out.push_back(item.value);
        else if (item.kind == infer::PipItem::Kind::include) requirement_lines(files, infer::join_path(dir, item.value), out, seen);
    }
}

}  // namespace

PackageRequirements read_package_requirements(const std::map<std::string, std::string>& given) {
    RepoFiles given_repo, fixed;
    given_repo.files = given;
    const auto& files = infer::as_utf8(given_repo, fixed).files;   // as infer_spec reads them
    PackageRequirements out;
    bool declared = false, unreadable = false;
    std::vector<std::string> reqs;
    std::set<std::string> seen;
    auto add = [&](const infer::PackageInfo& info) {
        if (out.name.empty()) out.name = info.name;
        if (out.requires_python.empty()) out.requires_python = info.python_requires;
        declared = declared || info.declares;
        for (const auto& r : info.install_requires) reqs.push_back(r.text);
        for (const auto& [txt, line] : info.requirement_files) requirement_lines(files, txt, reqs, seen);
    };
    try {
        if (auto it = files.find("pyproject.toml"); it != files.end()) add(infer::read_pyproject(it->second, "pyproject.toml"));
    } catch (const InputError&) {
        // A pyproject.toml that does not parse says nothing; setup.py may still.
    }
    if (auto it = files.find("setup.cfg"); it != files.end()) add(infer::read_setup_cfg(it->second, "setup.cfg"));
    if (auto it = files.find("setup.py"); it != files.end()) {
        auto info = infer::read_setup_py(it->second, "setup.py");
        if (info.requirements_unreadable) {
            // install_requires=parse_requirements() with the file named elsewhere (a default
            // argument, a constant): the requirements files setup.py quotes are what it reads.
            static const std::regex quoted(R"(['"]([A-Za-z0-9_./-]*requirements[A-Za-z0-9_./-]*\.txt)['"])");
            for (std::sregex_iterator m(it->second.begin(), it->second.end(), quoted), end; m != end; ++m) {
                std::string txt = (*m)[1].str();
                if (files.count(txt)) info.requirement_files.push_back({txt, 0});
            }
            unreadable = info.requirement_files.empty();
        }
        add(info);
    }
    out.known = declared && !unreadable;
    std::set<std::string> unique;
    for (auto& r : reqs)
        if (unique.insert(r).second) out.requires_dist.push_back(r);
    return out;
}

}  // namespace envlock
