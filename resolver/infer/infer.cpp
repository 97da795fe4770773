// Inference: which files are followed, in which order, and how their pieces merge into a Spec.
//
// Order: the install docs' shell blocks first (they are what the authors ran), then the repo's
// own requirements.txt, packaging metadata and environment.yml when no doc step read them, then
// extension builds found by scanning (make.sh, setup.py with CUDAExtension, .cu directories).
#include <algorithm>
#include <cctype>
#include <sstream>

#include "resolver/infer/context.hpp"
#include "resolver/specs/utf8.hpp"
#include "resolver/lock/spec_io.hpp"

namespace envlock::infer {

bool Inference::is_self(const std::string& url) const {
    if (lowercase(repo_basename(url)) == lowercase(name)) return true;
    auto wanted = lowercase(normalize_git_url(url));
    for (const auto& remote : repo.remotes)
        if (lowercase(normalize_git_url(remote)) == wanted) return true;
    return false;
}

void Inference::used(const std::string& file) {
    if (std::find(spec.inferred_from.begin(), spec.inferred_from.end(), file) == spec.inferred_from.end())
        spec.inferred_from.push_back(file);
}

void Inference::add_unique(std::vector<std::string>& list, const std::string& value) {
    if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

void Inference::requirement(const SpecRequirement& r) {
    // A spec must read back: text that is no requirement in its ecosystem becomes a note.
    // `resolve` refuses a spec with such a note: its package would otherwise silently vanish.
    if (auto problem = requirement_problem(r)) {
        note("unreadable", r.text, "not a requirement envlock can read: " + *problem, r.from);
        return;
    }
    for (const auto& have : spec.requirements)
        if (have.text == r.text && have.ecosystem == r.ecosystem) return;
    spec.requirements.push_back(r);
    if (!r.from.file.empty()) used(r.from.file);
}

void Inference::note(const std::string& kind, const std::string& text, const std::string& why, const Provenance& from) {
    for (const auto& n : spec.notes)
        if (n.kind == kind && n.text == text && n.from.file == from.file && n.from.line == from.line) return;
    // A why is often an exception's message quoting the user's bytes, perhaps cut inside a
    // character; the spec is written as YAML and JSON, which need UTF-8 (found by fuzz/infer_docs).
    // A note names what it is about; the spec reader requires that text (an install step can
    // name an empty path: found by fuzz/requirements_txt).
    spec.notes.push_back({kind, text.empty() ? std::string("(empty)") : utf8::valid(text), utf8::valid(why), from});
}

void Inference::python(const std::string& constraint, const Provenance& from, const std::string& ecosystem) {
    if (spec.python.empty()) {
        spec.python = constraint;
        spec.python_from = from;
    }
    std::string text = "python";
    for (char c : constraint)
        if (c != ' ') text += c;
    if (!constraint.empty() && std::isdigit(static_cast<unsigned char>(constraint[0]))) text = "python=" + constraint;
    requirement({text, ecosystem, from});
}

// uv and pyenv read the interpreter from .python-version: its first line that is not a comment,
// "3.12", "3.12.4" or "cpython-3.12" / "cpython@3.12". It comes before requires-python (uv's order).
void Inference::python_version_file() {
    const std::string* text = repo.get(".python-version");
    if (!text) return;
    std::istringstream in(*text);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        auto begin = line.find_first_not_of(" \t\r");
        if (begin == std::string::npos || line[begin] == '#') continue;
        std::string v = line.substr(begin, line.find_last_not_of(" \t\r") + 1 - begin);
        for (const char* prefix : {"cpython-", "cpython@", "python", "py"})
            if (starts_with(lowercase(v), prefix) && v.size() > std::string(prefix).size() &&
                std::isdigit(static_cast<unsigned char>(v[std::string(prefix).size()])))
                v = v.substr(std::string(prefix).size());
        bool ok = !v.empty() && std::isdigit(static_cast<unsigned char>(v.front())) && std::isdigit(static_cast<unsigned char>(v.back())) &&
                  v.find('.') != std::string::npos &&
                  v.find_first_not_of("0123456789.") == std::string::npos && v.find("..") == std::string::npos;
        if (!ok) {
            note("ignored", line, "not a CPython version envlock can use (expected 3.12 or 3.12.4)", {".python-version", n});
            return;
        }
        spec.python = v;
        spec.python_from = {".python-version", n};
        used(".python-version");
        return;
    }
}

std::size_t Inference::source(const std::string& url, const std::string& source_name, const std::string& rev, const Provenance& from) {
    auto git = normalize_git_url(url);
    for (std::size_t i = 0; i < spec.sources.size(); ++i) {
        if (spec.sources[i].git == git) {
            if (spec.sources[i].rev.empty() && !rev.empty()) {
                spec.sources[i].rev = rev;
                spec.sources[i].from = from;
            }
            return i;
        }
    }
    spec.sources.push_back({source_name.empty() ? repo_basename(url) : source_name, git, rev, from, ""});
    used(from.file);
    return spec.sources.size() - 1;
}

void Inference::pip_item(const PipItem& item, const std::string& base_dir, const Provenance& from, int depth, const DocState* doc) {
    using K = PipItem::Kind;
    auto resolve = [&](const std::string& rel) { return doc ? doc->resolve(rel) : join_path(base_dir, rel); };
    switch (item.kind) {
        case K::requirement:
            requirement({item.value, "pypi", from});
            break;
        case K::include:
            requirements_file(resolve(item.value), from, false, depth + 1);
            break;
        case K::constraint:
            requirements_file(resolve(item.value), from, true, depth + 1);
            break;
        case K::find_links:
            if (contains(item.value, "://")) {
                add_unique(spec.find_links, item.value);
                used(from.file);
            } else {
                note("ignored", "--find-links " + item.value, "a local directory of the author's machine", from);
            }
            break;
        case K::index_url:
            if (std::find(spec.indexes.begin(), spec.indexes.end(), item.value) == spec.indexes.end())
                spec.indexes.insert(spec.indexes.begin(), item.value);
            used(from.file);
            break;
        case K::extra_index_url:
            if (spec.indexes.empty()) spec.indexes.push_back("https://pypi.org/simple");
            add_unique(spec.indexes, item.value);
            used(from.file);
            break;
        case K::vcs: {
            if (is_self(item.value)) {
                // `pip install git+<this repo>`: the checkout itself, as `pip install .` would.
                install_dir("", item.editable ? "pip install -e ." : "pip install .", from, doc);
                break;
            }
            if (repo_basename(item.value).empty()) {   // "git+" alone (found by fuzz/infer_docs)
                note("unreadable", item.value, "a VCS URL that names no repository", from);
                break;
            }
            auto i = source(item.value, item.egg, item.rev, from);
            if (spec.sources[i].install.empty()) spec.sources[i].install = item.editable ? "pip install -e ." : "pip install .";
            source_ops(i, doc && !current_text.empty() ? current_text : "pip install " + item.value, from);
            break;
        }
        case K::local: {
            auto dir = resolve(item.value);
            install_dir(dir, item.editable ? "pip install -e ." : "pip install .", from, doc);
            break;
        }
        case K::url:
            note("ignored", item.value, "a direct archive URL; envlock locks index packages and git sources", from);
            break;
        case K::ignored:
            break;
        case K::missing_value:
            note("unreadable", item.value, "an option without its argument; pip refuses it too", from);
            break;
    }
}

void Inference::requirements_file(const std::string& path, const Provenance& via, bool constraint, int depth) {
    if (depth > 10) return;
    if (path == "?" || !inside_repo(path) || !repo.has(path)) {
        note("missing", path, "referenced by an install step but not in the checkout", via);
        return;
    }
    if (!read_files.insert(path).second) return;
    used(path);
    auto base = parent_dir(path);
    for (const auto& item : read_requirements_txt(*repo.get(path))) {
        Provenance from{path, item.line};
        if (constraint && item.kind == PipItem::Kind::requirement) {
            note("constraint", item.value, "pip constraint (-c): limits the version if installed, does not require it",
                 from);
            continue;
        }
        pip_item(item, base, from, depth, nullptr);
    }
}

// One requirement or location from a requirements file, environment.yml or a pip command line.
bool Inference::has_files_under(const std::string& dir) const {
    if (dir.empty()) return !repo.files.empty();
    auto it = repo.files.lower_bound(dir + "/");
    return it != repo.files.end() && starts_with(it->first, dir + "/");
}

void Inference::install_dir(const std::string& dir, const std::string& command, const Provenance& from, const DocState* doc) {
    if (doc) {
        if (auto src = doc->source_of(dir)) {
            auto& s = spec.sources[src->first];
            if (s.install.empty()) s.install = src->second.empty() ? command : "cd " + src->second + " && " + command;
            // A source build of a project that compiles CUDA ops is an extension build too.
            if (src->second.empty()) source_ops(src->first, current_text.empty() ? command : current_text, from);
            // A clone that is not in the checkout: its install command is all we know.
            if (!has_files_under(dir)) return;
        }
    }
    if (dir == "?" || !inside_repo(dir)) return;
    if (!has_files_under(dir) && submodule(dir, command, from)) return;
    if (!installed_dirs.insert(dir).second) {
        // A second build of an already-built extension directory is another way to do the same.
        if (extension_dirs.count(dir) && !from.file.empty())
            note("alternative", command, "another build of " + in_field(dir) + "; the first one documented is used",
                 from);
        return;
    }
    package(dir, command, from, doc);
}

bool Inference::submodule(const std::string& dir, const std::string& command, const Provenance& from) {
    // .gitmodules: `[submodule "x"]` sections with `path = …` and `url = …`.
    const std::string* text = repo.get(".gitmodules");
    if (!text) return false;
    std::string path, url;
    std::istringstream in(*text);
    auto flush = [&]() -> bool {
        if (path.empty() || repo_basename(url).empty() || join_path("", path) != dir) return false;
        auto i = source(url, "", "", from);
        if (spec.sources[i].install.empty()) spec.sources[i].install = command;
        note("submodule", dir, "a git submodule the checkout does not hold (cloned without --recursive); "
                               "locked as a git source at the commit found at resolve time", from);
        source_ops(i, current_text.empty() ? command : current_text, from);
        return true;
    };
    for (std::string line; std::getline(in, line);) {
        auto t = trimmed(line);
        if (starts_with(t, "[")) {
            if (flush()) return true;
            path.clear();
            url.clear();
            continue;
        }
        auto eq = t.find('=');
        if (eq == std::string::npos) continue;
        auto key = t.substr(0, t.find_first_of(" =\t"));
        auto value = t.substr(t.find_first_not_of(" \t", eq + 1));
        if (key == "path") path = value;
        else if (key == "url") url = value;
    }
    return flush();
}

void Inference::package(const std::string& dir, const std::string& command, const Provenance& from, const DocState* doc) {
    auto at = [&](const char* file) { return dir.empty() ? std::string(file) : dir + "/" + file; };
    std::vector<std::pair<std::string, PackageInfo>> infos;
    if (auto* t = repo.get(at("pyproject.toml"))) infos.emplace_back(at("pyproject.toml"), read_pyproject(*t, at("pyproject.toml")));
    if (auto* t = repo.get(at("setup.cfg"))) infos.emplace_back(at("setup.cfg"), read_setup_cfg(*t, at("setup.cfg")));
    if (auto* t = repo.get(at("setup.py"))) infos.emplace_back(at("setup.py"), read_setup_py(*t, at("setup.py")));
    if (infos.empty() && !from.file.empty())
        note("ignored", command, "no setup.py, setup.cfg or pyproject.toml in " + in_field(dir), from);
    for (auto& [file, info] : infos) {
        bool contributed = false;
        for (auto& r : info.install_requires) {
            requirement(r);
            contributed = true;
        }
        for (const auto& [txt, line] : info.requirement_files) {
            auto path = join_path(dir, txt);
            if (repo.has(path)) requirements_file(path, {file, line}, false);
            contributed = true;
        }
        if (!info.python_requires.empty()) {
            python(info.python_requires, info.python_from);
            contributed = true;
        }
        for (auto& e : info.extras) note(e.kind, e.text, e.why, e.from);
        for (auto& b : info.build_requires)
            note("build", b.text, "build requirement; pip installs it in an isolated build environment", b.from);
        if (!info.name.empty() && doc) {
            if (auto src = doc->source_of(dir); src && src->second.empty()) spec.sources[src->first].name = info.name;
        }
        if (!info.extensions.empty()) {
            extension(dir, info, command, from.file.empty() ? Provenance{file, info.extension_line} : from);
            contributed = true;
        }
        if (contributed) used(file);
    }
    // A package of this checkout with no compiled code is still built and installed here
    // (EchoFusion's vendored evaluator): record it so the installer runs its command.
    bool in_source = doc && doc->source_of(dir);
    if (!infos.empty() && !extension_dirs.count(dir) && !in_source) {
        PackageInfo plain;
        for (const auto& [file, info] : infos)
            if (plain.name.empty()) plain.name = info.name;
        if (plain.name.empty()) plain.name = dir.empty() ? name : filename_of(dir);
        extension_dirs.insert(dir);
        spec.extensions.push_back({plain.name, in_field(dir), command, "",
                                   from.file.empty() ? Provenance{infos.front().first, 1} : from});
        used(spec.extensions.back().from.file);
    }
}

void Inference::extension(const std::string& dir, const PackageInfo& info, const std::string& command, const Provenance& from) {
    if (!extension_dirs.insert(dir).second) return;
    SpecExtension e;
    e.name = info.extensions.size() == 1 || info.name.empty() ? info.extensions.front().module : info.name;
    e.in = in_field(dir);
    e.build = command;
    for (std::size_t i = 0; i < info.extensions.size(); ++i)
        e.import += (i ? ", " : "") + info.extensions[i].module;
    e.cuda = info.cuda;
    e.from = from;
    spec.extensions.push_back(e);
    used(from.file);
}

void Inference::environment_file(const std::string& path, const Provenance& via) {
    if (!inside_repo(path) || !repo.has(path)) {
        note("missing", path, "referenced by an install step but not in the checkout", via);
        return;
    }
    if (!read_files.insert(path).second) return;
    auto env = read_environment_yml(*repo.get(path), path);
    used(path);
    // `conda env create` searches the file's channels, then `defaults`, unless the file lists
    // `nodefaults`.
    bool nodefaults = std::find(env.channels.begin(), env.channels.end(), "nodefaults") != env.channels.end();
    for (const auto& c : env.channels)
        if (c != "nodefaults") add_unique(spec.channels, c);
    if (!nodefaults) implied_defaults = true;
    for (const auto& r : env.conda) {
        if (starts_with(r.text, "python=") || starts_with(r.text, "python ")) {
            if (spec.python.empty()) {
                spec.python = r.text.substr(r.text.find_first_not_of("= ", 6));
                spec.python_from = r.from;
            }
        }
        requirement(r);
    }
    for (const auto& item : env.pip) pip_item(item, parent_dir(path), {path, item.line}, 0, nullptr);
}

void Inference::root_files() {
    if (repo.has("requirements.txt")) requirements_file("requirements.txt", {}, false);
    for (const char* env : {"environment.yml", "environment.yaml"})
        if (repo.has(env)) environment_file(env, {});
    if (!installed_dirs.count("") &&
        (repo.has("setup.py") || repo.has("pyproject.toml") || repo.has("setup.cfg"))) {
        installed_dirs.insert("");
        package("", "pip install -e .", {}, nullptr);
    }
}

void Inference::scan_extensions() {
    // make.sh scripts that run a setup.py build, then setup.py files that build torch extensions.
    for (const auto& [path, text] : repo.files) {
        if (filename_of(path) != "make.sh" || !contains(text, "setup.py")) continue;
        auto dir = parent_dir(path);
        if (installed_dirs.count(dir)) continue;
        if (auto* setup = repo.get(dir.empty() ? "setup.py" : dir + "/setup.py")) {
            auto info = read_setup_py(*setup, dir.empty() ? "setup.py" : dir + "/setup.py");
            if (!info.extensions.empty()) {
                installed_dirs.insert(dir);
                extension(dir, info, "sh make.sh", {path, 1});
            }
        }
    }
    for (const auto& [path, text] : repo.files) {
        if (filename_of(path) != "setup.py") continue;
        auto dir = parent_dir(path);
        if (installed_dirs.count(dir) || extension_dirs.count(dir)) continue;
        auto info = read_setup_py(text, path);
        if (info.extensions.empty()) continue;
        extension(dir, info, "python setup.py install", {path, info.extension_line});
    }
    // .cu sources that no build found above compiles.
    std::map<std::string, int> uncovered;
    for (const auto& [path, text] : repo.files) {
        if (!ends_with(lowercase(path), ".cu")) continue;
        bool covered = false;
        for (const auto& e : spec.extensions) {
            if (e.in == "." || starts_with(path, e.in + "/")) covered = true;
        }
        for (const auto& s : spec.sources)
            if (starts_with(path, s.name + "/")) covered = true;
        if (!covered) ++uncovered[parent_dir(path)];
    }
    for (const auto& [dir, count] : uncovered)
        note("ignored", in_field(dir),
             std::to_string(count) + " .cu file(s) that no setup.py or make.sh found here builds", {dir, 0});
}

void Inference::unreferenced_requirement_files() {
    for (const auto& [path, text] : repo.files) {
        auto file = filename_of(path);
        bool is_req = (starts_with(file, "requirements") && ends_with(file, ".txt")) ||
                      ((starts_with(path, "requirements/") || contains(path, "/requirements/")) && ends_with(file, ".txt"));
        if (is_req && !read_files.count(path))
            note("ignored", path, "not referenced by any install step envlock followed", {path, 0});
    }
}

void Inference::unpinned_sources() {
    for (const auto& s : spec.sources)
        if (s.rev.empty())
            note("unpinned", s.git, "git source without a tag or commit: the lock pins the commit found at resolve time",
                 s.from);
}

namespace {

struct DocLink {
    std::string text, target;   // target: a path in the repo ('/'-separated, normalized)
    int line = 0;
};

// Markdown links `[text](path)` and `[text]: path` of a page to files of the repo.
std::vector<DocLink> doc_links(const std::string& page, const std::string& markdown) {
    std::vector<DocLink> out;
    auto base = parent_dir(page);
    int line = 1;
    for (std::size_t i = 0; i < markdown.size(); ++i) {
        if (markdown[i] == '\n') ++line;
        if (markdown[i] != ']' || i + 1 >= markdown.size() || markdown[i + 1] != '(') continue;
        auto open = markdown.rfind('[', i);
        auto close = markdown.find(')', i + 2);
        if (open == std::string::npos || close == std::string::npos) continue;
        auto text = markdown.substr(open + 1, i - open - 1);
        auto target = markdown.substr(i + 2, close - i - 2);
        if (auto space = target.find(' '); space != std::string::npos) target = target.substr(0, space);   // [x](a.md "title")
        if (auto hash = target.find('#'); hash != std::string::npos) target = target.substr(0, hash);
        if (target.empty() || contains(target, "://") || starts_with(target, "mailto:")) continue;
        out.push_back({text, starts_with(target, "/") ? join_path("", target) : join_path(base, target), line});
    }
    return out;
}

bool install_link(const DocLink& link) {
    auto text = lowercase(link.text + " " + filename_of(link.target));
    // Not "requirement" ("GPU Requirements" is about hardware) nor "build" (building a dataset).
    for (const char* w : {"install", "setup", "set up", "environment", "getting started", "getting_started", "get_started",
                          "get started", "getting-started", "prerequisite", "dependenc", "quick start", "quickstart", "docker"})
        if (contains(text, w)) return true;
    return false;
}

// Install docs in the order a reader meets them: README, INSTALL, then docs/ about installing.
std::vector<std::string> install_docs(const RepoFiles& repo) {
    std::vector<std::string> readme, install, docs;
    for (const auto& [path, text] : repo.files) {
        auto lower = lowercase(path);
        bool top = path.find('/') == std::string::npos;
        bool markdown = ends_with(lower, ".md") || ends_with(lower, ".markdown") || lower == "install";
        if (!markdown) continue;
        if (top && starts_with(lower, "readme")) readme.push_back(path);
        else if (top && starts_with(lower, "install")) install.push_back(path);
        else if (starts_with(lower, "docs/")) {
            auto file = filename_of(lower);
            if (contains(file, "install") || contains(file, "get_started") || contains(file, "getting_started") ||
                contains(file, "setup") || contains(file, "quick"))
                docs.push_back(path);
        }
    }
    std::vector<std::string> out = readme;
    out.insert(out.end(), install.begin(), install.end());
    out.insert(out.end(), docs.begin(), docs.end());
    // Pages these link to about installing (README -> docs/INSTALL.md -> docs/env.md), two links deep,
    // each right after the first page that links to it.
    for (int depth = 0; depth < 2; ++depth) {
        std::vector<std::string> next;
        for (const auto& page : out) {
            next.push_back(page);
            for (const auto& link : doc_links(page, *repo.get(page))) {
                auto lower = lowercase(link.target);
                if (!ends_with(lower, ".md") && !ends_with(lower, ".markdown")) continue;
                if (!repo.has(link.target) || !install_link(link)) continue;
                if (std::find(out.begin(), out.end(), link.target) == out.end() &&
                    std::find(next.begin(), next.end(), link.target) == next.end())
                    next.push_back(link.target);
            }
        }
        out = next;
    }
    return out;
}

}  // namespace

}  // namespace envlock::infer

