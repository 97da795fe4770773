#pragma once
// Wheel (PEP 427) and sdist file names, and the compatibility tags (PEP 425, PEP 600, the
// legacy manylinux PEPs 513/571/599) a target accepts, best first, as pip ranks them.
#include <optional>
#include <string>
#include <unordered_map>
#include <string_view>
#include <vector>

namespace envlock::wheel {

// Percent-decoding of a URL path segment: "torch-1.9.1%2Bcu111-…" -> "torch-1.9.1+cu111-…".
// '+' stays '+'; a '%' not followed by two hex digits is kept as written.
std::string url_decode(std::string_view text);

struct Tag {
    std::string interpreter, abi, platform;
    std::string str() const { return interpreter + "-" + abi + "-" + platform; }
    bool operator==(const Tag&) const = default;
};

struct WheelName {
    std::string name;             // distribution name as in the file name ("mmcv_full")
    std::string normalized_name;  // PEP 503 ("mmcv-full")
    std::string version;          // normalized PEP 440 ("1.9.1+cu111")
    std::string build_tag;        // "" or e.g. "1", "2_abc"
    std::vector<Tag> tags;        // compressed tag sets ("py2.py3-none-any") expanded

    // Accepts a bare file name, a path or a URL (the last path segment is used, query and
    // fragment dropped), percent-encoded or not. Throws InputError naming what was expected.
    static WheelName parse(std::string_view filename);
};

struct SdistName {
    std::string name, normalized_name, version, extension;  // extension: ".tar.gz", ".zip" …
    // nullopt when it is not "<name>-<PEP 440 version><archive extension>".
    static std::optional<SdistName> try_parse(std::string_view filename);
};

// Tags a CPython `python_version` ("3.8") on `conda_platform` accepts, best first, in the order
// packaging.tags.sys_tags gives: cpXY-cpXY-<plat>, cpXY-abi3-<plat>, cpXY-none-<plat>, abi3 of
// older minors, pyXY/py3/older pyXY-none-<plat>, cpXY-none-any, pyXY/py3/…-none-any.
// Platforms, best first: on linux with glibc 2.G, manylinux_2_G_<arch> … down to
// manylinux_2_5 (with manylinux2014 after _2_17, manylinux2010 after _2_12 and manylinux1
// after _2_5 where the arch has them), then linux_<arch> (what download.pytorch.org ships).
// An empty glibc means 2.17, the oldest glibc conda-forge's linux builds assume.
// On osx-*, `glibc` is read as the macOS version instead (default 10.9 on osx-64, 11.0 on
// osx-arm64). Throws InputError for a malformed version or an unknown platform.
std::vector<Tag> compatible_tags(std::string_view python_version, std::string_view conda_platform, std::string_view glibc);

// Rank of the best tag of the wheel in that list (0 best), or -1 when the wheel does not run there.
int best_tag_rank(const WheelName& wheel, const std::vector<Tag>& compatible);

// best_tag_rank for many wheels against one list: the list indexed once (a target's list holds
// hundreds of tags, and each wheel of a project that does not fit it was a scan of all of them).
class TagRanks {
public:
    explicit TagRanks(const std::vector<Tag>& compatible);
    int best(const WheelName& wheel) const;   // as best_tag_rank(wheel, compatible)

private:
    std::unordered_map<std::string, int> rank_;   // "interpreter-abi-platform" -> first index
};

}  // namespace envlock::wheel
