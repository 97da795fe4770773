// Real channel indexes from ../shared/snapshots: every version, dependency, constraint and file
// name found there must parse, and each record must match the specs that name it.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "resolver/specs/matchspec.hpp"

using envlock::IndexRecord;
using envlock::conda::DistName;
using envlock::conda::MatchSpec;
using envlock::conda::PackageFilename;
using envlock::conda::Version;

namespace {

namespace fs = std::filesystem;

// The environment may point elsewhere (a worktree has no ../shared next to it).
const fs::path snapshots =
    fs::path(std::getenv("ENVLOCK_SHARED_DIR") ? std::getenv("ENVLOCK_SHARED_DIR") : ENVLOCK_SHARED_DIR) / "snapshots";

std::vector<fs::path> repodata_files() {
    std::vector<fs::path> out;
    for (const char* rel : {"rattler-pytorch-channel/linux-64/repodata.json",
                            "conda-subchannel-demo-conda-forge-py39/linux-64/repodata.json",
                            "conda-subchannel-demo-conda-forge-py39/noarch/repodata.json",
                            "conda-tests-defaults-2013-2018/repodata_r_linux-64.json",
                            "conda-tests-defaults-2013-2018/repodata_main_noarch.json",
                            "mamba-tests-conda-forge-numpy/conda-forge-numpy-linux-64.json"})
        if (fs::exists(snapshots / rel)) out.push_back(snapshots / rel);
    return out;
}

nlohmann::json load(const fs::path& p) {
    std::ifstream in(p);
    return nlohmann::json::parse(in);
}

template <typename F>
void for_each_record(const nlohmann::json& repodata, F&& f) {
    for (const char* section : {"packages", "packages.conda"}) {
        if (!repodata.contains(section)) continue;
        for (const auto& [filename, rec] : repodata[section].items()) f(filename, rec);
    }
}

}  // namespace

TEST_CASE("every version, depends and constrains entry of the real repodata snapshots parses") {
    auto files = repodata_files();
    if (files.empty()) {
        MESSAGE("skipped: no repodata snapshots under " << snapshots.string());
        return;
    }
    std::size_t records = 0, specs = 0;
    for (const fs::path& file : files) {
        CAPTURE(file.string());
        nlohmann::json repodata = load(file);
        for_each_record(repodata, [&](const std::string& filename, const nlohmann::json& rec) {
            CAPTURE(filename);
            ++records;
            std::string version = rec.at("version").get<std::string>();
            CHECK_NOTHROW(Version::parse(version));
            for (const char* key : {"depends", "constrains"}) {
                if (!rec.contains(key)) continue;
                for (const auto& dep : rec[key]) {
                    std::string text = dep.get<std::string>();
                    CAPTURE(text);
                    ++specs;
                    MatchSpec m = MatchSpec::parse(text);
                    // The canonical text is a fixed point: a lock can store it and read it back.
                    CHECK(MatchSpec::parse(m.str()).str() == m.str());
                }
            }
        });
    }
    MESSAGE("parsed " << records << " records and " << specs << " dependency specs");
    CHECK(records > 2000);
}

TEST_CASE("every file name of the real repodata splits into the record's name, version and build") {
    auto files = repodata_files();
    if (files.empty()) {
        MESSAGE("skipped: no repodata snapshots under " << snapshots.string());
        return;
    }
    for (const fs::path& file : files) {
        nlohmann::json repodata = load(file);
        for_each_record(repodata, [&](const std::string& filename, const nlohmann::json& rec) {
            CAPTURE(filename);
            PackageFilename f = PackageFilename::parse(filename);
            CHECK(f.name == rec.at("name").get<std::string>());
            CHECK(f.version == rec.at("version").get<std::string>());
            CHECK(f.build == rec.at("build").get<std::string>());
        });
    }
}

TEST_CASE("each real record matches its own exact spec and dist name, and not a neighbour's") {
    const fs::path file = snapshots / "rattler-pytorch-channel/linux-64/repodata.json";
    if (!fs::exists(file)) {
        MESSAGE("skipped: " << file.string() << " is absent");
        return;
    }
    nlohmann::json repodata = load(file);
    std::size_t cuda111 = 0, pytorch190 = 0;
    MatchSpec acceptance = MatchSpec::parse("pytorch 1.9.* *cuda11.1*");
    for_each_record(repodata, [&](const std::string& filename, const nlohmann::json& rec) {
        CAPTURE(filename);
        IndexRecord r;
        r.name = rec.at("name").get<std::string>();
        r.version = rec.at("version").get<std::string>();
        r.build = rec.at("build").get<std::string>();
        r.build_number = rec.value("build_number", 0);
        r.channel = "https://conda.anaconda.org/pytorch";
        r.subdir = rec.value("subdir", "linux-64");
        r.filename = filename;
        r.md5 = rec.value("md5", "");
        CHECK(MatchSpec::parse(r.name + " " + r.version + " " + r.build).matches(r));
        CHECK(MatchSpec::parse(r.name + "==" + r.version + "=" + r.build).matches(r));
        CHECK(MatchSpec::parse("pytorch::" + r.name + "[md5=" + r.md5 + "]").matches(r));
        CHECK(MatchSpec::parse(r.name + "[build_number=" + std::to_string(r.build_number) + "]").matches(r));
        CHECK_FALSE(MatchSpec::parse(r.name + " " + r.version + " " + r.build + "x").matches(r));
        CHECK_FALSE(MatchSpec::parse("conda-forge::" + r.name).matches(r));
        CHECK(MatchSpec::parse(r.name + " " + r.version + " " + r.build).matches(DistName::parse(filename.substr(0, filename.size() - 8))));
        if (acceptance.matches(r)) {
            ++cuda111;
            CHECK(r.name == "pytorch");
            CHECK(r.build.find("cuda11.1") != std::string::npos);
        }
        if (r.name == "pytorch" && r.version == "1.9.0") ++pytorch190;
    });
    // 1.9.0 and 1.9.1 ship cuda11.1 builds for python 3.6–3.9.
    CHECK(cuda111 >= 4);
    CHECK(pytorch190 > cuda111 / 2);
}
