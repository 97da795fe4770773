#include "resolver/specs/wheel.hpp"

#include <algorithm>
#include <cctype>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/find_chars.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::wheel {
namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        std::size_t at = s.find(sep, start);
        out.emplace_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
        if (at == std::string_view::npos) return out;
        start = at + 1;
    }
}

// The last path segment of a path or URL, without query or fragment.
std::string_view last_segment(std::string_view s) {
    if (auto q = find_first_of_chars(s, "?#"); q != std::string_view::npos) s = s.substr(0, q);
    if (auto slash = s.find_last_of('/'); slash != std::string_view::npos) s = s.substr(slash + 1);
    return s;
}

// "3.8" or "3.8.18" -> {3, 8}
std::pair<int, int> python_major_minor(std::string_view python_version) {
    auto v = pep440::Version::try_parse(python_version);
    if (!v || v->release().size() < 2 || v->epoch() != "0" || !v->local().empty() || v->release()[0] > 99 ||
        v->release()[1] > 999)
        throw InputError("invalid Python version '" + std::string(python_version) + "': expected MAJOR.MINOR such as 3.8");
    return {static_cast<int>(v->release()[0]), static_cast<int>(v->release()[1])};
}

std::pair<int, int> two_part(std::string_view text, std::string_view what) {
    auto parts = split(text, '.');
    auto number = [](const std::string& s) {
        return !s.empty() && s.size() <= 4 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (parts.size() < 2 || !number(parts[0]) || !number(parts[1]))
        throw InputError("invalid " + std::string(what) + " version '" + std::string(text) + "': expected MAJOR.MINOR such as " +
                         (what == "glibc" ? "2.31" : "11.0"));
    return {std::stoi(parts[0]), std::stoi(parts[1])};
}

// packaging.tags._manylinux.platform_tags for one arch and glibc 2.G.
std::vector<std::string> manylinux_platforms(const std::string& arch, int glibc_minor) {
    // The oldest glibc each arch had manylinux wheels for: 2.5 (manylinux1) on x86, 2.17
    // (manylinux2014) elsewhere.
    bool x86 = arch == "x86_64" || arch == "i686";
    int min_minor = x86 ? 5 : 17;
    bool has_2014 = x86 || arch == "aarch64" || arch == "armv7l" || arch == "ppc64" || arch == "ppc64le" || arch == "s390x";
    std::vector<std::string> out;
    for (int m = glibc_minor; m >= min_minor; --m) {
        out.push_back("manylinux_2_" + std::to_string(m) + "_" + arch);
        if (m == 17 && has_2014) out.push_back("manylinux2014_" + arch);
        if (m == 12 && x86) out.push_back("manylinux2010_" + arch);
        if (m == 5 && x86) out.push_back("manylinux1_" + arch);
    }
    return out;
}

// packaging.tags.mac_platforms for macOS `version` on `arch` ("x86_64" or "arm64").
std::vector<std::string> mac_platforms(std::pair<int, int> version, const std::string& arch) {
    auto formats = [&](std::pair<int, int> v) {
        std::vector<std::string> f{arch};
        if (arch == "x86_64") {
            if (v < std::pair{10, 4}) return std::vector<std::string>{};
            f.insert(f.end(), {"intel", "fat64", "fat32"});
        }
        f.push_back("universal2");
        if (arch == "x86_64") f.push_back("universal");
        return f;
    };
    std::vector<std::string> out;
    auto emit = [&](int major, int minor, const std::vector<std::string>& fs) {
        for (const auto& f : fs) out.push_back("macosx_" + std::to_string(major) + "_" + std::to_string(minor) + "_" + f);
    };
    if (version >= std::pair{10, 0} && version < std::pair{11, 0})
        for (int minor = version.second; minor >= 0; --minor) emit(10, minor, formats({10, minor}));
    if (version >= std::pair{11, 0}) {
        for (int major = version.first; major > 10; --major) emit(major, 0, formats({major, 0}));
        // macOS 11+ runs x86_64 binaries built for 10.x; arm64 only the universal2 ones.
        for (int minor = 16; minor >= 4; --minor) {
            if (arch == "x86_64") emit(10, minor, formats({10, minor}));
            else emit(10, minor, {"universal2"});
        }
    }
    return out;
}

std::vector<std::string> platforms_for(std::string_view conda_platform, std::string_view os_version) {
    std::string_view os = conda_platform.substr(0, conda_platform.find('-'));
    std::string_view sub = conda_platform.find('-') == std::string_view::npos ? std::string_view{}
                                                                              : conda_platform.substr(conda_platform.find('-') + 1);
    if (os == "linux") {
        std::string arch = sub == "64" ? "x86_64" : sub == "32" ? "i686" : std::string(sub);
        static const std::string_view known[] = {"x86_64", "i686", "aarch64", "ppc64le", "s390x", "armv7l", "armv6l", "riscv64"};
        if (std::find(std::begin(known), std::end(known), arch) != std::end(known)) {
            auto [major, minor] = os_version.empty() ? std::pair{2, 17} : two_part(os_version, "glibc");
            std::vector<std::string> out;
            if (major == 2) out = manylinux_platforms(arch, minor);
            else if (major > 2)  // a future glibc 3.x still runs every 2.x wheel
                out = manylinux_platforms(arch, 99);
            out.push_back("linux_" + arch);
            return out;
        }
    } else if (os == "osx" && (sub == "64" || sub == "arm64")) {
        std::string arch = sub == "64" ? "x86_64" : "arm64";
        auto version = os_version.empty() ? (sub == "64" ? std::pair{10, 9} : std::pair{11, 0}) : two_part(os_version, "macOS");
        return mac_platforms(version, arch);
    } else if (os == "win") {
        if (sub == "64") return {"win_amd64"};
        if (sub == "32") return {"win32"};
        if (sub == "arm64") return {"win_arm64"};
    }
    throw InputError("unknown platform '" + std::string(conda_platform) +
                     "': expected a conda platform such as linux-64, linux-aarch64, osx-arm64 or win-64");
}

}  // namespace

