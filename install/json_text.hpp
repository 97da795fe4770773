#pragma once
// JSON text written straight into a string, byte for byte as nlohmann's dump writes it: the
// prefix's state file and conda-meta records have a row per file, and building a json tree of
// them was most of a warm install's user time.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <string>

#include <nlohmann/json.hpp>

namespace envlock::install {

// Whether nlohmann would write `v` as is between quotes: printable ASCII but '"' and '\\'.
// Eight bytes at a time (a state has two strings per installed file): a byte with the high bit,
// below 0x20, or equal to 0x7f, '"' or '\\' ends it.
inline bool json_plain(std::string_view v) {
    constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    auto has_zero_byte = [](std::uint64_t x) { return ((x - ones) & ~x & highs) != 0; };
    size_t i = 0;
    for (; i + 8 <= v.size(); i += 8) {
        std::uint64_t x;
        std::memcpy(&x, v.data() + i, 8);
        if ((x & highs) != 0 || ((x - ones * 0x20) & ~x & highs) != 0 || has_zero_byte(x ^ (ones * 0x7f)) ||
            has_zero_byte(x ^ (ones * '"')) || has_zero_byte(x ^ (ones * '\\')))
            return false;
    }
    for (; i < v.size(); ++i) {
        auto u = static_cast<unsigned char>(v[i]);
        if (u < 0x20 || u >= 0x7f || u == '"' || u == '\\') return false;
    }
    return true;
}

// A JSON string; the rare one needing escapes goes through nlohmann itself (which also refuses
// invalid UTF-8).
inline void put_json_string(std::string& out, const std::string& v) {
    if (!json_plain(v)) {
        out += nlohmann::json(v).dump();
        return;
    }
    out += '"';
    out += v;
    out += '"';
}

}  // namespace envlock::install
