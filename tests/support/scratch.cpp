#include "tests/support/scratch.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>

namespace envlock::test {
namespace fs = std::filesystem;

namespace {

class Root {
public:
    Root() : owner_(::getpid()) {
        std::string tmpl = (fs::temp_directory_path() / "envlock-test-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp " + tmpl);
        path_ = tmpl;
    }
    ~Root() {
        // A forked child that returns through exit() must not remove its parent's folders.
        if (::getpid() != owner_) return;
        const char* keep = std::getenv("ENVLOCK_KEEP_SCRATCH");
        if (keep && *keep && std::string(keep) != "0") {
            std::fprintf(stderr, "scratch folders kept in %s\n", path_.c_str());
            return;
        }
        std::error_code ec;
        fs::remove_all(path_, ec);
        if (ec) std::fprintf(stderr, "could not remove %s: %s\n", path_.c_str(), ec.message().c_str());
    }
    Root(const Root&) = delete;
    Root& operator=(const Root&) = delete;

    fs::path make(std::string_view tag) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string tmpl = (path_ / (std::string(tag) + "-XXXXXX")).string();
        if (!::mkdtemp(tmpl.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp " + tmpl);
        return tmpl;
    }

private:
    pid_t owner_;
    fs::path path_;
    std::mutex mutex_;
};

}  // namespace

fs::path scratch_dir(std::string_view tag) {
    // A function-local static: built on first use, so it outlives every static that used it
    // (the shared mirror servers) and is destroyed after them.
    static Root root;
    return root.make(tag);
}

}  // namespace envlock::test
