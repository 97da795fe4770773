#include "resolver/lock/diff.hpp"

#include <map>

#include "resolver/specs/conda_version.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock {
namespace {

std::string key_of(const LockedPackage& p) {
    switch (p.kind) {
        case Ecosystem::conda: return "conda:" + p.name;
        case Ecosystem::pypi: return "pypi:" + pep508::normalize_name(p.name);
        case Ecosystem::source: return "source:" + p.name;
    }
    return p.name;
}

// <0, 0, >0 by the ecosystem's order; versions it cannot read compare as text.
int compare_versions(Ecosystem e, const std::string& a, const std::string& b) {
    if (e == Ecosystem::conda) {
        auto va = conda::Version::try_parse(a), vb = conda::Version::try_parse(b);
        if (va && vb) return va->compare(*vb);
    } else if (e == Ecosystem::pypi) {
        auto va = pep440::Version::try_parse(a), vb = pep440::Version::try_parse(b);
        if (va && vb) {
            auto c = *va <=> *vb;
            return c < 0 ? -1 : c > 0 ? 1 : 0;
        }
    }
    return a.compare(b);
}

std::string shown(const LockedPackage& p, bool with_build) {
    if (p.kind == Ecosystem::source) return p.version + (p.rev.empty() ? "" : " (" + p.rev.substr(0, 12) + ")");
    return with_build && !p.build.empty() ? p.version + " " + p.build : p.version;
}

}  // namespace

LockDiff diff_locks(const Lock& before, const Lock& after) {
    LockDiff diff;
    std::map<std::string, const LockedPackage*> old;
    for (const auto& p : before.packages) old[key_of(p)] = &p;
    std::map<std::string, bool> seen;
    for (const auto& p : after.packages) {
        std::string key = key_of(p);
        seen[key] = true;
        auto it = old.find(key);
        if (it == old.end()) {
            diff.packages.push_back({PackageChange::Kind::added, p.kind, p.name, "", shown(p, false)});
            continue;
        }
        const LockedPackage& o = *it->second;
        int c = compare_versions(p.kind, o.version, p.version);
        if (c < 0) diff.packages.push_back({PackageChange::Kind::upgraded, p.kind, p.name, shown(o, false), shown(p, false)});
        else if (c > 0) diff.packages.push_back({PackageChange::Kind::downgraded, p.kind, p.name, shown(o, false), shown(p, false)});
        else if (o.build != p.build || o.url != p.url || o.rev != p.rev || o.sha256 != p.sha256)
            diff.packages.push_back({PackageChange::Kind::rebuilt, p.kind, p.name, shown(o, true), shown(p, true)});
    }
    for (const auto& p : before.packages)
        if (!seen.count(key_of(p))) diff.packages.push_back({PackageChange::Kind::removed, p.kind, p.name, shown(p, false), ""});

    auto field = [&](const char* name, const std::string& a, const std::string& b) {
        if (a != b) diff.toolchain.push_back({name, a, b});
    };
    field("nvcc", before.toolchain.nvcc, after.toolchain.nvcc);
    field("gcc", before.toolchain.gcc, after.toolchain.gcc);
    field("cuda-arch-list", before.toolchain.cuda_arch_list, after.toolchain.cuda_arch_list);
    return diff;
}

std::string to_string(PackageChange::Kind kind) {
    switch (kind) {
        case PackageChange::Kind::added: return "added";
        case PackageChange::Kind::removed: return "removed";
        case PackageChange::Kind::upgraded: return "upgraded";
        case PackageChange::Kind::downgraded: return "downgraded";
        case PackageChange::Kind::rebuilt: return "rebuilt";
    }
    return "";
}

std::vector<std::string> describe(const LockDiff& diff) {
    std::vector<std::string> lines;
    for (const auto& c : diff.packages) {
        switch (c.kind) {
            case PackageChange::Kind::added: lines.push_back("Added " + c.name + " " + c.after); break;
            case PackageChange::Kind::removed: lines.push_back("Removed " + c.name + " " + c.before); break;
            case PackageChange::Kind::upgraded: lines.push_back("Updated " + c.name + " " + c.before + " -> " + c.after); break;
            case PackageChange::Kind::downgraded: lines.push_back("Downgraded " + c.name + " " + c.before + " -> " + c.after); break;
            case PackageChange::Kind::rebuilt: lines.push_back("Rebuilt " + c.name + " " + c.before + " -> " + c.after); break;
        }
    }
    for (const auto& t : diff.toolchain)
        lines.push_back("Toolchain " + t.field + " " + (t.before.empty() ? "(none)" : t.before) + " -> " +
                        (t.after.empty() ? "(none)" : t.after));
    return lines;
}

}  // namespace envlock
