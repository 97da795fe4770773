#pragma once
// Everything a solve may need from the indexes, read in one pass: every record of each conda
// channel (platform subdir + noarch), and the PyPI files of the named projects and of every
// project their Requires-Dist mention, transitively, with core metadata filled in.
#include <map>
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
    // Version constraints the spec puts on a project (normalized name -> specifiers): only
    // versions inside them get their metadata read. Other projects get their newest
    // `versions_per_project` versions.
    std::map<std::string, std::vector<std::string>> constraints;
    pep508::MarkerEnv marker_env;          // decides which Requires-Dist lines are followed
    // The target's wheel tags, best first (wheel::compatible_tags): a version's metadata is read
    // from the wheel the target installs best (see metadata_source). Empty: the first wheel listed.
    std::vector<wheel::Tag> target_tags;
    size_t versions_per_project = 20;
    // The constraints do not bound the read: a constrained project gets the versions they allow
    // and its newest `versions_per_project` releases besides (an explanation of an
    // unsatisfiable spec loosens the pins over these).
    bool beyond_constraints = false;
    // Reads an sdist's requirements from its setup.py/setup.cfg/pyproject.toml when its
    // PKG-INFO lists none (see fill_metadata_from_sdists); empty: sdists stay unknown.
    PackageReader read_package;
};

struct IndexClosure {
    std::vector<CondaChannelRecords> channels;
    IndexRecords pypi;                     // wheels whose Requires-Dist is known; sdists (depends_known
                                           // false when not even their setup files tell)
    std::vector<std::string> notes;        // what was left out and why
    // What the indexes offered, before any filtering, so a requirement nothing satisfies can
    // be named with what there is instead: every version each PyPI project read lists
    // (normalized name -> versions as published), and every package name of every channel.
    std::map<std::string, std::vector<std::string>> pypi_versions;
    std::vector<std::string> conda_names_offered;
};

IndexClosure collect_index_closure(const ClosureRequest& request, const FetchContext& ctx);

}  // namespace envlock::fetch
