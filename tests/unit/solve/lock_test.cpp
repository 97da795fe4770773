#include <doctest/doctest.h>

#include <yaml-cpp/yaml.h>

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

namespace {

// The packages block as yaml-cpp's emitter writes it (lock.cpp's writer before issue 21): the
// oracle for the direct writer.
std::string packages_by_emitter(const std::vector<LockedPackage>& packages) {
    auto quoted = [](YAML::Emitter& out, const char* key, const std::string& v) {
        if (!v.empty()) out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << v;
    };
    auto list = [](YAML::Emitter& out, const char* key, const std::vector<std::string>& v) {
        out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& s : v) out << YAML::DoubleQuoted << s;
        out << YAML::EndSeq;
    };
    YAML::Emitter out;
    out.SetIndent(2);
    out << YAML::BeginMap << YAML::Key << "packages" << YAML::Value << YAML::BeginSeq;
    for (const auto& p : packages) {
        const char* kind = p.kind == Ecosystem::conda ? "conda" : p.kind == Ecosystem::pypi ? "pypi" : "source";
        out << YAML::BeginMap << YAML::Key << kind << YAML::Value << p.url;
        quoted(out, "name", p.name);
        quoted(out, "version", p.version);
        quoted(out, "build", p.build);
        if (p.kind == Ecosystem::conda) out << YAML::Key << "build-number" << YAML::Value << p.build_number;
        quoted(out, "sha256", p.sha256);
        quoted(out, "md5", p.md5);
        if (p.size) out << YAML::Key << "size" << YAML::Value << p.size;
        quoted(out, "channel", p.channel);
        quoted(out, "subdir", p.subdir);
        quoted(out, "rev", p.rev);
        if (!p.depends.empty()) list(out, "depends", p.depends);
        if (p.depends_unknown) out << YAML::Key << "depends-unknown" << YAML::Value << true;
        if (p.cuda) {
            out << YAML::Key << "cuda" << YAML::Value << YAML::Flow << YAML::BeginMap;
            out << YAML::Key << "runtime" << YAML::Value << YAML::DoubleQuoted << p.cuda->runtime;
            for (auto [key, v] : {std::pair{"sm", &p.cuda->sm}, std::pair{"ptx", &p.cuda->ptx}}) {
                if (v->empty()) continue;
                out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
                for (int x : *v) out << x;
                out << YAML::EndSeq;
            }
            out << YAML::EndMap;
        }
        if (!p.requested_by.empty()) list(out, "requested-by", p.requested_by);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
    return out.c_str();
}

std::string packages_block(const std::string& lock_text) {
    auto from = lock_text.find("\npackages:\n");
    REQUIRE(from != std::string::npos);
    auto to = lock_text.find("\n", from + 1);
    while (to != std::string::npos && to + 1 < lock_text.size() && lock_text[to + 1] == ' ') to = lock_text.find("\n", to + 1);
    return lock_text.substr(from + 1, (to == std::string::npos ? lock_text.size() : to) - from - 1);
}

}  // namespace

// Issue 21: the packages block is written directly, not through yaml-cpp's emitter, in the same
// bytes. Values the emitter would quote, escape or write another way go through it still.
TEST_CASE("the lock's packages block is written in the bytes yaml-cpp's emitter gives it, odd strings included") {
    Lock lock = small_lock();
    const std::vector<std::string> odd = {"plain", "with space", "quote\"d", "back\\slash", "tab\there", "new\nline", "ü-utf8",
                                          "\xc2\xa0nbsp", "#hash", "- dash", "colon: space", "trailing:", "~", "null", "true", "",
                                          "[flow]", "{map}", "a,b", "it's", "%percent", "@at", "`tick`", "\x7f", "*star", "&amp"};
    const std::vector<std::string> urls = {"https://conda.anaconda.org/conda-forge/linux-64/x-1.0-0.conda", "file:///srv/a b/x.whl",
                                           "https://h/x.whl#sha256=ab", "https://h/p?a=1&b=2", "https://h/x:", "git+https://h/r.git@v1",
                                           "https://h/[x]/y", "http://h/x y", "ftp://h/é", "/local/path", "https://h/'q'", "trailing ",
                                           "https://user:pw@h/x"};
    for (size_t i = 0; i < odd.size() + urls.size(); ++i) {
        LockedPackage p;
        p.kind = static_cast<Ecosystem>(i % 3);
        p.url = i < urls.size() ? urls[i] : odd[i - urls.size()];
        p.name = odd[i % odd.size()];
        p.version = odd[(i + 1) % odd.size()];
        p.build = odd[(i + 2) % odd.size()];
        p.build_number = static_cast<int>(i);
        p.sha256 = i % 2 ? std::string(64, 'f') : "";
        p.md5 = odd[(i + 3) % odd.size()];
        p.size = i * 1000003;
        p.channel = odd[(i + 4) % odd.size()];
        p.subdir = "linux-64";
        p.rev = i % 4 ? "" : odd[(i + 5) % odd.size()];
        if (i % 2) p.depends = {odd[i % odd.size()], "python >=3.8", odd[(i + 7) % odd.size()]};
        p.depends_unknown = i % 5 == 0;
        if (i % 3 == 0) p.cuda = LockedCuda{odd[(i + 6) % odd.size()], i % 2 ? std::vector<int>{37, 86} : std::vector<int>{}, {86}};
        if (i % 2 == 0) p.requested_by = {"spec: " + odd[i % odd.size()], "numpy 1.19.5: x>=1"};
        lock.packages.push_back(p);
    }
    std::string text = write_lock(lock);
    CHECK(packages_block(text) == packages_by_emitter(lock.packages));
}

TEST_CASE("a lock with no packages writes them as the emitter's empty sequence and reads back") {
    Lock lock = small_lock();
    lock.packages.clear();
    std::string text = write_lock(lock);
    YAML::Emitter empty;
    empty.SetIndent(2);
    empty << YAML::BeginMap << YAML::Key << "packages" << YAML::Value << YAML::BeginSeq << YAML::EndSeq << YAML::EndMap;
    CHECK(text.find("\n" + std::string(empty.c_str()) + "\n") != std::string::npos);
    CHECK(read_lock(text, "envlock.yaml").packages.empty());
}
