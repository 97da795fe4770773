#include "install/wheel_install.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "fetch/files.hpp"
#include "fetch/process.hpp"
#include "install/record.hpp"
#include "install/wheel_archive.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {

namespace fs = std::filesystem;

namespace {

// ---- small text helpers -------------------------------------------------------------------

std::string trim(std::string_view s) {
    size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return "";
    size_t e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}


std::string header(const std::multimap<std::string, std::string>& h, const std::string& key) {
    // Field names are case-insensitive (RFC 822), as Python's email parser treats them.
    for (const auto& [k, v] : h)
        if (k.size() == key.size() && std::equal(k.begin(), k.end(), key.begin(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
            }))
            return v;
    return "";
}

bool is_dotted_identifier(std::string_view s) {
    if (s.empty() || s.front() == '.' || s.back() == '.') return false;
    bool after_dot = true;
    for (char c : s) {
        if (c == '.') {
            if (after_dot) return false;
            after_dot = true;
            continue;
        }
        bool alpha = std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
        bool digit = std::isdigit(static_cast<unsigned char>(c));
        if (!alpha && !(digit && !after_dot)) return false;
        after_dot = false;
    }
    return true;
}

// ---- entry points (the entry points spec: INI, '=' only, case-sensitive names) -------------

struct EntryPoint {
    std::string name, module, attr;
    bool gui = false;
};

std::vector<EntryPoint> parse_entry_points(std::string_view text, const std::string& source) {
    std::vector<EntryPoint> out;
    std::string section;
    size_t pos = 0;
    int line_no = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string line = trim(text.substr(pos, end - pos));
        pos = end + 1;
        ++line_no;
        if (line.empty() || line[0] == '#' || line[0] == ';') {
            if (end == text.size()) break;
            continue;
        }
        if (line.front() == '[' && line.back() == ']') {
            section = trim(std::string_view(line).substr(1, line.size() - 2));
        } else if (section == "console_scripts" || section == "gui_scripts") {
            size_t eq = line.find('=');
            if (eq == std::string::npos)
                throw InputError(source + ":" + std::to_string(line_no) + ": expected 'name = module:function' in [" + section + "]");
            EntryPoint ep;
            ep.name = trim(std::string_view(line).substr(0, eq));
            std::string value = trim(std::string_view(line).substr(eq + 1));
            if (auto bracket = value.find('['); bracket != std::string::npos) value = trim(std::string_view(value).substr(0, bracket));
            size_t colon = value.find(':');
            ep.module = trim(std::string_view(value).substr(0, colon));
            ep.attr = colon == std::string::npos ? "" : trim(std::string_view(value).substr(colon + 1));
            ep.gui = section == "gui_scripts";
            // A script name becomes a file in bin/: no separators, no hidden or special names
            // (conda's and mamba's entry-point validation).
            bool bad_name = ep.name.empty() || ep.name[0] == '.' || ep.name.find_first_of(std::string("/\\\n\r\0", 5)) != std::string::npos;
            if (bad_name)
                throw InputError(source + ":" + std::to_string(line_no) + ": refused script name '" + ep.name + "'");
            if (!is_dotted_identifier(ep.module) || !is_dotted_identifier(ep.attr))
                throw InputError(source + ":" + std::to_string(line_no) + ": expected 'module:attribute' (dotted names) for '" +
                                 ep.name + "', found '" + value + "'");
            out.push_back(std::move(ep));
        }
        if (end == text.size()) break;
    }
    return out;
}

// A script named like the env's interpreter would replace it (uv refuses these too).
bool is_interpreter_name(const std::string& name) {
    if (name == "python" || name == "pythonw" || name == "python3") return true;
    if (name.rfind("python3.", 0) == 0 && name.size() > 8)
        return std::all_of(name.begin() + 8, name.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    return false;
}

// ---- shebangs and launchers -----------------------------------------------------------------

std::string shell_quote(const std::string& s) {
    bool safe = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%+=:,./-_", c);
    });
    if (safe) return s;
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\"'\"'";
        else out.push_back(c);
    }
    return out + "'";
}

// "#!<interpreter>", unless the kernel would not run it: Linux reads at most 127 bytes of a
// "#!" line and splits at spaces, so a long or spaced path goes through /bin/sh instead, as
// pip (distlib) and pypa/installer write it.
std::string shebang(const std::string& interpreter) {
    if (interpreter.find(' ') == std::string::npos && interpreter.size() + 3 <= 127) return "#!" + interpreter;
    return "#!/bin/sh\n'''exec' " + shell_quote(interpreter) + " \"$0\" \"$@\"\n' '''";
}

// The launcher pypa/installer writes on POSIX (installer/scripts.py), byte for byte, so that an
// env installed by envlock and one installed by `python -m installer` have equal RECORDs.
std::string launcher(const EntryPoint& ep, const std::string& interpreter) {
    std::string import_name = ep.attr.substr(0, ep.attr.find('.'));
    return shebang(interpreter) + "\n" +
           "# -*- coding: utf-8 -*-\n"
           "import re\n"
           "import sys\n"
           "from " + ep.module + " import " + import_name + "\n"
           "if __name__ == \"__main__\":\n"
           "    sys.argv[0] = re.sub(r\"(-script\\.pyw|\\.exe)?$\", \"\", sys.argv[0])\n"
           "    sys.exit(" + ep.attr + "())\n";
}

// ---- paths ----------------------------------------------------------------------------------

