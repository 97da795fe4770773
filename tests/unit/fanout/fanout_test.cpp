// One lock installed on many nodes at once, as a lab does it (issue 33): Debian's nginx serves
// the demo mirror on loopback, and 20 `envlock install` processes fill 20 prefixes at once,
// first from ONE shared package cache, then from 20 caches of their own. Every prefix must be
// the same bytes (each prefix's own path aside), whole by its own record of hashes, and the
// shared cache must have fetched no file twice: nginx's access log counts the GETs.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "install/installed.hpp"
#include "install/repair.hpp"
#include "resolver/lock/sha256.hpp"
#include "tests/mirror/mirror.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

using namespace envlock;
using namespace envlock::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr int kNodes = 20;

std::string nginx_binary() {
    for (const char* p : {"/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"})
        if (::access(p, X_OK) == 0) return p;
    return "";
}

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

int free_loopback_port() {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
}

bool accepts(int port) {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(s);
    return ok;
}

pid_t spawn(std::vector<std::string> args, const fs::path& output, const std::vector<std::string>& env = {}) {
    pid_t pid = ::fork();
    if (pid == 0) {
        int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(out, 1);
        ::dup2(out, 2);
        for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    return pid;
}

int wait_exit(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Debian's nginx in the foreground (daemon off) with a config of its own: its prefix, pid file,
// logs and temp folders under `dir`, serving `root` on a loopback port; stopped at the end.
struct Nginx {
    fs::path dir;
    int port = 0;
    pid_t pid = -1;

    Nginx(const std::string& binary, const fs::path& root, const fs::path& where) : dir(where) {
        fs::create_directories(dir / "logs");
        fs::create_directories(dir / "tmp");
        for (int attempt = 0; attempt < 5 && pid < 0; ++attempt) {
            port = free_loopback_port();
            std::string d = dir.string();
            std::string conf =
                "daemon off;\nmaster_process on;\nworker_processes 2;\n" + std::string(::geteuid() == 0 ? "user root;\n" : "") +
                "pid " + d + "/nginx.pid;\nerror_log " + d + "/logs/error.log warn;\n"
                "events { worker_connections 1024; }\n"
                "http {\n"
                "  log_format fanout '$request_method $uri $status $body_bytes_sent';\n"
                "  access_log " + d + "/logs/access.log fanout;\n"
                "  client_body_temp_path " + d + "/tmp/body;\n  proxy_temp_path " + d + "/tmp/proxy;\n"
                "  fastcgi_temp_path " + d + "/tmp/fastcgi;\n  uwsgi_temp_path " + d + "/tmp/uwsgi;\n"
                "  scgi_temp_path " + d + "/tmp/scgi;\n"
                "  default_type application/octet-stream;\n  types { text/html html; application/json json; }\n"
                "  server {\n    listen 127.0.0.1:" + std::to_string(port) + ";\n    root " + root.string() +
                ";\n    index index.html index.json;\n  }\n}\n";
            write_all(dir / "nginx.conf", conf);
            pid_t started = spawn({binary, "-p", d, "-c", d + "/nginx.conf", "-e", d + "/logs/error.log"}, dir / "logs/stderr.txt");
            for (int i = 0; i < 500 && !accepts(port); ++i) {
                int status = 0;
                if (::waitpid(started, &status, WNOHANG) == started) break;   // the port was taken: next one
                std::this_thread::sleep_for(10ms);
            }
            if (accepts(port)) pid = started;
        }
    }
    ~Nginx() {
        if (pid > 0) {
            ::kill(pid, SIGTERM);   // the master stops its workers
            wait_exit(pid);
        }
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
    fs::path access_log() const { return dir / "logs/access.log"; }
    // nginx appends (O_APPEND): a truncated log goes on from its start.
    void clear_log() const { ::truncate(access_log().c_str(), 0); }

    // GETs answered 200 per path since the log was last cleared.
    std::map<std::string, int> gets() const {
        std::map<std::string, int> n;
        std::istringstream in(read_all(access_log()));
        std::string method, uri, status, bytes;
        while (in >> method >> uri >> status >> bytes)
            if (method == "GET" && status == "200") n[uri] += 1;
        return n;
    }
};

// A lab's lock: the demo mirror's conda-forge python with pip, and wheels on it (27 small
// packages), resolved from the mirror folder itself (no HTTP, so nginx's log holds
// the installs only).
struct Lab {
    fs::path dir, mirror, lock, mirrors_http;
    std::unique_ptr<Nginx> nginx;
};

const Lab& lab() {
    static Lab lab = [] {
        Lab l;
        l.dir = scratch_dir("fanout");
        l.mirror = l.dir / "mirror";
        mirror::MirrorOptions options;
        options.layer_real_pytorch_channel = false;
        options.with_git_repo = false;
        mirror::build_mirror(l.mirror.string(), options);
        write_all(l.dir / "spec.yaml",
                  "spec:\n  name: lab\n  channels: [conda-forge]\n  requirements:\n    - {conda: python=3.8}\n"
                  "    - {conda: pip}\n    - {pypi: yapf==0.40.1}\n");
        write_all(l.dir / "target.yaml",
                  "platform: linux-64\nglibc: \"2.31\"\ncpu-flags: [sse4_2, avx, avx2, fma]\ndriver: \"470.82.01\"\n"
                  "driver-cuda: \"11.4\"\ngpus:\n  - {name: \"NVIDIA GeForce RTX 3090\", sm: sm_86}\n");
        l.lock = l.dir / "envlock.yaml";
        auto r = run_envlock({"resolve", (l.dir / "spec.yaml").string(), "--target", (l.dir / "target.yaml").string(), "-o",
                              l.lock.string(), "--cache-dir", (l.dir / "resolve-cache").string()},
                             {"ENVLOCK_MIRRORS=" + (l.mirror / "mirrors.yaml").string()});
        REQUIRE_MESSAGE(r.exit_code == 0, r.err);
        std::string nginx = nginx_binary();
        if (!nginx.empty()) {
            l.nginx = std::make_unique<Nginx>(nginx, l.mirror, l.dir / "nginx");
            REQUIRE_MESSAGE(l.nginx->pid > 0, "nginx did not start: " << read_all(l.dir / "nginx/logs/error.log")
                                                                        << read_all(l.dir / "nginx/logs/stderr.txt"));
            // The nodes' mirrors file: the lock's original URLs, sent to the HTTP server.
            l.mirrors_http = l.dir / "mirrors-http.yaml";
            write_all(l.mirrors_http, "mirrors:\n  https://conda.anaconda.org: " + l.nginx->url() +
                                          "/conda\n  https://pypi.org/pypi/packages: " + l.nginx->url() + "/pypi/packages\n");
        }
        return l;
    }();
    return lab;
}

// The archive paths the lock names, as nginx sees them.
std::vector<std::string> locked_paths(const fs::path& lock) {
    std::vector<std::string> out;
    std::regex url(R"(- (?:conda|pypi): https://[^/]+(/\S+))");
    std::string text = read_all(lock);
    for (std::sregex_iterator it(text.begin(), text.end(), url), end; it != end; ++it) {
        std::string p = (*it)[1];   // conda.anaconda.org/<channel>/... is served under /conda
        out.push_back(p.rfind("/pypi/", 0) == 0 ? p : "/conda" + p);
    }
    return out;
}

// Twenty prefix paths of one length (so binary prefix replacement pads them alike).
std::vector<fs::path> prefixes(const fs::path& parent) {
    std::vector<fs::path> out;
    for (int i = 1; i <= kNodes; ++i) out.push_back(parent / ((i < 10 ? "node0" : "node") + std::to_string(i)));
    return out;
}

// Runs the installs at once; returns each one's exit code, its output kept beside the prefix.
std::vector<int> install_all(const std::vector<fs::path>& prefix, const std::vector<fs::path>& cache) {
    std::vector<pid_t> pids;
    for (size_t i = 0; i < prefix.size(); ++i)
        pids.push_back(spawn({ENVLOCK_BINARY, "install", lab().lock.string(), "--prefix", prefix[i].string(), "--cache-dir",
                              cache[i].string(), "--mirrors-file", lab().mirrors_http.string(), "--quiet"},
                             prefix[i].string() + ".out"));
    std::vector<int> codes;
    for (pid_t p : pids) codes.push_back(wait_exit(p));
    return codes;
}

// A prefix as bytes that do not depend on where it is: its own path becomes "<PREFIX>"; in the
// files that record hashes of prefix-replaced files (conda-meta records, RECORD, envlock's
// state) the hashes are masked, and the install's own stamps (history's date line, the state's
// generation) too, and the package cache a conda-meta record names (each node may have its own). Each prefix's hashes are checked against its own files apart (whole()).
std::map<std::string, std::string> normalized(const fs::path& prefix) {
    static const std::regex hex64("[0-9a-f]{64}"), record_hash("sha256=[A-Za-z0-9_-]{43}"),
        generation("\"generation\": \"[0-9a-f]+\""), history_date("==> [0-9: -]+ <=="), cache_path("\"/[^\"]*?/pkgs/");
    std::map<std::string, std::string> out;
    const std::string own = prefix.string();
    for (auto it = fs::recursive_directory_iterator(prefix); it != fs::recursive_directory_iterator(); ++it) {
        const std::string rel = it->path().lexically_relative(prefix).generic_string();
        std::string bytes;
        if (it->is_symlink()) bytes = "-> " + fs::read_symlink(it->path()).string();
        else if (it->is_regular_file()) bytes = read_all(it->path()) + (::access(it->path().c_str(), X_OK) == 0 ? "\n[x]" : "");
        else continue;
        for (size_t at = bytes.find(own); at != std::string::npos; at = bytes.find(own, at)) bytes.replace(at, own.size(), "<PREFIX>");
        bool records_hashes = rel.rfind("conda-meta/", 0) == 0 || rel == ".envlock/state.json" ||
                              (rel.size() > 7 && rel.compare(rel.size() - 7, 7, "/RECORD") == 0);
        if (records_hashes) {
            bytes = std::regex_replace(bytes, hex64, "<sha256>");
            bytes = std::regex_replace(bytes, record_hash, "sha256=<hash>");
            bytes = std::regex_replace(bytes, generation, "\"generation\": \"<id>\"");
            bytes = std::regex_replace(bytes, history_date, "==> <date> <==");
            bytes = std::regex_replace(bytes, cache_path, "\"<CACHE>/pkgs/");
        }
        out[rel] = sha256_hex(bytes);
    }
    return out;
}

// Every file the prefix's state records is there with its recorded size and sha256.
bool whole(const fs::path& prefix, std::string& damage) {
    auto state = install::read_state(prefix);
    if (!state) {
        damage = "no state";
        return false;
    }
    auto found = install::find_damage(prefix, state->packages, 2);
    for (const auto& d : found) damage += d.path + ": " + d.what + "\n";
    return found.empty();
}

void check_alike(const std::vector<fs::path>& prefix, const std::map<std::string, std::string>& reference) {
    for (const auto& p : prefix) {
        std::string damage;
        CHECK_MESSAGE(whole(p, damage), p.string() << "\n" << damage);
        auto files = normalized(p);
        CHECK_MESSAGE(files.size() == reference.size(), p.string());
        for (const auto& [rel, digest] : reference) {
            auto f = files.find(rel);
            if (f == files.end()) CHECK_MESSAGE(false, p.string() << " lacks " << rel);
            else CHECK_MESSAGE(f->second == digest, p.string() << ": " << rel << " differs from the first prefix's");
        }
    }
}

}  // namespace

TEST_CASE("20 installs of one lock at once from one shared cache over nginx: prefixes alike and whole, "
          "each file fetched once; then 20 caches of their own: alike again, each file fetched once per cache") {
    if (nginx_binary().empty()) {
        MESSAGE("skipped: nginx is not installed (Debian: apt-get install nginx-light)");
        return;
    }
    const Lab& l = lab();
    const std::vector<std::string> files = locked_paths(l.lock);
    REQUIRE(files.size() >= 20);
    fs::path work = scratch_dir("fanout-shared");

    // One shared cache, cold: the nodes race for every entry. (Its name is as long as the
    // single caches' below: a conda-meta record names its cache, and the state records its size.)
    l.nginx->clear_log();
    auto shared_prefix = prefixes(work / "shared");
    auto codes = install_all(shared_prefix, std::vector<fs::path>(kNodes, work / "cache00"));
    for (int i = 0; i < kNodes; ++i)
        CHECK_MESSAGE(codes[i] == 0, shared_prefix[i].string() << ": " << read_all(shared_prefix[i].string() + ".out"));
    auto gets = l.nginx->gets();
    for (const auto& f : files) CHECK_MESSAGE(gets[f] == 1, f << " was fetched " << gets[f] << " times into the shared cache");
    CHECK(gets.size() == files.size());   // and nothing else was asked for
    const auto reference = normalized(shared_prefix[0]);
    CHECK(reference.size() > 100);
    check_alike(shared_prefix, reference);

    // Twenty caches of their own: each fetches every file once, and builds the same prefix.
    l.nginx->clear_log();
    auto own_prefix = prefixes(work / "single");   // as long as "shared": binary replacement pads alike
    std::vector<fs::path> caches;
    for (int i = 1; i <= kNodes; ++i) caches.push_back(work / ((i < 10 ? "cache0" : "cache") + std::to_string(i)));
    codes = install_all(own_prefix, caches);
    for (int i = 0; i < kNodes; ++i)
        CHECK_MESSAGE(codes[i] == 0, own_prefix[i].string() << ": " << read_all(own_prefix[i].string() + ".out"));
    gets = l.nginx->gets();
    for (const auto& f : files) CHECK_MESSAGE(gets[f] == kNodes, f << " was fetched " << gets[f] << " times by 20 caches");
    check_alike(own_prefix, reference);
}
