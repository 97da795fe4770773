// Where a repo says which Python it wants, in uv's order: .python-version first, then the
// packaging metadata's requires-python (python_requires), which constrains whatever Python the
// env gets (a venv's interpreter or conda's python), never a conda requirement of its own.
#include <doctest/doctest.h>

#include "fixture.hpp"

using namespace envlock;
using namespace envlock::test;

TEST_CASE(".python-version names the venv's Python, before requires-python, with its file and line") {
    FixtureRepo repo("pv");
    repo.write("pyproject.toml", "[project]\nname = \"mine\"\nrequires-python = \">=3.9\"\ndependencies = [\"click>=8\"]\n");
    repo.write(".python-version", "# pinned for the lab\n3.11\n");
    auto spec = repo.infer();
    CHECK(spec.python == "3.11");
    CHECK(where(spec.python_from) == ".python-version:2");
    auto* req = find_requirement(spec, "python>=3.9");
    REQUIRE(req);
    CHECK(req->ecosystem.empty());   // either: a constraint on the Python, not a conda package to fetch
    CHECK(where(req->from) == "pyproject.toml:3");
}

TEST_CASE("a .python-version in uv's other spellings is read; one that is no CPython version is a note, not a guess") {
    FixtureRepo cpython("pv2");
    cpython.write(".python-version", "cpython@3.12.4\n");
    cpython.write("requirements.txt", "click\n");
    CHECK(cpython.infer().python == "3.12.4");

    FixtureRepo pypy("pv3");
    pypy.write(".python-version", "pypy3.10\n");
    pypy.write("requirements.txt", "click\n");
    auto spec = pypy.infer();
    CHECK(spec.python.empty());
    REQUIRE(find_note(spec, "ignored", "pypy3.10"));
}

TEST_CASE("requires-python alone is the spec's Python constraint, remembered with where it came from") {
    FixtureRepo repo("rp");
    repo.write("pyproject.toml", "[project]\nname = \"mine\"\nrequires-python = \">=3.10\"\n");
    auto spec = repo.infer();
    CHECK(spec.python == ">=3.10");
    CHECK(where(spec.python_from) == "pyproject.toml:3");
    bool conda = false;
    for (const auto& r : spec.requirements) conda |= r.ecosystem == "conda";
    CHECK_FALSE(conda);
}
