#pragma once
// The pieces of inference, each reading one kind of file into plain values. infer.cpp
// decides what is followed and merges the pieces into a Spec.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/infer/infer.hpp"
#include "resolver/lock/spec.hpp"

namespace envlock::infer {

// --- packaging metadata: setup.py (static), setup.cfg, pyproject.toml ------------------------

struct ExtensionModule {
    std::string module;   // importable name: "MultiScaleDeformableAttention", "mmdet3d.ops.iou3d.iou3d_cuda"
    int line = 0;
};

struct PackageInfo {
    std::string name;                              // setup(name=...) / [project] name
    std::vector<SpecRequirement> install_requires;       // install_requires / dependencies (pypi)
    std::vector<SpecRequirement> build_requires;   // [build-system] requires, setup_requires
    std::vector<std::pair<std::string, int>> requirement_files;   // install_requires read from a .txt (path relative to the package dir, line of mention)
    std::string python_requires;
    Provenance python_from;
    std::vector<SpecNote> extras;                  // extras_require / optional-dependencies, not followed
    std::vector<ExtensionModule> extensions;       // CUDAExtension / CppExtension / make_cuda_ext(...)
    bool cuda = false;                             // mentions CUDAExtension
    int extension_line = 0;                        // first extension's line (provenance)
    bool declares = false;                         // setup() called / [project] / [options] present
    bool requirements_unreadable = false;          // install_requires given by code no static reading follows
};

// `path` is the file's repo-relative path, used for provenance.
PackageInfo read_setup_py(std::string_view text, const std::string& path);
PackageInfo read_setup_cfg(std::string_view text, const std::string& path);
// Throws InputError for TOML that does not parse (with its line).
PackageInfo read_pyproject(std::string_view text, const std::string& path);

// --- requirements files ----------------------------------------------------------------------

// One logical line of a requirements file or one pip argument, classified.
struct PipItem {
    enum class Kind { requirement, include, constraint, find_links, index_url, extra_index_url, vcs, local, url, ignored,
                      missing_value };   // missing_value: an option pip refuses without its argument ("-r")
    Kind kind = Kind::ignored;
    std::string value;        // requirement text, path, URL
    bool editable = false;
    std::string egg;          // #egg= name of a VCS URL
    std::string rev;          // @rev of a VCS URL
    int line = 0;
};

// Splits a requirements file into items (continuations joined, comments dropped, per-line
// options like --hash removed). Lines are the first physical line of each logical line.
std::vector<PipItem> read_requirements_txt(std::string_view text);
// A single requirement-or-location argument (a requirements line without options).
PipItem classify_pip_argument(const std::string& arg, bool editable);

// --- environment.yml -------------------------------------------------------------------------

struct EnvironmentFile {
    std::vector<std::string> channels;
    std::vector<SpecRequirement> conda;        // ecosystem "conda"
    std::vector<PipItem> pip;                  // from `- pip:`
    std::vector<SpecNote> notes;
};
// Throws InputError (file:line) for YAML that does not parse or has the wrong shape.
EnvironmentFile read_environment_yml(std::string_view text, const std::string& path);

// --- markdown and shell ----------------------------------------------------------------------

struct CodeBlock {
    std::string text;
    int first_line = 0;      // 1-based line of the block's first content line
    std::string info;        // fenced info string ("bash", "shell", ""), empty for indented blocks
    std::string context;     // text of the nearest heading or paragraph before the block
    std::string heading;     // text of the nearest heading before the block
};
std::vector<CodeBlock> markdown_code_blocks(std::string_view markdown);

struct ShellCommand {
    std::vector<std::string> words;   // after quote removal; leading NAME=value are in `assignments`
    std::vector<std::pair<std::string, std::string>> assignments;
    std::string text;                 // the command as written (one logical line, joined)
    std::string comment;              // a trailing `# ...` comment on its line
    int line = 0;
    bool commented_out = false;       // the whole line was a comment
};
// Splits shell text into simple commands: joins `\` continuations, drops `$ ` prompts,
// splits at `&&`, `||`, `;`, `|` and `&`. Whole-line comments come back with commented_out
// set (their text re-parsed), so alternatives left in comments can be recorded.
std::vector<ShellCommand> shell_commands(std::string_view text, int first_line);

// --- Dockerfiles ------------------------------------------------------------------------------

struct DockerInstruction {
    std::string keyword;     // upper case: FROM, RUN, ENV, WORKDIR, COPY …
    std::string args;        // the rest; continuation lines kept, one per physical line
    int line = 0;            // 1-based line of the instruction
};
// Instructions of a Dockerfile in order; comments and blank lines dropped.
std::vector<DockerInstruction> read_dockerfile(std::string_view text);

// --- small shared helpers --------------------------------------------------------------------
// `given` when every file is UTF-8; otherwise `fixed`, a copy whose bad bytes read as U+FFFD.
const RepoFiles& as_utf8(const RepoFiles& given, RepoFiles& fixed);

std::string normalize_git_url(const std::string& url);   // git@github.com:a/b.git -> https://github.com/a/b
std::string repo_basename(const std::string& url);        // https://github.com/a/b.git -> b
// Joins a relative path onto a '/'-separated directory and removes "." and "dir/.." parts;
// leading ".." stay ("" is the repo root).
std::string join_path(const std::string& dir, const std::string& rel);
std::string parent_dir(const std::string& path);
std::string lowercase(std::string s);

// Whether two requirements on one project can both hold; the reason when not.
std::optional<std::string> incompatible(const SpecRequirement& a, const SpecRequirement& b);
// Canonical project name across ecosystems (PEP 503; conda pytorch = PyPI torch).
std::string project_key(const SpecRequirement& r);
void find_contradictions(Spec& spec);

}  // namespace envlock::infer
