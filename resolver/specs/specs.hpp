#pragma once
// resolver/specs/ owns version semantics and names as pure functions on values: PEP 440, PEP 508
// requirements and markers, wheel and sdist names and tags, conda VersionOrder, MatchSpec and file
// names, the IndexRecord value and the error kinds. It does no I/O and includes no other folder.
#include "resolver/specs/conda_dist.hpp"
#include "resolver/specs/conda_filename.hpp"
#include "resolver/specs/conda_version.hpp"
#include "resolver/specs/cuda_build.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/record.hpp"
#include "resolver/specs/url_credentials.hpp"
#include "resolver/specs/wheel.hpp"
