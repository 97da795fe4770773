#pragma once
// JSON text written straight into a string, byte for byte as nlohmann's dump writes it: the
// prefix's state file and conda-meta records have a row per file, and building a json tree of
// them was most of a warm install's user time.
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

namespace envlock::install {

// A JSON string; the rare one needing escapes goes through nlohmann itself (which also refuses
// invalid UTF-8).
inline void put_json_string(std::string& out, const std::string& v) {
    bool plain = std::all_of(v.begin(), v.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
    });
    if (plain) {
        out += '"';
        out += v;
        out += '"';
    } else {
        out += nlohmann::json(v).dump();
    }
}

}  // namespace envlock::install
