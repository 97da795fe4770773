#pragma once
// A loopback simple index with the live PyPI's behaviour, serving the recorded fixture
// tests/fixtures/live-index/ (scripts/record_live_index.py): PEP 691 pages that advertise no
// core metadata; "<file>.metadata" sidecars for some files only (about one in three); Range
// support (or none, to test the fallback); and wheels built on the fly, each a real zip whose
// *.dist-info/METADATA (the recorded one of its version) sits behind a large stored member, so
// every file declares tens of MB and none is ever held in memory. The page's sha256 and size are
// the built wheel's. Every answer is recorded with the bytes it carried.
//
//   LiveIndexServer index;                       // or LiveIndexServer index{{.ranges = false}};
//   index.index_url();                           // "http://127.0.0.1:PORT/simple"
//   ... envlock resolve --index-url ...
//   index.bytes_served(); index.files_read();    // what the client took
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <string>
#include <vector>

namespace httplib { class Server; }

namespace envlock::test {

struct LiveIndexOptions {
    std::uint64_t padding = std::uint64_t(32) << 20;   // the stored member in front of METADATA
    bool ranges = true;                                 // false: Range is ignored, files answer whole
};

struct ServedRequest {
    std::string path;          // "/simple/numpy/", "/files/numpy-1.26.4-….whl", "/files/….whl.metadata"
    std::string range;         // the Range header asked, "" for none
    int status = 0;
    std::uint64_t bytes = 0;   // body bytes of the answer
};

class LiveIndexServer {
public:
    explicit LiveIndexServer(LiveIndexOptions options = {});
    ~LiveIndexServer();
    LiveIndexServer(const LiveIndexServer&) = delete;
    LiveIndexServer& operator=(const LiveIndexServer&) = delete;

    std::string index_url() const;   // "http://127.0.0.1:PORT/simple"

    std::vector<ServedRequest> served() const;
    std::uint64_t bytes_served() const;
    // File names whose body (any part of it) was served: wheels and sdists, not sidecars.
    std::set<std::string> files_read() const;
    // The files the fixture recorded METADATA for: per version, the wheel that python 3.10 on
    // x86_64 manylinux_2_28 installs best.
    std::set<std::string> recorded_files() const;
    bool has_sidecar(const std::string& filename) const;
    void clear();
    // Holds each answer back for 0..max_ms milliseconds, a different time for each request
    // (path and range) and `seed`, so the client's answers arrive in another order per seed.
    // 0 ms: every answer at once (the default).
    void set_delays(std::uint32_t seed, int max_ms);

    struct State;

private:
    std::shared_ptr<State> state_;
    std::unique_ptr<httplib::Server> server_;
    std::thread thread_;
    int port_ = 0;
};

}  // namespace envlock::test
