#include "fetch/lazy_library.hpp"

#include <dlfcn.h>

#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

void* LazyLibrary::handle() {
    std::call_once(once_, [this] {
        handle_ = ::dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
        if (!handle_) error_ = ::dlerror();
    });
    if (!handle_)
        throw EnvironmentError(std::string("cannot load ") + name_ + " (" + soname_ + "), which " + needed_for_ + " needs: " +
                               error_ + " (install Debian's " + package_ + ")");
    return handle_;
}

void* LazyLibrary::symbol(const char* symbol) {
    void* f = ::dlsym(handle(), symbol);
    if (!f) throw EnvironmentError(std::string(soname_) + " has no " + symbol + " (too old a " + name_ + "?)");
    return f;
}

}  // namespace envlock::fetch