namespace envlock {

Spec infer_spec(const RepoFiles& given, const std::string& name) {
    // A spec is written as YAML and JSON, which hold UTF-8 only: a file's bytes that are not
    // UTF-8 (a Latin-1 README, found by fuzz/infer_docs) are read as U+FFFD, as Python's
    // decode(errors="replace") would, instead of failing later with an internal error.
    RepoFiles fixed;
    const RepoFiles& repo = infer::as_utf8(given, fixed);
    infer::Inference inf{repo, name, {}, {}, {}, {}, false, {}, {}, {}, {}, 0};
    inf.spec.name = name;
    auto docs = infer::install_docs(repo);
    for (const auto& doc : docs) inf.markdown(doc);
    // Dockerfiles the docs link to, then those they build, then a repo's only install description.
    for (const auto& doc : docs)
        for (const auto& link : infer::doc_links(doc, *repo.get(doc))) {
            auto name = infer::lowercase(infer::filename_of(link.target));
            if ((name == "dockerfile" || infer::starts_with(name, "dockerfile.") || infer::ends_with(name, ".dockerfile")) && repo.has(link.target))
                inf.dockerfiles.push_back({link.target, "", {doc, link.line}});
        }
    inf.pending_dockerfiles();
    inf.root_files();
    inf.scan_extensions();
    inf.unreferenced_requirement_files();
    inf.unpinned_sources();
    inf.openmmlab_templates();
    inf.prose_versions(docs);
    inf.python_version_file();
    // Implied defaults come last: every channel a command named explicitly ranks above them.
    if (inf.implied_defaults && std::find(inf.spec.channels.begin(), inf.spec.channels.end(), "defaults") == inf.spec.channels.end())
        inf.spec.channels.push_back("defaults");
    infer::find_contradictions(inf.spec);
    return inf.spec;
}

}  // namespace envlock
