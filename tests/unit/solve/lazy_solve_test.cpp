// The solve's side of lazy candidates (SolveInput::unread, SolveOutcome::widen): whatever window
// of each project's versions was read first, solving in rounds (the unread versions standing in,
// the windows the solve names doubled) ends in the lock the complete problem gives, byte for
// byte, or in its "unsatisfiable". The rounds here read as resolve_project's closure does: each
// project its newest WINDOW releases first, each widened requirement its newest matches.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/solve/solve.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"
#include "tests/unit/solve/records.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const std::string kTorchPage = "https://download.pytorch.org/whl/torch_stable.html";
const std::string kMmcvPage = "https://download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html";

IndexRecord with_python(IndexRecord r, const std::string& requires_python) {
    r.requires_python = requires_python;
    return r;
}

// Real-shaped PyPI files: torch builds of the find-links page, numpy releases whose newest need
// a newer Python than 3.8, scipy releases with their numpy ranges, mmcv-full beside the yapf
// releases an advisory separates, a chain whose newest links need what no index has.
IndexRecords pypi() {
    const std::string cp38 = "cp38-cp38-linux_x86_64", many = "cp38-cp38-manylinux_2_17_x86_64";
    IndexRecords out = {
        wheel_record("torch", "1.9.1+cu111", cp38, {"typing-extensions"}, kTorchPage),
        wheel_record("torch", "1.9.1+cu102", cp38, {"typing-extensions"}, kTorchPage),
        wheel_record("torch", "1.9.0+cu111", cp38, {"typing-extensions"}, kTorchPage),
        wheel_record("torch", "1.8.1+cu111", cp38, {"typing-extensions"}, kTorchPage),
        wheel_record("torch", "2.0.1+cu118", cp38, {"typing-extensions"}, kTorchPage),
        wheel_record("torchvision", "0.10.1+cu111", cp38, {"torch==1.9.1", "numpy"}, kTorchPage),
        wheel_record("torchvision", "0.10.0+cu111", cp38, {"torch==1.9.0", "numpy"}, kTorchPage),
        wheel_record("torchvision", "0.9.1+cu111", cp38, {"torch==1.8.1", "numpy"}, kTorchPage),
        wheel_record("typing-extensions", "4.5.0", "py3-none-any"),
        wheel_record("typing-extensions", "4.7.1", "py3-none-any"),
        wheel_record("typing-extensions", "4.12.2", "py3-none-any"),
        wheel_record("mmcv-full", "1.4.0", cp38, {"addict", "numpy", "yapf"}, kMmcvPage),
        wheel_record("addict", "2.4.0", "py3-none-any"),
        wheel_record("yapf", "0.32.0", "py3-none-any"),
        wheel_record("yapf", "0.40.1", "py3-none-any"),
        wheel_record("yapf", "0.40.2", "py3-none-any"),
        wheel_record("chain", "1.0", "py3-none-any", {"link>=1"}),
        wheel_record("chain", "2.0", "py3-none-any", {"link>=2"}),
        wheel_record("chain", "3.0", "py3-none-any", {"link>=3"}),
        wheel_record("link", "1.0", "py3-none-any"),
        wheel_record("link", "1.5", "py3-none-any"),
        wheel_record("link", "2.0", "py3-none-any", {"numpy<1.20"}),
    };
    for (const char* v : {"1.18.5", "1.19.0", "1.19.5", "1.20.3", "1.21.6", "1.22.4", "1.23.5", "1.24.4"})
        out.push_back(with_python(wheel_record("numpy", v, many), ">=3.7"));
    for (const char* v : {"1.25.2", "1.26.4", "2.0.2", "2.1.3"}) out.push_back(with_python(wheel_record("numpy", v, many), ">=3.9"));
    out.push_back(with_python(wheel_record("scipy", "1.5.4", many, {"numpy>=1.14.5"}), ">=3.6"));
    out.push_back(with_python(wheel_record("scipy", "1.7.3", many, {"numpy<1.23.0,>=1.16.5"}), ">=3.7"));
    out.push_back(with_python(wheel_record("scipy", "1.10.1", many, {"numpy<1.27.0,>=1.19.5"}), ">=3.8"));
    out.push_back(with_python(wheel_record("scipy", "1.11.4", many, {"numpy<1.28.0,>=1.21.6"}), ">=3.9"));
    return out;
}

