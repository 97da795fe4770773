#include "install/install.hpp"
#include "install/python_steps.hpp"

namespace envlock::install {

void use_default_installers(InstallOptions& options, const PythonStepOptions& python) {
    // The Python half: PEP 427 wheels, venvs for PyPI-only locks, git sources.
    use_python_installers(options, python);
}

}  // namespace envlock::install
