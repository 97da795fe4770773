// Archive extraction (install/extract): the input written to a file in a private temp
// directory and unpacked by extract_conda_package (as .conda when it starts like a zip,
// as .tar.bz2 otherwise: libarchive detects any tar filter) and by extract_archive (any tar or
// zip, as wheels are), each into a fresh directory that is deleted afterwards; also
// read_archive_member. Limits are small so a bomb costs milliseconds. Property: every member
// reported extracted lies inside the destination, and nothing is written beside it.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fuzz/fuzz.hpp"
#include "install/extract.hpp"
#include "resolver/specs/errors.hpp"

using namespace envlock;
using envlock::fuzz::property;
namespace fs = std::filesystem;

namespace {

// Never destroyed: the exit handler that removes it runs after static destructors would have.
const fs::path& work_dir() {
    static const fs::path* dir = [] {
        std::string tmpl = (fs::temp_directory_path() / "envlock-fuzz-extract-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) std::abort();
        auto* p = new fs::path(tmpl);
        std::atexit([] {
            std::error_code ec;
            fs::remove_all(*dir, ec);
        });
        return p;
    }();
    return *dir;
}

void unpack(const fs::path& archive, bool as_conda_package) {
    const fs::path dest = work_dir() / "out";
    install::ExtractLimits limits;
    limits.max_total_bytes = 4u << 20;
    limits.max_members = 2000;
    try {
        auto members = as_conda_package ? install::extract_conda_package(archive, dest, limits)
                                        : install::extract_archive(archive, dest, limits);
        for (const auto& m : members) {
            property(!m.path.empty() && m.path[0] != '/' && m.path.find("..") != 0,
                     "an extracted member's path is relative and inside the destination", m.path);
        }
    } catch (const Error&) {
    }
    std::error_code ec;
    fs::remove_all(dest, ec);
    // Only the input file may remain in the work dir: nothing was written beside `dest`.
    std::size_t entries = 0;
    for (auto it = fs::directory_iterator(work_dir(), ec); !ec && it != fs::directory_iterator(); ++it) ++entries;
    property(entries == 1, "extraction writes nothing outside its destination", archive.string());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    bool zip = size >= 2 && data[0] == 'P' && data[1] == 'K';
    const fs::path archive = work_dir() / (zip ? "in.conda" : "in.tar.bz2");
    {
        std::ofstream out(archive, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    unpack(archive, true);
    unpack(archive, false);
    try {
        (void)install::read_archive_member(archive, zip ? "metadata.json" : "info/index.json", 1u << 20);
    } catch (const Error&) {
    }
    std::error_code ec;
    fs::remove(archive, ec);
    return 0;
}
