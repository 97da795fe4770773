// The listing of an unpacked wheel saved beside its cache tree (install/wheel_archive.hpp): a
// warm install reads it instead of a stat per file, and reads the tree itself whenever the
// listing cannot be trusted to be whole.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "install/wheel_archive.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

fs::path unpacked_tree(const TempDir& t) {
    fs::path tree = t.path / "tree";
    write_text(tree / "pkg/__init__.py", "x = 1\n");
    write_text(tree / "pkg/sub/data.bin", std::string(1000, 'z'));
    write_text(tree / "pkg-1.0.data/scripts/tool", "#!python\n", true);
    write_text(tree / "pkg-1.0.dist-info/RECORD", "");
    return tree;
}

std::string listed(const std::vector<install::WheelMember>& ms) {
    std::string out;
    for (const auto& m : ms) out += m.name + ":" + std::to_string(m.size) + (m.executable ? "x" : "") + "\n";
    return out;
}

}  // namespace

TEST_CASE("a saved listing gives the same members as a walk of the tree") {
    TempDir t;
    fs::path tree = unpacked_tree(t);
    std::string walked = listed(install::list_unpacked_wheel(tree.string()));
    install::save_unpacked_listing(tree.string(), tree.string());
    REQUIRE(fs::exists(tree.string() + ".members"));
    CHECK(listed(install::list_unpacked_wheel(tree.string())) == walked);
    CHECK(walked.find("pkg-1.0.data/scripts/tool:9x\n") != std::string::npos);
    CHECK(walked.find("pkg/sub/data.bin:1000\n") != std::string::npos);
}

TEST_CASE("a torn or malformed listing is ignored and the tree is walked") {
    TempDir t;
    fs::path tree = unpacked_tree(t);
    install::save_unpacked_listing(tree.string(), tree.string());
    write_text(tree / "pkg/late.py", "y = 2\n");
    std::string listing = tree.string() + ".members";
    for (std::string text : {std::string("6 - pkg/__init__.py"), std::string("six - pkg/__init__.py\n"), std::string("6 pkg\n")}) {
        CAPTURE(text);
        write_text(listing, text);
        CHECK(listed(install::list_unpacked_wheel(tree.string())).find("pkg/late.py:6\n") != std::string::npos);
    }
}

TEST_CASE("no listing is saved for a tree with a tab or newline in a file name") {
    TempDir t;
    fs::path tree = unpacked_tree(t);
    write_text(tree / "pkg/odd\tname.py", "");
    install::save_unpacked_listing(tree.string(), tree.string());
    CHECK_FALSE(fs::exists(tree.string() + ".members"));
    CHECK(listed(install::list_unpacked_wheel(tree.string())).find("pkg/odd\tname.py:0\n") != std::string::npos);
}
