// The post-solve self-check on its own: given a result, it names every requirement that does
// not hold. Results are built by hand from real records (the snapshots, read over HTTP through
// envlock's repodata reader), so each rule is seen failing; every solve in the suite runs the
// same check on its own result.
#include <doctest/doctest.h>

#include <httplib.h>

#include <algorithm>

#include "fetch/conda_repodata.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/solve/self_check.hpp"
#include "tests/unit/solve/records.hpp"
#include "tests/unit/solve/snapshot_channels.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

IndexRecords channel_records(const std::string& channel, const std::string& subdir = "linux-64") {
    const auto& snap = snapshot_channels();
    httplib::Client client("127.0.0.1", snap.server->port());
    auto res = client.Get("/" + channel + "/" + subdir + "/repodata.json");
    REQUIRE(res);
    REQUIRE(res->status == 200);
    return fetch::parse_repodata(res->body, snap.url(channel), channel);
}

const IndexRecord& record(const IndexRecords& records, const std::string& filename) {
    auto it = std::find_if(records.begin(), records.end(), [&](const IndexRecord& r) { return r.filename == filename; });
    REQUIRE_MESSAGE(it != records.end(), filename);
    return *it;
}

SolveInput input_with(std::vector<CondaChannelRecords> channels, std::vector<SpecRequirement> reqs,
                      Target target = linux_machine("470.82.01", "11.4", {rtx3090()})) {
    SolveInput in;
    in.spec.name = "self-check";
    in.spec.requirements = std::move(reqs);
    in.targets.push_back({"default", std::move(target)});
    in.knowledge = knowledge::load_builtin();
    in.channels = std::move(channels);
    return in;
}

bool names(const std::vector<SelfCheckViolation>& v, const std::string& requirement, const std::string& found) {
    return std::any_of(v.begin(), v.end(), [&](const SelfCheckViolation& x) {
        return x.requirement.find(requirement) != std::string::npos && x.found.find(found) != std::string::npos;
    });
}

SpecRequirement env_yml(const std::string& text, int line) { return {text, "conda", {"environment.yml", line}}; }

}  // namespace

TEST_CASE("a spec requirement the result lacks is named with its file and line") {
    auto index = channel_records("conda-index");
    auto in = input_with({{"conda-index", index}}, {env_yml("numpy=9.9", 3)});
    auto v = self_check(in, {}, "");
    CHECK(names(v, "spec: numpy=9.9 (environment.yml:3)", "the result has no numpy"));
    auto wrong = self_check(in, {record(index, "numpy-1.7.1-py27_0.tar.bz2")}, "2.7.5");
    CHECK(names(wrong, "spec: numpy=9.9", "numpy 1.7.1"));
}

TEST_CASE("a build string and an exact python pin of the spec are checked, not only the name") {
    auto cf = channel_records("conda-forge-py39");
    auto in = input_with({{"conda-forge-py39", cf}}, {env_yml("python 3.9.* *_73_pypy", 3), env_yml("python=3.9.18", 4)});
    auto cpython = std::find_if(cf.begin(), cf.end(), [](const IndexRecord& r) { return r.name == "python" && r.version == "3.9.19"; });
    REQUIRE(cpython != cf.end());
    auto v = self_check(in, {*cpython}, cpython->version);
    CHECK(names(v, "spec: python 3.9.* *_73_pypy (environment.yml:3)", "python 3.9.19"));
    CHECK(names(v, "spec: python=3.9.18 (environment.yml:4)", "python 3.9.19"));
}

TEST_CASE("every depends of every chosen package must hold: pytorch's cudatoolkit and python") {
    auto pt = channel_records("pytorch");
    auto in = input_with({{"pytorch", pt}}, {env_yml("pytorch 1.9.0", 3)});
    auto v = self_check(in, {record(pt, "pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2")}, "3.8.12");
    CHECK(names(v, "pytorch 1.9.0 (conda py3.8_cuda11.1_cudnn8.0.5_0) depends on cudatoolkit >=11.1,<11.2", "the result has no cudatoolkit"));
    CHECK(names(v, "depends on python >=3.8,<3.9.0a0", "the result has no python"));
}

TEST_CASE("conda's `features`: a chosen cpu build needs a package that tracks cpuonly") {
    auto pt = channel_records("pytorch");
    auto in = input_with({{"pytorch", pt}}, {});
    auto v = self_check(in, {record(pt, "torchvision-0.8.2-py37_cpu.tar.bz2")}, "3.7.10");
    CHECK(names(v, "has feature cpuonly", "no package of the result tracks it"));
}

TEST_CASE("constrains of a chosen package hold for every other chosen package") {
    auto cf = channel_records("conda-forge-py39");
    auto abi = std::find_if(cf.begin(), cf.end(), [](const IndexRecord& r) { return r.name == "python_abi" && r.build == "4_cp311"; });
    auto python = std::find_if(cf.begin(), cf.end(), [](const IndexRecord& r) { return r.name == "python" && r.version == "3.9.19"; });
    REQUIRE(abi != cf.end());
    REQUIRE(python != cf.end());
    REQUIRE_FALSE(abi->constrains.empty());
    auto in = input_with({{"conda-forge-py39", cf}}, {});
    auto v = self_check(in, {*abi, *python}, python->version);
    CHECK(names(v, "python_abi 3.11 (conda 4_cp311) constrains python 3.11", "python 3.9.19"));
}

