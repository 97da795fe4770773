// Parse throughput of a conda-forge-sized repodata.json (~465k records, ~240 MB), generated
// at bench time into /tmp from the shapes of real conda-forge linux-64 records (the fields,
// their order, the indentation conda-index writes, typical depends lists, hashes, sizes).
//
//   bench_repodata [--mode all|stream|filter|index] [--records N] [--runs R] [--file PATH] [--regen]
//
// all:    every record materialised into an IndexRecords vector (what a full-channel load costs)
// stream: every record built and handed to a visitor, not kept (the on-demand walk + record building)
// filter: only one package's records built (what find_records does per name): "numpy"
// index:  the name index a cached body gets once (index_repodata: one structural pass)
// Prints the file size, each run's seconds and GB/s, the median, and the process's peak RSS
// (run each mode in its own process to read its peak). No output is committed anywhere.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "fetch/conda_repodata.hpp"
#include "fetch/http_cache.hpp"
#include "fetch/padded_buffer.hpp"

namespace {

const char* kLicenses[] = {"BSD-3-Clause", "MIT", "Apache-2.0", "GPL-3.0-only", "LGPL-2.1-or-later", "MPL-2.0",
                           "GPL-2.0-or-later", "BSD-2-Clause", "ISC", "PSF-2.0"};
const char* kFamilies[] = {"BSD", "MIT", "Apache", "GPL3", "LGPL", "MOZILLA", "GPL2", "BSD", "OTHER", "PSF"};
const char* kCommonDeps[] = {"libgcc-ng >=12", "libstdcxx-ng >=12", "python >=3.9,<3.10.0a0", "python_abi 3.9.* *_cp39",
                             "numpy >=1.21.6,<2.0a0", "libzlib >=1.2.13,<1.3.0a0", "openssl >=3.1.4,<4.0a0",
                             "__glibc >=2.17,<3.0.a0", "libblas >=3.9.0,<4.0a0", "liblapack >=3.9.0,<4.0a0",
                             "r-base >=4.3,<4.4.0a0", "_openmp_mutex >=4.5", "xz >=5.2.6,<6.0a0",
                             "libcurl >=8.4.0,<9.0a0", "setuptools", "typing_extensions >=4.0", "requests >=2.25"};

struct Gen {
    std::mt19937_64 rng{20231012};
    std::uint64_t next(std::uint64_t n) { return rng() % n; }
    std::string hex(size_t n) {
        static const char* d = "0123456789abcdef";
        std::string s(n, '0');
        for (auto& c : s) c = d[rng() & 15];
        return s;
    }
    std::string word(size_t lo, size_t hi) {
        std::string s;
        size_t n = lo + next(hi - lo + 1);
        for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + next(26));
        return s;
    }
};

// Streams the file out record by record so the generator's own memory stays small.
void generate(const std::string& path, size_t records) {
    Gen g;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        std::perror(path.c_str());
        std::exit(1);
    }
    std::fputs("{\n  \"info\": {\n    \"subdir\": \"linux-64\"\n  },\n", f);
    // ~18 records per name, as in conda-forge (465k records over ~26k names).
    std::vector<std::string> names;
    const char* prefixes[] = {"", "r-", "py", "lib", "perl-", "ros-humble-", "jupyterlab-", ""};
    for (size_t i = 0; i < records / 18 + 1; ++i) names.push_back(std::string(prefixes[g.next(8)]) + g.word(3, 12));
    names[0] = "numpy";
    const size_t tar_share = records / 4;  // older .tar.bz2 builds in `packages`, the rest `.conda`
    size_t written = 0;
    for (int section = 0; section < 2; ++section) {
        std::fputs(section == 0 ? "  \"packages\": {\n" : "  \"packages.conda\": {\n", f);
        size_t count = section == 0 ? tar_share : records - tar_share;
        for (size_t i = 0; i < count; ++i, ++written) {
            const std::string& name = names[(written * 7919) % names.size()];
            std::string version = std::to_string(g.next(5)) + "." + std::to_string(g.next(30)) + "." + std::to_string(g.next(20));
            int build_number = static_cast<int>(g.next(4));
            std::string build = (g.next(3) == 0 ? "py39h" : "h") + g.hex(7) + "_" + std::to_string(build_number);
            std::string fn = name + "-" + version + "-" + build + (section == 0 ? ".tar.bz2" : ".conda");
            std::string rec = "    \"" + fn + "\": {\n      \"build\": \"" + build + "\",\n      \"build_number\": " +
                              std::to_string(build_number) + ",\n";
            if (g.next(6) == 0) rec += "      \"constrains\": [\n        \"" + names[g.next(names.size())] + " >=1.0\"\n      ],\n";
            rec += "      \"depends\": [";
            size_t deps = g.next(6);
            for (size_t d = 0; d < deps; ++d) {
                rec += d ? ",\n        \"" : "\n        \"";
                rec += g.next(2) ? std::string(kCommonDeps[g.next(17)]) : names[g.next(names.size())] + " >=" + std::to_string(g.next(9)) + "." + std::to_string(g.next(20));
                rec += "\"";
            }
            rec += deps ? "\n      ],\n" : "],\n";
            size_t lic = g.next(10);
            rec += "      \"license\": \"" + std::string(kLicenses[lic]) + "\",\n      \"license_family\": \"" + kFamilies[lic] + "\",\n";
            rec += "      \"md5\": \"" + g.hex(32) + "\",\n      \"name\": \"" + name + "\",\n";
            if (g.next(6) == 0) rec += "      \"noarch\": \"python\",\n";
            rec += "      \"sha256\": \"" + g.hex(64) + "\",\n      \"size\": " + std::to_string(1000 + g.next(50000000)) +
                   ",\n      \"subdir\": \"linux-64\",\n      \"timestamp\": " + std::to_string(1500000000000ULL + g.next(230000000000ULL)) +
                   ",\n";
            if (g.next(50) == 0) rec += "      \"track_features\": \"" + g.word(4, 8) + "\",\n";
            rec += "      \"version\": \"" + version + "\"\n    }";
            rec += i + 1 < count ? ",\n" : "\n";
            std::fwrite(rec.data(), 1, rec.size(), f);
        }
        std::fputs(section == 0 ? "  },\n" : "  },\n  \"removed\": [],\n  \"repodata_version\": 1\n}\n", f);
    }
    std::fclose(f);
}

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

