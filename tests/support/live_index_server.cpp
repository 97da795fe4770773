#include "tests/support/live_index_server.hpp"

#include <httplib.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace envlock::test {

namespace fs = std::filesystem;

namespace {

const fs::path kFixture = fs::path(ENVLOCK_SOURCE_DIR) / "tests" / "fixtures" / "live-index";
constexpr std::string_view kPaddingName = "envlock_fixture/padding.bin";

void put(std::string& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string raw_deflate(const std::string& text) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, text.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(out.size() - z.avail_out);
    deflateEnd(&z);
    return out;
}

std::string hex(const unsigned char* d, unsigned n) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < n; ++i) out += digits[d[i] >> 4], out += digits[d[i] & 15];
    return out;
}

std::string local_header(std::string_view name, std::uint16_t method, std::uint32_t crc, std::uint64_t csize, std::uint64_t size) {
    std::string h;
    put(h, 0x04034b50, 4);
    put(h, 20, 2), put(h, 0, 2), put(h, method, 2), put(h, 0, 2), put(h, 0x21, 2);
    put(h, crc, 4), put(h, csize, 4), put(h, size, 4);
    put(h, name.size(), 2), put(h, 0, 2);
    h += name;
    return h;
}

// A built wheel: the shared prefix (the padding member, never held), then `suffix`.
struct BuiltWheel {
    std::string suffix;
    std::uint64_t size = 0;
    std::string sha256;
};

}  // namespace

struct LiveIndexServer::State {
    LiveIndexOptions options;
    std::atomic<std::uint32_t> delay_seed{0};
    std::atomic<int> max_delay_ms{0};
    std::mutex mutex;
    std::vector<ServedRequest> served;
    std::map<std::string, nlohmann::json> pages, metadata;   // by project
    std::map<std::string, std::string> project_of_file;      // filename -> project
    std::map<std::string, std::uint64_t> recorded_size;      // filename -> the real file's size
    std::map<std::string, BuiltWheel> built;
    std::string prefix_header;                               // the padding member's local header
    std::uint32_t padding_crc = 0;
    EVP_MD_CTX* prefix_hash = nullptr;                       // sha256 over header + padding
    std::uint64_t prefix_size() const { return prefix_header.size() + options.padding; }

    ~State() { EVP_MD_CTX_free(prefix_hash); }

    void load() {
        for (const auto& entry : fs::directory_iterator(kFixture / "pages")) {
            std::string project = entry.path().stem().string();
            pages[project] = nlohmann::json::parse(read_all(entry.path()));
            metadata[project] = nlohmann::json::parse(read_all(kFixture / "metadata" / (project + ".json")));
            for (const auto& f : pages[project]["files"]) {
                project_of_file[f["filename"].get<std::string>()] = project;
                recorded_size[f["filename"].get<std::string>()] = f["size"].is_number() ? f["size"].get<std::uint64_t>() : 0;
            }
        }
        std::string zeros(1 << 20, '\0');
        uLong crc = crc32(0, nullptr, 0);
        for (std::uint64_t left = options.padding; left > 0;) {
            std::uint64_t n = std::min<std::uint64_t>(left, zeros.size());
            crc = crc32(crc, reinterpret_cast<const Bytef*>(zeros.data()), static_cast<uInt>(n));
            left -= n;
        }
        padding_crc = static_cast<std::uint32_t>(crc);
        prefix_header = local_header(kPaddingName, 0, padding_crc, options.padding, options.padding);
        prefix_hash = EVP_MD_CTX_new();
        EVP_DigestInit_ex(prefix_hash, EVP_sha256(), nullptr);
        EVP_DigestUpdate(prefix_hash, prefix_header.data(), prefix_header.size());
        for (std::uint64_t left = options.padding; left > 0;) {
            std::uint64_t n = std::min<std::uint64_t>(left, zeros.size());
            EVP_DigestUpdate(prefix_hash, zeros.data(), n);
            left -= n;
        }
    }

