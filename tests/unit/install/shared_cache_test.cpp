// One cache shared by many processes on many hosts (docs/architecture.md, "Sharing a cache"):
// entries are written under temp names unique to a host and process and renamed into place;
// the locks are open file description locks, which NFS honours and only their holder's close
// or death releases; a reader never sees a partial entry; what a killed writer leaves is a
// temp, never trusted, removed by the next writer of the entry (or, where no lock covers the
// folder, once it is an hour old or its process is gone).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "fetch/files.hpp"
#include "fetch/http_cache.hpp"
#include "install/file_lock.hpp"
#include "install/package_cache.hpp"
#include "tests/unit/install/install_fixture.hpp"

using namespace envlock;
using namespace envlock::test;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> temps_in(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (is_temp_name(e.path().filename().string())) out.push_back(e.path().filename().string());
    return out;
}

fetch::FetchContext context(const fs::path& cache) {
    fetch::FetchContext ctx;
    ctx.cache_dir = cache;
    ctx.transport.retries = 0;
    return ctx;
}

// Bytes no compressor shrinks, so a package of them streams for as long as a test needs.
std::string random_bytes(size_t n) {
    std::mt19937_64 rng(42);
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    return s;
}

PkgSpec big_pkg(const std::string& name, size_t size) {
    PkgSpec p = native_pkg(name, "1.0");
    p.files.push_back(file("share/" + name + "/blob", random_bytes(size)));
    return p;
}

// `envlock install` as a child process of its own (fork + exec), not waited for; what it
// prints goes to <prefix>.out.
pid_t start_install(const fs::path& lock, const fs::path& prefix, const fs::path& cache) {
    std::vector<std::string> args{ENVLOCK_BINARY, "install", lock.string(), "--prefix", prefix.string(),
                                  "--cache-dir", cache.string(), "--quiet"};
    const std::string log = prefix.string() + ".out";
    pid_t pid = ::fork();
    if (pid == 0) {
        int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(out, 1);
        ::dup2(out, 2);
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

// Waits (up to 20 s) until `ready` holds.
bool eventually(const std::function<bool()>& ready) {
    for (int i = 0; i < 4000; ++i) {
        if (ready()) return true;
        std::this_thread::sleep_for(5ms);
    }
    return false;
}

// A child holding `path`'s FileLock until killed; returns once it holds it.
pid_t child_holding_lock(const fs::path& path) {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(ready[0]);
        install::FileLock held(path, {});
        char one = 1;
        (void)!::write(ready[1], &one, 1);
        for (;;) ::pause();
    }
    ::close(ready[1]);
    char one = 0;
    (void)!::read(ready[0], &one, 1);
    ::close(ready[0]);
    return pid;
}

// Whether another process could take `path`'s lock right now (a forked child tries).
bool free_for_another_process(const fs::path& path) {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(install::FileLock::try_lock(path).locked() ? 0 : 1);
    return wait_exit(pid) == 0;
}

}  // namespace

TEST_CASE("temp names carry this host and this process, and no two are alike") {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string a = unique_temp_tail(), b = unique_temp_tail();
    CHECK(a != b);
    CHECK(a.rfind(std::string(host) + "-" + std::to_string(::getpid()) + "-", 0) == 0);
    CHECK(is_temp_name("tree.tmp-" + a));
    CHECK(is_temp_name("x.conda.part-" + a));
    CHECK(is_temp_name("tree.gone-" + a));
    CHECK_FALSE(is_temp_name("tree"));
    CHECK_FALSE(is_temp_name("python-3.8.18-h1_0.conda"));
}

TEST_CASE("a lock taken by one process is refused to another until its holder is killed with SIGKILL") {
    fs::path lock = make_temp_dir("ofd-lock") / "entry.lock";
    pid_t holder = child_holding_lock(lock);
    CHECK_FALSE(free_for_another_process(lock));
    CHECK_FALSE(install::FileLock::try_lock(lock).locked());
    ::kill(holder, SIGKILL);
    wait_exit(holder);
    CHECK(install::FileLock::try_lock(lock).locked());
}

TEST_CASE("closing another descriptor of a lock file keeps the lock (an OFD lock, not a POSIX record lock)") {
    fs::path lock = make_temp_dir("ofd-close") / "entry.lock";
    install::FileLock held(lock, {});
    REQUIRE(held.locked());
    int other = ::open(lock.c_str(), O_RDONLY);   // what reading the lock's note does
    REQUIRE(other >= 0);
    ::close(other);   // would drop a POSIX (F_SETLK) lock of this process on the file
    CHECK_FALSE(free_for_another_process(lock));
}

