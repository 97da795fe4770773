// One download through envlock's transport, as an install fetches an artifact: streamed into a
// temp file beside DEST, hashed, synced once and renamed into place (HTTP), or copied by the
// kernel and hashed from the copy (file://). Run it under `strace -c -f -e trace=write,fsync,
// copy_file_range` to count the system calls (issue 21 item 4).
//
//   bench_download URL DEST [RUNS]
// Prints each run's seconds and MB/s and the median. DEST is removed after each run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "fetch/transport.hpp"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_download URL DEST [RUNS]\n");
        return 2;
    }
    std::string url = argv[1], dest = argv[2];
    int runs = argc > 3 ? std::stoi(argv[3]) : 3;
    envlock::fetch::TransportOptions options;
    std::vector<double> secs;
    for (int r = 0; r < runs; ++r) {
        std::filesystem::remove(dest);
        auto t0 = std::chrono::steady_clock::now();
        auto response = envlock::fetch::perform({{url, {}, dest, {}, {}}}, options).at(0);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!response.ok()) {
            std::fprintf(stderr, "%s\n", response.error.empty() ? ("HTTP " + std::to_string(response.status)).c_str() : response.error.c_str());
            return 1;
        }
        secs.push_back(s);
        std::printf("run %d: %llu bytes in %.3f s (%.0f MB/s), sha256 %s\n", r + 1, static_cast<unsigned long long>(response.size), s,
                    response.size / 1e6 / s, response.sha256.c_str());
    }
    std::filesystem::remove(dest);
    std::sort(secs.begin(), secs.end());
    std::printf("median: %.3f s\n", secs[secs.size() / 2]);
    return 0;
}
