#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/lock_path.hpp"
#include "fetch/files.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::cli {

namespace {

std::string sm_list(const std::vector<int>& sms, const char* prefix) {
    std::string out;
    for (int sm : sms) out += (out.empty() ? "" : " ") + std::string(prefix) + std::to_string(sm);
    return out;
}

}  // namespace

void add_why(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("why", "Explain why a package and its version are in the lock");
    auto name = std::make_shared<std::string>();
    auto file = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("PKG", *name, "package name (conda or PyPI spelling)")->required();
    cmd->add_option("FILE", *file, "the lock, or a directory holding envlock.yaml (default ./envlock.yaml)");
    cmd->add_flag("--json", *json, "print JSON");
    cmd->callback([name, file, json, &exit_code] {
        std::string path = lock_path(*file);
        Lock lock = read_lock(read_text_file(path, "lock"), path);
        std::string wanted = pep508::normalize_name(*name);
        const LockedPackage* pkg = nullptr;
        for (const auto& p : lock.packages)
            if (pep508::normalize_name(p.name) == wanted || (wanted == "torch" && p.name == "pytorch")) pkg = &p;
        if (!pkg) {
            std::cerr << "envlock: " << *name << " is not in " << path << "\n";
            exit_code = 1;
            return;
        }
        std::vector<const LockedDecision*> ruled_out;
        for (const auto& d : lock.decisions)
            if (pep508::normalize_name(d.excluded.substr(0, d.excluded.find(' '))) == pep508::normalize_name(pkg->name))
                ruled_out.push_back(&d);
        bool is_torch = pkg->name == "torch" || pkg->name == "pytorch";

        if (*json) {
            nlohmann::json j;
            j["name"] = pkg->name;
            j["version"] = pkg->version;
            j["kind"] = pkg->kind == Ecosystem::conda ? "conda" : pkg->kind == Ecosystem::pypi ? "pypi" : "source";
            j["url"] = pkg->url;
            j["requested-by"] = pkg->requested_by;
            if (pkg->cuda) j["cuda"] = {{"runtime", pkg->cuda->runtime}, {"sm", pkg->cuda->sm}, {"ptx", pkg->cuda->ptx}};
            j["ruled-out"] = nlohmann::json::array();
            for (const auto* d : ruled_out) j["ruled-out"].push_back({{"id", d->id}, {"excluded", d->excluded}, {"reason", d->reason}});
            if (is_torch) j["toolchain-notes"] = lock.toolchain.notes;
            std::cout << j.dump(2) << "\n";
            return;
        }
        std::cout << pkg->name << " " << pkg->version << "  (" << pkg->url << ")\n";
        std::cout << "brought in by:\n";
        if (pkg->requested_by.empty()) std::cout << "  (nothing recorded)\n";
        for (const auto& r : pkg->requested_by) std::cout << "  " << r << "\n";
        if (pkg->cuda) {
            std::cout << "CUDA " << pkg->cuda->runtime << " build";
            if (!pkg->cuda->sm.empty()) std::cout << "; SASS " << sm_list(pkg->cuda->sm, "sm_");
            std::cout << (pkg->cuda->ptx.empty() ? "; no PTX" : "; PTX " + sm_list(pkg->cuda->ptx, "compute_")) << "\n";
        }
        if (!ruled_out.empty()) {
            std::cout << "better-ranked alternatives ruled out:\n";
            for (const auto* d : ruled_out) std::cout << "  " << d->excluded << " [" << d->id << "]: " << d->reason << "\n";
        }
        if (is_torch && !lock.toolchain.notes.empty()) {
            std::cout << "toolchain for the extensions:\n";
            for (const auto& n : lock.toolchain.notes) std::cout << "  " << n << "\n";
        }
    });
}

}  // namespace envlock::cli
