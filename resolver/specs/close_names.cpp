#include "resolver/specs/close_names.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace envlock {

namespace {

// Names compare as PEP 503 normalises them: case, '-', '_' and '.' do not tell names apart.
std::string folded(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '-' || c == '_' || c == '.') {
            if (out.empty() || out.back() != '-') out += '-';
        } else {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    return out;
}

// Optimal string alignment distance: edits, with a swap of two neighbours counted once
// ("torhc" is one step from "torch").
size_t distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

}  // namespace

std::vector<std::string> close_names(std::string_view wanted, const std::vector<std::string>& known, size_t limit) {
    std::string w = folded(wanted);
    // A third of the name may differ, at least two edits: "scikit-imagee" finds "scikit-image",
    // "numpyy" finds "numpy", "tensorflow" does not find "tensorboard".
    size_t allowed = std::max<size_t>(2, w.size() / 3);
    std::vector<std::pair<size_t, std::string>> scored;
    std::vector<std::string> seen;
    for (const auto& k : known) {
        std::string f = folded(k);
        if (f == w || std::find(seen.begin(), seen.end(), f) != seen.end()) continue;
        bool prefix = w.size() >= 3 && (f.rfind(w, 0) == 0 || w.rfind(f, 0) == 0);
        // The distance is at least the difference in length: most of an index's ~700k names
        // are ruled out without the table.
        size_t gap = f.size() > w.size() ? f.size() - w.size() : w.size() - f.size();
        if (!prefix && gap > allowed) continue;
        size_t dist = distance(w, f);
        if (dist <= allowed || prefix) {
            scored.emplace_back(prefix ? std::min(dist, allowed) : dist, k);
            seen.push_back(f);
        }
    }
    std::sort(scored.begin(), scored.end());
    std::vector<std::string> out;
    for (size_t i = 0; i < scored.size() && out.size() < limit; ++i) out.push_back(scored[i].second);
    return out;
}

}  // namespace envlock
