#pragma once
// Conda distribution names and package file names: "name-version-build", split from the
// right because names contain '-' and versions/builds do not.
#include <string>
#include <string_view>

namespace envlock::conda {

struct DistName {
    std::string name, version, build;
    // "pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0"; also accepts "channel::name-version-build".
    static DistName parse(std::string_view text);   // throws InputError
    std::string str() const { return name + "-" + version + "-" + build; }
};

struct PackageFilename {
    std::string name, version, build, extension;    // extension ".tar.bz2" or ".conda"
    // A bare file name, or a path / URL whose last component is one.
    static PackageFilename parse(std::string_view text);   // throws InputError
    static bool is_package_filename(std::string_view text);
    std::string str() const { return name + "-" + version + "-" + build + extension; }
};

}  // namespace envlock::conda
