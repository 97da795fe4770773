#pragma once
// PEP 508 dependency specifications: names (normalized per PEP 503), extras, version
// specifiers, URL requirements and environment markers, evaluated against a target.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "resolver/specs/pep440.hpp"

namespace envlock::pep508 {

// PEP 503: lowercase, runs of '-', '_' and '.' become one '-'.
std::string normalize_name(std::string_view name);
// normalize_name(name) == normalized, without making the string (lookups in loops).
bool has_normalized_name(std::string_view name, std::string_view normalized);

// The values markers are evaluated against.
struct MarkerEnv {
    std::string python_version, python_full_version, sys_platform, platform_machine, platform_system,
        implementation_name, implementation_version, platform_python_implementation, os_name, platform_release,
        platform_version;

    // CPython `python_version` ("3.8", or "3.8.18" for a full version; "3.8" gives full version
    // "3.8.0") on a conda platform ("linux-64", "linux-aarch64", "linux-ppc64le", "osx-64",
    // "osx-arm64", "win-64" …). platform_release and platform_version stay empty: they describe
    // a kernel build a lock cannot know. Throws InputError for an unknown platform.
    static MarkerEnv for_target(std::string_view python_version, std::string_view conda_platform);

    // The value of a marker variable ("python_version", or a legacy dotted alias such as
    // "sys.platform"); nullopt when the name is not a marker variable. "extra" is not here.
    std::optional<std::string> get(std::string_view variable) const;
};

struct MarkerNode;  // the expression tree, private to pep508.cpp

class Marker {
public:
    // Throws InputError("invalid marker '…': expected … at column N").
    static Marker parse(std::string_view text);

    // `extras` are the extras requested of the distribution that declares this marker. As pip
    // does: with none, `extra` is ""; with some, the marker applies when it holds for any one.
    bool evaluate(const MarkerEnv& env, const std::set<std::string>& extras = {}) const;

    // Normalized text: `python_version >= "3.8" and (sys_platform == "linux" or extra == "cv")`.
    std::string str() const;

    // Used by Requirement::parse to parse a marker embedded at `offset` in a larger text.
    static Marker parse_at(std::string_view whole, std::size_t offset, const std::string& what);

private:
    std::shared_ptr<const MarkerNode> root_;  // immutable, so copies may share it
};

struct Requirement {
    std::string name;             // as written
    std::string normalized_name;  // PEP 503
    std::vector<std::string> extras;  // as written, in the order given
    pep440::SpecifierSet specifier;
    std::string url;              // for `name @ url`; empty otherwise
    std::optional<Marker> marker;

    // Throws InputError("invalid requirement '…': expected … at column N").
    static Requirement parse(std::string_view text);

    // Does the marker (if any) hold for this target and these requested extras?
    bool applies(const MarkerEnv& env, const std::set<std::string>& extras = {}) const;

    std::string str() const;  // normalized: `name[a,b]>=1.0; python_version < "3.8"`
    // {name, normalized_name, extras, specifier, url, marker}; url and marker are null when absent.
    nlohmann::json to_json() const;
};

}  // namespace envlock::pep508
