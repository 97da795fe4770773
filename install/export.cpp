#include "install/export.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "fetch/url.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/wheel.hpp"

namespace envlock::install {

namespace {

// conda's own channel URL form -> the short name users write ("https://conda.anaconda.org/conda-forge").
std::string channel_name(const std::string& channel) {
    for (const char* host : {"https://conda.anaconda.org/", "http://conda.anaconda.org/"}) {
        std::string h = host;
        if (channel.rfind(h, 0) == 0) {
            std::string rest = channel.substr(h.size());
            while (!rest.empty() && rest.back() == '/') rest.pop_back();
            if (rest.find('/') == std::string::npos) return rest;
        }
    }
    return channel;
}


std::string without_slash(std::string url) {
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
}

// The index a package came through: its channel is the project's page on a PEP 503 index
// (".../simple/<name>/"), a find-links page, or the index itself.
std::string index_of(const LockedPackage& p) {
    std::string c = without_slash(p.channel);
    std::string tail = "/" + p.name;
    if (c.size() > tail.size() && c.ends_with(tail)) return c.substr(0, c.size() - tail.size());
    return c;
}

}  // namespace

// The pip index options a lock's PyPI packages came through: the spec's indexes and find-links
// pages first, then any page a package names that the spec does not.
PipSources pip_sources(const Lock& lock) {
    PipSources s;
    s.indexes = lock.spec.indexes;
    s.find_links = lock.spec.find_links;
    auto listed = [](const std::vector<std::string>& list, const std::string& url) {
        return std::any_of(list.begin(), list.end(), [&](const std::string& u) { return without_slash(u) == without_slash(url); });
    };
    for (const auto& p : lock.packages) {
        if (p.kind != Ecosystem::pypi || p.channel.empty()) continue;
        if (listed(s.find_links, p.channel)) continue;
        bool page = p.channel.ends_with(".html") || p.channel.ends_with(".htm");
        std::string source = page ? p.channel : index_of(p);
        auto& list = page ? s.find_links : s.indexes;
        if (!listed(s.indexes, source) && !listed(s.find_links, source)) list.push_back(source);
    }
    return s;
}

namespace {

std::vector<std::string> pip_option_lines(const PipSources& s) {
    std::vector<std::string> out;
    for (size_t i = 0; i < s.indexes.size(); ++i) out.push_back((i == 0 ? "--index-url " : "--extra-index-url ") + s.indexes[i]);
    for (const auto& f : s.find_links) out.push_back("--find-links " + f);
    return out;
}

// "torch==1.9.1+cu111", or "name @ url" for a file no index offered by name (a direct URL).
std::string pip_pin(const LockedPackage& p) {
    if (p.channel.empty() && !p.url.empty()) return p.name + " @ " + p.url;
    return p.name + "==" + p.version;
}

std::string yaml_scalar(const std::string& s) {
    bool plain = !s.empty() && s.find(": ") == std::string::npos && s.find(" #") == std::string::npos &&
                 std::string("-?:,[]{}#&*!|>'\"%@`").find(s[0]) == std::string::npos && s.back() != ':';
    if (plain) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out.push_back('\\');
        out.push_back(c);
    }
    return out + "\"";
}

std::string header(const Lock& lock, std::string_view lock_name, const char* what) {
    std::string platform;
    for (const auto& t : lock.targets) platform += (platform.empty() ? "" : ", ") + t.name + " (" + t.target.platform + ")";
    return std::string("# ") + what + ", exported by envlock from " + std::string(lock_name) +
           (lock.spec.name.empty() ? "" : " (" + lock.spec.name + ")") + "\n" +
           "# targets: " + (platform.empty() ? "none" : platform) + "; content-hash " + lock.content_hash + "\n";
}

// The Python and platform a lock's PyPI files are for: it holds one file per release, the one
// its target installs, so pip on another Python or platform finds no file with a listed hash.
std::string valid_for(const Lock& lock) {
    std::string python;
    for (const auto& p : lock.packages)
        if (p.kind == Ecosystem::conda && p.name == "python") python = p.version;
    if (python.empty() && lock.python) python = lock.python->version;
    std::string where;
    for (const auto& t : lock.targets)
        where += (where.empty() ? "" : ", ") + t.target.platform + (t.target.glibc.empty() ? "" : " (glibc " + t.target.glibc + ")");
    return "# Valid for Python " + (python.empty() ? std::string("(not recorded)") : python) + " on " + (where.empty() ? "linux-64" : where) +
           ": each release's hash is that of the file this target installs, so pip on another Python or\n"
           "# platform reports a hash mismatch; resolve for that machine (envlock resolve --python X.Y --target FILE).\n";
}

std::string export_requirements(const Lock& lock, std::string_view lock_name, const RequirementsOptions& o) {
    std::string out = header(lock, lock_name, "pip requirements with hashes");
    const bool every_file = !o.files.empty();
    if (!every_file) out += valid_for(lock);
    else if (o.python.empty())
        out += "# Valid for any Python and platform the locked releases have a file for: every file's hash is listed.\n";
    else
        out += "# Valid for Python " + o.python + " on " + (o.platform.empty() ? std::string("linux-64") : o.platform) +
               ": the hashes of the files of each locked release that pip installs there.\n";
    out += "# Install with: pip install --no-deps --require-hashes -r <this file>\n";
    std::vector<std::string> conda, sources;
    for (const auto& p : lock.packages) {
        if (p.kind == Ecosystem::conda) conda.push_back(p.name + " " + p.version);
        if (p.kind == Ecosystem::source) sources.push_back(p.name + " @ git+" + p.url + "@" + p.rev);
    }
    if (!conda.empty()) {
        out += "# These come from conda in the lock and are not listed here (pip cannot install them):\n#  ";
        for (const auto& c : conda) out += " " + c + ";";
        out.back() = '\n';
    }
    for (const auto& line : pip_option_lines(pip_sources(lock))) out += line + "\n";
    for (const auto& p : lock.packages) {
        if (p.kind != Ecosystem::pypi) continue;
        if (p.sha256.empty())
            throw InputError(std::string(lock_name) + ": " + p.name + " " + p.version + " has no sha256, which --require-hashes needs");
        std::vector<std::string> hashes{p.sha256};
        if (every_file) {
            auto it = o.files.find(pep508::normalize_name(p.name));
            hashes = release_hashes(p, it == o.files.end() ? IndexRecords{} : it->second, o.python, o.platform);
        }
        out += pip_pin(p);
        for (const auto& h : hashes) out += " \\\n    --hash=sha256:" + h;
        out += "\n";
    }
    if (!sources.empty()) {
        // pip refuses VCS requirements in hash-checking mode: they go after, by commit.
        out += "# Git sources, pinned by commit (pip cannot hash-check VCS checkouts); install after the above:\n";
        for (const auto& s : sources) out += "#   pip install --no-deps --no-build-isolation \"" + s + "\"\n";
    }
    return out;
}

std::string export_explicit(const Lock& lock, std::string_view lock_name) {
    if (std::none_of(lock.packages.begin(), lock.packages.end(), [](const LockedPackage& p) { return p.kind == Ecosystem::conda; }))
        throw InputError(std::string(lock_name) + ": the lock has no conda packages (a virtual environment's), so an @EXPLICIT "
                         "list would be empty; use --format requirements (or environment-yml, which pins its Python)");
    std::set<std::string> subdirs;
    for (const auto& p : lock.packages)
        if (p.kind == Ecosystem::conda && !p.subdir.empty() && p.subdir != "noarch") subdirs.insert(p.subdir);
    std::string platform = subdirs.size() == 1 ? *subdirs.begin() : (lock.targets.empty() ? "" : lock.targets[0].target.platform);
    std::string out = "# This file may be used to create an environment using:\n"
                      "# $ conda create --name <env> --file <this file>\n"
                      "# platform: " + platform + "\n" +
                      header(lock, lock_name, "conda explicit list") +
                      "# Each URL carries its md5 (read by every conda) or, where the lock has no md5, its sha256\n"
                      "# (conda >= 24.9).\n";
    std::vector<std::string> pypi;
    for (const auto& p : lock.packages)
        if (p.kind != Ecosystem::conda) pypi.push_back(p.kind == Ecosystem::pypi ? pip_pin(p) : p.name + " @ git+" + p.url + "@" + p.rev);
    if (!pypi.empty()) {
        out += "# Not conda packages (install with pip afterwards: envlock export --format requirements):\n";
        for (const auto& p : pypi) out += "#   " + p + "\n";
    }
    out += "@EXPLICIT\n";
    for (const auto& p : lock.packages) {
        if (p.kind != Ecosystem::conda) continue;
        std::string hash = !p.md5.empty() ? p.md5 : p.sha256;
        out += p.url + (hash.empty() ? "" : "#" + hash) + "\n";
    }
    return out;
}

std::string export_environment_yml(const Lock& lock, std::string_view lock_name) {
    std::string out = header(lock, lock_name, "environment.yml with exact pins");
    out += "name: " + yaml_scalar(lock.spec.name.empty() ? "envlock" : lock.spec.name) + "\n";
    std::vector<std::string> channels;
    for (const auto& c : lock.spec.channels) channels.push_back(channel_name(c));
    for (const auto& p : lock.packages)
        if (p.kind == Ecosystem::conda && !p.channel.empty()) {
            std::string c = channel_name(p.channel);
            if (std::find(channels.begin(), channels.end(), c) == channels.end()) channels.push_back(c);
        }
    if (!channels.empty()) {
        out += "channels:\n";
        for (const auto& c : channels) out += "  - " + yaml_scalar(c) + "\n";
    }
    out += "dependencies:\n";
    // A venv lock's Python is no conda package: pinned here, so conda makes the env on the same minor.
    bool conda_python = std::any_of(lock.packages.begin(), lock.packages.end(),
                                    [](const LockedPackage& p) { return p.kind == Ecosystem::conda && p.name == "python"; });
    if (!conda_python && lock.python && !lock.python->version.empty()) out += "  - " + yaml_scalar("python=" + lock.python->version) + "\n";
    bool has_pip_conda = false;
    std::vector<std::string> pip;
    for (const auto& p : lock.packages) {
        if (p.kind == Ecosystem::conda) {
            if (p.name == "pip") has_pip_conda = true;
            out += "  - " + yaml_scalar(p.name + "=" + p.version + (p.build.empty() ? "" : "=" + p.build)) + "\n";
        } else if (p.kind == Ecosystem::pypi) {
            pip.push_back(pip_pin(p));
        } else {
            pip.push_back("git+" + p.url + "@" + p.rev + "#egg=" + p.name);
        }
    }
    if (!pip.empty()) {
        if (!has_pip_conda) out += "  - pip\n";
        out += "  - pip:\n";
        for (const auto& line : pip_option_lines(pip_sources(lock))) out += "      - " + yaml_scalar(line) + "\n";
        for (const auto& p : pip) out += "      - " + yaml_scalar(p) + "\n";
    }
    return out;
}

}  // namespace

