// Two requirements on one project from different places (BEVFormer's numpy==1.19.5 and
// mmdet3d's numpy<1.20.0) either can both hold or cannot. We decide it with the real matchers:
// every version either side names (and one just above it) is tried against both sides; if a
// common version exists, one of those points is in it, because each side is a union of
// intervals whose ends are the versions it names.
#include <functional>
#include <regex>
#include <set>

#include "resolver/infer/parts.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::infer {

namespace {

struct Side {
    std::string key;                                   // canonical project
    std::vector<std::string> versions;                 // versions the constraint names
    std::function<bool(const std::string&)> holds;     // does this version satisfy the constraint
    std::string shown;                                 // the constraint, for messages
    bool exact = false;
};

std::string strip_local(const std::string& v) { return v.substr(0, v.find('+')); }

std::string canonical(std::string name) {
    name = pep508::normalize_name(name);
    if (name == "pytorch") return "torch";   // conda's name for the PyPI torch project
    return name;
}

std::optional<Side> pypi_side(const std::string& text) {
    try {
        auto req = pep508::Requirement::parse(text);
        if (!req.url.empty() || req.marker) return std::nullopt;   // applies conditionally, or not by version
        Side s;
        s.key = canonical(req.normalized_name);
        for (const auto& spec : req.specifier.specifiers()) {
            auto v = spec.version_text();
            if (spec.wildcard() && v.size() > 2) v.resize(v.size() - 2);
            s.versions.push_back(v);
            if (spec.op() == pep440::Specifier::Op::equal && !spec.wildcard() && req.specifier.specifiers().size() == 1)
                s.exact = true;
        }
        auto set = req.specifier;
        s.holds = [set](const std::string& v) {
            auto parsed = pep440::Version::try_parse(v);
            return parsed && set.contains(*parsed, true);
        };
        s.shown = set.str();
        return s;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<Side> conda_side(const std::string& text) {
    try {
        auto ms = conda::MatchSpec::parse(text);
        if (ms.name.empty() || ms.name.find('*') != std::string::npos) return std::nullopt;
        Side s;
        s.key = canonical(ms.name);
        static const std::regex version_re("[0-9][0-9A-Za-z+!_]*(\\.[0-9A-Za-z+!_]+)*");
        auto vtext = ms.version.str();
        for (auto it = std::sregex_iterator(vtext.begin(), vtext.end(), version_re); it != std::sregex_iterator(); ++it)
            s.versions.push_back(it->str());
        s.exact = ms.version.is_exact();
        auto version = ms.version;
        // A PyPI local label (+cu111) has no conda counterpart: compare the public version.
        s.holds = [version](const std::string& v) {
            for (const auto& candidate : {v, strip_local(v)}) {
                auto parsed = conda::Version::try_parse(candidate);
                if (parsed && version.contains(*parsed)) return true;
            }
            return false;
        };
        s.shown = vtext == "*" ? "any version" : vtext;
        return s;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<Side> side(const SpecRequirement& r) {
    if (r.ecosystem == "pypi") return pypi_side(r.text);
    if (r.ecosystem == "conda") return conda_side(r.text);
    if (auto s = pypi_side(r.text)) return s;
    return conda_side(r.text);
}

}  // namespace

std::string project_key(const SpecRequirement& r) {
    auto s = side(r);
    return s ? s->key : std::string();
}

std::optional<std::string> incompatible(const SpecRequirement& a, const SpecRequirement& b) {
    auto sa = side(a), sb = side(b);
    if (!sa || !sb || sa->key != sb->key) return std::nullopt;
    if (sa->versions.empty() || sb->versions.empty()) return std::nullopt;   // one side takes any version
    std::set<std::string> points;
    for (const auto* s : {&*sa, &*sb}) {
        for (const auto& v : s->versions) {
            points.insert(v);
            points.insert(strip_local(v));
            points.insert(strip_local(v) + ".0.0.0.1");   // just above v, below any next release
        }
    }
    for (const auto& p : points)
        if (sa->holds(p) && sb->holds(p)) return std::nullopt;
    if (sa->exact) return sa->key + " " + sa->versions.front() + " is outside " + sb->shown;
    if (sb->exact) return sb->key + " " + sb->versions.front() + " is outside " + sa->shown;
    return "no " + sa->key + " version is both " + sa->shown + " and " + sb->shown;
}

void find_contradictions(Spec& spec) {
    const auto& reqs = spec.requirements;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        for (std::size_t j = i + 1; j < reqs.size(); ++j) {
            if (auto why = incompatible(reqs[i], reqs[j])) {
                bool known = false;
                for (const auto& c : spec.contradictions)
                    if (c.first.text == reqs[i].text && c.second.text == reqs[j].text) known = true;
                if (!known) spec.contradictions.push_back({project_key(reqs[i]), reqs[i], reqs[j], *why});
            }
        }
    }
}

}  // namespace envlock::infer