    // The recorded METADATA for a file: its own, else that of the recorded file of its version.
    const std::string* metadata_of(const std::string& filename) {
        auto p = project_of_file.find(filename);
        if (p == project_of_file.end()) return nullptr;
        const auto& m = metadata[p->second];
        if (auto it = m.find(filename); it != m.end()) return it->get_ptr<const std::string*>();
        auto version = [](const std::string& f) {
            auto a = f.find('-');
            return f.substr(a + 1, f.find('-', a + 1) - a - 1);
        };
        for (auto it = m.begin(); it != m.end(); ++it)
            if (version(it.key()) == version(filename)) return it->get_ptr<const std::string*>();
        return nullptr;
    }

    // Caller holds the mutex.
    const BuiltWheel* wheel(const std::string& filename) {
        if (auto it = built.find(filename); it != built.end()) return &it->second;
        const std::string* meta = metadata_of(filename);
        if (!meta || filename.size() < 5 || filename.compare(filename.size() - 4, 4, ".whl") != 0) return nullptr;
        auto second_dash = filename.find('-', filename.find('-') + 1);
        std::string dist_info = filename.substr(0, second_dash) + ".dist-info/";
        std::string dist = filename.substr(0, filename.find('-'));
        struct Member {
            std::string name;
            std::uint16_t method;
            std::uint32_t crc;
            std::uint64_t csize, size, offset;
        };
        std::vector<Member> members{{std::string(kPaddingName), 0, padding_crc, options.padding, options.padding, 0}};
        std::string suffix;
        auto add = [&](const std::string& name, const std::string& content, bool deflated) {
            std::string data = deflated ? raw_deflate(content) : content;
            std::uint32_t crc = static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(content.data()), static_cast<uInt>(content.size())));
            Member m{name, static_cast<std::uint16_t>(deflated ? 8 : 0), crc, data.size(), content.size(), prefix_size() + suffix.size()};
            suffix += local_header(name, m.method, crc, m.csize, m.size) + data;
            members.push_back(m);
        };
        // A big wheel's directory is big too (torch's lists thousands of files): empty members
        // in proportion to the recorded size, so the directory outgrows a small tail read.
        std::uint64_t fillers = std::min<std::uint64_t>(4000, recorded_size[filename] / 150000);
        for (std::uint64_t i = 0; i < fillers; ++i) add(dist + "/module_" + std::to_string(i) + ".py", "", false);
        // Deflated or stored, by the name: both kinds are read.
        bool deflated = crc32(0, reinterpret_cast<const Bytef*>(filename.data()), static_cast<uInt>(filename.size())) % 2 == 0;
        add(dist_info + "METADATA", *meta + "\nA long description, as real METADATA files carry.\n", deflated);
        add(dist_info + "WHEEL", "Wheel-Version: 1.0\nGenerator: envlock-test\nRoot-Is-Purelib: false\n", false);
        add(dist_info + "RECORD", "", false);
        std::uint64_t cd_offset = prefix_size() + suffix.size();
        std::string cd;
        for (const auto& m : members) {
            put(cd, 0x02014b50, 4);
            put(cd, 20, 2), put(cd, 20, 2), put(cd, 0, 2), put(cd, m.method, 2), put(cd, 0, 2), put(cd, 0x21, 2);
            put(cd, m.crc, 4), put(cd, m.csize, 4), put(cd, m.size, 4);
            put(cd, m.name.size(), 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 4);
            put(cd, m.offset, 4);
            cd += m.name;
        }
        suffix += cd;
        put(suffix, 0x06054b50, 4);
        put(suffix, 0, 2), put(suffix, 0, 2), put(suffix, members.size(), 2), put(suffix, members.size(), 2);
        put(suffix, cd.size(), 4), put(suffix, cd_offset, 4), put(suffix, 0, 2);
        BuiltWheel w;
        w.size = prefix_size() + suffix.size();
        EVP_MD_CTX* h = EVP_MD_CTX_new();
        EVP_MD_CTX_copy_ex(h, prefix_hash);
        EVP_DigestUpdate(h, suffix.data(), suffix.size());
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned len = 0;
        EVP_DigestFinal_ex(h, digest, &len);
        EVP_MD_CTX_free(h);
        w.sha256 = hex(digest, len);
        w.suffix = std::move(suffix);
        return &built.emplace(filename, std::move(w)).first->second;
    }

    // The page as the live index serves it: no core-metadata keys; the built wheels' hash and size.
    std::string page(const std::string& project) {
        nlohmann::json p = pages.at(project);
        for (auto& f : p["files"]) {
            if (const BuiltWheel* w = wheel(f["filename"].get<std::string>())) {
                f["hashes"] = {{"sha256", w->sha256}};
                f["size"] = w->size;
            }
        }
        return p.dump();
    }

    // Sleeps this request's share of the delay (outside the lock: answers overtake one another).
    void hold_back(const httplib::Request& req) const {
        int most = max_delay_ms.load();
        if (most <= 0) return;
        std::string key = std::to_string(delay_seed.load()) + " " + req.path + " " + req.get_header_value("Range");
        uLong h = crc32(0, reinterpret_cast<const Bytef*>(key.data()), static_cast<uInt>(key.size()));
        std::this_thread::sleep_for(std::chrono::milliseconds(h % static_cast<uLong>(most + 1)));
    }

    bool sidecar(const std::string& filename) const {
        return crc32(0, reinterpret_cast<const Bytef*>(filename.data()), static_cast<uInt>(filename.size())) % 3 == 0;
    }
};

