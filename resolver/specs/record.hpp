#pragma once
// IndexRecord: one installable artifact as an index describes it, whichever ecosystem it
// comes from. fetch/ readers produce these; the solver reads them; the lock stores the
// chosen ones. Plain strings here: version semantics live in pep440.hpp and conda_version.hpp.
#include <cstdint>
#include <string>
#include <vector>

namespace envlock {

enum class Ecosystem { conda, pypi, source };

struct IndexRecord {
    Ecosystem ecosystem = Ecosystem::conda;
    std::string name;          // conda package name, or PyPI project name as published
    std::string version;       // as published (conda version string / PEP 440 version)
    std::string build;         // conda build string; for a wheel, its tag triple "cp38-cp38-linux_x86_64"
    int build_number = 0;      // conda only
    std::string filename;      // artifact file name
    std::string url;           // absolute download URL
    std::string sha256;        // lowercase hex, empty when the index does not say
    std::string md5;
    std::uint64_t size = 0;
    std::uint64_t timestamp = 0;  // conda: milliseconds since the epoch, when known

    // Where it was found: conda channel URL + subdir, or the index / find-links page URL.
    std::string channel;
    std::string subdir;
    std::string index;

    // Conda: MatchSpec strings. PyPI: PEP 508 requirement strings (Requires-Dist).
    std::vector<std::string> depends;
    std::vector<std::string> constrains;      // conda `constrains`
    std::vector<std::string> track_features;  // conda; a record with any ranks lower
    std::vector<std::string> features;        // conda; each needs a package that tracks it
    std::string noarch;                       // conda: "", "python" or "generic"
    std::string license;

    // PyPI
    std::string requires_python;   // Requires-Python / data-requires-python
    bool yanked = false;
    std::string yanked_reason;
    std::string metadata_url;      // PEP 658 core-metadata file, when the index offers one
    bool depends_known = true;     // false until Requires-Dist has been read

    // Source packages (git checkouts)
    std::string git;               // repository URL
    std::string rev;               // tag, branch or commit asked for
};

using IndexRecords = std::vector<IndexRecord>;

// One conda channel's records, channels kept in priority order by whoever holds a list of them.
struct CondaChannelRecords {
    std::string channel;       // as named in the spec ("pytorch") or its URL
    IndexRecords records;      // every subdir read (platform + noarch)
};

}  // namespace envlock
