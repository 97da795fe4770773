#pragma once
// Conda MatchSpec: the query language of `depends`, `constrains` and user specs.
// Parse once, then `matches` many records: the version constraint is pre-parsed, '*' globs are
// matched in place and "^…$" regexes compiled by parse(), so matching does not allocate.
//
// Matching, field by field (an empty field matches anything, as does "*"):
//   name, build, subdir, fn, url, license: exact, '*' glob, or "^…$" regex
//   version: VersionSpec against the record's version (an unparsable one never matches)
//   build_number: "3", "==3", "=3", "!=3", "<3", "<=3", ">3", ">=3"
//   channel: a name ("conda-forge", "pkgs/main") matches a record channel equal to it or a URL
//            ending in "/<name>" (trailing subdir ignored); "defaults" means pkgs/main, pkgs/r
//            and pkgs/msys2; a URL matches the record's URL
//   extra md5 / sha256: exact; track_features: the same set of features; license: glob,
//   case-insensitive; features: IndexRecord carries none, so a non-empty one never matches;
//   license_family: not carried by IndexRecord, so it does not filter
//   name is folded to lower case, like conda
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/specs/conda_filename.hpp"
#include "resolver/specs/conda_version.hpp"
#include "resolver/specs/record.hpp"

namespace envlock::conda {

struct MatchSpec {
    std::string channel, subdir, ns, name;   // "conda-forge::numpy", "conda-forge/linux-64::numpy"
    VersionSpec version;                     // any when absent
    std::string build;                       // glob, "" = any ("*cuda11.1*", "py38*")
    std::string build_number;                // spec on build_number ("", ">3", "0")
    std::map<std::string, std::string> extra;  // other bracket keys: md5, sha256, url, fn,
                                               // track_features, features, license, license_family
    bool optional = false;

    // Every conda form: "numpy >=1.19,<1.20.0a0", "pytorch 1.9.* *cuda11.1*", "numpy=1.19",
    // "numpy=1.19=py38*", "numpy==1.19.5", "numpy[version='>=1.19',build_number='>3']",
    // "numpy 1.19.5 py38h18fd61f_1", "conda-forge/linux-64::numpy", "numpy (optional)",
    // "https://…/numpy-1.19.5-py38h18fd61f_1.tar.bz2", "# comments". Throws InputError.
    static MatchSpec parse(std::string_view text);

    bool matches_version(const Version& v) const { return version.contains(v); }
    // Parses record.version (one allocation); the solver should use the overload below.
    bool matches(const envlock::IndexRecord& record) const;
    bool matches(const envlock::IndexRecord& record, const Version& record_version) const;
    // A dist string candidate ("pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0"): name, version,
    // build; a build_number constraint is checked against the build string's trailing
    // "_<number>", conda-build's convention.
    bool matches(const DistName& dist) const;

    // conda's canonical form: "numpy[version='>=1.19,<1.20.0a0']", "pytorch=1.9[build=*cuda11.1*]",
    // "conda-forge::numpy==1.19.5=py38h18fd61f_1".
    std::string str() const;
    // The original text, as given to parse (for messages and provenance).
    const std::string& original() const { return original_; }

    struct Compiled;   // regexes compiled by parse()
private:
    bool matches_except_version(const envlock::IndexRecord& record) const;
    std::string original_;
    std::shared_ptr<const Compiled> compiled_;
};

}  // namespace envlock::conda
