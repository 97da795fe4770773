#pragma once
// The names nearest to one a user typed, for messages that offer a fix ("scikit-imagee":
// did you mean scikit-image?). Names compare as PEP 503 folds them (case, '-', '_', '.').
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace envlock {

// At most `limit` of `known`, nearest first: within a third of the name's length in edits
// (at least two; a swap of neighbours is one edit), or sharing a prefix of three or more.
std::vector<std::string> close_names(std::string_view wanted, const std::vector<std::string>& known, std::size_t limit = 3);

}  // namespace envlock