TEST_CASE("two locks of one file in one process exclude each other, as two processes' do") {
    fs::path lock = make_temp_dir("ofd-threads") / "entry.lock";
    install::FileLock held(lock, {});
    CHECK_FALSE(install::FileLock::try_lock(lock).locked());
}

TEST_CASE("a sweep removes the temps of writers that are gone and keeps those that may be live, and every final name") {
    fs::path dir = make_temp_dir("sweep");
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    wait_exit(dead);
    const std::string me = std::string(host) + "-" + std::to_string(::getpid()) + "-00ff";
    const std::string gone = std::string(host) + "-" + std::to_string(dead) + "-00ff";
    write_bytes(dir / ("a.entry.tmp-" + gone), "a dead process's half entry");
    write_bytes(dir / ("b.entry.tmp-" + me), "this process, still writing");
    write_bytes(dir / "c.entry.tmp-node17-4242-00ff", "another host's, fresh");
    write_bytes(dir / "d.entry.tmp-node17-4243-00ff", "another host's, two hours old");
    fs::last_write_time(dir / "d.entry.tmp-node17-4243-00ff", fs::file_time_type::clock::now() - 2h);
    write_bytes(dir / ".e.members.tmp-Ab12Cd", "mkstemp's name, says no writer, two hours old");
    fs::last_write_time(dir / ".e.members.tmp-Ab12Cd", fs::file_time_type::clock::now() - 2h);
    write_bytes(dir / "f.entry", "a final name, however old");
    fs::last_write_time(dir / "f.entry", fs::file_time_type::clock::now() - 24h * 30);

    CHECK(sweep_stale_temps(dir, kStaleTempAge) == 3);
    CHECK_FALSE(fs::exists(dir / ("a.entry.tmp-" + gone)));
    CHECK(fs::exists(dir / ("b.entry.tmp-" + me)));
    CHECK(fs::exists(dir / "c.entry.tmp-node17-4242-00ff"));
    CHECK_FALSE(fs::exists(dir / "d.entry.tmp-node17-4243-00ff"));
    CHECK_FALSE(fs::exists(dir / ".e.members.tmp-Ab12Cd"));
    CHECK(fs::exists(dir / "f.entry"));

    // Under the lock every writer of the folder takes, no temp in it has a live writer.
    CHECK(sweep_stale_temps(dir, 0s, "c.") == 1);
    CHECK(fs::exists(dir / ("b.entry.tmp-" + me)));
    CHECK(sweep_stale_temps(dir, 0s) == 1);
    CHECK(temps_in(dir).empty());
    CHECK(fs::exists(dir / "f.entry"));
}

TEST_CASE("the HTTP cache, which takes no lock, sweeps an hour-old temp beside the entry it writes") {
    fs::path cache = make_temp_dir("http-sweep");
    const std::string url = "http://127.0.0.1:1/simple/six/";
    fs::path entry = fetch::cache_entry_path(cache, url);
    fs::create_directories(entry.parent_path());
    fs::path stale = entry.string() + ".tmp-node3-77-0a0b";
    write_bytes(stale, "a writer on node3 lost power here");
    fs::last_write_time(stale, fs::file_time_type::clock::now() - 2h);
    fetch::CacheEntry meta;
    REQUIRE(fetch::cache_write(cache, url, {}, meta, "<html>six</html>"));
    CHECK_FALSE(fs::exists(stale));
    auto read = fetch::cache_read(cache, url);
    REQUIRE(read);
    CHECK(read->body() == "<html>six</html>");
}

