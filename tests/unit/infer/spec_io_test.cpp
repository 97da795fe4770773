// The Spec's YAML form: hand-editable, deterministic, validated with line numbers.
#include <doctest/doctest.h>

#include "resolver/specs/errors.hpp"
#include "resolver/infer/infer.hpp"
#include "resolver/lock/spec_io.hpp"

using namespace envlock;

namespace {

Spec bevformer_like() {
    Spec s;
    s.name = "BEVFormer";
    s.inferred_from = {"docs/install.md"};
    s.python = "3.8";
    s.channels = {"pytorch", "conda-forge"};
    s.indexes = {"https://pypi.org/simple"};
    s.find_links = {"https://download.pytorch.org/whl/torch_stable.html"};
    s.requirements = {{"python 3.8.*", "", {}},
                      {"torch==1.9.1+cu111", "pypi", {"docs/install.md", 14}},
                      {"cudatoolkit=11.1", "conda", {"docs/install.md", 9}},
                      {"numpy<1.20", "", {"mmdetection3d/requirements/runtime.txt", 3}}};
    s.sources = {{"mmdet3d", "https://github.com/open-mmlab/mmdetection3d", "v0.17.1", {"docs/install.md", 30}, "python setup.py install"}};
    SpecExtension ext{"mmdet3d-ops", "mmdetection3d", "python setup.py develop", "mmdet3d.ops", {}};
    ext.cuda = true;
    s.extensions = {ext};
    s.env = {{"TORCH_CUDA_ARCH_LIST", "8.6"}, {"FORCE_CUDA", "1"}};
    s.allow_advisories = {"yapf-verify"};
    s.notes = {{"alternative", "pip install mmcv-full==1.4.0 -f https://x/index.html", "commented out", {"docs/install.md", 21}}};
    s.contradictions = {{"numpy",
                         {"numpy==1.20.0", "pypi", {"requirements.txt", 2}},
                         {"numpy<1.20.0", "pypi", {"mmdetection3d/requirements/runtime.txt", 3}},
                         "1.20.0 is not <1.20.0"}};
    return s;
}

std::string error_of(const std::string& yaml) {
    try {
        spec_from_yaml_text(yaml, "envlock.yaml");
    } catch (const InputError& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("spec YAML: writing then reading then writing gives the same bytes") {
    auto text = spec_to_yaml_text(bevformer_like());
    auto again = spec_to_yaml_text(spec_from_yaml_text(text, "envlock.yaml"));
    CHECK(again == text);
}

TEST_CASE("spec YAML: every field survives a round trip") {
    auto s = spec_from_yaml_text(spec_to_yaml_text(bevformer_like()), "x.yaml");
    auto want = bevformer_like();
    CHECK(s.name == want.name);
    CHECK(s.python == "3.8");
    CHECK(s.channels == want.channels);
    CHECK(s.find_links == want.find_links);
    REQUIRE(s.requirements.size() == 4);
    CHECK(s.requirements[1].text == "torch==1.9.1+cu111");
    CHECK(s.requirements[1].ecosystem == "pypi");
    CHECK(s.requirements[1].from.file == "docs/install.md");
    CHECK(s.requirements[1].from.line == 14);
    CHECK(s.requirements[3].ecosystem == "");
    CHECK(s.requirements[3].from.line == 3);
    REQUIRE(s.extensions.size() == 1);
    CHECK(s.extensions[0].cuda);
    CHECK(s.extensions[0].import == "mmdet3d.ops");
    CHECK(s.env.at("TORCH_CUDA_ARCH_LIST") == "8.6");
    REQUIRE(s.notes.size() == 1);
    CHECK(s.notes[0].from.line == 21);
    REQUIRE(s.contradictions.size() == 1);
    CHECK(s.contradictions[0].second.from.file == "mmdetection3d/requirements/runtime.txt");
}

TEST_CASE("spec YAML: the emitted text is the readable form the README shows") {
    auto text = spec_to_yaml_text(bevformer_like());
    CHECK(text.find("name: BEVFormer\n") == 0);
    CHECK(text.find("python: \"3.8\"") != std::string::npos);
    CHECK(text.find("channels: [pytorch, conda-forge]") != std::string::npos);
    CHECK(text.find("  - python 3.8.*\n") != std::string::npos);
    CHECK(text.find("{pypi: torch==1.9.1+cu111, from: docs/install.md:14}") != std::string::npos);
    CHECK(text.find("env: {FORCE_CUDA: \"1\", TORCH_CUDA_ARCH_LIST: \"8.6\"}") != std::string::npos);
}

TEST_CASE("spec YAML: a hand-written spec of plain strings reads") {
    auto s = spec_from_yaml_text(
        "spec:\n  name: mine\n  requirements: [python 3.8.*, torch==1.9.1, \"numpy<1.20\"]\n", "envlock.yaml");
    CHECK(s.name == "mine");
    REQUIRE(s.requirements.size() == 3);
    CHECK(s.requirements[2].text == "numpy<1.20");
    CHECK(s.requirements[2].ecosystem == "");
    CHECK(s.requirements[2].from.file == "");
}

TEST_CASE("spec YAML: a bad requirement names file, line and path") {
    auto err = error_of("spec:\n  name: x\n  requirements:\n    - a\n    - b\n    - c\n    - [d]\n");
    CHECK(err == "envlock.yaml:7: spec.requirements[3]: expected a string or a map with pypi:/conda:/any:");
}

TEST_CASE("spec YAML: a requirement map with two ecosystems is refused") {
    auto err = error_of("requirements:\n  - {pypi: torch, conda: pytorch}\n");
    CHECK(err.find("envlock.yaml:2: spec.requirements[0]: expected a string or a map with exactly one") == 0);
}

TEST_CASE("spec YAML: a misspelt key is named with the keys that are allowed") {
    auto err = error_of("name: x\nrequirement: [a]\n");
    CHECK(err.find("envlock.yaml:2: spec: unknown key 'requirement'") == 0);
}

TEST_CASE("spec YAML: channels must be a list") {
    auto err = error_of("name: x\nchannels: {a: b}\n");
    CHECK(err == "envlock.yaml:2: spec.channels: expected a list of strings");
}

TEST_CASE("spec YAML: a source without git: is refused at its line") {
    auto err = error_of("name: x\nsources:\n  - {name: mmdet3d, rev: v0.17.1}\n");
    CHECK(err == "envlock.yaml:3: spec.sources[0]: missing 'git'");
}

TEST_CASE("spec YAML: extension cuda must be a boolean") {
    auto err = error_of("extensions:\n  - {name: a, build: make, cuda: maybe}\n");
    CHECK(err == "envlock.yaml:2: spec.extensions[0].cuda: expected true or false");
}

TEST_CASE("spec YAML: a syntax error is an InputError with its line") {
    auto err = error_of("name: x\nrequirements: [a, b\n");
    CHECK(err.find("envlock.yaml:") == 0);
    CHECK(err.find("not valid YAML") != std::string::npos);
}

TEST_CASE("spec YAML: a scalar spec is refused") {
    CHECK(error_of("just text") == "envlock.yaml:1: spec: expected a map");
}

TEST_CASE("spec YAML: spec_to_yaml gives a node that reads back as the same spec") {
    auto s = bevformer_like();
    CHECK(spec_to_yaml_text(spec_from_yaml(spec_to_yaml(s), "x")) == spec_to_yaml_text(s));
}

TEST_CASE("spec YAML: emit_spec nests inside a caller's document") {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "version" << YAML::Value << 1 << YAML::Key << "spec" << YAML::Value;
    emit_spec(out, bevformer_like());
    out << YAML::EndMap;
    auto root = YAML::Load(out.c_str());
    auto s = spec_from_yaml(root["spec"], "envlock.yaml");
    CHECK(s.requirements.size() == 4);
}

TEST_CASE("spec YAML: values other readers would take for numbers or booleans are quoted") {
    Spec s;
    s.name = "x";
    s.env = {{"FORCE_CUDA", "1"}, {"FLAG", "yes"}};
    auto text = spec_to_yaml_text(s);
    CHECK(text.find("FORCE_CUDA: \"1\"") != std::string::npos);
    CHECK(text.find("FLAG: \"yes\"") != std::string::npos);
}

TEST_CASE("spec JSON: round trip keeps every field") {
    auto j = spec_to_json(bevformer_like());
    CHECK(j["requirements"][1]["from"]["line"] == 14);
    auto back = spec_from_json(j, "spec.json");
    CHECK(spec_to_yaml_text(back) == spec_to_yaml_text(bevformer_like()));
}

TEST_CASE("spec JSON: a bad ecosystem is named by path") {
    auto j = spec_to_json(bevformer_like());
    j["requirements"][0]["ecosystem"] = "npm";
    CHECK_THROWS_WITH_AS(spec_from_json(j, "spec.json"),
                         "spec.json: spec.requirements[0].ecosystem: expected \"pypi\", \"conda\" or \"\"", InputError);
}

TEST_CASE("provenance: file:line parses and formats") {
    auto p = parse_provenance("docs/install.md:14");
    CHECK(p.file == "docs/install.md");
    CHECK(p.line == 14);
    CHECK(format_provenance(p) == "docs/install.md:14");
    CHECK(parse_provenance("README.md").line == 0);
    CHECK(format_provenance({"README.md", 0}) == "README.md");
    CHECK(parse_provenance("C:weird").file == "C:weird");
}

TEST_CASE("spec YAML: a pypi requirement must be PEP 508, with the line of the entry") {
    auto err = error_of("requirements:\n  - {pypi: \"torch==>1.9\", from: docs/install.md:3}\n");
    CHECK(err.find("envlock.yaml:2: spec.requirements[0]: invalid requirement") == 0);
}

TEST_CASE("spec YAML: a conda requirement must be a MatchSpec; a plain string may be either") {
    CHECK(error_of("requirements:\n  - {conda: \"numpy >=1.19,,<\"}\n").find("envlock.yaml:2: spec.requirements[0]:") == 0);
    CHECK(error_of("requirements: [\"python 3.8.*\", \"numpy<1.20\", \"pytorch=1.9.0\"]\n") == "(no error)");
}

TEST_CASE("inference: text that is no requirement becomes an 'unreadable' note (which resolve refuses), never a spec that cannot be read") {
    RepoFiles repo;
    repo.files["requirements.txt"] = "numpy==1.19.5\ntorch==>1.9\n";
    auto s = infer_spec(repo, "x");
    REQUIRE(s.requirements.size() == 1);
    REQUIRE(s.notes.size() == 1);
    CHECK(s.notes[0].kind == "unreadable");
    CHECK(s.notes[0].text == "torch==>1.9");
    CHECK(format_provenance(s.notes[0].from) == "requirements.txt:2");
    CHECK_NOTHROW(spec_from_yaml_text(spec_to_yaml_text(s), "x.yaml"));
}

// Found by fuzz/lock under ASan (issue 20): the check for unknown keys held a reference to
// the temporary pair yaml-cpp's map iterator returns (stack-use-after-scope), so the key it
// named in the error was read from freed stack.
TEST_CASE("spec YAML: an unknown key of the spec map is named in the error") {
    try {
        spec_from_yaml_text("packages:\n", "envlock.yaml");
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("unknown key 'packages'") != std::string::npos);
    }
}

// With the target reader's check (issue 20, fuzz/target): a spec value whose escape yaml-cpp
// decodes to a lone byte ("\_" is U+00A0) is refused with its line, not written as bad JSON.
TEST_CASE("spec YAML: a value whose escape decodes to a byte that is not UTF-8 is refused") {
    try {
        spec_from_yaml_text("name: \"a\\_b\"\n", "envlock.yaml");
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("expected UTF-8 text") != std::string::npos);
    }
}

// Found by fuzz/requirements_txt, fuzz/setup_py and fuzz/infer_docs (issue 20): a checkout
// file with bytes that are not UTF-8 (a Latin-1 README) went into the spec as is, so
// `envlock spec --json` failed with an internal error and the written lock did not read back.
// Files are read as UTF-8, a bad byte as U+FFFD (Python's errors="replace").
TEST_CASE("a checkout whose files are not UTF-8 gives a spec that writes and reads back") {
    RepoFiles repo;
    repo.files["requirements.txt"] = "numpy==1.19.5\ntorch==1.9.1 # caf\xe9\n";
    repo.files["README.md"] = "# Install \xff\n\n```bash\npip install mmcv-full==1.4.0  # \x8b\n```\n";
    repo.files["setup.py"] = "from setuptools import setup\nsetup(name='d\xe9mo', install_requires=['yapf==0.30.0'])\n";
    Spec spec = infer_spec(repo, "repo");
    std::string json;
    CHECK_NOTHROW(json = spec_to_json(spec).dump());
    std::string yaml = spec_to_yaml_text(spec);
    CHECK(spec_to_yaml_text(spec_from_yaml_text(yaml, "envlock.yaml")) == yaml);
    auto package = read_package_requirements({{"setup.py", repo.files["setup.py"]}});
    CHECK_NOTHROW(nlohmann::json(package.name).dump());
    CHECK(package.requires_dist == std::vector<std::string>{"yapf==0.30.0"});
}

// Found by fuzz/infer_docs (issue 20, session 5): a README line "conda create … python=3.<bytes
// that are not UTF-8>" gave a note whose why quoted one byte of a multibyte character, and
// `envlock spec --json` stopped with an internal error (nlohmann refuses invalid UTF-8).
TEST_CASE("inference: a spec inferred from text that is not UTF-8 prints as JSON and YAML and reads back") {
    RepoFiles repo;
    repo.files["README.md"] = "```bash\nconda create -n x python=3.\xcf\xdf\xd2\x86\npip install -r\n```\n";
    auto s = infer_spec(repo, "x");
    std::string json;
    REQUIRE_NOTHROW(json = spec_to_json(s).dump());
    CHECK(spec_to_json(spec_from_json(nlohmann::json::parse(json), "spec.json")).dump() == json);
    CHECK(spec_to_yaml_text(spec_from_yaml_text(spec_to_yaml_text(s), "envlock.yaml")) == spec_to_yaml_text(s));
    bool option_noted = false;
    for (const auto& n : s.notes) option_noted = option_noted || (n.kind == "unreadable" && n.text == "-r");
    CHECK(option_noted);
}
