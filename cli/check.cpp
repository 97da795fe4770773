#include <filesystem>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/lock_path.hpp"
#include "cli/shared_flags.hpp"
#include "fetch/files.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/workflow/check_lock.hpp"

namespace envlock::cli {

void add_check(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("check", "Exit 0 when envlock.yaml is well-formed, current with its spec, targets, knowledge and inferred-from files, and its packages hold together; 1 otherwise, naming what is wrong");
    auto file = std::make_shared<std::string>();
    auto knowledge_files = std::make_shared<std::vector<std::string>>();
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "print the verdict as JSON");
    cmd->add_option("FILE", *file, "the lock, or a directory holding envlock.yaml (default ./envlock.yaml)");
    cmd->add_option("--knowledge", *knowledge_files, "extra knowledge file(s) the lock was resolved with");
    cmd->callback([file, knowledge_files, json, &exit_code] {
        std::string path = lock_path(*file);
        Lock lock = read_lock(read_text_file(path, "lock"), path);
        auto k = knowledge::load(user_knowledge_files(*knowledge_files));
        std::string now = lock_content_hash(lock.spec, lock.targets, k.version);
        // The channel priority the packages were chosen under (conda's channel_priority).
        const std::string channel_priority = lock.spec.channel_priority.empty() ? "strict" : lock.spec.channel_priority;
        std::string reason, report;   // report: which knowledge rows changed, one per line
        if (now != lock.content_hash) {
            if (lock.knowledge_version != k.version)
                report = knowledge::knowledge_change_report(k, lock);
            else
                reason = "the spec or targets were edited since it was resolved";
            exit_code = 1;
        }
        // Beyond its inputs: the packages themselves, and the files the spec was read from.
        std::string dir = std::filesystem::path(path).parent_path().string();
        auto problems = lock_problems(lock, dir.empty() ? "." : dir, k);
        if (!problems.empty()) exit_code = 1;
        if (*json) {
            nlohmann::json j = {{"lock", path}, {"ok", reason.empty() && report.empty() && problems.empty()}, {"packages", lock.packages.size()},
                                {"content-hash", lock.content_hash}, {"channel-priority", channel_priority}};
            if (!reason.empty()) j["reason"] = reason;
            if (!problems.empty()) j["problems"] = problems;
            if (!report.empty()) {
                std::istringstream lines(report);
                std::string line;
                std::getline(lines, line);
                j["reason"] = line;
                j["knowledge-changes"] = nlohmann::json::array();
                while (std::getline(lines, line))
                    if (line.rfind("  ", 0) == 0) j["knowledge-changes"].push_back(line.substr(2));
            }
            std::cout << j.dump(2) << "\n";
            return;
        }
        if (!report.empty()) {
            std::cout << path << ": out of date: " << report << "run `envlock resolve` again\n";
            return;
        }
        if (!reason.empty()) {
            std::cout << path << ": out of date: " << reason << "; run `envlock resolve` again\n";
            return;
        }
        if (!problems.empty()) {
            std::cout << path << ": the lock does not hold:\n";
            for (const auto& p : problems) std::cout << "  " << p << "\n";
            exit_code = 1;
            return;
        }
        std::cout << path << ": ok (" << lock.packages.size() << " packages, channel priority " << channel_priority << ", "
                  << lock.content_hash << ")\n";
        // The lock holds; the machine it was made for may still break it at run time.
        for (const auto& w : lock.warnings)
            std::cerr << "warning: target " << w.target << ": " << w.symptom << " [" << w.id << "]\n";
    });
}

}  // namespace envlock::cli
