#include <iostream>

#include "cli/commands.hpp"
#include "cli/lock_path.hpp"
#include "cli/shared_flags.hpp"
#include "fetch/files.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::cli {

void add_check(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("check", "Exit 0 when envlock.yaml is well-formed and current with its spec, targets and knowledge; 1 otherwise");
    auto file = std::make_shared<std::string>();
    auto knowledge_files = std::make_shared<std::vector<std::string>>();
    cmd->add_option("FILE", *file, "the lock, or a directory holding envlock.yaml (default ./envlock.yaml)");
    cmd->add_option("--knowledge", *knowledge_files, "extra knowledge file(s) the lock was resolved with");
    cmd->callback([file, knowledge_files, &exit_code] {
        std::string path = lock_path(*file);
        Lock lock = read_lock(read_text_file(path, "lock"), path);
        auto k = knowledge::load(user_knowledge_files(*knowledge_files));
        std::string now = lock_content_hash(lock.spec, lock.targets, k.version);
        if (now != lock.content_hash) {
            std::cout << path << ": out of date: ";
            if (lock.knowledge_version != k.version)
                std::cout << knowledge::knowledge_change_report(k, lock) << "run `envlock resolve` again\n";
            else
                std::cout << "the spec or targets were edited since it was resolved; run `envlock resolve` again\n";
            exit_code = 1;
            return;
        }
        std::cout << path << ": ok (" << lock.packages.size() << " packages, " << lock.content_hash << ")\n";
    });
}

}  // namespace envlock::cli