std::string generic(const fs::path& p) { return p.generic_string(); }

// An absolute path with no ".", ".." or empty component (no "//", no trailing '/'): for such
// paths the lexical relation to another plain path is a prefix test. Anything else takes the
// std::filesystem route below, so a ".." is resolved exactly as before.
bool plain_absolute(std::string_view p) {
    if (p.size() < 2 || p[0] != '/') return false;
    // Each component starts after a '/': it must not be empty, "." or "..".
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] != '/') continue;
        size_t n = 0;
        while (i + 1 + n < p.size() && p[i + 1 + n] != '/' && n < 3) ++n;
        if (n == 0) return false;
        if (p[i + 1] == '.' && (n == 1 || (n == 2 && p[i + 2] == '.'))) return false;
    }
    return true;
}

// `path` below `base` (both plain): the rest after "base/"; nullopt when they are not plain
// or `path` is not strictly below `base`.
std::optional<std::string_view> below(std::string_view path, std::string_view base) {
    if (path.size() <= base.size() + 1 || path[base.size()] != '/' || path.compare(0, base.size(), base) != 0) return std::nullopt;
    // `base` is then whole components of `path`: plain when `path` is (and it is not "/" or "").
    if (base.size() < 2 || !plain_absolute(path)) return std::nullopt;
    return path.substr(base.size() + 1);
}

std::string relative_lexically(const std::string& path, const std::string& base) {
    if (auto rest = below(path, base)) return std::string(*rest);
    return generic(fs::path(path).lexically_normal().lexically_relative(fs::path(base).lexically_normal()));
}

// `path` relative to `base`, both absolute and lexically normal; "" when it is not inside.
std::string inside(const std::string& path, const std::string& base) {
    std::string r = relative_lexically(path, base);
    if (r.empty() || r == ".." || r.rfind("../", 0) == 0) return "";
    return r;
}

std::string joined(const std::string& dir, const std::string& rel) {
    if (!dir.empty() && dir.back() != '/' && !rel.empty() && rel.front() != '/' && rel != ".") return dir + "/" + rel;
    return generic(fs::path(dir) / rel);
}

// Where a file whose final path is `abs` is written now (see WheelOptions::stage).
std::string staged(const WheelOptions& o, const PythonLayout& l, const std::string& abs) {
    if (o.stage.empty()) return abs;
    if (auto rest = below(abs, l.prefix); rest && !o.stage.empty() && o.stage.back() != '/') {
        std::string out;
        out.reserve(o.stage.size() + 1 + rest->size());
        out.append(o.stage).append("/").append(*rest);
        return out;
    }
    return joined(o.stage, relative_lexically(abs, l.prefix));
}

std::string unstaged(const WheelOptions& o, const PythonLayout& l, const std::string& path) {
    if (o.stage.empty()) return path;
    return joined(l.prefix, relative_lexically(path, o.stage));
}

std::string rewritten(std::string text, const std::vector<std::pair<std::string, std::string>>& rewrites) {
    for (const auto& [from, to] : rewrites) {
        if (from.empty()) continue;
        size_t pos = 0;
        while ((pos = text.find(from, pos)) != std::string::npos) {
            text.replace(pos, from.size(), to);
            pos += to.size();
        }
    }
    return text;
}

std::string strip_credentials(const std::string& url) {
    size_t scheme = url.find("://");
    if (scheme == std::string::npos) return url;
    size_t host_start = scheme + 3;
    size_t path_start = url.find('/', host_start);
    size_t at = url.rfind('@', path_start == std::string::npos ? url.size() : path_start);
    if (at == std::string::npos || at < host_start) return url;
    std::string user = url.substr(host_start, at - host_start);
    // PEP 610 keeps "git@" and environment-variable placeholders, which are not secrets.
    if (user == "git" || (user.rfind("${", 0) == 0 && user.back() == '}')) return url;
    return url.substr(0, host_start) + url.substr(at + 1);
}

// ---- writing files --------------------------------------------------------------------------

