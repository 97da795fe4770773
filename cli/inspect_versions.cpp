// `envlock inspect version|match|requirement|wheel`: the version semantics, one question at a
// time, for users who debug why something does or does not match.
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "resolver/specs/conda_filename.hpp"
#include "resolver/specs/conda_version.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/wheel.hpp"


namespace envlock::cli {
namespace {

const char* relation(int c) { return c < 0 ? "<" : (c > 0 ? ">" : "=="); }

int compare_versions(const std::string& a, const std::string& b, bool conda) {
    if (conda) {
        int c = envlock::conda::Version::parse(a).compare(envlock::conda::Version::parse(b));
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    auto c = pep440::Version::parse(a) <=> pep440::Version::parse(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

bool conda_match(const std::string& spec_text, const std::string& candidate) {
    auto spec = envlock::conda::MatchSpec::parse(spec_text);
    // Conda versions cannot contain '-', so a candidate with one is a dist string
    // "name-version-build", matched on name, version and build.
    if (candidate.find('-') != std::string::npos) return spec.matches(envlock::conda::DistName::parse(candidate));
    return spec.matches_version(envlock::conda::Version::parse(candidate));
}

// SPEC may be a bare specifier set (">=1.0,<2") or a whole requirement ("torch==1.9.0").
pep440::SpecifierSet pypi_specifier(const std::string& text) {
    auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos || std::string_view("<>=!~").find(text[first]) != std::string_view::npos)
        return pep440::SpecifierSet::parse(text);
    return pep508::Requirement::parse(text).specifier;
}

void add_version(CLI::App& inspect, int& exit_code) {
    struct Args { bool conda = false, json = false; std::string a, b; };
    auto args = std::make_shared<Args>();
    auto* cmd = inspect.add_subcommand("version", "Compare two versions; prints 'A < B', 'A == B' or 'A > B'");
    cmd->add_flag("--conda", args->conda, "Use conda's version ordering instead of PEP 440");
    cmd->add_flag("--json", args->json, "Print {\"a\", \"b\", \"relation\", \"semantics\"} as JSON");
    cmd->add_option("A", args->a, "First version")->required();
    cmd->add_option("B", args->b, "Second version")->required();
    cmd->callback([args] {
        const char* rel = relation(compare_versions(args->a, args->b, args->conda));  // may throw: print nothing then
        if (args->json)
            std::cout << nlohmann::json{{"a", args->a}, {"b", args->b}, {"relation", rel}, {"semantics", args->conda ? "conda" : "pep440"}}.dump(2)
                      << "\n";
        else
            std::cout << args->a << " " << rel << " " << args->b << "\n";
    });
}

void add_match(CLI::App& inspect, int& exit_code) {
    struct Args { bool conda = false, pre = false, json = false; std::string spec, candidate; };
    auto args = std::make_shared<Args>();
    auto* cmd = inspect.add_subcommand("match", "Does CANDIDATE satisfy SPEC? Prints 'match' (exit 0) or 'no match' (exit 1)");
    cmd->add_flag("--conda", args->conda, "SPEC is a conda MatchSpec; CANDIDATE a conda version or name-version-build");
    cmd->add_flag("--pre", args->pre, "Accept pre-releases even when SPEC names none (PyPI, like pip --pre)");
    cmd->add_flag("--json", args->json, "Print {\"spec\", \"candidate\", \"match\"} as JSON (the exit code is the same)");
    cmd->add_option("SPEC", args->spec, "PEP 440 specifier set (or requirement), or with --conda a MatchSpec")->required();
    cmd->add_option("CANDIDATE", args->candidate, "Version (or with --conda a dist string name-version-build)")->required();
    cmd->callback([args, &exit_code] {
        bool ok;
        if (args->conda) {
            ok = conda_match(args->spec, args->candidate);
        } else {
            auto set = pypi_specifier(args->spec);
            auto version = pep440::Version::parse(args->candidate);
            ok = set.contains(version, args->pre ? std::optional<bool>(true) : std::nullopt);
            // Say why when the pre-release rule alone decided it.
            if (!ok && version.is_prerelease() && !args->pre && set.contains(version, true))
                std::cerr << "note: " << args->candidate
                          << " is a pre-release; the specifier admits pre-releases only when it names one, when no final "
                             "release matches, or with --pre\n";
        }
        if (args->json)
            std::cout << nlohmann::json{{"spec", args->spec}, {"candidate", args->candidate}, {"match", ok}}.dump(2) << "\n";
        else
            std::cout << (ok ? "match" : "no match") << "\n";
        exit_code = ok ? 0 : 1;
    });
}

void add_requirement(CLI::App& inspect, int& exit_code) {
    struct Args { std::string text, python, platform; std::vector<std::string> extras; };
    auto args = std::make_shared<Args>();
    auto* cmd = inspect.add_subcommand("requirement", "Parse a PEP 508 requirement and print it as JSON");
    cmd->add_option("STRING", args->text, "The requirement, e.g. 'mmcv-full[all]>=1.3; python_version<\"3.9\"'")->required();
    cmd->add_option("--python", args->python, "Target Python version (e.g. 3.8): also say whether the marker applies");
    cmd->add_option("--platform", args->platform, "Target conda platform (default linux-64 with --python)");
    cmd->add_option("--extra", args->extras, "An extra requested of the declaring distribution (repeatable)");
    cmd->callback([args] {
        if (args->python.empty() && (!args->platform.empty() || !args->extras.empty()))
            throw InputError("--platform and --extra need --python: expected --python X.Y to evaluate the marker");
        auto req = pep508::Requirement::parse(args->text);
        auto j = req.to_json();
        if (!args->python.empty()) {
            auto env = pep508::MarkerEnv::for_target(args->python, args->platform.empty() ? "linux-64" : args->platform);
            j["marker-applies"] = req.applies(env, std::set<std::string>(args->extras.begin(), args->extras.end()));
        }
        std::cout << j.dump(2) << "\n";
    });
}

void add_wheel(CLI::App& inspect, int& exit_code) {
    struct Args { std::string filename, python, platform, glibc; };
    auto args = std::make_shared<Args>();
    auto* cmd = inspect.add_subcommand("wheel", "Parse a wheel file name (or URL) and print name, version and tags as JSON");
    cmd->add_option("FILENAME", args->filename, "e.g. torch-1.9.1%2Bcu111-cp38-cp38-linux_x86_64.whl")->required();
    cmd->add_option("--python", args->python, "Target Python version: also say whether and how well the wheel fits");
    cmd->add_option("--platform", args->platform, "Target conda platform (default linux-64 with --python)");
    cmd->add_option("--glibc", args->glibc, "Target glibc (macOS version on osx-*), e.g. 2.31");
    cmd->callback([args] {
        if (args->python.empty() && (!args->platform.empty() || !args->glibc.empty()))
            throw InputError("--platform and --glibc need --python: expected --python X.Y to rank the wheel's tags");
        auto w = wheel::WheelName::parse(args->filename);
        nlohmann::json j;
        j["name"] = w.name;
        j["normalized-name"] = w.normalized_name;
        j["version"] = w.version;
        j["build-tag"] = w.build_tag;
        j["tags"] = nlohmann::json::array();
        for (const auto& t : w.tags) j["tags"].push_back(t.str());
        if (!args->python.empty()) {
            auto tags = wheel::compatible_tags(args->python, args->platform.empty() ? "linux-64" : args->platform, args->glibc);
            int rank = wheel::best_tag_rank(w, tags);
            j["compatible"] = rank >= 0;
            j["tag-rank"] = rank >= 0 ? nlohmann::json(rank) : nlohmann::json(nullptr);
        }
        std::cout << j.dump(2) << "\n";
    });
}

}  // namespace

void add_inspect_versions(CLI::App& inspect, int& exit_code) {
    add_version(inspect, exit_code);
    add_match(inspect, exit_code);
    add_requirement(inspect, exit_code);
    add_wheel(inspect, exit_code);
}

}  // namespace envlock::cli