TEST_CASE("strict channel priority: a name taken from a lower channel than the first that has it is a violation") {
    auto first = channel_records("conda-index");
    auto second = channel_records("conda-index2");
    auto python = std::find_if(second.begin(), second.end(), [](const IndexRecord& r) { return r.name == "zlib"; });
    REQUIRE(python != second.end());
    auto in = input_with({{"conda-index", first}, {"conda-index2", second}}, {});
    auto v = self_check(in, {*python}, "");
    CHECK(names(v, "comes from the first channel that has zlib (conda-index, strict channel priority)", "it comes from"));
}

TEST_CASE("the target's driver must run the CUDA of every chosen CUDA build") {
    auto pt = channel_records("pytorch");
    auto in = input_with({{"pytorch", pt}}, {}, linux_machine("440.33.01", "10.2", {rtx3090()}));
    auto v = self_check(in, {record(pt, "pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2")}, "3.8.12");
    CHECK(names(v, "needs a driver that runs CUDA 11.1", "driver 440.33.01"));
}

TEST_CASE("Requires-Dist of a chosen wheel, with the extras the spec asks for, must hold (PEP 508 `extra` marker)") {
    // requests 2.31.0's own Requires-Dist lines (two of them).
    IndexRecord requests = wheel_record("requests", "2.31.0", "py3-none-any",
                                        {"idna<4,>=2.5", "PySocks!=1.5.7,>=1.5.6; extra == \"socks\""});
    IndexRecord idna = wheel_record("idna", "3.4", "py3-none-any");
    auto with_extra = input_with({}, {{"requests[socks]==2.31.0", "pypi", {"requirements.txt", 2}}});
    auto v = self_check(with_extra, {requests, idna}, "3.8.18");
    CHECK(names(v, "requests 2.31.0 (pypi) requires PySocks!=1.5.7,>=1.5.6; extra == \"socks\"", "the result has no pysocks"));
    auto plain = input_with({}, {{"requests==2.31.0", "pypi", {"requirements.txt", 2}}});
    CHECK(self_check(plain, {requests, idna}, "3.8.18").empty());
    auto old_idna = self_check(plain, {requests, wheel_record("idna", "2.4", "py3-none-any")}, "3.8.18");
    CHECK(names(old_idna, "requests 2.31.0 (pypi) requires idna<4,>=2.5", "idna 2.4 (pypi)"));
}

TEST_CASE("extras are taken only from Requires-Dist lines whose marker holds (contourpy 1.3.0 asks itself for [bokeh,docs] under extra == \"mypy\")") {
    // contourpy 1.3.0's own lines (its METADATA, as the index serves it), beside matplotlib 3.9.2's.
    IndexRecord contourpy = wheel_record("contourpy", "1.3.0", "cp310-cp310-manylinux_2_17_x86_64",
                                         {"numpy>=1.23", "furo; extra == \"docs\"", "sphinx>=7.2; extra == \"docs\"",
                                          "bokeh; extra == \"bokeh\"", "selenium; extra == \"bokeh\"",
                                          "contourpy[bokeh,docs]; extra == \"mypy\"", "mypy==1.11.1; extra == \"mypy\"",
                                          "contourpy[test-no-images]; extra == \"test\"", "pytest; extra == \"test-no-images\""});
    IndexRecord matplotlib = wheel_record("matplotlib", "3.9.2", "cp310-cp310-manylinux_2_17_x86_64", {"contourpy>=1.0.1", "numpy>=1.23"});
    IndexRecord numpy = wheel_record("numpy", "2.1.3", "cp310-cp310-manylinux_2_17_x86_64");
    auto plain = input_with({}, {{"matplotlib==3.9.2", "pypi", {"requirements.txt", 1}}});
    CHECK(self_check(plain, {matplotlib, contourpy, numpy}, "3.10.15").empty());
    // Asked for [mypy], its line holds, and what [bokeh] and [docs] add must be there too.
    auto mypy = input_with({}, {{"matplotlib==3.9.2", "pypi", {"requirements.txt", 1}}, {"contourpy[mypy]", "pypi", {"requirements.txt", 2}}});
    auto v = self_check(mypy, {matplotlib, contourpy, numpy}, "3.10.15");
    CHECK(names(v, "contourpy 1.3.0 (pypi) requires mypy==1.11.1; extra == \"mypy\"", "the result has no mypy"));
    CHECK(names(v, "contourpy 1.3.0 (pypi) requires bokeh; extra == \"bokeh\"", "the result has no bokeh"));
    CHECK(names(v, "contourpy 1.3.0 (pypi) requires sphinx>=7.2; extra == \"docs\"", "the result has no sphinx"));
    CHECK(!names(v, "requires pytest", ""));
}

TEST_CASE("a spec line whose marker does not hold asks for none of its extras") {
    IndexRecord requests = wheel_record("requests", "2.31.0", "py3-none-any",
                                        {"idna<4,>=2.5", "PySocks!=1.5.7,>=1.5.6; extra == \"socks\""});
    IndexRecord idna = wheel_record("idna", "3.4", "py3-none-any");
    auto in = input_with({}, {{"requests==2.31.0", "pypi", {"requirements.txt", 1}},
                              {"requests[socks]; python_version < \"3\"", "pypi", {"requirements.txt", 2}}});
    CHECK(self_check(in, {requests, idna}, "3.8.18").empty());
}
