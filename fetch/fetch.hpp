#pragma once
// fetch/ owns getting bytes: libcurl transport, the HTTP cache, mirrors, readers of the index wire
// formats (conda repodata, PyPI JSON / PEP 691 / PEP 503 / find-links), git remotes, artifact
// downloads with sha256, atomic file writes and child processes. It must not know what a solve is.
#include "fetch/artifacts.hpp"
#include "fetch/conda_repodata.hpp"
#include "fetch/documents.hpp"
#include "fetch/files.hpp"
#include "fetch/git_source.hpp"
#include "fetch/http_cache.hpp"
#include "fetch/index_closure.hpp"
#include "fetch/index_listing.hpp"
#include "fetch/index_sources.hpp"
#include "fetch/mirrors.hpp"
#include "fetch/padded_buffer.hpp"
#include "fetch/pypi_readers.hpp"
#include "fetch/process.hpp"
#include "fetch/repodata_names.hpp"
#include "fetch/settings.hpp"
#include "fetch/sharded_repodata.hpp"
#include "fetch/transport.hpp"
#include "fetch/url.hpp"
#include "fetch/wheel_metadata.hpp"
