#include "resolver/specs/conda_filename.hpp"

#include "resolver/specs/errors.hpp"

namespace envlock::conda {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// conda-build never puts these in a name, version or build: they are MatchSpec syntax (an
// operator, a bracket, a separator), so a part holding one could not be written as a spec.
// '!' is allowed in the version only (the epoch, "1!2.0").
bool clean(std::string_view part, bool version) {
    for (char c : part) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) return false;
        if (std::string_view("=<>~,|()[]{}'\"@#*;:/\\?").find(c) != std::string_view::npos) return false;
        if (c == '!' && !version) return false;
    }
    return true;
}

}  // namespace

DistName DistName::parse(std::string_view text) {
    std::string_view s = text;
    if (auto colons = s.rfind("::"); colons != std::string_view::npos) s = s.substr(colons + 2);
    std::size_t last = s.rfind('-');
    std::size_t mid = last == std::string_view::npos || last == 0 ? std::string_view::npos : s.rfind('-', last - 1);
    if (last == std::string_view::npos || mid == std::string_view::npos)
        throw InputError("invalid conda dist name '" + std::string(text) + "': expected name-version-build");
    DistName d;
    d.name = std::string(s.substr(0, mid));
    d.version = std::string(s.substr(mid + 1, last - mid - 1));
    d.build = std::string(s.substr(last + 1));
    if (d.name.empty() || d.version.empty() || d.build.empty())
        throw InputError("invalid conda dist name '" + std::string(text) +
                         "': expected name-version-build with none of them empty");
    if (!clean(d.name, false) || !clean(d.version, true) || !clean(d.build, false))
        throw InputError("invalid conda dist name '" + std::string(text) +
                         "': expected name-version-build without spaces or MatchSpec characters (=<>~,|()[]@#*)");
    return d;
}

bool PackageFilename::is_package_filename(std::string_view text) {
    return ends_with(text, ".tar.bz2") || ends_with(text, ".conda");
}

PackageFilename PackageFilename::parse(std::string_view text) {
    std::string_view s = text;
    if (auto q = s.find_first_of("?#"); q != std::string_view::npos) s = s.substr(0, q);   // URL query/fragment
    if (auto slash = s.find_last_of("/\\"); slash != std::string_view::npos) s = s.substr(slash + 1);
    std::string_view ext;
    if (ends_with(s, ".tar.bz2")) ext = ".tar.bz2";
    else if (ends_with(s, ".conda")) ext = ".conda";
    else
        throw InputError("invalid conda package file name '" + std::string(text) +
                         "': expected name-version-build.tar.bz2 or name-version-build.conda");
    std::string_view stem = s.substr(0, s.size() - ext.size());
    DistName d;
    try {
        d = DistName::parse(stem);
    } catch (const InputError&) {
        throw InputError("invalid conda package file name '" + std::string(text) +
                         "': expected name-version-build" + std::string(ext));
    }
    return PackageFilename{std::move(d.name), std::move(d.version), std::move(d.build), std::string(ext)};
}

}  // namespace envlock::conda
