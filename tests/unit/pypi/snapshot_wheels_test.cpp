// Realism: every wheel link on real find-links pages (../shared/snapshots) parses, and the
// tags pick what pip would install there.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>

#include "resolver/specs/pep440.hpp"
#include "resolver/specs/wheel.hpp"

using envlock::wheel::WheelName;

namespace {
std::vector<std::string> hrefs(const std::filesystem::path& page) {
    std::ifstream in(page);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string html = ss.str();
    std::vector<std::string> out;
    for (std::size_t at = html.find("href=\""); at != std::string::npos; at = html.find("href=\"", at)) {
        at += 6;
        out.push_back(html.substr(at, html.find('"', at) - at));
    }
    return out;
}
}  // namespace

TEST_CASE("every wheel on download.pytorch.org's torch_stable.html (2021-03) parses") {
    auto page = std::filesystem::path(ENVLOCK_SHARED_DIR) / "snapshots/pytorch-torch_stable-html-2021-03/torch_stable.html";
    if (!std::filesystem::exists(page)) {
        MESSAGE("skipped: " << page << " is absent");
        return;
    }
    auto links = hrefs(page);
    CHECK(links.size() == 1499);
    auto tags = envlock::wheel::compatible_tags("3.8", "linux-64", "2.31");
    int parsed = 0, fit = 0;
    for (const auto& link : links) {
        CAPTURE(link);
        WheelName w = WheelName::parse(link);
        ++parsed;
        CHECK(envlock::pep440::Version::try_parse(w.version).has_value());
        if (envlock::wheel::best_tag_rank(w, tags) >= 0) ++fit;
        if (link == "cu111/torch-1.8.0%2Bcu111-cp38-cp38-linux_x86_64.whl") {
            CHECK(w.version == "1.8.0+cu111");
            CHECK(envlock::wheel::best_tag_rank(w, tags) >= 0);
        }
    }
    CHECK(parsed == 1499);
    CHECK(fit > 100);
    CHECK(fit < parsed);
}

TEST_CASE("every wheel on an openmmlab mmcv page parses; cp38 Linux picks manylinux1, not win_amd64") {
    auto page = std::filesystem::path(ENVLOCK_SHARED_DIR) / "snapshots/poetry-fixture-openmmlab-mmcv-index/mmcv_torch_releases.html";
    if (!std::filesystem::exists(page)) {
        MESSAGE("skipped: " << page << " is absent");
        return;
    }
    auto tags = envlock::wheel::compatible_tags("3.8", "linux-64", "2.31");
    int linux_cp38 = 0;
    for (const auto& link : hrefs(page)) {
        CAPTURE(link);
        WheelName w = WheelName::parse(link);
        CHECK((w.normalized_name == "mmcv" || w.normalized_name == "mmcv-full"));
        int rank = envlock::wheel::best_tag_rank(w, tags);
        bool want = link.find("-cp38-cp38-manylinux1_x86_64.whl") != std::string::npos;
        CHECK((rank >= 0) == want);
        linux_cp38 += want;
    }
    CHECK(linux_cp38 > 5);
}

// TagRanks indexes a target's tags once for the pool (resolver/solve/pool.cpp); it must rank
// every real wheel as best_tag_rank's scan does, for targets each wheel fits and does not.
TEST_CASE("TagRanks ranks every wheel of the snapshot pages as best_tag_rank does") {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(ENVLOCK_SHARED_DIR) / "snapshots")) {
        if (!e.is_regular_file() || e.path().extension() != ".html") continue;
        for (const auto& link : hrefs(e.path())) {
            std::string file = link.substr(0, link.find('#'));
            file = file.substr(file.rfind('/') + 1);
            if (file.size() > 4 && file.substr(file.size() - 4) == ".whl") names.push_back(file);
        }
    }
    if (names.empty()) {
        MESSAGE("skipped: no snapshot pages under " << ENVLOCK_SHARED_DIR);
        return;
    }
    int checked = 0, fitting = 0;
    for (auto [python, platform, glibc] : {std::tuple{"3.8", "linux-64", "2.31"}, std::tuple{"3.7", "linux-64", "2.17"},
                                           std::tuple{"3.10", "linux-aarch64", "2.35"}, std::tuple{"3.9", "osx-arm64", ""},
                                           std::tuple{"3.8", "win-64", ""}}) {
        auto tags = envlock::wheel::compatible_tags(python, platform, glibc);
        const envlock::wheel::TagRanks ranks(tags);
        for (const auto& n : names) {
            std::optional<WheelName> w;
            try {
                w = WheelName::parse(n);
            } catch (const std::exception&) {
                continue;
            }
            CAPTURE(n);
            CAPTURE(python);
            CAPTURE(platform);
            int rank = envlock::wheel::best_tag_rank(*w, tags);
            CHECK(ranks.best(*w) == rank);
            ++checked;
            fitting += rank >= 0;
        }
    }
    CHECK(checked > 1000);
    CHECK(fitting > 100);
}
