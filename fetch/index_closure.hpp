#pragma once
// Everything a solve may need from the indexes: every record of each conda channel (platform
// subdir + noarch) that the roots reach, and the PyPI files of the named projects and of every
// project their Requires-Dist mention, transitively, with core metadata filled in for the
// versions each requirement's window reaches (the rest are listed as unread).
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fetch/index_sources.hpp"
#include "fetch/wheel_metadata.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/record.hpp"
#include "resolver/specs/wheel.hpp"

namespace envlock::fetch {

struct ClosureRequest {
    IndexSources sources;                  // channels in priority order; indexes; find-links
    std::vector<std::string> pypi_names;   // projects to start from
    // conda names to start from; only they and what their depends reach are kept. Empty: keep
    // every record of every channel.
    std::vector<std::string> conda_names;
    // Version constraints the spec puts on a project (normalized name -> specifiers): every
    // version read satisfies all of them, as every version the solve may take does.
    std::map<std::string, std::vector<std::string>> constraints;
    // Extras the spec asks of a project (normalized name -> normalized extras): the Requires-Dist
    // lines they turn on (`extra == "…"`) are followed too, as are those of every extra a
    // dependency line asks (jupyter-events needs jsonschema[format-nongpl], which needs fqdn).
    std::map<std::string, std::set<std::string>> extras;
    pep508::MarkerEnv marker_env;          // decides which Requires-Dist lines are followed
    // The target's wheel tags, best first (wheel::compatible_tags): a version's metadata is read
    // from the wheel the target installs best (see metadata_source). Empty: the first wheel listed.
    std::vector<wheel::Tag> target_tags;
    // What the page alone tells of a version before its metadata is read: Requires-Python
    // against `python` (empty: not checked) and whether some file is an sdist or a wheel whose
    // tags are in `tags` (empty: every wheel counts). Versions that fail come after the others
    // in a window, never before.
    std::string python;
    std::vector<wheel::Tag> tags;
    // Lazy candidates: each requirement on a project (its specifier; the spec's names are
    // required as "" besides their constraints) reads the metadata of the newest
    // `initial_window` releases it allows; `windows` holds the sizes later rounds widened, by
    // requirement_key. The versions no window reaches are returned as `unread`.
    size_t initial_window = 2;
    std::map<std::string, size_t> windows;
    bool all_versions = false;             // every version every requirement allows: the complete problem
    // For an explanation of an unsatisfiable spec: the projects the spec names also read their
    // newest `beyond_window` releases outside the constraints, so the pins can be loosened over them.
    bool beyond_constraints = false;
    size_t beyond_window = 40;
    // Reads an sdist's requirements from its setup.py/setup.cfg/pyproject.toml when its
    // PKG-INFO lists none (see fill_metadata_from_sdists); empty: sdists stay unknown.
    PackageReader read_package;
    // What a release needs beyond its Requires-Dist, as "name specifier" requirement lines: the
    // import gates the knowledge base knows (mmdet 3.3.0 asserts mmcv>=2.0.0rc4,<2.2.0 when
    // imported, and lists no mmcv). Followed like Requires-Dist, so the solve that enforces a
    // gate has its project read. Empty: none.
    std::function<std::vector<std::string>(const std::string& name, const std::string& version)> implied_requirements;
};

// The key a requirement's window is kept by: "numpy\t<2,>=1.21".
std::string requirement_key(const std::string& normalized_name, const std::string& specifier);

// One PyPI project as far as it was read: every file its pages list (in page order, index
// pages then find-links), Requires-Dist filled for the versions read.
struct ProjectRead {
    IndexRecords files;
    std::set<std::string> read;            // versions (normalized) whose metadata was read
};

// What the PyPI closure keeps from one round to the next (read_more_pypi): the requirements and
// extras the versions read ask of each project (they only grow, as the versions read do), and
// what each page offers, parsed once.
struct ClosureMemo;

struct IndexClosure {
    std::vector<CondaChannelRecords> channels;
    IndexRecords pypi;                     // wheels whose Requires-Dist is known; sdists (depends_known
                                           // false when not even their setup files tell)
    // The files of the versions the pages offer (inside the spec's constraints) whose metadata
    // no window read: the solve stands one candidate in for each project's (solve.hpp, `unread`).
    IndexRecords unread;
    std::vector<std::string> notes;        // what was left out and why
    // What the indexes offered, before any filtering, so a requirement nothing satisfies can
    // be named with what there is instead: every version each PyPI project read lists
    // (normalized name -> versions as published), and every package name of every channel.
    std::map<std::string, std::vector<std::string>> pypi_versions;
    std::vector<std::string> conda_names_offered;
    // What was read, so a later round (read_more_pypi) reads only what is new.
    std::map<std::string, ProjectRead> projects;
    std::map<std::string, IndexRecords> find_links_left;   // find-links records of projects not reached yet
    std::vector<std::string> read_notes;   // what reading metadata said (whole wheels downloaded), every round
    std::vector<std::string> downloads;    // sdists downloaded whole to read their requirements (for -v), every round
    // Versions read that no solution can take, by their own metadata (normalized name -> versions):
    // windows count past them. Kept across rounds.
    std::map<std::string, std::set<std::string>> ruled_out;
    std::shared_ptr<ClosureMemo> memo;
    std::size_t pages_read = 0;            // PyPI project pages fetched
    std::size_t metadata_read = 0;         // versions whose metadata was read
};

IndexClosure collect_index_closure(const ClosureRequest& request, const FetchContext& ctx);

// Another round over the same indexes: the pages already read are kept, and only the versions
// the request's (wider) windows add get their metadata read. `pypi`, `unread` and `notes`
// are made again; the channels stay.
void read_more_pypi(const ClosureRequest& request, IndexClosure& closure, const FetchContext& ctx);

}  // namespace envlock::fetch
