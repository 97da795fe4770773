// Conda MatchSpec (resolver/specs/matchspec): MatchSpec::parse on the input, matched against a
// fixed record and a dist name. Property: a spec printed in conda's canonical form and
// re-parsed prints the same and matches the same record.
#include "fuzz/fuzz.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"

using namespace envlock;
using envlock::fuzz::property;

namespace {

IndexRecord sample_record() {
    IndexRecord r;
    r.name = "numpy";
    r.version = "1.19.5";
    r.build = "py38h18fd61f_1";
    r.build_number = 1;
    r.filename = "numpy-1.19.5-py38h18fd61f_1.tar.bz2";
    r.url = "https://conda.anaconda.org/conda-forge/linux-64/numpy-1.19.5-py38h18fd61f_1.tar.bz2";
    r.channel = "https://conda.anaconda.org/conda-forge";
    r.subdir = "linux-64";
    r.sha256 = std::string(64, 'a');
    r.md5 = std::string(32, 'b');
    r.license = "BSD-3-Clause";
    r.track_features = {"blas_openblas"};
    return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const IndexRecord record = sample_record();
    static const conda::DistName dist = conda::DistName::parse("pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0");
    auto input = fuzz::text(data, size);
    conda::MatchSpec spec;
    try {
        spec = conda::MatchSpec::parse(input);
    } catch (const Error&) {
        return 0;
    }
    bool matched = spec.matches(record);
    (void)spec.matches(dist);
    std::string printed = spec.str();
    conda::MatchSpec back;
    try {
        back = conda::MatchSpec::parse(printed);
    } catch (const Error& e) {
        fuzz::violated("MatchSpec::parse(m.str()) parses", printed, e.what());
    }
    property(back.str() == printed, "MatchSpec::parse(m.str()).str() == m.str()", printed, back.str());
    property(back.matches(record) == matched, "a re-parsed MatchSpec matches the same record", printed);
    return 0;
}
