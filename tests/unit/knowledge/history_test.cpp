// The knowledge history: which rows a release changed, and what a lock resolved with the
// older facts is told about the rows it rests on.
#include <doctest/doctest.h>

#include <algorithm>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"

namespace kb = envlock::knowledge;

namespace {
const kb::Knowledge& builtin() {
    static const kb::Knowledge k = kb::load_builtin();
    return k;
}
}  // namespace

// ---------------------------------------------------------------- changes between knowledge versions

TEST_CASE("the knowledge history names every row the audit changed, with its source") {
    const auto& k = builtin();
    REQUIRE(!k.changes.empty());
    auto since = kb::changes_since(k, k.changes.front().replaces);
    REQUIRE(since);
    auto row = [&](const std::string& name) {
        return std::find_if(since->begin(), since->end(), [&](const kb::KnowledgeChange& c) { return c.row == name; });
    };
    auto gcc = row("host_compilers cuda=12.3");
    REQUIRE(gcc != since->end());
    CHECK(gcc->change == "gcc_max: 13 -> 12");
    CHECK(gcc->concerns == std::vector<std::string>{"cuda-12.3"});
    CHECK(gcc->source.find("gentoo") != std::string::npos);
    CHECK(row("advisories id=yapf-0.40.2-mmcv-full-config") != since->end());
    CHECK(row("torch_cpp_extension torch=2.7,2.8") != since->end());
    for (const auto& c : *since) CHECK_MESSAGE(!c.source.empty(), c.row);
    CHECK_FALSE(kb::changes_since(k, k.version));   // nothing replaced the current version yet
    CHECK_FALSE(kb::changes_since(k, std::string(64, '0')));
}

TEST_CASE("a lock resolved with the old facts is told which rows about it changed") {
    const auto& k = builtin();
    envlock::Lock lock;
    lock.knowledge_version = k.changes.front().replaces;
    lock.toolchain.nvcc = "12.3";
    envlock::LockedPackage yapf;
    yapf.name = "yapf";
    yapf.version = "0.40.2";
    lock.packages.push_back(yapf);
    auto report = kb::knowledge_change_report(k, lock);
    CHECK(report.find("the knowledge base changed (" + lock.knowledge_version + " -> " + k.version + ")") != std::string::npos);
    CHECK(report.find("host_compilers cuda=12.3: gcc_max: 13 -> 12") != std::string::npos);
    CHECK(report.find("advisories id=yapf-0.40.2-mmcv-full-config") != std::string::npos);
    CHECK(report.find("torch_releases") == std::string::npos);   // no torch in this lock
    lock.knowledge_version = std::string(64, 'f');
    CHECK(kb::knowledge_change_report(k, lock).find("not recorded") != std::string::npos);
}
