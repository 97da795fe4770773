// What changed in the knowledge base since a lock was resolved, in the words of its rows.
#include <algorithm>
#include <optional>
#include <sstream>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::knowledge {

std::optional<std::vector<KnowledgeChange>> changes_since(const Knowledge& k, std::string_view old_version) {
    auto first = std::find_if(k.changes.begin(), k.changes.end(),
                              [&](const KnowledgeChange& c) { return c.replaces == old_version; });
    if (first == k.changes.end()) return std::nullopt;
    return std::vector<KnowledgeChange>(first, k.changes.end());
}

namespace {

// Does a row's concern ("cuda-12.3", "yapf", "mmdet>=2.14.0,<2.17.0", "torch>=2.7,<2.8") hold
// for the lock: a CUDA version it runs or builds with, or a locked package (in that version range)?
bool concerns_lock(const std::string& concern, const Lock& lock) {
    if (concern.rfind("cuda-", 0) == 0) {
        auto cuda = concern.substr(5);
        if (!lock.toolchain.nvcc.empty() && major_minor(lock.toolchain.nvcc) == cuda) return true;
        for (const auto& p : lock.packages)
            if (p.cuda && major_minor(p.cuda->runtime) == cuda) return true;
        return false;
    }
    std::optional<pep508::Requirement> req;
    try {
        req = pep508::Requirement::parse(concern);
    } catch (const std::exception&) {
        return false;
    }
    for (const auto& p : lock.packages) {
        auto name = pep508::normalize_name(p.name == "pytorch" ? "torch" : p.name);
        if (name != req->normalized_name) continue;
        auto version = pep440::Version::try_parse(p.version.substr(0, p.version.find('+')));
        if (!version || req->specifier.contains(*version, true)) return true;
    }
    return false;
}

}  // namespace

std::string knowledge_change_report(const Knowledge& k, const Lock& lock, std::size_t max_rows) {
    std::ostringstream out;
    out << "the knowledge base changed (" << lock.knowledge_version << " -> " << k.version << ")";
    auto changes = changes_since(k, lock.knowledge_version);
    if (!changes) {
        out << "; which rows changed is not recorded for the lock's version (made with user knowledge files, or older than the "
               "recorded history)\n";
        return out.str();
    }
    std::vector<const KnowledgeChange*> hits;
    for (const auto& c : *changes)
        for (const auto& t : c.concerns)
            if (concerns_lock(t, lock)) {
                hits.push_back(&c);
                break;
            }
    out << ": " << changes->size() << " rows changed since (" << changes->front().release << "), " << hits.size()
        << " of them about this lock's packages or CUDA versions\n";
    for (std::size_t i = 0; i < hits.size() && i < max_rows; ++i) out << "  " << hits[i]->row << ": " << hits[i]->change << "\n";
    if (hits.size() > max_rows) out << "  ... and " << hits.size() - max_rows << " more\n";
    out << "every changed row with its source: envlock inspect changes " << lock.knowledge_version << "\n";
    return out.str();
}

}  // namespace envlock::knowledge
