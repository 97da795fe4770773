// CUDA-variant placeholders in project names, as install docs write them ("pip install
// spconv-cuxxx"): which names are placeholders, and which real projects fill one.
#include <doctest/doctest.h>

#include "resolver/specs/cuda_build.hpp"

using envlock::cuda_placeholder;
using envlock::fills_cuda_placeholder;

TEST_CASE("spconv-cuxxx, cumm-cu1xx, spconv-cu11x and cupy-cudaxxx are placeholders; their stem and fixed digits") {
    auto p = cuda_placeholder("spconv-cuxxx");
    REQUIRE(p);
    CHECK(p->stem == "spconv-cu");
    CHECK(p->digits.empty());
    auto q = cuda_placeholder("cumm-cu1xx");
    REQUIRE(q);
    CHECK(q->digits == "1");
    CHECK(cuda_placeholder("spconv-cu11x"));
    auto c = cuda_placeholder("cupy-cudaxxx");
    REQUIRE(c);
    CHECK(c->stem == "cupy-cuda");
}

TEST_CASE("real project names are not placeholders: cupy-cuda11x (CuPy's wheel for CUDA 11.x), spconv-cu113, spconv, -cux") {
    CHECK_FALSE(cuda_placeholder("cupy-cuda11x"));
    CHECK_FALSE(cuda_placeholder("cupy-cuda12x"));
    CHECK_FALSE(cuda_placeholder("spconv-cu113"));
    CHECK_FALSE(cuda_placeholder("spconv"));
    CHECK_FALSE(cuda_placeholder("foo-cux"));
}

TEST_CASE("a placeholder is filled by the projects of its stem whose variant has its fixed digits, with that CUDA") {
    auto any = *cuda_placeholder("spconv-cuxxx");
    CHECK(fills_cuda_placeholder(any, "spconv-cu111") == std::optional<std::string>("11.1"));
    CHECK(fills_cuda_placeholder(any, "spconv-cu102") == std::optional<std::string>("10.2"));
    CHECK(fills_cuda_placeholder(any, "spconv-cu120") == std::optional<std::string>("12.0"));
    CHECK_FALSE(fills_cuda_placeholder(any, "spconv"));
    CHECK_FALSE(fills_cuda_placeholder(any, "spconv-cu113-extra"));
    CHECK_FALSE(fills_cuda_placeholder(any, "cumm-cu113"));
    auto eleven = *cuda_placeholder("spconv-cu11x");
    CHECK(fills_cuda_placeholder(eleven, "spconv-cu113"));
    CHECK_FALSE(fills_cuda_placeholder(eleven, "spconv-cu102"));
    CHECK(fills_cuda_placeholder(*cuda_placeholder("cupy-cudaxxx"), "cupy-cuda111") == std::optional<std::string>("11.1"));
}
