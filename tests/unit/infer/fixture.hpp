#pragma once
// Fixture repos for inference tests: a temp directory laid out like a paper repo, written by
// the test itself, removed afterwards.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "resolver/infer/infer.hpp"
#include "resolver/lock/spec.hpp"
#include "tests/support/scratch.hpp"

namespace envlock::test {

class FixtureRepo {
public:
    explicit FixtureRepo(const std::string& name) {
        base_ = scratch_dir("infer");
        root_ = base_ / name;
        std::filesystem::create_directories(root_);
    }
    ~FixtureRepo() {
        std::error_code ec;
        std::filesystem::remove_all(base_, ec);
    }
    FixtureRepo(const FixtureRepo&) = delete;
    FixtureRepo& operator=(const FixtureRepo&) = delete;

    void write(const std::string& rel, const std::string& content) const {
        auto p = root_ / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << content;
    }
    const std::filesystem::path& root() const { return root_; }
    Spec infer() const { return infer_spec(collect_repo_files(root_), root_.filename().string()); }

private:
    std::filesystem::path base_;
    std::filesystem::path root_;
};

inline const SpecRequirement* find_requirement(const Spec& s, const std::string& text) {
    for (const auto& r : s.requirements)
        if (r.text == text) return &r;
    return nullptr;
}

inline const SpecNote* find_note(const Spec& s, const std::string& kind, const std::string& text_part) {
    for (const auto& n : s.notes)
        if (n.kind == kind && n.text.find(text_part) != std::string::npos) return &n;
    return nullptr;
}

inline std::string where(const Provenance& p) { return p.file + ":" + std::to_string(p.line); }

}  // namespace envlock::test