LiveIndexServer::LiveIndexServer(LiveIndexOptions options) : state_(std::make_shared<State>()), server_(std::make_unique<httplib::Server>()) {
    state_->options = options;
    state_->load();
    auto state = state_;
    server_->set_read_timeout(5, 0);
    server_->set_write_timeout(5, 0);
    server_->set_keep_alive_timeout(2);
    server_->new_task_queue = [] { return new httplib::ThreadPool(32); };
    server_->Get(R"(/simple/([^/]+)/)", [state](const httplib::Request& req, httplib::Response& res) {
        state->hold_back(req);
        std::lock_guard lock(state->mutex);
        std::string project = req.matches[1];
        if (!state->pages.count(project)) {
            res.status = 404;
            state->served.push_back({req.path, "", 404, 0});
            return;
        }
        res.set_content(state->page(project), "application/vnd.pypi.simple.v1+json");
        state->served.push_back({req.path, "", 200, res.body.size()});
    });
    server_->Get(R"(/files/([^/]+))", [state](const httplib::Request& req, httplib::Response& res) {
        state->hold_back(req);
        std::lock_guard lock(state->mutex);
        std::string name = req.matches[1];
        std::string range = req.get_header_value("Range");
        constexpr std::string_view meta_suffix = ".metadata";
        if (name.size() > meta_suffix.size() && name.compare(name.size() - meta_suffix.size(), meta_suffix.size(), meta_suffix) == 0) {
            std::string file = name.substr(0, name.size() - meta_suffix.size());
            const std::string* meta = state->metadata_of(file);
            if (!meta || !state->sidecar(file)) {
                res.status = 404;
                res.set_content("not found\n", "text/plain");
                state->served.push_back({req.path, range, 404, res.body.size()});
                return;
            }
            res.set_content(*meta, "application/octet-stream");
            state->served.push_back({req.path, range, 200, res.body.size()});
            return;
        }
        const BuiltWheel* w = state->wheel(name);
        if (!w) {
            res.status = 404;
            res.set_content("not found\n", "text/plain");
            state->served.push_back({req.path, range, 404, res.body.size()});
            return;
        }
        std::uint64_t total = w->size, first = 0, length = total;
        if (!state->options.ranges) {
            // httplib slices any answer to a request with ranges: this server ignores them.
            const_cast<httplib::Request&>(req).ranges.clear();
        } else if (!req.ranges.empty()) {
            auto [a, b] = req.ranges.front();
            if (a < 0) first = total - std::min<std::uint64_t>(total, static_cast<std::uint64_t>(b));
            else first = static_cast<std::uint64_t>(a);
            std::uint64_t last = (a < 0 || b < 0) ? total - 1 : std::min<std::uint64_t>(static_cast<std::uint64_t>(b), total - 1);
            if (first >= total) {
                res.status = 416;
                res.set_header("Content-Range", "bytes */" + std::to_string(total));
                state->served.push_back({req.path, range, 416, 0});
                return;
            }
            length = last - first + 1;
            res.status = 206;
        }
        res.set_header("Accept-Ranges", state->options.ranges ? "bytes" : "none");
        std::uint64_t prefix = state->prefix_size();
        std::string header = state->prefix_header;
        auto suffix = std::make_shared<std::string>(w->suffix);
        res.set_content_provider(total, "application/octet-stream", [header, prefix, suffix](size_t off, size_t len, httplib::DataSink& sink) {
            // Bytes [off, off + len): the padding member's header, zeros, then the built suffix.
            std::string chunk;
            std::uint64_t end = off + std::min<std::uint64_t>(len, 1 << 20);
            for (std::uint64_t at = off; at < end;) {
                if (at < header.size()) {
                    std::uint64_t n = std::min<std::uint64_t>(header.size() - at, end - at);
                    chunk.append(header, at, n);
                    at += n;
                } else if (at < prefix) {
                    std::uint64_t n = std::min<std::uint64_t>(prefix - at, end - at);
                    chunk.append(n, '\0');
                    at += n;
                } else {
                    std::uint64_t n = std::min<std::uint64_t>(suffix->size() - (at - prefix), end - at);
                    chunk.append(*suffix, at - prefix, n);
                    at += n;
                }
            }
            return sink.write(chunk.data(), chunk.size());
        });
        state->served.push_back({req.path, range, res.status == 206 ? 206 : 200, length});
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("live index server: cannot bind 127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
}

LiveIndexServer::~LiveIndexServer() {
    server_->stop();
    if (thread_.joinable()) thread_.join();
}

std::string LiveIndexServer::index_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/simple"; }

std::vector<ServedRequest> LiveIndexServer::served() const {
    std::lock_guard lock(state_->mutex);
    return state_->served;
}

std::uint64_t LiveIndexServer::bytes_served() const {
    std::lock_guard lock(state_->mutex);
    std::uint64_t total = 0;
    for (const auto& s : state_->served) total += s.bytes;
    return total;
}

std::set<std::string> LiveIndexServer::files_read() const {
    std::lock_guard lock(state_->mutex);
    std::set<std::string> out;
    for (const auto& s : state_->served) {
        if (s.path.rfind("/files/", 0) != 0 || s.status >= 300) continue;
        std::string name = s.path.substr(7);
        if (name.size() > 9 && name.compare(name.size() - 9, 9, ".metadata") == 0) continue;
        out.insert(name);
    }
    return out;
}

std::set<std::string> LiveIndexServer::recorded_files() const {
    std::lock_guard lock(state_->mutex);
    std::set<std::string> out;
    for (const auto& [project, m] : state_->metadata)
        for (auto it = m.begin(); it != m.end(); ++it) out.insert(it.key());
    return out;
}

bool LiveIndexServer::has_sidecar(const std::string& filename) const { return state_->sidecar(filename); }

void LiveIndexServer::clear() {
    std::lock_guard lock(state_->mutex);
    state_->served.clear();
}

}  // namespace envlock::test

namespace envlock::test {

void LiveIndexServer::set_delays(std::uint32_t seed, int max_ms) {
    state_->delay_seed = seed;
    state_->max_delay_ms = max_ms;
}

}  // namespace envlock::test