SolveInput input_for(std::vector<SpecRequirement> reqs) {
    SolveInput in;
    in.spec.name = "lazy";
    in.spec.python = "3.8";
    in.spec.requirements = std::move(reqs);
    in.targets.push_back({"default", linux_machine("470.82.01", "11.4", {rtx3090()})});
    in.knowledge = knowledge::load_builtin();
    in.channels = {{"conda-forge", {conda_record("python", "3.8.12", "h12debd9_0", {"__glibc >=2.17"})}}};
    in.pypi = pypi();
    return in;
}

std::string outcome_text(const SolveOutcome& o) { return o.solved ? write_lock(o.lock) : "unsatisfiable"; }

// Rounds as the workflow runs them, starting from each project's newest `window` releases.
std::string lazily(const SolveInput& complete, size_t window, size_t& rounds) {
    std::map<std::string, std::vector<pep440::Version>> versions;   // newest first
    for (const auto& r : complete.pypi) versions[pep508::normalize_name(r.name)].push_back(pep440::Version::parse(r.version));
    for (auto& [name, list] : versions) {
        std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a > b; });
        list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    std::set<std::pair<std::string, std::string>> read;
    auto read_newest = [&](const std::string& name, const pep440::SpecifierSet* spec, size_t count) {
        std::set<std::string> releases;
        for (const auto& v : versions[name]) {
            if (spec && !spec->contains(v, true)) continue;
            std::string release = v.public_version().str();
            if (!releases.count(release) && releases.size() >= count) continue;
            releases.insert(release);
            read.insert({name, v.str()});
        }
    };
    for (const auto& [name, list] : versions) read_newest(name, nullptr, window);
    std::map<std::string, size_t> windows;
    for (rounds = 1; rounds < 50; ++rounds) {
        SolveInput in = complete;
        in.pypi.clear();
        for (const auto& r : complete.pypi)
            (read.count({pep508::normalize_name(r.name), pep440::Version::parse(r.version).str()}) ? in.pypi : in.unread).push_back(r);
        SolveOutcome out = solve(in);
        if (getenv("LAZY_DEBUG")) {
            std::string r, u;
            for (const auto& x : in.pypi) r += x.name + " " + x.version + ", ";
            for (const auto& x : in.unread) u += x.name + " " + x.version + ", ";
            MESSAGE("round " << rounds << " read: " << r << "\nunread: " << u << "\nsolved " << out.solved << " widen " << out.widen.size() << "\n" << out.explanation);
        }
        if (out.widen.empty()) return outcome_text(out);
        for (const auto& [name, specifier] : out.widen) {
            size_t& w = windows[name + "\t" + specifier];
            w = (w ? w : window) * 2;
            if (specifier.empty()) {
                read_newest(name, nullptr, w);
                continue;
            }
            auto spec = pep440::SpecifierSet::parse(specifier);
            read_newest(name, &spec, w);
        }
    }
    return "no end of rounds";
}

void same_answer_for_every_window(const std::vector<SpecRequirement>& reqs) {
    SolveInput complete = input_for(reqs);
    std::string expected = outcome_text(solve(complete));
    for (size_t window : {1, 2, 3}) {
        CAPTURE(window);
        size_t rounds = 0;
        CHECK(lazily(complete, window, rounds) == expected);
        MESSAGE("window " << window << ": " << rounds << " round(s)");
    }
}

}  // namespace

TEST_CASE("lazy rounds give the complete problem's lock whatever the first windows: torch and torchvision from the find-links page") {
    same_answer_for_every_window({pypi_req("torch==1.9.1", 1), pypi_req("torchvision", 2)});
    same_answer_for_every_window({pypi_req("torchvision<0.10.1", 1)});
}

TEST_CASE("lazy rounds: numpy's newest releases need a newer Python, scipy bounds numpy from both sides") {
    same_answer_for_every_window({pypi_req("scipy", 1)});
    same_answer_for_every_window({pypi_req("scipy", 1), pypi_req("numpy<1.22", 2)});
    same_answer_for_every_window({pypi_req("numpy", 1)});
}

TEST_CASE("lazy rounds: an advisory between mmcv-full and yapf 0.40.2 passes the newest yapf over") {
    same_answer_for_every_window({pypi_req("mmcv-full==1.4.0", 1), pypi_req("torch==1.9.0", 2)});
}

TEST_CASE("lazy rounds: the newest releases of a chain need what no index has, or a numpy another requirement excludes") {
    same_answer_for_every_window({pypi_req("chain", 1)});
    same_answer_for_every_window({pypi_req("chain", 1), pypi_req("numpy>=1.21", 2)});
    same_answer_for_every_window({pypi_req("chain>=3", 1)});   // unsatisfiable either way
}
