// Sources shown to users are URLs or owner/repo@rev:path (issue 19, item 4): the knowledge rows
// keep how a fact was read (a stored copy's id, the developers' fact files), what envlock prints
// does not.
#include <doctest/doctest.h>

#include "resolver/knowledge/public_source.hpp"
#include "tests/support/run_envlock.hpp"

using envlock::knowledge::public_source;

TEST_CASE("a stored copy's id is dropped, the URL and the table named stay") {
    CHECK(public_source("https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html#id5 (Table 3; read via "
                        "stored copy, search-index file id 70889381901)") ==
          "https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html#id5 (Table 3)");
    CHECK(public_source("pytorch/pytorch RELEASE.md (https://github.com/pytorch/pytorch/blob/main/RELEASE.md; stored copy id 66643764700)") ==
          "pytorch/pytorch RELEASE.md (https://github.com/pytorch/pytorch/blob/main/RELEASE.md)");
    CHECK(public_source("https://pytorch.org/get-started/previous-versions/ (scraped copy dated 2026-03, stored file id 52905722096)") ==
          "https://pytorch.org/get-started/previous-versions/");
    CHECK(public_source("open-mmlab/mmdetection docs/en/faq.md table (stored id 37267862); open-mmlab/mmdetection@0104c69:mmdet/__init__.py; "
                        "corrected in the 2026-11 audit, row 186") ==
          "open-mmlab/mmdetection docs/en/faq.md table; open-mmlab/mmdetection@0104c69:mmdet/__init__.py");
}

TEST_CASE("ids of verbatim quotes in the search index go; the file and tag they quote stay") {
    CHECK(public_source("open-mmlab/mmdetection@v3.3.0:mmdet/__init__.py (mmcv < 2.2.0), read through verbatim quotes in the index "
                        "(stored ids 56810940500, 70921338363: \"MMCV==2.2.0 is used\")") ==
          "open-mmlab/mmdetection@v3.3.0:mmdet/__init__.py (mmcv < 2.2.0)");
    CHECK(public_source("open-mmlab/mmdetection@v3.3.0:mmdet/__init__.py mmengine bounds, as quoted in stored id 70921338363") ==
          "open-mmlab/mmdetection@v3.3.0:mmdet/__init__.py mmengine bounds");
    CHECK(public_source("x (y); corrected in the 2026-11 audit, rows 186-187") == "x (y)");
}

TEST_CASE("a part naming the developers' fact files is dropped; a source that is nothing else becomes empty") {
    CHECK(public_source("https://github.com/open-mmlab/mmdetection3d/issues/1332 ; ../shared/cases/mmdetection3d-v0.17.yaml (thc_users)") ==
          "https://github.com/open-mmlab/mmdetection3d/issues/1332");
    CHECK(public_source("../shared/facts/python_libs.yaml").empty());
    CHECK(public_source("https://developer.nvidia.com/cuda-gpus") == "https://developer.nvidia.com/cuda-gpus");
}

TEST_CASE("no inspect answer, in text or JSON, shows a stored copy's id or a shared/ path") {
    for (std::vector<std::string> q : {std::vector<std::string>{"inspect", "driver", "470.82.01"},
                                       {"inspect", "cuda", "12.8"},
                                       {"inspect", "torch", "2.7"},
                                       {"inspect", "torch", "1.9.1"},
                                       {"inspect", "gpu", "RTX 3090"},
                                       {"inspect", "advisories"},
                                       {"inspect", "changes"}}) {
        for (bool json : {false, true}) {
            auto args = q;
            if (json) args.push_back("--json");
            auto r = envlock::test::run_envlock(args);
            CHECK_MESSAGE(r.exit_code == 0, r.err);
            for (const char* internal : {"stored copy", "file id", "stored id", "shared/", "audit, row"})
                CHECK_MESSAGE(r.out.find(internal) == std::string::npos, (q[1] + " " + internal));
        }
    }
}
