#pragma once
// Conda MatchSpec: the query language of `depends`, `constrains` and user specs.
// Parse once, then `matches` many records: globs are pre-compiled, versions pre-parsed.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/conda_filename.hpp"
#include "resolver/conda_version.hpp"
#include "resolver/record.hpp"

namespace envlock::conda {

// A '*'-only glob as conda's string matchers use it (no '?' or '[]'); "^…$" is a regex.
class StringMatcher {
public:
    StringMatcher() = default;                       // matches anything
    static StringMatcher parse(std::string_view pattern);
    bool matches(std::string_view s) const;
    bool is_any() const { return kind_ == Kind::any; }
    bool is_exact() const { return kind_ == Kind::exact; }
    const std::string& str() const { return text_; }
    struct Regex;
private:
    enum class Kind { any, exact, glob, regex } kind_ = Kind::any;
    std::string text_;
    std::shared_ptr<const Regex> regex_;
};

struct MatchSpec {
    std::string channel, subdir, ns, name;   // "conda-forge::numpy", "conda-forge/linux-64::numpy"
    VersionSpec version;                     // any when absent
    std::string build;                       // glob, "" = any ("*cuda11.1*", "py38*")
    std::string build_number;                // spec on build_number ("", ">3", "0")
    std::map<std::string, std::string> extra;  // other bracket keys: md5, sha256, url, fn,
                                               // track_features, features, license, …
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

    struct Compiled;   // pre-compiled matchers, filled by parse()
private:
    std::string original_;
    std::shared_ptr<const Compiled> compiled_;
};

}  // namespace envlock::conda
