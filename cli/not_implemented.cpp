#include <iostream>

#include "cli/commands.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::cli {

void not_implemented(const std::string& command) {
    throw InputError("`envlock " + command + "` is not implemented yet");
}

}  // namespace envlock::cli