// Files written under temporary names, renamed into place together once all are verified; on
// failure the destructor removes every temp file and every directory this install created.
class Writer {
public:
    // `direct`: the files go into a private stage, where a name that does not exist yet can be
    // written as itself (no temp name and rename); the stage's swap is the atomic step.
    Writer(std::string wheel, bool direct) : wheel_(std::move(wheel)), direct_(direct) {}
    Writer(const Writer&) = delete;
    ~Writer() {
        if (committed_) return;
        for (const auto& t : temps_) ::unlink(t.name().c_str());
        for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) ::rmdir(it->c_str());
    }

    void make_dirs(std::string_view dir_view) {
        if (known_dirs_.find(dir_view) != known_dirs_.end()) return;
        const std::string dir(dir_view);
        std::vector<fs::path> missing;
        for (fs::path d = dir; !d.empty() && d != d.root_path(); d = d.parent_path()) {
            struct stat st;
            if (::stat(d.c_str(), &st) == 0) {
                if (!S_ISDIR(st.st_mode))
                    throw InputError(wheel_ + ": cannot install into " + d.string() + ": it exists and is not a directory");
                break;
            }
            missing.push_back(d);
        }
        for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
            if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST)
                throw EnvironmentError("cannot create directory " + it->string() + ": " + std::strerror(errno));
            created_dirs_.push_back(it->string());
        }
        known_dirs_.insert(dir);
    }

    // Opens a temp file beside `final_path`; returns its index for append/finish.
    size_t open(const std::string& final_path, bool executable) {
        make_parent_dirs(final_path);
        Temp t;
        t.final = final_path;
        const mode_t mode = executable ? 0777 : 0666;
        if (direct_) {
            // A new name in the stage is written as itself; O_EXCL tells whether it was there.
            t.temp = final_path;
            t.fd = ::open(t.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
            if (t.fd < 0 && errno == EEXIST) {
                existing_.push_back(final_path);
                t.temp = final_path + ".envlock-tmp";
            }
        } else {
            t.temp = temp_name(final_path);
        }
        if (t.fd < 0) t.fd = ::open(t.temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (t.fd < 0) throw EnvironmentError("cannot write " + t.temp + ": " + std::strerror(errno));
        t.hash = std::make_unique<Sha256>();
        temps_.push_back(std::move(t));
        return temps_.size() - 1;
    }

    void append(size_t i, std::string_view data) {
        Temp& t = temps_[i];
        t.hash->update(data);
        t.size += data.size();
        while (!data.empty()) {
            ssize_t n = ::write(t.fd, data.data(), data.size());
            if (n < 0) {
                if (errno == EINTR) continue;
                throw EnvironmentError("cannot write " + t.temp + ": " + std::strerror(errno));
            }
            data.remove_prefix(static_cast<size_t>(n));
        }
    }

    // Closes the temp file; returns its sha256 (hex) and size.
    FileDigest finish(size_t i) {
        Temp& t = temps_[i];
        if (::close(t.fd) != 0) throw EnvironmentError("cannot write " + t.temp + ": " + std::strerror(errno));
        t.fd = -1;
        return {t.hash->hex_digest(), t.size};
    }

    // A temp hard link to (or copy of) `from` beside `final_path`, for files installed unchanged.
    void place(const std::string& from, const std::string& final_path, bool hardlink) {
        make_parent_dirs(final_path);
        Temp t;
        t.final = final_path;
        if (direct_ && hardlink) {
            // A new name in the stage is linked as itself; EEXIST tells whether it was there.
            if (::link(from.c_str(), final_path.c_str()) == 0) {
                temps_.push_back(std::move(t));   // written as itself: no temp name
                return;
            }
            bool exists = errno == EEXIST;
            if (exists) existing_.push_back(final_path);
            t.temp = exists ? final_path + ".envlock-tmp" : final_path;
        } else {
            t.temp = temp_name(final_path);
        }
        if (t.temp != final_path) ::unlink(t.temp.c_str());
        if (!hardlink || ::link(from.c_str(), t.temp.c_str()) != 0) {
            std::error_code ec;
            // Across filesystems, or where links are refused (EXDEV, EPERM, EMLINK): a copy,
            // which copy_file_range makes a reflink where the filesystem can.
            if (!fs::copy_file(from, t.temp, fs::copy_options::overwrite_existing, ec))
                throw EnvironmentError("cannot copy " + from + " to " + t.temp + ": " + ec.message());
        }
        temps_.push_back(std::move(t));
    }

    size_t write_whole(const std::string& final_path, std::string_view data, bool executable, FileDigest& digest) {
        size_t i = open(final_path, executable);
        append(i, data);
        digest = finish(i);
        return i;
    }

    // The written paths that existed before (as written: staged when staging).
    const std::vector<std::string>& existing() const { return existing_; }

    // Renames every temp file onto its final name.
    void commit() {
        for (const auto& t : temps_) {
            struct stat st;
            if (t.renamed() && ::lstat(t.final.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
                throw InputError(wheel_ + ": cannot install " + t.final + ": a directory is in the way");
        }
        for (const auto& t : temps_)
            if (t.renamed() && ::rename(t.temp.c_str(), t.final.c_str()) != 0)
                throw EnvironmentError("cannot move " + t.temp + " to " + t.final + ": " + std::strerror(errno));
        committed_ = true;
    }

private:
    struct Temp {
        std::string final, temp;   // temp: "" when the file was written as `final` itself
        int fd = -1;
        const std::string& name() const { return temp.empty() ? final : temp; }
        bool renamed() const { return !temp.empty() && temp != final; }
        std::unique_ptr<Sha256> hash;
        std::uint64_t size = 0;
    };
    std::string wheel_;
    std::vector<Temp> temps_;
    std::vector<std::string> created_dirs_;
    bool committed_ = false;
    bool direct_ = false;
    std::vector<std::string> existing_;
    // Directories known to exist (one stat per directory), looked up by string_view.
    struct ViewHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_set<std::string, ViewHash, std::equal_to<>> known_dirs_;

    void make_parent_dirs(const std::string& path) {
        size_t slash = path.rfind('/');
        if (slash == std::string::npos || slash == 0 || path.find("//") != std::string::npos)
            make_dirs(fs::path(path).parent_path().string());
        else
            make_dirs(std::string_view(path).substr(0, slash));
    }

    // Also notes whether `final_path` exists (a file another package owns: a clobber).
    std::string temp_name(const std::string& final_path) {
        struct stat st;
        bool exists = ::lstat(final_path.c_str(), &st) == 0;
        if (exists) existing_.push_back(final_path);
        if (direct_ && !exists) return final_path;
        return final_path + ".envlock-tmp";
    }
};

// "sha256=" and 43 urlsafe base64 characters whose unused low bits are zero: exactly the text
// record_hash_from_hex makes of the same digest, so an unchanged file's row can keep it.
bool canonical_record_hash(std::string_view h) {
    if (h.size() != 50 || h.rfind("sha256=", 0) != 0) return false;
    for (char c : h.substr(7))
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
    // 32 bytes are 256 bits; 43 characters carry 258: the last one's low 2 bits are padding.
    const std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    return alphabet.find(h.back()) % 4 == 0;
}

// Where one archive member goes.
struct Placement {
    std::string final_path;     // absolute, in the env
    std::string scheme;         // purelib, platlib, headers, scripts, data
    std::string expected_hash;  // RECORD's sha256, hex
    std::string other_hash;     // RECORD's hash when it is another algorithm (checked in memory)
    std::string_view record_hash;   // RECORD's sha256 text, when it is what record_hash_from_hex writes (views the rows)
    std::uint64_t expected_size = 0;
    bool executable = false;
    bool stale_size = false;    // RECORD's size is not the member's: its hash is checked even in an unpacked tree
};

}  // namespace

std::vector<std::string> compile_bytecode(const std::vector<std::pair<std::string, std::string>>& staged_and_final,
                                          const std::string& python, const std::string& wheel) {
    if (staged_and_final.empty()) return {};
    std::string list;
    for (const auto& [s, f] : staged_and_final) list += s + "\t" + f + "\n";
    std::string tmpl = (fs::temp_directory_path() / "envlock-compile-XXXXXX").string();
    int fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw EnvironmentError(std::string("cannot create a temp file for --compile: ") + std::strerror(errno));
    ::close(fd);
    write_file_atomically(tmpl, list);
    // Each .pyc names the file's final path (ddir), as pypa/installer compiles; the printed
    // paths are the .pyc files written.
    static const char* script =
        "import compileall, importlib.util, os, sys\n"
        "for line in open(sys.argv[1], encoding='utf-8'):\n"
        "    staged, final = line.rstrip('\\n').split('\\t')\n"
        "    if compileall.compile_file(staged, ddir=os.path.dirname(final), quiet=2, force=True):\n"
        "        pyc = importlib.util.cache_from_source(staged)\n"
        "        if os.path.exists(pyc): print(pyc)\n";
    auto r = run_process({python, "-Wi", "-c", script, tmpl}, 600);
    ::unlink(tmpl.c_str());
    if (r.exit_code != 0)
        throw EnvironmentError("compiling the bytecode of " + wheel + " with " + python + " failed (exit " +
                               std::to_string(r.exit_code) + "): " + r.out);
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < r.out.size()) {
        size_t end = r.out.find('\n', pos);
        if (end == std::string::npos) end = r.out.size();
        std::string line = r.out.substr(pos, end - pos);
        if (!line.empty() && line[0] == '/') out.push_back(line);
        pos = end + 1;
    }
    return out;
}

// The header block of an email-style file (METADATA, WHEEL): "Key: value" lines up to the
// first blank line; continuation lines are skipped.
std::multimap<std::string, std::string> parse_headers(std::string_view text) {
    std::multimap<std::string, std::string> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) break;
        if (line[0] == ' ' || line[0] == '\t') continue;
        size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        out.emplace(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
    return out;
}

std::string direct_url_json(const DirectUrl& d) {
    nlohmann::json j;
    j["url"] = strip_credentials(d.url);
    if (!d.vcs.empty()) {
        j["vcs_info"]["vcs"] = d.vcs;
        j["vcs_info"]["commit_id"] = d.commit_id;
        if (!d.requested_revision.empty()) j["vcs_info"]["requested_revision"] = d.requested_revision;
    } else if (d.dir) {
        j["dir_info"] = nlohmann::json::object();
        if (d.editable) j["dir_info"]["editable"] = true;
    } else {
        j["archive_info"] = nlohmann::json::object();
        if (!d.archive_sha256.empty()) {
            j["archive_info"]["hashes"]["sha256"] = d.archive_sha256;
            j["archive_info"]["hash"] = "sha256=" + d.archive_sha256;   // the PEP 610 legacy key pip reads
        }
    }
    if (!d.subdirectory.empty()) j["subdirectory"] = d.subdirectory;
    return j.dump();
}

std::optional<DirectUrl> direct_url_for(const LockedPackage& package) {
    if (package.kind != Ecosystem::pypi || !package.channel.empty() || package.url.empty()) return std::nullopt;
    DirectUrl d;
    d.url = package.url;
    d.archive_sha256 = package.sha256;
    return d;
}

bool requested_by_spec(const LockedPackage& package) {
    if (package.requested_by.empty()) return true;
    return std::any_of(package.requested_by.begin(), package.requested_by.end(),
                       [](const std::string& r) { return r.rfind("spec: ", 0) == 0; });
}

// The PyPI wheels of torch 1.12.1, torchvision 0.13.1 and torchaudio 0.12.1 had their METADATA
// edited after they were built: RECORD's row for it gives the old size and hash. pip and uv do not
// check RECORD's hashes and install them. The wheel's own sha256, which the lock pins and the
// cache checked, is what protects its bytes; so a stale row for a file of the wheel's own
// .dist-info/ (its metadata, not code) is a warning, and one for any other member is refused.
static bool stale_metadata_row(const std::string& member, const std::string& record_name) {
    std::string dist_info = record_name.substr(0, record_name.size() - std::string("RECORD").size());
    return member.rfind(dist_info, 0) == 0 && member != record_name && member.find('/', dist_info.size()) == std::string::npos;
}

InstalledWheel install_wheel(const std::string& wheel_path, const PythonLayout& layout, const WheelOptions& options) {
    // ---- read and check the wheel's own metadata ----
    std::error_code tree_ec;
    const bool unpacked = fs::is_directory(wheel_path, tree_ec);
    std::vector<WheelMember> members = unpacked ? list_unpacked_wheel(wheel_path) : list_wheel(wheel_path);
    std::set<std::string_view> dist_infos;
    for (const auto& m : members) {
        std::string_view top = std::string_view(m.name).substr(0, m.name.find('/'));
        if (top.size() > 10 && top.ends_with(".dist-info") && top.size() < m.name.size()) dist_infos.insert(top);
    }
    if (dist_infos.size() != 1)
        throw InputError(wheel_path + ": expected exactly one top-level *.dist-info directory, found " +
                         std::to_string(dist_infos.size()));
    const std::string dist_info(*dist_infos.begin());
    const std::string data_dir = dist_info.substr(0, dist_info.size() - 10) + ".data";
    const std::string record_name = dist_info + "/RECORD";

    std::vector<std::string> wanted = {dist_info + "/WHEEL", dist_info + "/METADATA", record_name, dist_info + "/entry_points.txt"};
    std::vector<std::string> meta = unpacked ? read_unpacked_files(wheel_path, wanted) : read_wheel_files(wheel_path, wanted);
    auto has = [&](const std::string& n) {
        return std::any_of(members.begin(), members.end(), [&](const WheelMember& m) { return m.name == n; });
    };
    for (size_t i = 0; i < 3; ++i)
        if (!has(wanted[i])) throw InputError(wheel_path + ": the wheel has no " + wanted[i]);

    auto wheel_headers = parse_headers(meta[0]);
    std::string wheel_version = header(wheel_headers, "Wheel-Version");
    if (wheel_version.rfind("1.", 0) != 0)
        throw InputError(wheel_path + ": Wheel-Version " + (wheel_version.empty() ? "(missing)" : wheel_version) +
                         " in " + wanted[0] + "; envlock installs version 1.x wheels");
    bool root_is_purelib = header(wheel_headers, "Root-Is-Purelib") == "true";
    auto metadata = parse_headers(meta[1]);
    InstalledWheel result;
    result.name = header(metadata, "Name");
    result.version = header(metadata, "Version");
    if (result.name.empty() || result.version.empty())
        throw InputError(wheel_path + ": " + wanted[1] + " has no Name or Version");

    // The last row of a path wins, as a dict built from the rows would.
    const std::vector<RecordRow> record_rows = parse_record(meta[2], wheel_path + "!" + record_name);
    std::unordered_map<std::string_view, const RecordRow*> record;
    record.reserve(record_rows.size());
    for (const auto& row : record_rows) record[row.path] = &row;

    std::vector<EntryPoint> entry_points;
    if (has(wanted[3])) entry_points = parse_entry_points(meta[3], wheel_path + "!" + wanted[3]);
    std::set<std::string> script_names;
    for (const auto& ep : entry_points) {
        if (is_interpreter_name(ep.name))
            throw InputError(wheel_path + ": refused entry point '" + ep.name + "': it would replace the environment's interpreter");
        script_names.insert(ep.name);
    }

    // ---- place every member ----
    const std::string root_dir = root_is_purelib ? layout.purelib : layout.platlib;
    std::map<std::string, std::string> scheme_dirs = {
        {"purelib", layout.purelib}, {"platlib", layout.platlib}, {"scripts", layout.scripts},
        {"data", layout.data}, {"headers", generic(fs::path(layout.headers) / result.name)}};
    std::unordered_map<std::string_view, Placement> placements;   // keys view `members`
    placements.reserve(members.size());
    std::unordered_set<std::string_view> destinations;   // views the placements' final paths (checked before they move)
    destinations.reserve(members.size() + entry_points.size());
    const std::string data_prefix = data_dir + "/";
    for (const auto& m : members) {
        if (m.name == record_name || m.name == record_name + ".jws" || m.name == record_name + ".p7s") continue;
        auto row = record.find(m.name);
        if (row == record.end())
            throw InputError(wheel_path + ": " + m.name + " is not listed in " + record_name +
                             " (the spec requires every file to be listed with its hash)");
        const RecordRow& rec = *row->second;
        auto hex = hex_from_record_hash(rec.hash);
        if (!hex && rec.hash.find('=') == std::string::npos)
            throw InputError(wheel_path + ": " + record_name + " gives '" + rec.hash + "' for " + m.name +
                             "; expected <algorithm>=<urlsafe base64 digest>");
        Placement p;
        // A size that disagrees with a hash that matches is a stale RECORD row, not damage: the
        // PyPI wheels of torch 1.12.1, torchvision 0.13.1 and torchaudio 0.12.1 carry one for
        // their METADATA. pip and uv warn and install; the member's hash (checked below, for an
        // unpacked tree too) is what protects.
        if (!rec.size.empty() && rec.size != std::to_string(m.size)) {
            result.warnings.push_back(record_name + " gives " + m.name + " " + rec.size + " bytes, the wheel has " +
                                      std::to_string(m.size) + " (its hash is checked instead)");
            p.stale_size = true;
        }
        if (hex) {
            p.expected_hash = std::move(*hex);
            if (canonical_record_hash(rec.hash)) p.record_hash = rec.hash;
        } else {
            p.other_hash = rec.hash;
        }
        p.expected_size = m.size;
        p.executable = m.executable;
        std::string rest = m.name;
        p.scheme = root_is_purelib ? "purelib" : "platlib";
        if (m.name.rfind(data_prefix, 0) == 0) {
            std::string under = m.name.substr(data_dir.size() + 1);
            size_t slash = under.find('/');
            std::string key = under.substr(0, slash);
            if (slash == std::string::npos || !scheme_dirs.count(key))
                throw InputError(wheel_path + ": " + m.name + " is not in one of " + data_dir +
                                 "/{purelib,platlib,headers,scripts,data}");
            p.scheme = key;
            rest = under.substr(slash + 1);
        }
        // Bytecode in a wheel is never trusted: it need not match the source beside it
        // (pypa/installer skips it too); --compile writes fresh .pyc files.
        if (rest.find("__pycache__/") != std::string::npos && rest.ends_with(".pyc")) continue;
        if (p.scheme == "scripts") {
            if (rest.find('/') != std::string::npos)
                throw InputError(wheel_path + ": " + m.name + ": scripts must sit directly in " + data_dir + "/scripts");
            // A script with an entry point's name is a wrapper the build left; the launcher
            // generated below replaces it (pip does the same).
            std::string base = rest;
            for (const char* suffix : {".exe", "-script.py", ".pya"})
                if (base.ends_with(suffix)) base = base.substr(0, base.size() - std::strlen(suffix));
            if (script_names.count(base)) continue;
            if (is_interpreter_name(rest))
                throw InputError(wheel_path + ": refused script '" + rest + "': it would replace the environment's interpreter");
            p.executable = true;
        }
        p.final_path = joined(scheme_dirs[p.scheme], rest);
        if (inside(p.final_path, layout.prefix).empty())
            throw InputError(wheel_path + ": " + m.name + " would land outside the prefix " + layout.prefix);
        auto [slot, fresh] = placements.try_emplace(std::string_view(m.name));
        if (!fresh) throw InputError(wheel_path + ": two members install to " + p.final_path);
        slot->second = std::move(p);   // a node of its own: the view below stays valid
        if (!destinations.insert(slot->second.final_path).second)
            throw InputError(wheel_path + ": two members install to " + slot->second.final_path);
    }
    // Launchers too: one file per script name, whichever section declares it.
    std::vector<std::string> launcher_paths;
    launcher_paths.reserve(entry_points.size());
    for (const auto& ep : entry_points) {
        launcher_paths.push_back(generic(fs::path(layout.scripts) / ep.name));
        if (!destinations.insert(launcher_paths.back()).second)
            throw InputError(wheel_path + ": entry point '" + ep.name + "' is declared twice or clashes with a file of the wheel");
    }
    destinations.clear();

    // ---- write, verifying each member against RECORD as it streams ----
    Writer writer(wheel_path, !options.stage.empty());
    struct Written {
        std::string final_path;
        FileDigest digest;
        std::string scheme;
        std::string_view record_hash;   // the wheel's own RECORD hash of an unchanged file, when canonical (views record_rows)
    };
    std::vector<Written> written;
    written.reserve(placements.size() + entry_points.size() + 3);
    std::map<std::string, size_t> open_index;
    std::map<std::string, std::string> script_buffers;
    auto buffered = [&](const Placement& p) {
        return p.scheme == "scripts" || !options.path_rewrites.empty() || !p.other_hash.empty();
    };
    if (unpacked) {
        // Cache tree: link what is installed unchanged; size against RECORD always, hash on request.
        for (const auto& m : members) {
            auto it = placements.find(m.name);
            if (it == placements.end() || buffered(it->second)) continue;
            Placement& p = it->second;   // not read again once placed: its strings move to `written`
            if (m.size != p.expected_size)
                throw InputError(wheel_path + ": " + m.name + " is " + std::to_string(m.size) + " bytes, " + record_name +
                                 " says " + std::to_string(p.expected_size));
            std::string from = wheel_path + "/" + m.name;
            if (options.verify_unpacked_hashes || p.stale_size) {
                std::string actual = digest_file(from).sha256;
                if (actual != p.expected_hash) {
                    if (!stale_metadata_row(m.name, record_name))
                        throw InputError(wheel_path + ": " + m.name + " does not match its sha256 in " + record_name);
                    result.warnings.push_back(record_name + " gives another sha256 for " + m.name + " (a metadata file edited after the wheel was built; the wheel itself matched the lock's sha256)");
                    p.expected_hash = actual;
                    p.record_hash = {};   // the installed RECORD gives the true hash
                }
            }
            writer.place(from, staged(options, layout, p.final_path), options.hardlink);
            written.push_back({std::move(p.final_path), {std::move(p.expected_hash), p.expected_size}, p.scheme, p.record_hash});
        }
    }
    auto stream_members = [&](auto&&... args) {
        if (unpacked) read_unpacked_members(wheel_path, members, args...);
        else read_wheel_members(wheel_path, args...);
    };
    stream_members(
        [&](const WheelMember& m) {
            auto it = placements.find(m.name);
            return it != placements.end() && (!unpacked || buffered(it->second));
        },
        [&](const WheelMember& m, std::string_view chunk) {
            const Placement& p = placements.at(m.name);
            if (buffered(p)) {
                script_buffers[m.name].append(chunk);
                return;
            }
            auto it = open_index.find(m.name);
            if (it == open_index.end()) it = open_index.emplace(m.name, writer.open(staged(options, layout, p.final_path), p.executable)).first;
            writer.append(it->second, chunk);
        },
        [&](const WheelMember& m) {
            const Placement& p = placements.at(m.name);
            FileDigest d;
            if (buffered(p)) {
                std::string content = std::move(script_buffers[m.name]);
                bool ok;
                try {
                    ok = p.other_hash.empty() ? sha256_hex(content) == p.expected_hash : record_hash_matches(p.other_hash, content);
                } catch (const InputError& e) {
                    throw InputError(wheel_path + ": " + m.name + ": " + e.what());
                }
                if (!ok)
                    throw InputError(wheel_path + ": " + m.name + " does not match its " +
                                     (p.other_hash.empty() ? std::string("sha256") : p.other_hash.substr(0, p.other_hash.find('='))) +
                                     " in " + record_name);
                if (p.scheme == "scripts" && content.rfind("#!python", 0) == 0) {
                    size_t nl = content.find('\n');
                    content = shebang(layout.interpreter) + "\n" + (nl == std::string::npos ? "" : content.substr(nl + 1));
                } else if (p.scheme != "scripts") {
                    content = rewritten(std::move(content), options.path_rewrites);
                }
                writer.write_whole(staged(options, layout, p.final_path), content, p.executable, d);
            } else {
                auto it = open_index.find(m.name);
                if (it == open_index.end()) it = open_index.emplace(m.name, writer.open(staged(options, layout, p.final_path), p.executable)).first;
                d = writer.finish(it->second);
                if (d.sha256 != p.expected_hash && stale_metadata_row(m.name, record_name))
                    result.warnings.push_back(record_name + " gives another sha256 for " + m.name + " (a metadata file edited after the wheel was built; the wheel itself matched the lock's sha256)");
                else if (d.sha256 != p.expected_hash)
                    throw InputError(wheel_path + ": " + m.name + " does not match its sha256 in " + record_name +
                                     " (expected " + p.expected_hash + ", found " + d.sha256 + ")");
            }
            written.push_back({p.final_path, d, p.scheme, ""});
        });

    // ---- generated files: launchers, INSTALLER, REQUESTED, direct_url.json ----
    for (const auto& ep : entry_points) {
        FileDigest d;
        std::string path = generic(fs::path(layout.scripts) / ep.name);
        writer.write_whole(staged(options, layout, path), launcher(ep, layout.interpreter), true, d);
        written.push_back({path, d, "scripts", ""});
    }
    const std::string dist_info_abs = generic(fs::path(root_dir) / dist_info);
    auto add_metadata = [&](const std::string& name, const std::string& content) {
        FileDigest d;
        std::string path = dist_info_abs + "/" + name;
        writer.write_whole(staged(options, layout, path), content, false, d);
        written.push_back({path, d, "root", ""});
    };
    add_metadata("INSTALLER", options.installer + "\n");
    if (options.requested) add_metadata("REQUESTED", "");
    if (options.direct_url) add_metadata("direct_url.json", direct_url_json(*options.direct_url));

    // What this install overwrote where it wrote (the stage, when staging): clobbered files.
    for (const auto& path : writer.existing()) result.replaced.push_back(inside(unstaged(options, layout, path), layout.prefix));
    writer.commit();

    // ---- bytecode, on request: only purelib/platlib .py files, as pypa/installer does ----
    std::vector<std::string> pycs;
    if (options.compile) {
        std::vector<std::pair<std::string, std::string>> sources;
        for (const auto& w : written)
            if ((w.scheme == "purelib" || w.scheme == "platlib" || w.scheme == "root") && w.final_path.ends_with(".py"))
                sources.emplace_back(staged(options, layout, w.final_path), w.final_path);
        std::string python = options.compile_python.empty() ? layout.interpreter : options.compile_python;
        try {
            for (const auto& pyc : compile_bytecode(sources, python, wheel_path)) pycs.push_back(unstaged(options, layout, pyc));
        } catch (...) {
            for (const auto& w : written) ::unlink(staged(options, layout, w.final_path).c_str());
            throw;
        }
    }

    // ---- RECORD: installed paths relative to the directory holding .dist-info ----
    std::vector<RecordRow> rows;
    rows.reserve(written.size() + pycs.size() + 1);
    result.files.reserve(written.size() + pycs.size() + 1);
    auto row_path = [&](const std::string& abs) {
        return relative_lexically(abs, root_dir);
    };
    for (auto& w : written) {   // not read again: its strings move
        rows.push_back({row_path(w.final_path), w.record_hash.empty() ? record_hash_from_hex(w.digest.sha256) : std::string(w.record_hash),
                        std::to_string(w.digest.size)});
        result.files.push_back({inside(w.final_path, layout.prefix), std::move(w.digest.sha256), w.digest.size});
    }
    for (const auto& pyc : pycs) {
        rows.push_back({row_path(pyc), "", ""});
        result.files.push_back({inside(pyc, layout.prefix), "", 0});
    }
    const std::string record_abs = dist_info_abs + "/RECORD";
    rows.push_back({row_path(record_abs), "", ""});
    const std::string record_text = write_record(rows);
    if (options.stage.empty()) {
        write_file_atomically(record_abs, record_text);
    } else {
        // In the stage, RECORD is one more new file: the swap of the whole stage is the atomic
        // step (a temp name and a rename here would only add an fsync per wheel).
        Writer record_writer(wheel_path, true);
        FileDigest unused;
        record_writer.write_whole(staged(options, layout, record_abs), record_text, false, unused);
        record_writer.commit();
    }
    result.files.push_back({inside(record_abs, layout.prefix), "", record_text.size()});
    result.dist_info = inside(dist_info_abs, layout.prefix);
    return result;
}

std::vector<InstalledDist> installed_dists(const PythonLayout& layout) {
    std::vector<InstalledDist> out;
    std::set<std::string> dirs = {layout.purelib, layout.platlib};
    for (const auto& dir : dirs) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            std::string name = entry.path().filename().string();
            if (!name.ends_with(".dist-info") || !entry.is_directory()) continue;
            InstalledDist d;
            d.dist_info = inside(entry.path().string(), layout.prefix);
            std::error_code e2;
            if (fs::exists(entry.path() / "METADATA", e2)) {
                auto h = parse_headers(read_text_file((entry.path() / "METADATA").string()));
                d.name = header(h, "Name");
                d.version = header(h, "Version");
            }
            if (fs::exists(entry.path() / "INSTALLER", e2)) d.installer = trim(read_text_file((entry.path() / "INSTALLER").string()));
            out.push_back(std::move(d));
        }
    }
    std::sort(out.begin(), out.end(), [](const InstalledDist& a, const InstalledDist& b) { return a.dist_info < b.dist_info; });
    return out;
}

