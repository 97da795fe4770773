#pragma once
// A shared library opened on its first use (dlopen) instead of at start-up: for libraries that
// bring a large tree of their own (libcurl, libarchive) and that most commands never call.
// Failures are environment errors naming the library, what needs it and Debian's package.
#include <mutex>
#include <string>

namespace envlock::fetch {

class LazyLibrary {
public:
    // soname "libcurl.so.4", name "libcurl", needed_for "every download", package "libcurl4".
    LazyLibrary(const char* soname, const char* name, const char* needed_for, const char* package)
        : soname_(soname), name_(name), needed_for_(needed_for), package_(package) {}
    LazyLibrary(const LazyLibrary&) = delete;

    // The function `symbol` of the library, opening it on the first call.
    void* symbol(const char* symbol);
    template <class F>
    F function(const char* name) {
        return reinterpret_cast<F>(symbol(name));
    }

private:
    void* handle();
    const char *soname_, *name_, *needed_for_, *package_;
    void* handle_ = nullptr;
    std::string error_;
    std::once_flag once_;
};

}  // namespace envlock::fetch
