// requirements.txt reading (resolver/infer/requirements): read_requirements_txt on the input,
// each requirement line re-classified as a pip argument, then a checkout holding only this
// file inferred into a Spec. Property: the inferred spec printed and re-read is equal.
#include "fuzz/spec_round_trip.hpp"
#include "resolver/infer/parts.hpp"

using namespace envlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string input(fuzz::text(data, size));
    for (const auto& item : infer::read_requirements_txt(input))
        if (item.kind == infer::PipItem::Kind::requirement) (void)infer::classify_pip_argument(item.value, item.editable);
    fuzz::check_inferred_checkout("requirements.txt", input);
    return 0;
}