namespace {

struct RecordedFile {
    std::string abs;       // lexically normal absolute path
    RecordRow row;
};

// RECORD's rows as absolute paths; rows leading out of the prefix go to `outside`.
std::vector<RecordedFile> recorded_files(const PythonLayout& layout, const std::string& dist_info,
                                         std::vector<std::string>& outside) {
    fs::path dist_dir = fs::path(layout.prefix) / dist_info;
    fs::path record = dist_dir / "RECORD";
    std::error_code ec;
    if (!fs::exists(record, ec))
        throw InputError(generic(dist_dir) + " has no RECORD: its files are unknown, so it cannot be removed or checked");
    std::vector<RecordedFile> out;
    for (auto& row : parse_record(read_text_file(record.string()), record.string())) {
        fs::path p = fs::path(row.path);
        fs::path abs = (p.is_absolute() ? p : dist_dir.parent_path() / p).lexically_normal();
        if (inside(abs.string(), layout.prefix).empty()) {
            outside.push_back(row.path);
            continue;
        }
        out.push_back({generic(abs), std::move(row)});
    }
    return out;
}

}  // namespace

Uninstalled uninstall_dist(const PythonLayout& layout, const std::string& dist_info) {
    Uninstalled result;
    auto files = recorded_files(layout, dist_info, result.refused);
    std::set<fs::path> dirs;
    auto remove = [&](const fs::path& p) {
        if (::unlink(p.c_str()) == 0) {
            result.removed.push_back(inside(p.string(), layout.prefix));
            dirs.insert(p.parent_path());
        }
    };
    for (const auto& f : files) {
        fs::path p(f.abs);
        remove(p);
        if (p.extension() == ".py") {
            // Bytecode of every interpreter and optimisation level (the spec's uninstall rule).
            fs::path cache = p.parent_path() / "__pycache__";
            std::string stem = p.stem().string() + ".";
            std::error_code ec;
            for (const auto& e : fs::directory_iterator(cache, ec)) {
                std::string n = e.path().filename().string();
                if (n.rfind(stem, 0) == 0 && n.ends_with(".pyc")) remove(e.path());
            }
            remove(fs::path(f.abs + "c"));
        }
    }
    remove(fs::path(layout.prefix) / dist_info / "RECORD");
    dirs.insert(fs::path(layout.prefix) / dist_info);
    // Directories left empty, deepest first, never the scheme roots or the prefix itself.
    std::set<std::string> keep = {layout.prefix, layout.purelib, layout.platlib, layout.scripts, layout.data, layout.headers};
    std::vector<fs::path> ordered(dirs.begin(), dirs.end());
    std::sort(ordered.begin(), ordered.end(), [](const fs::path& a, const fs::path& b) { return a.string().size() > b.string().size(); });
    for (auto d : ordered) {
        for (; !inside(d.string(), layout.prefix).empty() && !keep.count(generic(d.lexically_normal())); d = d.parent_path())
            if (::rmdir(d.c_str()) != 0) break;
    }
    return result;
}

std::vector<RecordProblem> check_record(const PythonLayout& layout, const std::string& dist_info) {
    std::vector<std::string> outside;
    std::vector<RecordProblem> out;
    for (const auto& f : recorded_files(layout, dist_info, outside)) {
        std::string rel = inside(f.abs, layout.prefix);
        struct stat st;
        if (::lstat(f.abs.c_str(), &st) != 0) {
            if (!f.row.path.ends_with(".pyc")) out.push_back({rel, "missing"});
            continue;
        }
        auto hex = hex_from_record_hash(f.row.hash);
        if (!f.row.size.empty() && f.row.size != std::to_string(st.st_size)) {
            out.push_back({rel, "modified (" + std::to_string(st.st_size) + " bytes, RECORD says " + f.row.size + ")"});
            continue;
        }
        if (hex && digest_file(f.abs).sha256 != *hex) out.push_back({rel, "modified (sha256 differs from RECORD)"});
    }
    for (const auto& o : outside) out.push_back({o, "outside the prefix (RECORD row ignored)"});
    return out;
}

}  // namespace envlock::install
