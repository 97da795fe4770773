// The recipes shipped in examples/ and embedded in the binary.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "resolver/specs/errors.hpp"
#include "resolver/infer/parts.hpp"
#include "resolver/infer/recipe.hpp"
#include "resolver/lock/spec_io.hpp"

using namespace envlock;

namespace {
const SpecRequirement* req(const Spec& s, const std::string& text) {
    for (const auto& r : s.requirements)
        if (r.text == text) return &r;
    return nullptr;
}
}  // namespace

TEST_CASE("recipes: the six documented repos are embedded and valid") {
    auto all = embedded_recipes();
    std::vector<std::string> names;
    for (const auto& r : all) names.push_back(r.name);
    CHECK(names == std::vector<std::string>{"BEVFormer", "Deformable-DETR", "detectron2", "EchoFusion", "Mask2Former",
                                            "mmdetection3d"});
    for (const auto& r : all) {
        CHECK_MESSAGE(r.rev.size() == 40, r.name);
        CHECK_MESSAGE(r.repo.rfind("https://github.com/", 0) == 0, r.name);
        CHECK_MESSAGE(!r.expected.empty(), r.name);
        CHECK_MESSAGE(r.spec.name == r.name, r.name);
        for (const auto& q : r.spec.requirements) CHECK_MESSAGE(!q.from.file.empty(), r.name << ": " << q.text);
    }
}

// The product prints a recipe's provenance (explanations, notes, the lock's spec): it cites the
// paper repo's files at `rev` or upstream URLs, never the developers' ../shared folder.
TEST_CASE("recipes: no recipe cites the shared folder; upstream files are cited as URL#Lnn") {
    std::filesystem::path examples = std::filesystem::path(ENVLOCK_SOURCE_DIR) / "examples";
    for (const auto& r : embedded_recipes()) {
        std::ifstream in(examples / r.name / "recipe.yaml");
        std::stringstream text;
        text << in.rdbuf();
        CHECK_MESSAGE(text.str().find("shared/") == std::string::npos, r.name);
        std::string spec = spec_to_yaml_text(r.spec);
        CHECK_MESSAGE(spec.find("shared/") == std::string::npos, r.name);
    }
    auto echo = load_recipe("EchoFusion");
    REQUIRE(echo);
    auto* numpy = req(echo->spec, "numpy<1.20.0");
    REQUIRE(numpy);
    CHECK(numpy->from.file == "https://github.com/open-mmlab/mmdetection3d/blob/v0.17.3/requirements/runtime.txt");
    CHECK(numpy->from.line == 5);
    CHECK(format_provenance(numpy->from) == "https://github.com/open-mmlab/mmdetection3d/blob/v0.17.3/requirements/runtime.txt#L5");
}

TEST_CASE("recipes: no recipe contradicts itself") {
    for (auto r : embedded_recipes()) {
        r.spec.contradictions.clear();
        infer::find_contradictions(r.spec);
        for (const auto& c : r.spec.contradictions) FAIL_CHECK(r.name << ": " << c.why);
    }
}

TEST_CASE("recipes: lookup ignores case") {
    auto r = load_recipe("bevformer");
    REQUIRE(r);
    CHECK(r->name == "BEVFormer");
    CHECK_FALSE(load_recipe("no-such-paper"));
}

TEST_CASE("recipes: BEVFormer is the documented install with mmdet3d v0.17.1") {
    auto r = load_recipe("BEVFormer");
    REQUIRE(r);
    CHECK(r->rev == "66b65f3a1f58caf0507cb2a971b9c0e7f842376c");
    auto* torch = req(r->spec, "torch==1.9.1+cu111");
    REQUIRE(torch);
    CHECK(torch->ecosystem == "pypi");
    CHECK(format_provenance(torch->from) == "docs/install.md:15");
    CHECK(req(r->spec, "numpy==1.19.5"));
    CHECK(req(r->spec, "numpy<1.20.0"));
    REQUIRE(r->spec.sources.size() == 2);
    CHECK(r->spec.sources[0].name == "mmdet3d");
    CHECK(r->spec.sources[0].rev == "v0.17.1");
    REQUIRE(r->spec.extensions.size() == 1);
    CHECK(r->spec.extensions[0].cuda);
}

TEST_CASE("recipes: detectron2 names its tag; mmdetection3d pins torch below 1.11") {
    auto d2 = load_recipe("detectron2");
    REQUIRE(d2);
    CHECK(d2->ref == "v0.6");
    CHECK(req(d2->spec, "setuptools<70"));
    auto mm = load_recipe("mmdetection3d");
    REQUIRE(mm);
    CHECK(mm->ref == "v0.17.1");
    CHECK(req(mm->spec, "pytorch<1.11"));
}

TEST_CASE("recipes: the files in examples/ are what is embedded") {
    std::filesystem::path examples = std::filesystem::path(ENVLOCK_SOURCE_DIR) / "examples";
    for (const auto& r : embedded_recipes()) {
        std::ifstream in(examples / r.name / "recipe.yaml");
        REQUIRE_MESSAGE(in, r.name);
        std::stringstream text;
        text << in.rdbuf();
        auto from_disk = recipe_from_yaml_text(text.str(), r.name);
        CHECK(spec_to_yaml_text(from_disk.spec) == spec_to_yaml_text(r.spec));
    }
}

TEST_CASE("recipes: a recipe without rev: is refused with its line") {
    CHECK_THROWS_WITH_AS(recipe_from_yaml_text("recipe: X\nrepo: https://github.com/a/b\nspec: {name: X}\n", "r.yaml"),
                         "r.yaml:1: missing 'rev'", InputError);
    CHECK_THROWS_WITH_AS(recipe_from_yaml_text("recipe: X\nrepo: u\nrev: abc\nspek: {}\n", "r.yaml"),
                         doctest::Contains("r.yaml:4: unknown key 'spek'"), InputError);
    CHECK_THROWS_WITH_AS(
        recipe_from_yaml_text("recipe: X\nrepo: u\nrev: abc\nspec:\n  requirements:\n    - [x]\n", "r.yaml"),
        "r.yaml:6: spec.requirements[0]: expected a string or a map with pypi:/conda:/any:", InputError);
}
