// `envlock verify` as a user runs it: one line per check, exit 1 with cause and fix when one
// fails; `--record` writes the lock's `verified:` block and leaves the content hash alone.
#include <nlohmann/json.hpp>

#include "resolver/lock/lock.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/unit/verify/verify_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

std::string lock_text_for(const std::string& nvcc, const std::string& nvcc_from) {
    Lock lock = verify_lock_with(nvcc, nvcc_from);
    lock.toolchain.cuda_arch_list = "8.6";
    lock.knowledge_version = builtin_knowledge().version;
    lock.content_hash = lock_content_hash(lock.spec, lock.targets, lock.knowledge_version);
    return write_lock(lock);
}

}  // namespace

TEST_CASE("the verified block is outside the content hash: adding or replacing it keeps every other byte") {
    std::string text = lock_text_for("11.1.105", "system:/usr/local/cuda-11.1");
    LockVerified v{"2026-11-24T05:40:12Z", "failed", "", "", "/usr/bin/g++ 12.2.0", {"sm_86"}, "", {"nvcc", "probe"}};
    std::string once = set_verified(text, v);
    CHECK(once.rfind(text, 0) == 0);
    CHECK(once.find("verified:\n  date: \"2026-11-24T05:40:12Z\"") != std::string::npos);
    v.result = "passed";
    v.failed.clear();
    std::string twice = set_verified(once, v);
    CHECK(twice.rfind(text, 0) == 0);
    CHECK(twice.find("failed") == std::string::npos);
    Lock back = read_lock(twice, "envlock.yaml");
    REQUIRE(back.verified);
    CHECK(back.verified->result == "passed");
    CHECK(back.verified->sm == std::vector<std::string>{"sm_86"});
    CHECK(back.content_hash == lock_content_hash(back.spec, back.targets, back.knowledge_version));
    CHECK(write_lock(back) == twice);   // the writer emits the same block
}

TEST_CASE("envlock verify on a lock that needs CUDA 11.1: exit 1, the failing line with cause and fix; --record keeps the hash") {
    TempDir dir;
    std::string text = lock_text_for("11.1.105", "system:/usr/local/cuda-11.1");
    write_text(dir.path / "envlock.yaml", text);
    auto r = run_envlock({"verify", dir.str("envlock.yaml"), "--record"}, {"NO_COLOR=1"});
    INFO(r.out, r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("FAIL nvcc: nvcc 11.1.105 (locked: system:/usr/local/cuda-11.1) is not on this machine") != std::string::npos);
    CHECK(r.out.find("     fix:   install the CUDA 11.1 toolkit") != std::string::npos);
    if (!system_nvcc().empty()) {
        CHECK(r.out.find("found instead: CUDA 13.0") != std::string::npos);
        CHECK(r.out.find(" at /usr/local/cuda") != std::string::npos);
    }
    std::string after = read_text(dir.path / "envlock.yaml");
    CHECK(after.rfind(text, 0) == 0);
    Lock back = read_lock(after, "envlock.yaml");
    REQUIRE(back.verified);
    CHECK(back.verified->result == "failed");
    CHECK(back.verified->failed.front() == "nvcc");
}

TEST_CASE("envlock verify with nvcc 13.0 here: toolchain and probe pass, exit 0, --json says the same") {
    if (system_nvcc().empty()) {
        MESSAGE("skipped: no nvcc at /usr/local/cuda on this machine");
        return;
    }
    TempDir dir;
    write_text(dir.path / "envlock.yaml", lock_text_for("13.0", "system:/usr/local/cuda"));
    auto r = run_envlock({"verify", dir.str("envlock.yaml"), "--json"});
    INFO(r.out, r.err);
    auto j = nlohmann::json::parse(r.out);
    bool probed = false;
    for (const auto& c : j["checks"]) {
        CHECK_MESSAGE(c["status"] != "failed", c.dump());
        if (c["check"] == "probe") probed = c["status"] == "passed";
    }
    CHECK(probed);
    CHECK(j["toolchain"]["cuda-arch-list"] == "8.6");
    CHECK(r.exit_code == (j["ok"].get<bool>() ? 0 : 1));
}

TEST_CASE("envlock verify: a --prefix that does not exist is bad input (exit 2)") {
    TempDir dir;
    write_text(dir.path / "envlock.yaml", lock_text_for("", ""));
    auto r = run_envlock({"verify", dir.str("envlock.yaml"), "--prefix", dir.str("nowhere")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("nowhere") != std::string::npos);
}
