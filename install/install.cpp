#include "install/install.hpp"

namespace envlock::install {

void use_default_installers(InstallOptions& options) {
    // The wheel half (PEP 427 installs, venvs, git sources) plugs in here.
    (void)options;
}

}  // namespace envlock::install
