// Wheel and sdist file names (PEP 427), compatibility tags (PEP 425/600) and their ranking.
#include <doctest/doctest.h>

#include <algorithm>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/find_chars.hpp"
#include "resolver/specs/wheel.hpp"

using envlock::wheel::best_tag_rank;
using envlock::wheel::compatible_tags;
using envlock::wheel::SdistName;
using envlock::wheel::Tag;
using envlock::wheel::url_decode;
using envlock::wheel::WheelName;

namespace {
std::vector<std::string> tag_strs(const std::vector<Tag>& tags) {
    std::vector<std::string> out;
    for (const auto& t : tags) out.push_back(t.str());
    return out;
}
int rank(const char* wheel, const char* python = "3.8", const char* platform = "linux-64", const char* glibc = "2.31") {
    return best_tag_rank(WheelName::parse(wheel), compatible_tags(python, platform, glibc));
}
}  // namespace

TEST_CASE("url_decode turns %XX into bytes and leaves everything else") {
    CHECK(url_decode("torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl") == "torch-1.9.1+cu111-cp38-cp38-linux_x86_64.whl");
    CHECK(url_decode("a%2bb") == "a+b");
    CHECK(url_decode("a+b") == "a+b");
    CHECK(url_decode("100%") == "100%");
    CHECK(url_decode("%zz%4") == "%zz%4");
    CHECK(url_decode("%41%42C") == "ABC");
}

TEST_CASE("a download.pytorch.org wheel name, percent-encoded") {
    auto w = WheelName::parse("torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl");
    CHECK(w.name == "torch");
    CHECK(w.normalized_name == "torch");
    CHECK(w.version == "1.9.1+cu111");
    CHECK(w.build_tag.empty());
    CHECK(tag_strs(w.tags) == std::vector<std::string>{"cp38-cp38-linux_x86_64"});
    // The same, given as a URL with a hash fragment.
    auto u = WheelName::parse("https://download.pytorch.org/whl/cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl#sha256=abc");
    CHECK(u.version == "1.9.1+cu111");
}

TEST_CASE("compressed tag sets expand to every combination") {
    auto six = WheelName::parse("six-1.16.0-py2.py3-none-any.whl");
    CHECK(tag_strs(six.tags) == std::vector<std::string>{"py2-none-any", "py3-none-any"});
    auto np = WheelName::parse(
        "numpy-1.19.5-cp38-cp38-manylinux1_x86_64.manylinux_2_5_x86_64.manylinux2010_x86_64.manylinux_2_12_x86_64.whl");
    CHECK(np.tags.size() == 4);
    CHECK(np.tags[2].platform == "manylinux2010_x86_64");
    auto multi = WheelName::parse("x-1.0-cp37.cp38-abi3.none-linux_x86_64.whl");
    CHECK(multi.tags.size() == 4);
}

TEST_CASE("build tags, escaped names and versions, case of tags") {
    auto b = WheelName::parse("mmcv_full-1.4.0-1_cu111-cp38-cp38-manylinux2014_x86_64.whl");
    CHECK(b.name == "mmcv_full");
    CHECK(b.normalized_name == "mmcv-full");
    CHECK(b.build_tag == "1_cu111");
    CHECK(b.tags.size() == 1);
    CHECK(WheelName::parse("Foo.Bar-2.0_rc1-py3-none-any.whl").version == "2.0rc1");
    CHECK(WheelName::parse("foo-1.0-PY3-NONE-ANY.whl").tags[0].str() == "py3-none-any");
    CHECK(WheelName::parse("foo-1.0-py3-none-any.WHL").version == "1.0");
}

