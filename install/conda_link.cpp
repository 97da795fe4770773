#include "install/conda_link.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <cctype>
#include <limits>
#include <set>

#include "fetch/url.hpp"
#include "install/conda_package.hpp"
#include "install/prefix_record.hpp"
#include "install/prefix_replace.hpp"
#include "install/wheel_install.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

namespace fs = std::filesystem;

std::string major_minor(const std::string& version) {
    auto first = version.find('.');
    if (first == std::string::npos) return version;
    auto second = version.find('.', first + 1);
    return version.substr(0, second);
}

bool dotted_identifier(const std::string& s) {
    if (s.empty()) return false;
    bool start = true;
    for (char c : s) {
        if (c == '.') {
            if (start) return false;
            start = true;
            continue;
        }
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
        if (start && std::isdigit(static_cast<unsigned char>(c))) return false;
        start = false;
    }
    return !start;
}

std::string trim(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t b = 0;
    while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    return s.substr(b);
}

struct EntryPoint {
    std::string command, module, func;
};

// "cmd = module:func" with conda's checks (C:conda/common/path/python.py L59-83).
EntryPoint parse_entry_point(const std::string& text, const std::string& package) {
    auto eq = text.find('='), colon = text.find(':');
    auto bad = [&](const std::string& why) {
        return InputError(package + ": info/link.json entry point '" + text + "': " + why);
    };
    if (eq == std::string::npos || colon == std::string::npos || colon < eq) throw bad("expected 'command = module:function'");
    EntryPoint ep{trim(text.substr(0, eq)), trim(text.substr(eq + 1, colon - eq - 1)), trim(text.substr(colon + 1))};
    if (ep.command.empty() || ep.command.front() == '.' || ep.command.find_first_of("/\\\n\r") != std::string::npos ||
        ep.command.find('\0') != std::string::npos)
        throw bad("the command name must be a plain file name");
    if (!dotted_identifier(ep.module) || !dotted_identifier(ep.func)) throw bad("module and function must be dotted names");
    return ep;
}

// The script conda, mamba and rattler all write for a noarch entry point
// (C:conda/gateways/disk/create.py L97-109).
std::string entry_point_script(const std::string& shebang, const EntryPoint& ep) {
    std::string import_name = ep.func.substr(0, ep.func.find('.'));
    return shebang + "# -*- coding: utf-8 -*-\nimport re\nimport sys\n\nfrom " + ep.module + " import " + import_name +
           "\n\nif __name__ == '__main__':\n    sys.argv[0] = re.sub(r'(-script\\.pyw?|\\.exe)?$', '', sys.argv[0])\n"
           "    sys.exit(" + ep.func + "())\n";
}

std::string requested_spec(const Lock& lock, const std::string& name) {
    for (const auto& r : lock.spec.requirements) {
        if (r.ecosystem == "pypi") continue;
        std::string head = r.text.substr(0, r.text.find_first_of(" =<>!~[;"));
        std::string a = head, b = name;
        for (auto* s : {&a, &b})
            for (auto& c : *s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (a == b) return r.text;
    }
    return "";
}

}  // namespace

PythonInfo conda_python_info(const LockedPackage& python, const CacheEntry& cached) {
    PythonInfo info;
    info.version = python.version;
    info.major_minor = major_minor(python.version);
    info.executable = "bin/python" + info.major_minor;
    info.site_packages = "lib/python" + info.major_minor + "/site-packages";
    CondaPackageInfo pkg = read_conda_package(cached.tree());
    if (!pkg.python_site_packages_path.empty()) {
        // CEP 17: relative to the prefix, and it must not leave it.
        safe_join("/", pkg.python_site_packages_path);
        std::string sp = pkg.python_site_packages_path;
        while (!sp.empty() && sp.back() == '/') sp.pop_back();
        info.site_packages = sp;
    }
    return info;
}

std::size_t max_prefix_length(const CondaPackageInfo& info) {
    std::size_t limit = std::numeric_limits<std::size_t>::max();
    for (const auto& p : info.paths)
        if (!p.placeholder.empty() && p.file_mode == FileMode::binary) limit = std::min(limit, p.placeholder.size());
    return limit;
}

std::size_t max_prefix_length(const CacheEntry& cached) { return max_prefix_length(read_conda_package(cached.tree())); }

