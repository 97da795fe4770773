// envlock-mirror: builds the demo/test mirror tree, and serves it on 127.0.0.1.
#include <CLI/CLI.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include "resolver/specs/errors.hpp"
#include "tests/mirror/mirror.hpp"
#include "tests/support/http_server.hpp"

namespace {

int run_build(const std::string& out, const std::string& shared, bool no_shared, bool no_snapshot, bool no_git) {
    envlock::mirror::MirrorOptions options;
    options.shared_dir = no_shared ? "" : shared;
    options.layer_real_pytorch_channel = !no_snapshot;
    options.with_git_repo = !no_git;
    auto start = std::chrono::steady_clock::now();
    auto info = envlock::mirror::build_mirror(out, options);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "mirror written to " << info.root << " in " << seconds << " s\n"
              << "  conda packages: " << info.conda_packages
              << (info.real_pytorch_channel ? " (real pytorch channel records layered in)" : "") << "\n"
              << "  PyPI files: " << info.pypi_files << ", torch wheels: " << info.torch_wheels
              << ", mmcv wheels: " << info.mmcv_wheels << "\n"
              << "  git/mmdetection3d tags:";
    for (const auto& t : info.git_tags) std::cout << " " << t;
    std::cout << "\n  sources: see " << info.root << "/SOURCES.md\n"
              << "  use it: envlock resolve|install --mirrors-file " << info.root << "/mirrors.yaml (or ENVLOCK_MIRRORS=that file)\n";
    return 0;
}

int run_serve(const std::string& root, int port) {
    namespace fs = std::filesystem;
    if (!fs::is_regular_file(fs::path(root) / "SOURCES.md"))
        throw envlock::InputError(root + ": not a built mirror (no SOURCES.md); run `envlock-mirror build " + root + "` first");
    // Block the stop signals before the server's thread starts, so only sigwait sees them.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    std::unique_ptr<envlock::test::HttpServer> server;
    try {
        server = std::make_unique<envlock::test::HttpServer>(fs::absolute(root).string(), port);
    } catch (const std::exception& e) {
        throw envlock::EnvironmentError("cannot listen on 127.0.0.1" + (port ? ":" + std::to_string(port) : std::string()) +
                                        ": " + e.what());
    }
    if (server->port() <= 0)
        throw envlock::EnvironmentError("cannot listen on 127.0.0.1:" + std::to_string(port) + " (port in use?)");
    std::cout << server->url() << "/" << std::endl;
    std::cout << "  conda channels: " << server->url() << "/conda/{pytorch,nvidia,conda-forge,intel}, " << server->url() << "/pkgs/{main,r} (defaults)\n"
              << "  PyPI simple:    " << server->url() << "/pypi/simple/\n"
              << "  find-links:     " << server->url() << "/whl/torch_stable.html, " << server->url()
              << "/mmcv/dist/cu111/torch1.9.0/index.html\n"
              << "serving until killed (Ctrl-C)" << std::endl;
    int sig = 0;
    sigwait(&stop, &sig);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"envlock-mirror: build or serve envlock's demo/test mirror of the deep-learning stack"};
    app.require_subcommand(1);
    std::string out, shared = ENVLOCK_MIRROR_DEFAULT_SHARED;
    bool no_shared = false, no_snapshot = false, no_git = false;
    auto* build = app.add_subcommand("build", "write the mirror tree into OUT_DIR (replacing it)");
    build->add_option("OUT_DIR", out, "output directory")->required();
    build->add_option("--shared", shared, "the shared data folder (facts/, snapshots/); default: <source>/../shared");
    build->add_flag("--no-shared", no_shared, "use only the tables compiled in");
    build->add_flag("--no-pytorch-snapshot", no_snapshot, "do not layer in the real pytorch channel records");
    build->add_flag("--no-git", no_git, "skip git/mmdetection3d (the only part that needs git on PATH)");
    std::string root;
    int port = 0;
    auto* serve = app.add_subcommand("serve", "serve OUT_DIR over HTTP on 127.0.0.1 until killed");
    serve->add_option("OUT_DIR", root, "a built mirror")->required();
    serve->add_option("--port", port, "port (default: a free one)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    try {
        if (*build) {
            if (!no_shared && !std::filesystem::is_directory(shared)) shared.clear();
            return run_build(out, shared, no_shared, no_snapshot, no_git);
        }
        return run_serve(root, port);
    } catch (const envlock::Error& e) {
        std::cerr << "envlock-mirror: " << e.what() << "\n";
        return static_cast<int>(e.code);
    } catch (const std::exception& e) {
        std::cerr << "envlock-mirror: " << e.what() << "\n";
        return 3;
    }
}
