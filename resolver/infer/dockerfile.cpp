// Dockerfiles as install docs: the instructions (read_dockerfile), and what each adds to the
// spec. RUN lines are shell, read like a doc's shell block; FROM names the base image (CUDA,
// python, torch); ENV keeps build settings; WORKDIR and COPY place the checkout in the image.
#include <cctype>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "resolver/infer/context.hpp"

namespace envlock::infer {

std::vector<DockerInstruction> read_dockerfile(std::string_view text) {
    std::vector<DockerInstruction> out;
    std::vector<std::string> lines;
    {
        std::string line;
        for (char c : text) {
            if (c == '\n') {
                lines.push_back(line);
                line.clear();
            } else if (c != '\r') {
                line += c;
            }
        }
        if (!line.empty()) lines.push_back(line);
    }
    auto trimmed = [](const std::string& s) {
        auto b = s.find_first_not_of(" \t");
        if (b == std::string::npos) return std::string();
        return s.substr(b, s.find_last_not_of(" \t") - b + 1);
    };
    for (std::size_t i = 0; i < lines.size(); ++i) {
        auto first = trimmed(lines[i]);
        if (first.empty() || first[0] == '#') continue;
        DockerInstruction ins;
        ins.line = static_cast<int>(i) + 1;
        auto space = first.find_first_of(" \t");
        ins.keyword = first.substr(0, space);
        for (auto& c : ins.keyword) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        std::string args = space == std::string::npos ? std::string() : trimmed(first.substr(space));
        // Continuation lines keep their backslashes and their own lines, so the shell reader
        // numbers each command by the line it starts on; comment lines inside are dropped
        // (as Docker does) but keep their place.
        while (!args.empty() && args.back() == '\\' && i + 1 < lines.size()) {
            auto next = trimmed(lines[++i]);
            args += "\n" + (!next.empty() && next[0] == '#' ? std::string("\\") : next);
        }
        ins.args = args;
        out.push_back(ins);
    }
    return out;
}

namespace {

// "--platform=linux/amd64 nvidia/cuda:11.3.1-devel-ubuntu20.04 AS base" -> the image reference.
std::string image_of(const std::string& args) {
    std::istringstream in(args);
    for (std::string word; in >> word;)
        if (word.rfind("--", 0) != 0) return word;
    return "";
}

}  // namespace

void Inference::base_image(const std::string& args, const Provenance& from) {
    auto ref = image_of(args);
    auto colon = ref.rfind(':');
    auto slash = ref.rfind('/');
    if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) {
        note("image", "FROM " + ref, "base image without a tag: what it holds changes over time", from);
        return;
    }
    auto repo_name = lowercase(ref.substr(0, colon));
    auto tag = ref.substr(colon + 1);
    std::smatch m;
    if (ends_with(repo_name, "nvidia/cuda") || ends_with(repo_name, "nvidia/cudagl")) {
        static const std::regex version(R"(^(\d+\.\d+)(\.\d+)?)");
        if (std::regex_search(tag, m, version)) {
            bool devel = contains(tag, "devel");
            note("image", "FROM " + ref,
                 "the image brings CUDA " + m[1].str() + (devel ? " with nvcc (devel)" : " runtime (no nvcc)") +
                     " and needs a driver that runs it; envlock picks the toolkit for the target machine",
                 from);
            used(from.file);
        }
    } else if (repo_name == "pytorch/pytorch" || ends_with(repo_name, "/pytorch/pytorch")) {
        // pytorch/pytorch:1.9.0-cuda11.1-cudnn8-devel
        static const std::regex torch(R"(^(\d+\.\d+(\.\d+)?)-cuda(\d+\.\d+))");
        if (std::regex_search(tag, m, torch)) {
            requirement({"torch==" + m[1].str(), "pypi", from});
            note("image", "FROM " + ref, "the image brings torch " + m[1].str() + " built for CUDA " + m[3].str(), from);
        }
    } else if (repo_name == "python" || ends_with(repo_name, "/python")) {
        static const std::regex python_tag(R"(^(\d+\.\d+))");
        if (std::regex_search(tag, m, python_tag)) {
            python(m[1].str(), from);
        }
    }
}

