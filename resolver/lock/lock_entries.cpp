#include "resolver/lock/lock_entries.hpp"

#include "resolver/specs/conda_filename.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/wheel.hpp"

namespace envlock {

namespace {

bool hex_of(const std::string& s, std::size_t n) {
    return s.size() == n && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string last_segment(const std::string& url) {
    std::string u = url.substr(0, url.find_first_of("?#"));
    return u.substr(u.rfind('/') + 1);
}

}  // namespace

std::vector<std::string> entry_problems(const LockedPackage& p) {
    std::vector<std::string> out;
    {
        auto bad = [&](const std::string& why) { out.push_back(why); };
        if (p.url.empty()) bad("no URL");
        if (p.kind == Ecosystem::source) {
            if (!hex_of(p.rev, 40)) bad("git source not pinned to a commit (rev: " + p.rev + ")");
            return out;
        }
        if (!hex_of(p.sha256, 64) && !hex_of(p.md5, 32)) bad("no sha256 (nor md5) to verify the download");
        std::string file = last_segment(p.url);
        if (p.kind == Ecosystem::conda) {
            try {
                auto f = conda::PackageFilename::parse(file);
                if (f.name != p.name || f.version != p.version || f.build != p.build)
                    bad("the entry says " + p.name + "-" + p.version + "-" + p.build + " but its URL is " + file);
            } catch (const InputError&) {
                bad("URL does not name a conda package file: " + file);
            }
            return out;
        }
        // PyPI: the version of the file, from its name, is the version of the entry.
        std::string name, version;
        try {
            if (file.size() > 4 && file.compare(file.size() - 4, 4, ".whl") == 0) {
                auto w = wheel::WheelName::parse(file);
                name = w.normalized_name;
                version = w.version;
            } else if (auto s = wheel::SdistName::try_parse(file)) {
                name = s->normalized_name;
                version = s->version;
            }
        } catch (const InputError&) {
        }
        if (name.empty()) {
            bad("URL does not name a wheel or sdist: " + file);
            return out;
        }
        auto locked = pep440::Version::try_parse(p.version);
        auto of_file = pep440::Version::try_parse(version);
        if (name != pep508::normalize_name(p.name) || !locked || !of_file || locked->str() != of_file->str())
            bad("the entry says " + p.name + " " + p.version + " but its URL is " + file);
    }
    return out;
}

std::vector<std::string> incomplete_entries(const Lock& lock) {
    std::vector<std::string> out;
    for (const auto& p : lock.packages)
        for (const auto& why : entry_problems(p)) out.push_back(p.name + " " + p.version + ": " + why);
    return out;
}

std::string lock_entry_where(const std::string& lock_file, const LockedPackage& p) {
    std::string at = lock_file.empty() ? std::string("lock") : lock_file;
    if (p.line > 0) at += ":" + std::to_string(p.line);
    return at + ": " + p.name + (p.version.empty() ? "" : " " + p.version);
}

}  // namespace envlock