TEST_CASE("malformed wheel names are bad input") {
    for (const char* bad : {"foo.tar.gz", "foo-1.0.whl", "foo-1.0-py3-none.whl", "foo-1.0-x-py3-none-any.whl",
                            "foo-notaversion-py3-none-any.whl", "foo-1.0-1-2-py3-none-any.whl", "foo--py3-none-any.whl",
                            "fo$o-1.0-py3-none-any.whl", "foo-1.0-py3..py2-none-any.whl"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(WheelName::parse(bad), envlock::InputError);
    }
}

TEST_CASE("sdist names: archive extensions, names with dashes, invalid versions") {
    auto s = SdistName::try_parse("mmcv-full-1.4.0.tar.gz");
    REQUIRE(s.has_value());
    CHECK(s->name == "mmcv-full");
    CHECK(s->normalized_name == "mmcv-full");
    CHECK(s->version == "1.4.0");
    CHECK(s->extension == ".tar.gz");
    CHECK(SdistName::try_parse("numpy-1.19.5.zip")->extension == ".zip");
    CHECK(SdistName::try_parse("Foo_Bar-2.0rc1.tar.bz2")->version == "2.0rc1");
    CHECK(SdistName::try_parse("https://files/x/yapf-0.40.1.tar.gz#sha256=1")->name == "yapf");
    CHECK_FALSE(SdistName::try_parse("six-1.16.0-py2.py3-none-any.whl").has_value());
    CHECK_FALSE(SdistName::try_parse("foo.tar.gz").has_value());
    CHECK_FALSE(SdistName::try_parse("foo-bar.tar.gz").has_value());
}

TEST_CASE("CPython 3.8 on linux-64 with glibc 2.31: the order packaging.tags gives") {
    auto tags = tag_strs(compatible_tags("3.8", "linux-64", "2.31"));
    // platforms: manylinux_2_31 .. _2_5 (27) + 3 legacy aliases + linux_x86_64 = 31
    REQUIRE(tags.size() > 31);
    CHECK(tags[0] == "cp38-cp38-manylinux_2_31_x86_64");
    CHECK(tags[14] == "cp38-cp38-manylinux_2_17_x86_64");
    CHECK(tags[15] == "cp38-cp38-manylinux2014_x86_64");
    CHECK(tags[30] == "cp38-cp38-linux_x86_64");
    CHECK(tags[31] == "cp38-abi3-manylinux_2_31_x86_64");
    auto pos = [&](const std::string& t) { return std::find(tags.begin(), tags.end(), t) - tags.begin(); };
    CHECK(pos("cp38-cp38-manylinux2010_x86_64") == pos("cp38-cp38-manylinux_2_12_x86_64") + 1);
    CHECK(pos("cp38-cp38-manylinux1_x86_64") == pos("cp38-cp38-manylinux_2_5_x86_64") + 1);
    CHECK(pos("cp38-abi3-linux_x86_64") < pos("cp38-none-manylinux_2_31_x86_64"));
    CHECK(pos("cp38-none-linux_x86_64") < pos("cp37-abi3-manylinux_2_31_x86_64"));
    CHECK(pos("cp32-abi3-linux_x86_64") < pos("py38-none-manylinux_2_31_x86_64"));
    CHECK(pos("py3-none-linux_x86_64") < pos("py37-none-manylinux_2_31_x86_64"));
    CHECK(pos("py30-none-linux_x86_64") < pos("cp38-none-any"));
    CHECK(tags[tags.size() - 11] == "cp38-none-any");
    CHECK(tags[tags.size() - 10] == "py38-none-any");
    CHECK(tags[tags.size() - 9] == "py3-none-any");
    CHECK(tags.back() == "py30-none-any");
    CHECK(pos("cp31-abi3-linux_x86_64") == static_cast<long>(tags.size()));  // abi3 starts at 3.2
    CHECK(pos("manylinux_2_4_x86_64") == static_cast<long>(tags.size()));
}

TEST_CASE("manylinux tags against the target's glibc") {
    CHECK(rank("numpy-1.24.0-cp38-cp38-manylinux_2_17_x86_64.manylinux2014_x86_64.whl") >= 0);
    CHECK(rank("x-1.0-cp38-cp38-manylinux_2_31_x86_64.whl") == 0);
    CHECK(rank("x-1.0-cp38-cp38-manylinux_2_32_x86_64.whl") == -1);
    CHECK(rank("x-1.0-cp38-cp38-manylinux_2_28_x86_64.whl", "3.8", "linux-64", "2.17") == -1);
    CHECK(rank("x-1.0-cp38-cp38-manylinux2014_x86_64.whl", "3.8", "linux-64", "2.17") >= 0);
    CHECK(rank("x-1.0-cp38-cp38-manylinux2014_x86_64.whl", "3.8", "linux-64", "2.12") == -1);
    CHECK(rank("x-1.0-cp38-cp38-manylinux2010_x86_64.whl", "3.8", "linux-64", "2.12") >= 0);
    CHECK(rank("x-1.0-cp38-cp38-manylinux1_x86_64.whl", "3.8", "linux-64", "2.5") >= 0);
    CHECK(rank("x-1.0-cp38-cp38-manylinux2014_x86_64.whl", "3.8", "linux-64", "") >= 0);  // default 2.17
    CHECK(rank("x-1.0-cp38-cp38-manylinux_2_24_x86_64.whl", "3.8", "linux-64", "") == -1);
    // A better-fitting tag ranks before a worse one.
    CHECK(rank("x-1.0-cp38-cp38-manylinux_2_28_x86_64.whl") < rank("x-1.0-cp38-cp38-manylinux2014_x86_64.whl"));
    CHECK(rank("x-1.0-cp38-cp38-manylinux2014_x86_64.whl") < rank("x-1.0-cp38-cp38-linux_x86_64.whl"));
}

TEST_CASE("linux_x86_64 (download.pytorch.org) runs on linux-64, last among binary platforms") {
    int r = rank("torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl");
    CHECK(r >= 0);
    CHECK(r > rank("x-1.0-cp38-cp38-manylinux1_x86_64.whl"));
    CHECK(r < rank("x-1.0-cp38-abi3-manylinux_2_31_x86_64.whl"));
    CHECK(rank("torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl", "3.9") == -1);
    CHECK(rank("torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl", "3.8", "linux-aarch64") == -1);
    CHECK(rank("torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl", "3.8", "osx-64", "") == -1);
}

TEST_CASE("cp38-cp38 vs abi3 vs none vs pure python") {
    int exact = rank("x-1.0-cp38-cp38-manylinux2014_x86_64.whl");
    int abi3 = rank("x-1.0-cp36-abi3-manylinux2014_x86_64.whl");
    int none = rank("x-1.0-py3-none-manylinux2014_x86_64.whl");
    int pure = rank("x-1.0-py3-none-any.whl");
    CHECK(exact >= 0);
    CHECK(exact < abi3);
    CHECK(abi3 < none);
    CHECK(none < pure);
    CHECK(rank("x-1.0-cp39-abi3-manylinux2014_x86_64.whl") == -1);  // abi3 built for a newer Python
    CHECK(rank("x-1.0-cp39-cp39-manylinux2014_x86_64.whl") == -1);
    CHECK(rank("x-1.0-py2-none-any.whl") == -1);
    CHECK(rank("x-1.0-py2.py3-none-any.whl") >= 0);
    CHECK(rank("x-1.0-cp37-cp37m-manylinux2014_x86_64.whl", "3.7") == 15);
    CHECK(rank("x-1.0-cp37-cp37-manylinux2014_x86_64.whl", "3.7") == -1);  // 3.7 needs the "m" ABI
    CHECK(rank("x-1.0-cp38-cp38-win_amd64.whl") == -1);
}

TEST_CASE("other platforms: aarch64, macOS, Windows") {
    auto arm = tag_strs(compatible_tags("3.10", "linux-aarch64", "2.28"));
    CHECK(arm[0] == "cp310-cp310-manylinux_2_28_aarch64");
    CHECK(std::find(arm.begin(), arm.end(), "cp310-cp310-manylinux2014_aarch64") != arm.end());
    CHECK(std::find(arm.begin(), arm.end(), "cp310-cp310-manylinux2010_aarch64") == arm.end());
    CHECK(std::find(arm.begin(), arm.end(), "cp310-cp310-manylinux_2_16_aarch64") == arm.end());
    CHECK(std::find(arm.begin(), arm.end(), "cp310-cp310-linux_aarch64") != arm.end());

    auto mac = tag_strs(compatible_tags("3.9", "osx-arm64", "13.0"));
    CHECK(mac[0] == "cp39-cp39-macosx_13_0_arm64");
    CHECK(mac[1] == "cp39-cp39-macosx_13_0_universal2");
    CHECK(std::find(mac.begin(), mac.end(), "cp39-cp39-macosx_11_0_arm64") != mac.end());
    CHECK(std::find(mac.begin(), mac.end(), "cp39-cp39-macosx_10_9_universal2") != mac.end());
    CHECK(std::find(mac.begin(), mac.end(), "cp39-cp39-macosx_10_9_x86_64") == mac.end());
    CHECK(rank("x-1.0-cp39-cp39-macosx_10_9_x86_64.whl", "3.9", "osx-64", "10.15") >= 0);
    CHECK(rank("x-1.0-cp39-cp39-macosx_11_0_x86_64.whl", "3.9", "osx-64", "10.15") == -1);
    CHECK(rank("x-1.0-cp39-cp39-macosx_10_9_intel.whl", "3.9", "osx-64", "") >= 0);

    auto win = tag_strs(compatible_tags("3.8", "win-64", ""));
    CHECK(win[0] == "cp38-cp38-win_amd64");
    CHECK(rank("x-1.0-cp38-cp38-win_amd64.whl", "3.8", "win-64", "") == 0);
    CHECK(rank("x-1.0-cp38-cp38-win32.whl", "3.8", "win-64", "") == -1);
}

TEST_CASE("bad targets are bad input") {
    CHECK_THROWS_AS(compatible_tags("3.8", "noarch", ""), envlock::InputError);
    CHECK_THROWS_AS(compatible_tags("3.8", "linux-mips", "2.31"), envlock::InputError);
    CHECK_THROWS_AS(compatible_tags("3.8", "linux-64", "two"), envlock::InputError);
    CHECK_THROWS_AS(compatible_tags("py3", "linux-64", "2.31"), envlock::InputError);
}

// find_first_of_chars stands in for string_view::find_first_of on the hot paths of link parsing
// (resolver/specs/find_chars.hpp): the same answer for every text, set and start.
TEST_CASE("find_first_of_chars answers as string_view::find_first_of does") {
    const std::vector<std::string_view> texts = {"", "#", "a?b#c", "cpu/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl#sha256=ab",
                                                 "x=1 ;y", "????", "no marks here"};
    const std::vector<std::string_view> sets = {"?#", "/?#", "<>&", " =<>!~[;", "", "z"};
    for (auto text : texts)
        for (auto set : sets)
            for (size_t from = 0; from <= text.size() + 1; ++from) {
                CAPTURE(text);
                CAPTURE(set);
                CAPTURE(from);
                CHECK(envlock::find_first_of_chars(text, set, from) == text.find_first_of(set, from));
            }
}