std::vector<std::string> conda_package_paths(const CondaPackageInfo& info, const PythonInfo& python) {
    const bool noarch_python = info.noarch == "python";
    std::vector<std::string> out;
    out.reserve(info.paths.size() + info.entry_points.size() + 1);
    for (const auto& p : info.paths)
        if (p.type != PathType::directory)
            out.push_back(noarch_python ? relocate_noarch_python(p.path, python.site_packages) : p.path);
    if (noarch_python)
        for (const auto& text : info.entry_points) out.push_back("bin/" + parse_entry_point(text, info.name).command);
    out.push_back("conda-meta/" + info.name + "-" + info.version + "-" + info.build + ".json");
    return out;
}

InstalledPackage install_conda_package(const PackageContext& ctx) {
    return install_conda_package(ctx, read_conda_package(ctx.cache->tree()));
}

InstalledPackage install_conda_package(const PackageContext& ctx, const CondaPackageInfo& info) {
    const LockedPackage& pkg = ctx.package;
    const fs::path tree = ctx.cache->tree();
    if (info.name != pkg.name || info.version != pkg.version || (!pkg.build.empty() && info.build != pkg.build))
        throw InputError(ctx.cache->filename + ": the package says it is " + info.name + " " + info.version + " " + info.build +
                         ", the lock says " + pkg.name + " " + pkg.version + " " + pkg.build);
    const bool noarch_python = info.noarch == "python";
    if (noarch_python && ctx.python.site_packages.empty())
        throw InputError(pkg.name + " is a noarch: python package, but the lock has no python to install it for");
    const std::string prefix = ctx.prefix.string();

    PrefixRecord rec;
    rec.name = info.name;
    rec.version = info.version;
    rec.build = info.build;
    rec.build_number = info.build_number;
    rec.channel = fetch::strip_userinfo(pkg.channel);
    rec.subdir = !pkg.subdir.empty() ? pkg.subdir : info.subdir;
    rec.fn = ctx.cache->filename;
    rec.url = fetch::strip_userinfo(pkg.url);
    rec.sha256 = pkg.sha256;
    rec.md5 = !pkg.md5.empty() ? pkg.md5 : archive_md5(*ctx.cache);
    std::error_code ec;
    rec.size = pkg.size ? pkg.size : fs::file_size(ctx.cache->archive(), ec);
    // The lock's depends reflect the index the solve saw (repodata patches); index.json may be older.
    rec.depends = !pkg.depends.empty() || info.depends.empty() ? pkg.depends : info.depends;
    rec.constrains = info.constrains;
    rec.license = info.license;
    rec.noarch = info.noarch;
    rec.track_features = info.track_features;
    rec.python_site_packages_path = info.python_site_packages_path;
    rec.timestamp = info.timestamp;
    rec.link_source = tree.string();
    rec.link_type = ctx.link_mode == LinkMode::hardlink ? 1 : ctx.link_mode == LinkMode::symlink ? 2 : 3;
    rec.package_tarball_full_path = ctx.cache->archive().string();
    rec.requested_spec = requested_spec(ctx.lock, pkg.name);

    InstalledPackage out;
    out.id = package_id(pkg);
    out.kind = "conda";
    out.name = pkg.name;
    out.version = pkg.version;
    out.noarch = info.noarch;

    // Paths are joined as strings (the manifest's were checked by read_conda_package, the
    // relocated ones are checked here): a std::filesystem::path per file was a tenth of a warm
    // install's user time.
    const std::string stage_dir = ctx.stage.string(), tree_dir = tree.string();
    std::vector<std::string> rels;
    rels.reserve(info.paths.size());
    for (const auto& p : info.paths) {
        rels.push_back(noarch_python ? relocate_noarch_python(p.path, ctx.python.site_packages) : p.path);
        check_relative_path(rels.back());
    }
    {
        // Every directory first, each once and parents first (a set sorts "a" before "a/b"),
        // so that each mkdir and each link below succeeds at its first try.
        std::set<std::string_view> dirs;
        for (const auto& rel : rels)
            for (size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1))
                dirs.insert(std::string_view(rel).substr(0, slash));
        dirs.insert("conda-meta");
        std::string dir;
        for (const auto& d : dirs) {
            dir.assign(stage_dir).append("/").append(d);
            if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) make_directories(dir);   // names the reason
        }
    }
    std::string dest, src;
    for (size_t i = 0; i < info.paths.size(); ++i) {
        const PackagePath& p = info.paths[i];
        const std::string& rel = rels[i];
        dest.assign(stage_dir).append("/").append(rel);
        src.assign(tree_dir).append("/").append(p.path);
        PrefixPath pp;
        pp.path = rel;
        pp.sha256 = p.sha256;
        pp.size_in_bytes = p.size;
        if (p.type == PathType::directory) {
            fs::create_directories(dest, ec);
            pp.path_type = "directory";
            rec.paths.push_back(std::move(pp));
            continue;
        }
        if (p.type == PathType::softlink) {
            std::string target = fs::read_symlink(src, ec).string();
            if (ec) throw InputError(tree.string() + ": " + p.path + " should be a symbolic link");
            make_symlink(target, dest);
            pp.path_type = "softlink";
            out.files.push_back({rel, "", 0, target});
        } else {
            pp.path_type = "hardlink";
            std::string sha;
            std::uint64_t size;
            if (!p.placeholder.empty()) {
                std::string data = read_whole_file(src);
                std::string replaced;
                try {
                    replaced = p.file_mode == FileMode::binary ? replace_binary_prefix(data, p.placeholder, prefix)
                                                               : replace_text_prefix(data, p.placeholder, prefix);
                } catch (const InputError& e) {
                    throw InputError(pkg.name + ": " + p.path + ": " + e.what());
                }
                struct stat st {};
                ::stat(src.c_str(), &st);
                write_new_file(dest, replaced, st.st_mode & 07777);
                sha = sha256_hex(replaced);
                size = replaced.size();
                pp.file_mode = p.file_mode == FileMode::binary ? "binary" : "text";
                pp.prefix_placeholder = p.placeholder;
            } else {
                const LinkMode mode = p.no_link ? LinkMode::copy : ctx.link_mode;
                if (mode != LinkMode::hardlink || ::link(src.c_str(), dest.c_str()) != 0) place_file(src, dest, mode);
                sha = !p.sha256.empty() ? p.sha256 : sha256_of_file(src);
                size = !p.sha256.empty() ? p.size : fs::file_size(src, ec);
            }
            pp.no_link = p.no_link;
            pp.sha256_in_prefix = sha;
            if (pp.sha256.empty()) pp.sha256 = sha;
            if (!pp.size_in_bytes) pp.size_in_bytes = size;
            out.files.push_back({rel, sha, size, ""});
        }
        rec.files.push_back(rel);
        rec.paths.push_back(std::move(pp));
    }

    if (noarch_python && !info.entry_points.empty()) {
        std::string shebang = python_shebang((ctx.prefix / ctx.python.executable).string());
        for (const auto& text : info.entry_points) {
            EntryPoint ep = parse_entry_point(text, pkg.name);
            std::string rel = "bin/" + ep.command;
            std::string script = entry_point_script(shebang, ep);
            write_new_file(ctx.stage / rel, script, 0755);
            std::string sha = sha256_hex(script);
            out.files.push_back({rel, sha, script.size(), ""});
            rec.files.push_back(rel);
            PrefixPath pp;
            pp.path = rel;
            pp.path_type = "unix_python_entry_point";
            pp.sha256 = pp.sha256_in_prefix = sha;
            pp.size_in_bytes = script.size();
            rec.paths.push_back(std::move(pp));
        }
    }

    if (noarch_python && ctx.compile) {
        // What conda does by default for noarch: python (CEP 20): its .py files compiled by the
        // env's own python, each .pyc recorded as a pyc_file path (no hash: python may rewrite it).
        std::vector<std::pair<std::string, std::string>> sources;
        const std::string site = ctx.python.site_packages + "/";
        for (const auto& rel : rels)
            if (rel.size() > 3 && rel.compare(rel.size() - 3, 3, ".py") == 0 && rel.rfind(site, 0) == 0)
                sources.emplace_back(stage_dir + "/" + rel, (ctx.prefix / rel).string());
        std::string python = (ctx.stage / (ctx.python.executable.empty() ? "bin/python" : ctx.python.executable)).string();
        for (const auto& pyc : compile_bytecode(sources, python, pkg.name + " " + pkg.version)) {
            if (pyc.rfind(stage_dir + "/", 0) != 0) continue;
            std::string rel = pyc.substr(stage_dir.size() + 1);
            out.files.push_back({rel, "", 0, ""});
            rec.files.push_back(rel);
            PrefixPath pp;
            pp.path = rel;
            pp.path_type = "pyc_file";
            rec.paths.push_back(std::move(pp));
        }
    }

    std::string meta_rel = "conda-meta/" + prefix_record_filename(rec);
    std::string meta = prefix_record_json(rec);
    write_new_file(ctx.stage / meta_rel, meta, 0644);
    out.files.push_back({meta_rel, sha256_hex(meta), meta.size(), ""});
    return out;
}

}  // namespace envlock::install