void Inference::dockerfile(const std::string& path, const std::string& context, const Provenance& via) {
    if (!followed.insert(path).second) return;
    // Docs that pin their own torch describe the install; a Dockerfile beside them is another
    // way to the same place, recorded but not merged (two stacks would contradict each other).
    bool alternative = false;
    for (const auto& r : spec.requirements) {
        auto key = project_key(r);
        if (key == "torch" && r.from.file != path) alternative = true;
    }
    DocState doc;
    doc.cwd = "/";
    std::string workdir = "/";
    for (const auto& ins : read_dockerfile(*repo.get(path))) {
        Provenance from{path, ins.line};
        const auto& k = ins.keyword;
        if (alternative) {
            if (k == "RUN" || k == "FROM")
                note("alternative", k + " " + ins.args.substr(0, ins.args.find('\n')),
                     "a Dockerfile the docs also offer (" + via.file + "); the docs' own install steps are used", from);
            continue;
        }
        if (k == "FROM") {
            base_image(ins.args, from);
            workdir = "/";
        } else if (k == "ENV") {
            auto cmds = shell_commands(ins.args, ins.line);
            if (cmds.empty()) continue;
            const auto& c = cmds.front();
            for (const auto& [name, value] : c.assignments) env_var(name, value, "ENV " + ins.args, from, true);
            if (c.assignments.empty() && !c.words.empty()) {   // legacy `ENV NAME value with spaces`
                std::string value;
                for (std::size_t i = 1; i < c.words.size(); ++i) value += (i > 1 ? " " : "") + c.words[i];
                env_var(c.words[0], value, "ENV " + ins.args, from, true);
            }
        } else if (k == "WORKDIR") {
            doc.cwd = workdir;
            workdir = doc.resolve(ins.args);
            if (workdir == "?") workdir = "/";
        } else if (k == "COPY" || k == "ADD") {
            auto cmds = shell_commands(ins.args, ins.line);
            if (cmds.empty()) continue;
            std::vector<std::string> parts;
            bool from_stage = false;
            for (const auto& w : cmds.front().words) {
                if (starts_with(w, "--from")) from_stage = true;
                if (!starts_with(w, "--")) parts.push_back(w);
            }
            if (from_stage || parts.size() < 2) continue;
            auto dest = parts.back();
            bool dest_dir = ends_with(dest, "/") || parts.size() > 2;
            doc.cwd = workdir;
            auto dest_abs = doc.resolve(dest);
            if (dest_abs == "?") continue;
            for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
                // COPY . /workspace puts the build context (the checkout, or docker/) at /workspace.
                auto src = join_path(context, parts[i]);
                if (src == context || has_files_under(src)) doc.copies[dest_abs] = src;
                else if (repo.has(src)) doc.copies[dest_dir ? join_path(dest_abs, filename_of(src)) : dest_abs] = src;
            }
        } else if (k == "RUN") {
            auto body = ins.args;
            if (!body.empty() && body[0] == '[') {   // exec form: RUN ["pip", "install", "x"]
                try {
                    std::string joined;
                    for (const auto& w : nlohmann::json::parse(body)) joined += (joined.empty() ? "" : " ") + w.get<std::string>();
                    body = joined;
                } catch (const std::exception&) {
                    continue;
                }
            }
            doc.cwd = workdir;   // every RUN starts in the WORKDIR; its `cd` ends with it
            for (const auto& cmd : shell_commands(body, ins.line)) {
                if (cmd.commented_out) continue;
                auto w = program(cmd);
                if (w.size() > 2 && (w[0] == "apt-get" || w[0] == "apt") && w[1] == "install") {
                    std::string pkgs;
                    for (std::size_t i = 2; i < w.size(); ++i)
                        if (!w[i].empty() && w[i][0] != '-') pkgs += (pkgs.empty() ? "" : " ") + w[i];
                    note("system", pkgs, "system packages the image installs with apt; envlock does not manage them", {path, cmd.line});
                    continue;
                }
                run(cmd, doc, {path, cmd.line});
            }
        }
    }
}

void Inference::pending_dockerfiles() {
    auto list = dockerfiles;
    if (list.empty() && spec.requirements.empty()) {
        // No doc step installs anything: a Dockerfile is then the repo's only install description.
        for (const char* candidate : {"Dockerfile", "docker/Dockerfile", "docker/dockerfile", "dockerfile"})
            if (repo.has(candidate)) {
                list.push_back({candidate, "", {candidate, 0}});
                break;
            }
    }
    for (const auto& d : list) dockerfile(d.path, d.context, d.via);
}

}  // namespace envlock::infer