std::string url_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
            out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

WheelName WheelName::parse(std::string_view filename) {
    std::string file = url_decode(last_segment(filename));
    auto fail = [&](const std::string& expected) -> void {
        throw InputError("invalid wheel file name '" + std::string(filename) + "': expected " + expected);
    };
    if (file.size() < 4 || lower(file.substr(file.size() - 4)) != ".whl") fail("a name ending in .whl");
    auto parts = split(std::string_view(file).substr(0, file.size() - 4), '-');
    if (parts.size() != 5 && parts.size() != 6)
        fail("<name>-<version>[-<build>]-<python tag>-<abi tag>-<platform tag>.whl (found " + std::to_string(parts.size()) +
             " '-'-separated parts)");
    for (std::size_t i = 0; i < parts.size(); ++i)
        if (parts[i].empty()) fail("no empty part between '-' separators (part " + std::to_string(i + 1) + ")");
    WheelName w;
    w.name = parts[0];
    if (!std::all_of(w.name.begin(), w.name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }))
        fail("a distribution name of letters, digits, '_' and '.' (found '" + w.name + "')");
    w.normalized_name = pep508::normalize_name(w.name);
    // PEP 427 escapes '-' in the version as '_'.
    std::string version = parts[1];
    std::replace(version.begin(), version.end(), '_', '-');
    auto v = pep440::Version::try_parse(version);
    if (!v) fail("a PEP 440 version after the name (found '" + parts[1] + "')");
    w.version = v->str();
    if (parts.size() == 6) {
        if (!std::isdigit(static_cast<unsigned char>(parts[2][0])))
            fail("a build tag starting with a digit (found '" + parts[2] + "')");
        w.build_tag = parts[2];
    }
    std::size_t t = parts.size() - 3;
    for (const auto& py : split(lower(parts[t]), '.'))
        for (const auto& abi : split(lower(parts[t + 1]), '.'))
            for (const auto& plat : split(lower(parts[t + 2]), '.')) {
                if (py.empty() || abi.empty() || plat.empty()) fail("tags without empty '.'-separated members");
                w.tags.push_back({py, abi, plat});
            }
    return w;
}

