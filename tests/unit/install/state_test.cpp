// <prefix>/.envlock/state.json (install/installed.hpp): written straight to text for speed, it
// must stay the document nlohmann's dump(1) writes (sorted keys, one-space indent), so that
// states written before and after read the same and diff cleanly.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "install/installed.hpp"
#include "install/json_text.hpp"
#include "tests/unit/install/install_fixture.hpp"

using namespace envlock;
using namespace envlock::install;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What state_json wrote before it was written by hand: the reference for the bytes.
std::string reference_state_json(const PrefixState& s) {
    json j;
    j["envlock-state"] = 1;
    j["generation"] = s.generation;
    j["prefix"] = s.prefix;
    j["lock-content-hash"] = s.lock_hash;
    j["python"] = {{"version", s.python.version}, {"major-minor", s.python.major_minor},
                   {"site-packages", s.python.site_packages}, {"executable", s.python.executable}};
    json packages = json::array();
    for (const auto& p : s.packages) {
        json files = json::array();
        for (const auto& f : p.files) {
            json row = {f.path, f.sha256, f.size};
            if (!f.link_target.empty()) row.push_back(f.link_target);
            files.push_back(std::move(row));
        }
        json pj = {{"id", p.id}, {"kind", p.kind}, {"name", p.name}, {"version", p.version}, {"files", std::move(files)}};
        if (!p.noarch.empty()) pj["noarch"] = p.noarch;
        if (!p.build.empty()) pj["build"] = p.build;
        if (!p.channel.empty()) pj["channel"] = p.channel;
        packages.push_back(std::move(pj));
    }
    j["packages"] = std::move(packages);
    return j.dump(1) + "\n";
}

PrefixState sample_state() {
    PrefixState s;
    s.generation = "0123456789abcdef";
    s.prefix = "/home/u/proj/.envlock/default";
    s.lock_hash = "sha256:" + std::string(64, 'a');
    s.python = {"3.8.18", "3.8", "lib/python3.8/site-packages", "bin/python3.8"};
    InstalledPackage conda;
    conda.id = "conda:numpy=1.19.5=py38h0_0:" + std::string(64, 'b');
    conda.kind = "conda";
    conda.name = "numpy";
    conda.version = "1.19.5";
    conda.noarch = "python";
    conda.build = "py38h0_0";
    conda.channel = "conda-forge/linux-64";
    conda.files = {{"lib/python3.8/site-packages/numpy/__init__.py", std::string(64, 'c'), 1234, ""},
                   {"bin/f2py", "", 0, "../lib/f2py"},
                   {"share/doc/a \"quoted\" name\\with\tcontrols\x01.txt", std::string(64, 'd'), 7, ""},
                   {"share/doc/caf\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac.txt", "", 0, ""}};
    InstalledPackage venv;
    venv.id = "venv:python=3.8.18";
    venv.kind = "venv";
    venv.name = "python";
    venv.version = "3.8.18";
    InstalledPackage wheel;
    wheel.id = "pypi:yapf=0.40.1=:" + std::string(64, 'e');
    wheel.kind = "pypi";
    wheel.name = "yapf";
    wheel.version = "0.40.1";
    wheel.files = {{"lib/python3.8/site-packages/yapf-0.40.1.dist-info/RECORD", "", 812, ""}};
    s.packages = {conda, venv, wheel};
    return s;
}

}  // namespace

TEST_CASE("state.json is byte for byte what nlohmann's dump(1) writes: keys sorted, escapes, UTF-8, empty arrays") {
    PrefixState s = sample_state();
    CHECK(state_json(s) == reference_state_json(s));
    PrefixState empty;
    CHECK(state_json(empty) == reference_state_json(empty));
}

TEST_CASE("state.json reads back to the same state") {
    PrefixState s = sample_state();
    auto dir = test::make_temp_dir("state");
    test::write_bytes(dir / kStateFile, state_json(s));
    auto back = read_state(dir);
    REQUIRE(back);
    CHECK(state_json(*back) == state_json(s));
    REQUIRE(back->packages.size() == 3);
    CHECK(back->packages[0].files[1].link_target == "../lib/f2py");
    CHECK(back->packages[0].files[2].path == "share/doc/a \"quoted\" name\\with\tcontrols\x01.txt");
}

TEST_CASE("state.json refuses a path that is not UTF-8, as the json writer did") {
    PrefixState s = sample_state();
    s.packages[0].files[0].path = "lib/bad\xff.py";
    CHECK_THROWS(state_json(s));
}

// json_plain reads eight bytes at a time; every byte value at every offset of the word (and in
// the tail) must give nlohmann's own bytes, or the same refusal of invalid UTF-8.
TEST_CASE("a JSON string is written as nlohmann::json::dump writes it, for every byte at every offset") {
    for (int byte = 0; byte < 256; ++byte)
        for (size_t at = 0; at < 19; ++at) {
            std::string v(19, 'a');
            v[at] = static_cast<char>(byte);
            std::string expected, got;
            bool expected_throws = false, got_throws = false;
            try {
                expected = json(v).dump();
            } catch (const json::exception&) {
                expected_throws = true;
            }
            try {
                put_json_string(got, v);
            } catch (const json::exception&) {
                got_throws = true;
            }
            CAPTURE(byte);
            CAPTURE(at);
            CHECK(got_throws == expected_throws);
            if (!expected_throws) CHECK(got == expected);
        }
}

// A damaged state file is bad input (exit 2) naming the file and the way out, never a crash or a
// half-read state that would make install remove the wrong files.
TEST_CASE("a state file that is not a state, or whose rows are malformed, is refused naming it") {
    auto dir = test::make_temp_dir("state-bad");
    auto refused = [&](const std::string& text, const std::string& says) {
        test::write_bytes(dir / kStateFile, text);
        try {
            read_state(dir);
            FAIL("expected a refusal of " << text);
        } catch (const InputError& e) {
            std::string m = e.what();
            CAPTURE(m);
            CHECK(m.find((dir / kStateFile).string()) != std::string::npos);
            CHECK(m.find(says) != std::string::npos);
            CHECK(m.find("delete the prefix and install again") != std::string::npos);
        }
    };
    PrefixState s = sample_state();
    const std::string good = state_json(s);
    refused("", "not an envlock state file");
    refused("[1, 2]", "not an envlock state file");
    refused("{\"envlock-state\": 2}", "not an envlock state file");
    refused(good.substr(0, good.size() / 2), "not an envlock state file");   // torn
    json no_python = json::parse(good);
    no_python["python"] = json::array();
    refused(no_python.dump(1), "'python' is not an object");
    json bad_size = json::parse(good);
    bad_size["packages"][0]["files"][0][2] = -5;
    refused(bad_size.dump(1), "is not [path, sha256, size(, link target)]");
    json no_name = json::parse(good);
    no_name["packages"][1].erase("name");
    refused(no_name.dump(1), "malformed: no 'name'");
}
