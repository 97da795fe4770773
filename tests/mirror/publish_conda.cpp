#include <zstd.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/mirror/archive.hpp"
#include "tests/mirror/artifacts.hpp"
#include "tests/mirror/files.hpp"
#include "tests/mirror/publish.hpp"

namespace envlock::mirror {

namespace {

std::string channel_dir(const std::string& channel) {
    // repo.anaconda.com serves the `defaults` channels at /pkgs/main and /pkgs/r; anaconda.org
    // channels live under conda/.
    return channel.rfind("pkgs/", 0) == 0 ? channel : "conda/" + channel;
}

}  // namespace

int write_conda_channels(const std::string& root, const std::vector<CondaRecord>& records) {
    using nlohmann::json;
    // channel -> subdir -> repodata; every channel gets both subdirs, as conda expects.
    std::map<std::string, std::map<std::string, json>> repodata;
    for (const auto& r : records)
        for (const char* sd : {"linux-64", "noarch"}) {
            auto& doc = repodata[r.channel][sd];
            if (doc.is_null())
                doc = json{{"info", {{"subdir", sd}}}, {"packages", json::object()}, {"packages.conda", json::object()},
                           {"removed", json::array()}, {"repodata_version", 1}};
        }
    int count = 0;
    for (const auto& r : records) {
        std::string bytes = build_conda_package(r);
        std::string fn = r.filename();
        write_file(root, channel_dir(r.channel) + "/" + r.subdir + "/" + fn, bytes);
        json rec;
        rec["build"] = r.build;
        rec["build_number"] = r.build_number;
        if (!r.constrains.empty()) rec["constrains"] = r.constrains;
        rec["depends"] = r.depends;
        if (!r.features.empty()) rec["features"] = r.features;
        rec["license"] = r.license;
        rec["md5"] = md5_hex(bytes);
        rec["name"] = r.name;
        if (!r.noarch.empty()) rec["noarch"] = r.noarch;
        rec["sha256"] = sha256_hex_of(bytes);
        rec["size"] = bytes.size();
        rec["subdir"] = r.subdir;
        rec["timestamp"] = r.timestamp;
        if (!r.track_features.empty()) rec["track_features"] = r.track_features;
        rec["version"] = r.version;
        repodata[r.channel][r.subdir][r.ext == ".conda" ? "packages.conda" : "packages"][fn] = rec;
        ++count;
    }
    for (const auto& [channel, subdirs] : repodata)
        for (const auto& [subdir, doc] : subdirs) {
            std::string text = doc.dump(1) + "\n";
            std::string base = channel_dir(channel) + "/" + subdir + "/repodata.json";
            write_file(root, base, text);
            std::string zst(ZSTD_compressBound(text.size()), '\0');
            size_t n = ZSTD_compress(zst.data(), zst.size(), text.data(), text.size(), 3);
            zst.resize(ZSTD_isError(n) ? 0 : n);
            write_file(root, base + ".zst", zst);
        }
    return count;
}

}  // namespace envlock::mirror
