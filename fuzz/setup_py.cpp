// setup.py reading (resolver/infer/setup_py, python): read_setup_py on the input, the same
// file as a package's packaging (read_package_requirements, what git sources go through), and
// a checkout holding it inferred into a Spec. Property: the inferred spec printed and re-read
// is equal.
#include "fuzz/spec_round_trip.hpp"
#include "resolver/infer/parts.hpp"

using namespace envlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string input(fuzz::text(data, size));
    try {
        (void)infer::read_setup_py(input, "setup.py");
    } catch (const Error&) {
    }
    try {
        (void)read_package_requirements({{"setup.py", input}});
    } catch (const Error&) {
    }
    fuzz::check_inferred_checkout("setup.py", input);
    return 0;
}
