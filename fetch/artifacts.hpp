#pragma once
// Artifact downloads for the installer: each file is fetched through the mirrors into a temp
// file next to its destination, hashed while it streams, and renamed into place only when
// its sha256 matches. Offline, only files a mirror maps to a local folder (file://) are read,
// and the others are named.
#include <cstdint>
#include <string>
#include <vector>

#include "fetch/settings.hpp"

namespace envlock::fetch {

struct Artifact {
    std::string url;      // as the lock records it; mirrors apply underneath
    std::string dest;     // final path
    std::string sha256;   // expected, lowercase hex; "" skips the check (and is reported back)
    std::string md5;      // expected, lowercase hex; checked only when there is no sha256
    std::uint64_t size = 0;   // expected, from the lock (0: unknown): the transfer's deadline and its bound
};

struct Downloaded {
    std::string url;
    std::string sha256;   // what arrived
    std::uint64_t size = 0;
};

// All or nothing per file: throws EnvironmentError naming every URL that failed (network,
// HTTP status, sha256 or md5 mismatch) once the others have finished.
std::vector<Downloaded> download_artifacts(const std::vector<Artifact>& artifacts, const FetchContext& ctx);

}  // namespace envlock::fetch
