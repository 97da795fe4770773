// A re-resolve whose inputs and indexes did not change reuses the lock (resolver/workflow/
// reuse.hpp), as `uv lock` does when its lock is current; anything that changed, or a lock
// that no longer proves, solves again. Over the demo mirror behind the local HTTP server,
// whose ETag is the file's size and mtime, so a touched page answers 200 instead of 304.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <utime.h>

#include <nlohmann/json.hpp>

#include "resolver/lock/lock.hpp"
#include "resolver/workflow/reuse.hpp"
#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

struct Bev {
    fs::path dir;
    std::string lock_path;
    std::vector<std::string> args;
};

Bev bevformer(const std::string& tag) {
    Bev b;
    b.dir = temp_dir(tag);
    write_file(b.dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    b.lock_path = (b.dir / "envlock.yaml").string();
    b.args = {"BEVFormer", "-o", b.lock_path, "--target", (b.dir / "target.yaml").string(), "--json"};
    return b;
}

nlohmann::json resolved(const Bev& b, std::vector<std::string> extra = {}) {
    auto args = b.args;
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = resolve_with(args, b.dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return nlohmann::json::parse(r.out);
}

long long mtime_ns(const std::string& path) {
    struct stat st{};
    ::stat(path.c_str(), &st);
    return static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

}  // namespace

TEST_CASE("a re-resolve with the same inputs and unchanged indexes (304s) reuses the lock and leaves the file alone") {
    auto b = bevformer("reuse");
    auto first = resolved(b);
    CHECK(first["reused"] == false);
    std::string lock = read_file(b.lock_path);
    long long written = mtime_ns(b.lock_path);
    mirror_server().server->clear_requests();

    auto again = resolved(b);
    CHECK(again["reused"] == true);
    CHECK(again["content-hash"] == first["content-hash"]);
    CHECK(again["packages"] == first["packages"]);
    CHECK(again["decisions"] == first["decisions"]);
    CHECK(again["notes"] == first["notes"]);
    CHECK(again["changes"].empty());
    CHECK(read_file(b.lock_path) == lock);
    CHECK(mtime_ns(b.lock_path) == written);
    // Every index document was revalidated, and none was sent again.
    auto seen = mirror_server().server->requests();
    REQUIRE(!seen.empty());
    int not_modified = 0;
    for (const auto& s : seen) {
        CHECK_MESSAGE((s.status == 304 || s.status == 404), s.path);
        not_modified += s.status == 304;
    }
    CHECK(not_modified > 0);
}

TEST_CASE("an index page that changed since the lock was solved is read again and the spec solved again") {
    auto b = bevformer("reuse-page");
    resolved(b);
    std::string lock = read_file(b.lock_path);
    // A new mtime is a new ETag: the page answers 200, not 304.
    fs::path page = mirror_server().dir / "m" / "pypi" / "simple" / "yapf" / "index.html";
    REQUIRE(fs::exists(page));
    ::utime(page.c_str(), nullptr);
    auto again = resolved(b);
    CHECK(again["reused"] == false);
    CHECK(read_file(b.lock_path) == lock);   // same content, so the same lock
    // And now it is current again.
    CHECK(resolved(b)["reused"] == true);
}

TEST_CASE("the reused lock is proved again: a memo whose lock misses a package the spec needs is not used") {
    auto b = bevformer("reuse-proof");
    resolved(b);
    std::string lock = read_file(b.lock_path);
    // The memo holds the lock it vouches for; drop numpy from it, keeping the file's sha256.
    fs::path memo = envlock::memo_path(b.dir / "cache", b.lock_path);
    REQUIRE(fs::exists(memo));
    auto j = nlohmann::json::parse(read_file(memo));
    auto& packages = j["lock"]["packages"];
    auto before = packages.size();
    for (auto it = packages.begin(); it != packages.end(); ++it)
        if ((*it)[2] == "numpy") {
            packages.erase(it);
            break;
        }
    REQUIRE(packages.size() == before - 1);
    write_file(memo, j.dump());
    auto again = resolved(b);
    CHECK(again["reused"] == false);
    CHECK(read_file(b.lock_path) == lock);
}

TEST_CASE("a memo without its list of documents read is damaged, not a resolve that read nothing: it is not used") {
    auto b = bevformer("reuse-damaged");
    resolved(b);
    fs::path memo = envlock::memo_path(b.dir / "cache", b.lock_path);
    REQUIRE(fs::exists(memo));
    auto j = nlohmann::json::parse(read_file(memo));
    REQUIRE(j.contains("read"));
    j.erase("read");
    write_file(memo, j.dump());
    CHECK(resolved(b)["reused"] == false);
    CHECK(resolved(b)["reused"] == true);   // the solve wrote a sound memo again
}

TEST_CASE("--update, an edited lock and a changed target are solved, not reused") {
    auto b = bevformer("reuse-inputs");
    resolved(b);
    CHECK(resolved(b, {"--update", "yapf"})["reused"] == false);
    CHECK(resolved(b)["reused"] == true);
    // A target edit changes the content hash.
    write_file(b.dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "535.104.05", "12.2"));
    CHECK(resolved(b)["reused"] == false);
    // A lock edited by hand no longer matches the memo's bytes: read and solved in full.
    std::string text = read_file(b.lock_path);
    write_file(b.lock_path, text + "\n");
    CHECK(resolved(b)["reused"] == false);
}

TEST_CASE("the memo's JSON copy of a lock reads back to the same lock, byte for byte") {
    auto b = bevformer("reuse-json");
    resolved(b);
    std::string text = read_file(b.lock_path);
    envlock::Lock lock = envlock::read_lock(text, b.lock_path);
    envlock::LockVerified v{"2026-11-24T05:40:12Z", "passed", "11.1.105", "/usr/local/cuda/bin/nvcc", "/usr/bin/g++ 10.4.0",
                            {"sm_86"}, "1.9.1+cu111", {}};
    lock.verified = v;
    auto round = envlock::lock_from_json(nlohmann::json::parse(envlock::lock_to_json(lock).dump()));
    CHECK(envlock::write_lock(round) == envlock::write_lock(lock));
    REQUIRE(round.verified.has_value());
    CHECK(round.verified->torch == "1.9.1+cu111");
}
