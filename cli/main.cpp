#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "resolver/specs/errors.hpp"

namespace {

// Under --json a failure is a JSON object on stdout too, so a script reading stdout always gets
// one: {"error": message, "exit-code": n}. The message also goes to stderr, as without --json.
void json_error(int argc, char** argv, const std::string& message, int code) {
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--") break;
        json |= std::string(argv[i]) == "--json";
    }
    if (json) std::cout << nlohmann::json{{"error", message}, {"exit-code", code}}.dump(2) << "\n";
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"envlock: lock and install deep-learning paper environments for the GPU machine at hand"};
    app.name("envlock");
    app.set_version_flag("--version", std::string("envlock ") + ENVLOCK_VERSION);
    app.require_subcommand(1);
    envlock::cli::add_output_flags(app);

    int exit_code = 0;
    envlock::cli::add_resolve(app, exit_code);
    envlock::cli::add_install(app, exit_code);
    envlock::cli::add_verify(app, exit_code);
    envlock::cli::add_doctor(app, exit_code);
    envlock::cli::add_detect(app, exit_code);
    envlock::cli::add_check(app, exit_code);
    envlock::cli::add_why(app, exit_code);
    envlock::cli::add_run(app, exit_code);
    envlock::cli::add_export(app, exit_code);
    envlock::cli::add_inspect(app, exit_code);
    envlock::cli::add_index(app, exit_code);
    envlock::cli::add_spec(app, exit_code);
    envlock::cli::add_info(app, exit_code);
    envlock::cli::add_mirror(app, exit_code);

    // `envlock` alone: the commands, as uv and pixi print them, and exit 2 (no command given).
    if (argc == 1) {
        std::cout << app.help();
        return static_cast<int>(envlock::ExitCode::bad_input);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are "errors" with code 0; every other parse error is bad input,
        // with the nearest command or flag when the user seems to have mistyped one.
        if (e.get_exit_code() != 0) {
            std::string hint = envlock::cli::suggestion_for(app, argc, argv);
            if (!hint.empty()) {
                std::cerr << "envlock: " << hint << "\n";
                return static_cast<int>(envlock::ExitCode::bad_input);
            }
        }
        int code = app.exit(e);
        return code == 0 ? 0 : static_cast<int>(envlock::ExitCode::bad_input);
    } catch (const envlock::Error& e) {
        std::cerr << "envlock: " << e.what() << "\n";
        json_error(argc, argv, e.what(), static_cast<int>(e.code));
        return static_cast<int>(e.code);
    } catch (const std::exception& e) {
        std::cerr << "envlock: internal error: " << e.what() << "\n";
        json_error(argc, argv, std::string("internal error: ") + e.what(), static_cast<int>(envlock::ExitCode::environment));
        return static_cast<int>(envlock::ExitCode::environment);
    }
    return exit_code;
}
