#include "resolver/workflow/reuse.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "fetch/build_id.hpp"
#include "fetch/files.hpp"
#include "resolver/lock/sha256.hpp"

namespace envlock {

namespace fs = std::filesystem;

namespace {

constexpr int kMemoVersion = 1;

nlohmann::json stamp_json(const fetch::DocumentStamp& d) {
    return {d.url, d.fetched_url, d.accept, d.stamp, d.status, d.etag, d.last_modified, d.cache_control};
}


}  // namespace

fs::path memo_path(const fs::path& cache_dir, const std::string& lock_path) {
    std::error_code ec;
    fs::path abs = fs::absolute(lock_path, ec).lexically_normal();
    return cache_dir / "resolves" / (sha256_hex(abs.string()) + ".json");
}

std::optional<ResolveMemo> read_memo(const fs::path& cache_dir, const std::string& lock_path, std::string_view lock_text) {
    if (cache_dir.empty()) return std::nullopt;
    std::string id = binary_build_id();
    if (id.empty()) return std::nullopt;
    std::string text;
    try {
        text = read_text_file(memo_path(cache_dir, lock_path).string(), "resolve memo", 64 << 20);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    try {
        // simdjson reads the memo; nlohmann only the lock inside it (its reader is shared with
        // what writes it), not the few hundred document stamps beside it. A missing or mistyped
        // field throws (simdjson_error): the memo is damaged, and the full path reads the lock.
        simdjson::dom::parser parser;
        simdjson::dom::object doc = parser.parse(text);
        ResolveMemo m;
        std::int64_t version = doc["memo"];
        std::string_view build_id = doc["build-id"];
        if (version != kMemoVersion || build_id != id) return std::nullopt;
        m.lock_sha256 = std::string_view(doc["lock-sha256"]);
        if (m.lock_sha256 != sha256_hex(lock_text)) return std::nullopt;
        for (simdjson::dom::array d : simdjson::dom::array(doc["read"])) {
            if (d.size() != 8) return std::nullopt;
            auto at = [&](std::size_t i) { return std::string(std::string_view(d.at(i))); };
            m.read.push_back({at(0), at(1), at(2), at(3), static_cast<long>(std::int64_t(d.at(4))), at(5), at(6), at(7)});
        }
        for (std::string_view n : simdjson::dom::array(doc["notes"])) m.notes.emplace_back(n);
        std::string lock_json = simdjson::minify(doc["lock"]);
        m.build_id = id;
        m.lock = lock_from_json(nlohmann::json::parse(lock_json));
        return m;
    } catch (const std::exception&) {
        return std::nullopt;   // damaged or from another version: the full path reads the lock
    }
}

void write_memo(const fs::path& cache_dir, const std::string& lock_path, const ResolveMemo& memo) {
    if (cache_dir.empty() || memo.build_id.empty()) return;
    nlohmann::json j;
    j["memo"] = kMemoVersion;
    j["lock-path"] = fs::absolute(lock_path).lexically_normal().string();
    j["build-id"] = memo.build_id;
    j["lock-sha256"] = memo.lock_sha256;
    j["read"] = nlohmann::json::array();
    for (const auto& d : memo.read) j["read"].push_back(stamp_json(d));
    j["notes"] = memo.notes;
    j["lock"] = lock_to_json(memo.lock);
    fs::path path = memo_path(cache_dir, lock_path);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    fs::path temp = path.string() + ".tmp-" + unique_temp_tail();   // unique across hosts sharing the cache
    std::string text = j.dump();
    std::FILE* f = std::fopen(temp.c_str(), "wb");
    if (!f) return;
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = std::fclose(f) == 0 && ok;
    if (ok) fs::rename(temp, path, ec);
    if (!ok || ec) fs::remove(temp, ec);
}

}  // namespace envlock