long peak_rss_kib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode = "all", file = "/tmp/envlock-bench-repodata.json";
    size_t records = 465679;
    int runs = 5;
    bool regen = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--mode") mode = value();
        else if (a == "--records") records = std::stoul(value());
        else if (a == "--runs") runs = std::stoi(value());
        else if (a == "--file") file = value();
        else if (a == "--regen") regen = true;
        else {
            std::fprintf(stderr, "usage: bench_repodata [--mode all|stream|filter|index] [--records N] [--runs R] [--file PATH] [--regen]\n");
            return 2;
        }
    }
    if (regen || !std::filesystem::exists(file)) {
        auto t0 = std::chrono::steady_clock::now();
        generate(file, records);
        std::printf("generated %s (%zu records) in %.1f s\n", file.c_str(), records,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    long rss_before = peak_rss_kib();
    // Mapped as the HTTP cache maps its entries: no copy, no zero-fill; the first run pays the
    // page faults (see "first run" against the median).
    std::error_code ec;
    auto buffer = envlock::fetch::PaddedBuffer::map_file(file, ec);
    if (ec) {
        std::fprintf(stderr, "%s: %s\n", file.c_str(), ec.message().c_str());
        return 1;
    }
    buffer.advise_sequential();
    std::string_view json = buffer.view();
    double gb = json.size() / 1e9;
    std::printf("file: %.1f MB, mode %s\n", json.size() / 1e6, mode.c_str());
    envlock::fetch::RepodataSource src{"https://conda.anaconda.org/conda-forge", "linux-64", file};

    std::vector<double> secs, cpu;
    size_t count = 0;
    for (int r = 0; r < runs; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        double c0 = cpu_seconds();
        if (mode == "index") {
            auto rd = envlock::fetch::index_repodata(buffer, 0, src);
            count = rd.raws.size();
            secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        } else if (mode == "all") {
            envlock::IndexRecords recs;
            recs.reserve(json.size() / 400 + 16);
            envlock::fetch::visit_repodata_padded(json, src, "", [&](envlock::IndexRecord& r) { recs.push_back(std::move(r)); });
            count = recs.size();
            secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        } else {
            std::uint64_t n = 0, bytes = 0;
            envlock::fetch::visit_repodata_padded(json, src, mode == "filter" ? "numpy" : "", [&](envlock::IndexRecord& rec) {
                ++n;
                bytes += rec.depends.size();
            });
            count = n;
            secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        cpu.push_back(cpu_seconds() - c0);
        std::printf("run %d: %zu records in %.3f s wall (%.2f GB/s), %.3f s CPU (%.2f GB/s)\n", r + 1, count, secs.back(),
                    gb / secs.back(), cpu.back(), gb / cpu.back());
    }
    std::sort(secs.begin(), secs.end());
    std::sort(cpu.begin(), cpu.end());
    double median = secs[secs.size() / 2];
    long peak = peak_rss_kib();
    std::printf("median CPU: %.3f s = %.2f GB/s\n", cpu[cpu.size() / 2], gb / cpu[cpu.size() / 2]);
    std::printf("median wall: %.3f s = %.2f GB/s; peak RSS %.1f MB = %.2fx the file (before reading: %.1f MB)\n", median,
                gb / median, peak / 1024.0, (peak * 1024.0) / json.size(), rss_before / 1024.0);
    return 0;
}