TEST_CASE("a download killed with SIGKILL leaves only a temp, never the entry's archive or tree; "
          "the next writer takes the lock, removes the temp and fills the entry") {
    Channel ch("killed-writer");
    LockedPackage p = ch.add(big_pkg("libbig", 400 << 10));
    const std::string path = p.url.substr(ch.server->url().size());
    Fault slow;
    slow.kind = Fault::slow;
    slow.delay_ms = 3;   // 400 pieces of 1 KiB: over a second to stream
    ch.server->add_fault(path, slow);
    fs::path work = make_temp_dir("killed-writer-work"), cache = work / "cache";
    write_bytes(work / "envlock.yaml", write_lock(make_lock({p})));
    auto e = install::cache_entry(cache, p);

    pid_t writer = start_install(work / "envlock.yaml", work / "env", cache);
    bool exited = false;
    REQUIRE_MESSAGE(eventually([&] {
        int status = 0;
        if (::waitpid(writer, &status, WNOHANG) == writer) return exited = true;
        for (const auto& t : temps_in(e.dir))   // (bytes reach it in 1 MiB writes: it may still be empty)
            if (t.find(".part-") != std::string::npos) return true;
        return false;
    }), "no download began");
    REQUIRE_MESSAGE(!exited, "the install ended before it was killed: " << read_bytes(work / "env.out"));
    ::kill(writer, SIGKILL);
    CHECK(wait_exit(writer) == 128 + SIGKILL);
    // What readers go by: neither final name exists, only the writer's temp.
    CHECK_FALSE(fs::exists(e.archive()));
    CHECK_FALSE(fs::exists(e.tree()));
    CHECK_FALSE(temps_in(e.dir).empty());

    const size_t asked = ch.server->requests_for(path).size();   // the killed one, if it got that far
    install::populate_cache({e}, context(cache));
    CHECK(install::check_tree(e, true));
    CHECK(mirror::sha256_hex_of(read_bytes(e.archive())) == p.sha256);
    CHECK(temps_in(e.dir).empty());
    // Fetched again, whole: nothing of the half was kept (the killed request may be recorded late).
    CHECK(ch.server->requests_for(path).size() >= asked + 1);
    CHECK(ch.server->requests_for(path).size() <= 2);
}

TEST_CASE("what an extraction killed on another host leaves (tree.tmp-, tree.gone-, .part-) is never taken for the "
          "tree, and is removed when the entry is filled") {
    Channel ch("dead-host");
    LockedPackage p = ch.add(native_pkg("libdead", "1.0"));
    fs::path cache = make_temp_dir("dead-host-cache");
    auto e = install::cache_entry(cache, p);
    fs::create_directories(e.dir / "tree.tmp-node9-311-5eed/share/libdead");
    write_bytes(e.dir / "tree.tmp-node9-311-5eed/share/libdead/README", "libd");   // cut short
    fs::create_directories(e.dir / "tree.gone-node9-311-5eee/lib");
    write_bytes(e.dir / (e.filename + ".part-node9-311-5eef"), "half an archive");
    CHECK_FALSE(install::check_tree(e, false));   // no tree: the entry is missing, not broken

    install::populate_cache({e}, context(cache));
    CHECK(read_bytes(e.tree() / "share/libdead/README") == "libdead 1.0\n");
    CHECK(install::check_tree(e, true));
    CHECK(temps_in(e.dir).empty());
}

TEST_CASE("two envlock processes racing to fill one shared cache: each file is fetched once, both envs are whole and alike") {
    Channel ch("process-race");
    std::vector<LockedPackage> pkgs{ch.add(big_pkg("libslow", 200 << 10)), ch.add(native_pkg("libone", "1.0")),
                                    ch.add(native_pkg("libtwo", "2.0"))};
    Fault slow;
    slow.kind = Fault::slow;
    slow.count = -1;
    slow.delay_ms = 2;   // the racers overlap: one waits on the other's lock
    ch.server->add_fault(pkgs[0].url.substr(ch.server->url().size()), slow);
    fs::path work = make_temp_dir("process-race-work"), cache = work / "cache";
    write_bytes(work / "envlock.yaml", write_lock(make_lock(pkgs)));

    pid_t a = start_install(work / "envlock.yaml", work / "env-a", cache);
    pid_t b = start_install(work / "envlock.yaml", work / "env-b", cache);
    CHECK_MESSAGE(wait_exit(a) == 0, read_bytes(work / "env-a.out"));
    CHECK_MESSAGE(wait_exit(b) == 0, read_bytes(work / "env-b.out"));
    for (const auto& p : pkgs) CHECK(ch.server->requests_for(p.url.substr(ch.server->url().size())).size() == 1);
    CHECK(verify_prefix(work / "env-a").empty());
    CHECK(verify_prefix(work / "env-b").empty());
    auto files_a = snapshot(work / "env-a"), files_b = snapshot(work / "env-b");
    CHECK(read_bytes(work / "env-a/share/libslow/blob") == read_bytes(work / "env-b/share/libslow/blob"));
    CHECK(files_a.size() == files_b.size());
    for (const auto& p : pkgs) CHECK(temps_in(install::cache_entry(cache, p).dir).empty());
}
