#pragma once
// string_view::find_first_of without its cost: libstdc++ runs a memchr over the set for every
// character of the text, which showed in the parsing of every index page's links.
#include <cstddef>
#include <string_view>

namespace envlock {

inline std::size_t find_first_of_chars(std::string_view text, std::string_view set, std::size_t from = 0) {
    for (std::size_t i = from; i < text.size(); ++i)
        for (char c : set)
            if (text[i] == c) return i;
    return std::string_view::npos;
}

}  // namespace envlock
