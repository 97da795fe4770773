#pragma once
// What the repodata tests (name index, CEP 16 shards) build their channels from: a snapshot
// file read whole, and a body compressed as a channel's repodata.json.zst is.
#include <doctest/doctest.h>
#include <zstd.h>

#include <fstream>
#include <iterator>
#include <string>

namespace envlock::test {

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string zstd(const std::string& plain) {
    std::string packed(ZSTD_compressBound(plain.size()), '\0');
    packed.resize(ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3));
    return packed;
}

}  // namespace envlock::test
