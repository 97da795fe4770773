#include <doctest/doctest.h>

#include "resolver/specs/errors.hpp"
#include "resolver/lock/lock.hpp"

using namespace envlock;

namespace {

Lock small_lock() {
    Lock lock;
    lock.spec.name = "demo";
    lock.spec.requirements.push_back({"torch==1.9.1", "pypi", {"docs/install.md", 14}});
    Target t;
    t.platform = "linux-64";
    t.glibc = "2.31";
    t.driver_version = "470.82.01";
    t.driver_cuda = "11.4";
    t.gpus.push_back({"NVIDIA GeForce RTX 3090", 8, 6});
    lock.targets.push_back({"default", t});
    lock.knowledge_version = "test";
    lock.content_hash = lock_content_hash(lock.spec, lock.targets, lock.knowledge_version);
    LockedPackage p;
    p.kind = Ecosystem::pypi;
    p.url = "https://download.pytorch.org/whl/cu111/torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl";
    p.name = "torch";
    p.version = "1.9.1+cu111";
    p.sha256 = std::string(64, 'a');
    p.cuda = LockedCuda{"11.1", {37, 50, 60, 70, 75, 80, 86}, {}};
    lock.packages.push_back(p);
    return lock;
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
    auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("the content hash changes when the spec changes") {
    Lock a = small_lock();
    Lock b = small_lock();
    b.spec.requirements[0].text = "torch==1.10.0";
    CHECK(lock_content_hash(a.spec, a.targets, "k") != lock_content_hash(b.spec, b.targets, "k"));
}

TEST_CASE("the content hash changes when the target changes") {
    Lock a = small_lock();
    Lock b = small_lock();
    b.targets[0].target.gpus[0] = {"NVIDIA H100", 9, 0};
    CHECK(lock_content_hash(a.spec, a.targets, "k") != lock_content_hash(b.spec, b.targets, "k"));
}

TEST_CASE("a lock round-trips through its YAML byte for byte") {
    std::string text = write_lock(small_lock());
    CHECK(text.rfind("version: 1\n", 0) == 0);
    CHECK(write_lock(read_lock(text, "envlock.yaml")) == text);
}

TEST_CASE("a sha256 of the wrong shape is refused with the file and line") {
    std::string bad = replace(write_lock(small_lock()), std::string(64, 'a'), "abc");
    try {
        read_lock(bad, "envlock.yaml");
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        std::string msg = e.what();
        CHECK(msg.find("envlock.yaml:") == 0);
        CHECK(msg.find("sha256") != std::string::npos);
    }
}

TEST_CASE("a lock without packages is refused") {
    std::string text = write_lock(small_lock());
    std::string cut = text.substr(0, text.find("packages:"));
    CHECK_THROWS_AS(read_lock(cut, "envlock.yaml"), InputError);
}

TEST_CASE("text that is not YAML is refused with its line") {
    try {
        read_lock("version: 1\npackages: [\n  - {", "broken.yaml");
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("broken.yaml:") == 0);
    }
}

TEST_CASE("an unknown top-level key is refused") {
    std::string text = write_lock(small_lock()) + "surprise: 1\n";
    CHECK_THROWS_AS(read_lock(text, "envlock.yaml"), InputError);
}

// With the target reader's UTF-8 check (issue 20, fuzz/target): a lock is YAML, UTF-8 text,
// written back as YAML and JSON; a byte that is not UTF-8 is named by line and column.
TEST_CASE("a lock that is not UTF-8 is refused with its line and column") {
    std::string text = write_lock(small_lock());
    text = replace(text, "name: demo", "name: d\xe9mo");
    try {
        read_lock(text, "envlock.yaml");
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("expected UTF-8 text, found byte 0xE9 at column") != std::string::npos);
        CHECK(std::string(e.what()).rfind("envlock.yaml:", 0) == 0);
    }
}
