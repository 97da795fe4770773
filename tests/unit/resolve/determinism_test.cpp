// DESIGN.md "Same inputs, same lock, byte for byte": every built-in recipe resolved four times
// on the demo mirror for one machine gives the same bytes each time: the same lock, or (where
// the mirror cannot satisfy a recipe) the same exit code and the same message. Four fresh
// processes per recipe (24 in all, index fetches on parallel threads in each) keep the suite
// short; resolve_cli_test ("resolving twice gives the same bytes") and security's concurrent
// resolves compare locks across processes too.
#include <doctest/doctest.h>

#include <sstream>

#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

// Progress outcome lines say how long a step took (printed when it took a second or more, on a
// loaded machine too): time is the one input that differs between runs.
std::string without_progress(const std::string& err) {
    std::string out, line;
    std::istringstream lines(err);
    while (std::getline(lines, line)) {
        bool progress = false;
        for (const char* start : {"Fetched ", "Indexes read from the cache in ", "Read ", "Solved in "})
            progress = progress || line.rfind(start, 0) == 0;
        if (!progress) out += line + "\n";
    }
    return out;
}

}  // namespace

TEST_CASE("each recipe resolved 4 times on the demo mirror gives the same bytes every time") {
    const auto target = target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4");
    for (const char* recipe : {"BEVFormer", "Deformable-DETR", "EchoFusion", "Mask2Former", "detectron2", "mmdetection3d"}) {
        CAPTURE(recipe);
        fs::path dir = temp_dir(std::string("det-") + recipe);
        write_file(dir / "target.yaml", target);
        std::string first_lock, first_err;
        int first_code = -1;
        for (int i = 0; i < 4; ++i) {
            CAPTURE(i);
            // A fresh output each time: no previous lock to keep versions from.
            fs::path out = dir / ("run" + std::to_string(i)) / "envlock.yaml";
            auto r = resolve_with({recipe, "-o", out.string(), "--target", (dir / "target.yaml").string()}, dir);
            std::string lock = fs::exists(out) ? read_file(out) : "";
            std::string err = without_progress(r.err);
            if (i == 0) {
                first_lock = lock;
                first_err = err;
                first_code = r.exit_code;
                MESSAGE(std::string(recipe) << ": exit " << r.exit_code);
                continue;
            }
            CHECK(r.exit_code == first_code);
            CHECK(lock == first_lock);
            CHECK(err == first_err);
        }
    }
}
