// Several envlock processes sharing one cache (issue 20): the HTTP cache is written by temp
// file and rename, so concurrent resolves each read whole entries, agree byte for byte, and
// leave no temp file behind (fetch/http_cache.hpp).
#include <doctest/doctest.h>

#include <future>

#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

TEST_CASE("four resolves at once on one cold cache all succeed with the same lock, and the cache holds no temp file") {
    auto dir = temp_dir("parallel");
    write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    const int n = 4;
    std::vector<std::future<RunResult>> runs;
    for (int i = 0; i < n; ++i) {
        runs.push_back(std::async(std::launch::async, [&, i] {
            std::vector<std::string> args{"resolve", "BEVFormer", "-o", (dir / ("lock-" + std::to_string(i) + ".yaml")).string(),
                                          "--target", (dir / "target.yaml").string()};
            auto flags = mirror_flags(dir / "cache");   // the same cache for all four
            args.insert(args.end(), flags.begin(), flags.end());
            return run_envlock(args);
        }));
    }
    std::vector<std::string> locks;
    for (int i = 0; i < n; ++i) {
        auto r = runs[i].get();
        CHECK_MESSAGE(r.exit_code == 0, r.err);
        locks.push_back(read_file(dir / ("lock-" + std::to_string(i) + ".yaml")));
    }
    for (int i = 1; i < n; ++i) CHECK(locks[i] == locks[0]);
    size_t entries = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir / "cache")) {
        CHECK_MESSAGE(e.path().filename().string().find(".tmp-") == std::string::npos, e.path().string());
        entries += e.is_regular_file();
    }
    CHECK(entries > 0);
    // And the cache they built serves a fifth, offline (the git sources keep the commits the
    // previous lock pinned).
    write_file(dir / "offline.yaml", locks[0]);
    std::vector<std::string> args{"resolve", "BEVFormer", "-o", (dir / "offline.yaml").string(), "--target",
                                  (dir / "target.yaml").string(), "--offline"};
    auto flags = mirror_flags(dir / "cache");
    args.insert(args.end(), flags.begin(), flags.end());
    auto offline = run_envlock(args);
    CHECK_MESSAGE(offline.exit_code == 0, offline.err);
    CHECK(read_file(dir / "offline.yaml") == locks[0]);
}
