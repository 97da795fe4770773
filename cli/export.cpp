#include <iostream>

#include "cli/commands.hpp"
#include "cli/lock_path.hpp"
#include "fetch/files.hpp"
#include "install/export.hpp"
#include "resolver/lock/lock.hpp"

namespace envlock::cli {

void add_export(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("export", "Write the lock for pip or conda: a --require-hashes requirements file, "
                                             "a conda @EXPLICIT list, or an environment.yml with pins");
    auto format = std::make_shared<std::string>();
    auto file = std::make_shared<std::string>();
    auto output = std::make_shared<std::string>();
    cmd->add_option("--format", *format, "requirements | conda-explicit | environment-yml")->required();
    cmd->add_option("LOCK", *file, "the lock, or a directory holding envlock.yaml (default ./envlock.yaml)");
    cmd->add_option("-o,--output", *output, "write to FILE (atomically) instead of stdout");
    cmd->callback([format, file, output] {
        auto f = install::parse_export_format(*format);
        std::string path = lock_path(*file);
        Lock lock = read_lock(read_text_file(path, "lock"), path);
        std::string text = install::export_lock(lock, f, std::filesystem::path(path).filename().string());
        if (output->empty()) std::cout << text;
        else write_file_atomically(*output, text);
    });
}

}  // namespace envlock::cli