std::optional<SdistName> SdistName::try_parse(std::string_view filename) {
    std::string file = url_decode(last_segment(filename));
    static const std::string_view extensions[] = {".tar.gz", ".tar.bz2", ".tar.xz", ".tar.z", ".tgz", ".tbz", ".txz", ".tar", ".zip"};
    std::string low = lower(file);
    for (auto ext : extensions) {
        if (!low.ends_with(ext)) continue;
        std::string_view stem = std::string_view(file).substr(0, file.size() - ext.size());
        // Names may hold '-' too; take the rightmost split whose right side is a version.
        for (std::size_t dash = stem.rfind('-'); dash != std::string_view::npos && dash > 0; dash = stem.rfind('-', dash - 1)) {
            auto v = pep440::Version::try_parse(stem.substr(dash + 1));
            if (!v) continue;
            SdistName s;
            s.name = std::string(stem.substr(0, dash));
            s.normalized_name = pep508::normalize_name(s.name);
            s.version = v->str();
            s.extension = std::string(file.substr(file.size() - ext.size()));
            return s;
        }
        return std::nullopt;
    }
    return std::nullopt;
}

std::vector<Tag> compatible_tags(std::string_view python_version, std::string_view conda_platform, std::string_view glibc) {
    auto [major, minor] = python_major_minor(python_version);
    std::vector<std::string> platforms = platforms_for(conda_platform, glibc);
    std::string nodot = std::to_string(major) + std::to_string(minor);
    std::string interpreter = "cp" + nodot;
    // CPython before 3.8 built with pymalloc (the default) carries an "m" ABI flag.
    std::string abi = interpreter + (major == 3 && minor < 8 ? "m" : "");
    bool abi3 = major == 3 && minor >= 2;

    std::vector<Tag> out;
    for (const auto& p : platforms) out.push_back({interpreter, abi, p});
    if (abi3)
        for (const auto& p : platforms) out.push_back({interpreter, "abi3", p});
    for (const auto& p : platforms) out.push_back({interpreter, "none", p});
    if (abi3)
        for (int m = minor - 1; m >= 2; --m)
            for (const auto& p : platforms) out.push_back({"cp" + std::to_string(major) + std::to_string(m), "abi3", p});

    // Pure-Python tags: pyXY, pyX, then older pyXY.
    std::vector<std::string> py{"py" + nodot, "py" + std::to_string(major)};
    for (int m = minor - 1; m >= 0; --m) py.push_back("py" + std::to_string(major) + std::to_string(m));
    for (const auto& v : py)
        for (const auto& p : platforms) out.push_back({v, "none", p});
    out.push_back({interpreter, "none", "any"});
    for (const auto& v : py) out.push_back({v, "none", "any"});
    return out;
}

int best_tag_rank(const WheelName& wheel, const std::vector<Tag>& compatible) {
    for (std::size_t i = 0; i < compatible.size(); ++i)
        for (const auto& t : wheel.tags)
            if (t == compatible[i]) return static_cast<int>(i);
    return -1;
}

TagRanks::TagRanks(const std::vector<Tag>& compatible) {
    rank_.reserve(compatible.size());
    for (std::size_t i = 0; i < compatible.size(); ++i) rank_.emplace(compatible[i].str(), static_cast<int>(i));
}

int TagRanks::best(const WheelName& wheel) const {
    int best = -1;
    for (const auto& t : wheel.tags)
        if (auto it = rank_.find(t.str()); it != rank_.end() && (best < 0 || it->second < best)) best = it->second;
    return best;
}

}  // namespace envlock::wheel
