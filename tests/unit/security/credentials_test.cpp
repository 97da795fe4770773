// Credentials in index URLs never reach a spec, a lock or a message (issue 20): envlock.yaml is
// committed beside the code, so a token written into a requirements file must stay out of it.
// The fetch layer gets credentials back at fetch time from the URL in memory or from a netrc
// file, as uv does for uv.lock (https://docs.astral.sh/uv/concepts/authentication/).
#include <doctest/doctest.h>

#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

const std::string kToken = "tok123secret";

// base64("alice:tok123secret"), the Basic credentials a client sends for that user and token.
const std::string kBasic = "Basic YWxpY2U6dG9rMTIzc2VjcmV0";

struct CredentialedCheckout {
    fs::path dir = temp_dir("cred");
    std::string index;   // the mirror's simple index, as the user wrote it with a token

    CredentialedCheckout() {
        const auto& server = *mirror_server().server;
        std::string host = server.url().substr(7);   // "127.0.0.1:PORT"
        index = "http://alice:" + kToken + "@" + host + "/pypi/simple";
        write_file(dir / "repo" / "requirements.txt", "--index-url " + index + "\nnumpy==1.19.5\n");
        write_file(dir / "repo" / "environment.yml", "name: x\nchannels: [defaults]\ndependencies:\n  - python=3.8\n  - pip\n");
        write_file(dir / "repo" / "README.md",
                   "## Install\n```\npip install --extra-index-url https://bob:" + kToken +
                       "@example.invalid/simple extra-thing  # optional\n```\n");
        write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    }
};

bool planted(const std::string& text) { return text.find(kToken) != std::string::npos; }

size_t authorized_requests(const std::string& path_prefix) {
    size_t n = 0;
    for (const auto& r : mirror_server().server->requests())
        if (r.path.rfind(path_prefix, 0) == 0 && r.header("Authorization") == kBasic) ++n;
    return n;
}

}  // namespace

TEST_CASE("a token in a requirements file's --index-url is used for the fetch but written nowhere") {
    CredentialedCheckout c;
    mirror_server().server->clear_requests();
    auto run = resolve_with({(c.dir / "repo").string(), "-o", (c.dir / "envlock.yaml").string(), "--target",
                             (c.dir / "target.yaml").string()},
                            c.dir);
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    CHECK(authorized_requests("/pypi/simple/numpy") > 0);   // the URL's credentials were sent

    std::string lock = read_file(c.dir / "envlock.yaml");
    CHECK(lock.find("indexes: [http://127.0.0.1:") != std::string::npos);
    CHECK_FALSE(planted(lock));
    CHECK_FALSE(planted(run.out));
    CHECK_FALSE(planted(run.err));

    // Nor in the cache: what is kept there of the pages read (their records, fetch/page_cache)
    // holds no token, nor does any other file.
    size_t cache_files = 0;
    for (const auto& e : fs::recursive_directory_iterator(c.dir / "cache")) {
        if (!e.is_regular_file()) continue;
        ++cache_files;
        CAPTURE(e.path());
        CHECK_FALSE(planted(read_file(e.path())));
    }
    CHECK(cache_files > 0);

    // The lock's content hash was made over the same stripped spec that `check` reads back.
    auto check = run_envlock({"check", (c.dir / "envlock.yaml").string()});
    CHECK_MESSAGE(check.exit_code == 0, check.err);
    CHECK_FALSE(planted(check.out + check.err));
}

TEST_CASE("`envlock spec` prints no token, in YAML or JSON, not even inside a documented command kept as a note") {
    CredentialedCheckout c;
    for (std::vector<std::string> args : {std::vector<std::string>{"spec", (c.dir / "repo").string()},
                                          std::vector<std::string>{"spec", "--json", (c.dir / "repo").string()}}) {
        auto run = run_envlock(args);
        CHECK_MESSAGE(run.exit_code == 0, run.err);
        CHECK(run.out.find("127.0.0.1") != std::string::npos);
        CHECK_FALSE(planted(run.out));
        CHECK_FALSE(planted(run.err));
    }
}

TEST_CASE("a re-resolve from the stripped lock takes the credentials from the netrc file $NETRC names") {
    CredentialedCheckout c;
    auto first = resolve_with({(c.dir / "repo").string(), "-o", (c.dir / "envlock.yaml").string(), "--target",
                               (c.dir / "target.yaml").string()},
                              c.dir);
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    write_file(c.dir / "netrc", "machine 127.0.0.1 login alice password " + kToken + "\n");
    mirror_server().server->clear_requests();
    std::vector<std::string> args{"resolve", (c.dir / "envlock.yaml").string(), "-o", (c.dir / "again.yaml").string(),
                                  "--target", (c.dir / "target.yaml").string()};
    auto flags = mirror_flags(c.dir / "cache-2");   // a cold cache, so the index is fetched again
    args.insert(args.end(), flags.begin(), flags.end());
    auto again = run_envlock(args, {"NETRC=" + (c.dir / "netrc").string()});
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(authorized_requests("/pypi/simple/numpy") > 0);
    CHECK_FALSE(planted(read_file(c.dir / "again.yaml")));
}