ExportFormat parse_export_format(std::string_view name) {
    if (name == "requirements") return ExportFormat::requirements;
    if (name == "conda-explicit") return ExportFormat::conda_explicit;
    if (name == "environment-yml") return ExportFormat::environment_yml;
    throw InputError("export: unknown format '" + std::string(name) + "'; expected requirements, conda-explicit or environment-yml");
}

std::vector<std::string> release_hashes(const LockedPackage& p, const IndexRecords& files, const std::string& python,
                                        const std::string& platform) {
    auto locked_version = pep440::Version::try_parse(p.version);
    std::vector<wheel::Tag> tags;
    if (!python.empty()) tags = wheel::compatible_tags(python, platform.empty() ? "linux-64" : platform, "");
    std::vector<std::string> out;
    const std::string locked_file = p.url.substr(p.url.rfind('/') + 1);
    bool locked_fits = python.empty();
    for (const auto& r : files) {
        auto v = pep440::Version::try_parse(r.version);
        if (!v || !locked_version || !(*v == *locked_version) || r.yanked) continue;
        bool is_wheel = r.filename.ends_with(".whl");
        if (!python.empty() && !r.requires_python.empty()) {
            try {
                if (!pep440::SpecifierSet::parse(r.requires_python).contains(pep440::Version::parse(python), true)) continue;
            } catch (const InputError&) {
            }
        }
        if (!python.empty() && is_wheel) {
            try {
                if (wheel::best_tag_rank(wheel::WheelName::parse(r.filename), tags) < 0) continue;
            } catch (const InputError&) {
                continue;
            }
        }
        std::string hash = r.sha256;
        if (hash.empty() && fetch::is_file_url(r.url)) {
            std::ifstream in(fetch::file_url_path(r.url), std::ios::binary);
            std::stringstream bytes;
            bytes << in.rdbuf();
            if (in) hash = sha256_hex(bytes.str());
        }
        if (hash.empty()) continue;
        if (r.filename == locked_file) locked_fits = true;
        if (std::find(out.begin(), out.end(), hash) == out.end()) out.push_back(hash);
    }
    if (out.empty() && !python.empty())
        throw UnmetError(p.name + " " + p.version + " has no file for Python " + python + " on " +
                         (platform.empty() ? std::string("linux-64") : platform) + " on its index");
    // The locked file first; it stays even where the index no longer lists it.
    if (locked_fits && !p.sha256.empty()) {
        std::erase(out, p.sha256);
        out.insert(out.begin(), p.sha256);
    }
    std::sort(out.begin() + (locked_fits && !p.sha256.empty() ? 1 : 0), out.end());
    return out;
}

std::string export_lock(const Lock& lock, ExportFormat format, std::string_view lock_name, const RequirementsOptions& requirements) {
    switch (format) {
        case ExportFormat::requirements: return export_requirements(lock, lock_name, requirements);
        case ExportFormat::conda_explicit: return export_explicit(lock, lock_name);
        case ExportFormat::environment_yml: return export_environment_yml(lock, lock_name);
    }
    return "";
}

}  // namespace envlock::install
