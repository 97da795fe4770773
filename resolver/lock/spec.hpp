#pragma once
// Spec: what the user (or inference from a repo) asks for. Every entry remembers where it
// came from, so a lock and an unsatisfiable explanation can point at the line.
#include <map>
#include <string>
#include <vector>

namespace envlock {

struct Provenance {
    std::string file;   // path relative to the repo, or "spec" for hand-written entries
    int line = 0;       // 1-based; 0 when unknown
};

struct SpecRequirement {
    std::string text;        // "torch==1.9.1" (PEP 508) or "cudatoolkit 11.1.*" (conda MatchSpec)
    std::string ecosystem;   // "conda", "pypi", or "" (either: whichever provides it)
    Provenance from;
};

struct SpecSource {
    std::string name;
    std::string git;
    std::string rev;
    Provenance from;
    std::string install;     // as documented, run in the clone: "pip install -v -e .", "python setup.py install"
};

struct SpecExtension {
    std::string name;
    std::string in;          // directory within the repo (or a source's name)
    std::string build;       // "python setup.py develop"
    std::string import;      // module to import afterwards
    Provenance from;
    bool cuda = false;       // a CUDAExtension (needs nvcc matching torch's CUDA), not only C++
};

// Something the docs say but inference did not follow: a commented-out or "optional"
// alternative command, an extras_require group, an unpinned git install. Kept so the user
// can see what was left out and why, and edit the spec instead of the doc.
struct SpecNote {
    std::string kind;        // "alternative", "optional", "extra", "unpinned", "ignored", "unreadable" (resolve refuses)
    std::string text;        // the command or requirement, verbatim
    std::string why;         // one line a user reads
    Provenance from;
};

// Two requirements on one project that cannot both hold (numpy==1.20.0 vs numpy<1.20).
struct SpecContradiction {
    std::string name;        // normalized project name
    SpecRequirement first;
    SpecRequirement second;
    std::string why;
};

struct Spec {
    std::string name;
    std::vector<std::string> inferred_from;
    std::string python;                    // interpreter constraint as documented: "3.8", ">=3.6"
    // Where `python` came from: ".python-version:1", "pyproject.toml:5", "--python" (resolve's
    // flag, remembered) …; empty for a hand-written spec.
    Provenance python_from;
    std::vector<std::string> channels;     // conda channels, in priority order
    // conda's `channel_priority` (conda's configuration docs): "strict", "flexible" or
    // "disabled"; "" = strict. Remembered from `resolve --channel-priority`.
    std::string channel_priority;
    std::vector<std::string> indexes;      // PyPI simple indexes, first is --index-url
    std::vector<std::string> find_links;
    std::vector<SpecRequirement> requirements;
    std::vector<SpecSource> sources;
    std::vector<SpecExtension> extensions;
    std::map<std::string, std::string> env;   // e.g. TORCH_CUDA_ARCH_LIST from install docs
    std::vector<std::string> allow_advisories; // advisory ids the user opted out of
    // Requirements the user chose to go on without when no index offers them (resolve
    // --allow-missing NAME): by name, as written.
    std::vector<std::string> allow_missing;
    // What the code does that advisories depend on: "numba-cuda", "code-uses:numpy.float-aliases" …
    std::vector<std::string> uses;
    std::vector<SpecNote> notes;                // recorded, not followed
    std::vector<SpecContradiction> contradictions;
};

}  // namespace envlock
