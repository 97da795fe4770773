// What changed in the knowledge base since a lock was resolved, in the words of its rows.
#include <algorithm>
#include <set>
#include <sstream>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::knowledge {

std::optional<std::vector<KnowledgeChange>> changes_since(const Knowledge& k, std::string_view old_version) {
    auto first = std::find_if(k.changes.begin(), k.changes.end(),
                              [&](const KnowledgeChange& c) { return c.replaces == old_version; });
    if (first == k.changes.end()) return std::nullopt;
    return std::vector<KnowledgeChange>(first, k.changes.end());
}

std::set<std::string> lock_concerns(const Lock& lock) {
    std::set<std::string> out;
    for (const auto& p : lock.packages) {
        out.insert(pep508::normalize_name(p.name));
        if (p.name == "pytorch") out.insert("torch");
        if (p.cuda && !p.cuda->runtime.empty()) out.insert("cuda-" + major_minor(p.cuda->runtime));
    }
    if (!lock.toolchain.nvcc.empty()) out.insert("cuda-" + major_minor(lock.toolchain.nvcc));
    return out;
}

std::string knowledge_change_report(const Knowledge& k, const Lock& lock, std::size_t max_rows) {
    std::ostringstream out;
    out << "the knowledge base changed (" << lock.knowledge_version << " -> " << k.version << ")";
    auto changes = changes_since(k, lock.knowledge_version);
    if (!changes) {
        out << "; which rows changed is not recorded for the lock's version (made with user knowledge files, or older than the "
               "recorded history)\n";
        return out.str();
    }
    auto concerns = lock_concerns(lock);
    std::vector<const KnowledgeChange*> hits;
    for (const auto& c : *changes)
        for (const auto& t : c.concerns)
            if (concerns.count(t)) {
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
