#include "fetch/sharded_repodata.hpp"

#include <msgpack.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "fetch/url.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

namespace {

struct Bad {
    std::string what;
};

// One decoded msgpack document; the objects live as long as it does.
class Unpacked {
public:
    explicit Unpacked(std::string_view bytes) {
        msgpack_unpacked_init(&result_);
        std::size_t offset = 0;
        auto rc = msgpack_unpack_next(&result_, bytes.data(), bytes.size(), &offset);
        if (rc != MSGPACK_UNPACK_SUCCESS || offset != bytes.size()) {
            msgpack_unpacked_destroy(&result_);
            throw Bad{"not one msgpack document"};
        }
    }
    ~Unpacked() { msgpack_unpacked_destroy(&result_); }
    Unpacked(const Unpacked&) = delete;
    Unpacked& operator=(const Unpacked&) = delete;
    const msgpack_object& root() const { return result_.data; }

private:
    msgpack_unpacked result_;
};

std::string_view text_of(const msgpack_object& o) {
    if (o.type == MSGPACK_OBJECT_STR) return {o.via.str.ptr, o.via.str.size};
    if (o.type == MSGPACK_OBJECT_BIN) return {o.via.bin.ptr, o.via.bin.size};
    throw Bad{"a string was expected"};
}

bool is_nil(const msgpack_object& o) { return o.type == MSGPACK_OBJECT_NIL; }

const msgpack_object* field(const msgpack_object& map, std::string_view key) {
    if (map.type != MSGPACK_OBJECT_MAP) throw Bad{"a map was expected"};
    for (std::uint32_t i = 0; i < map.via.map.size; ++i) {
        const auto& kv = map.via.map.ptr[i];
        if (kv.key.type == MSGPACK_OBJECT_STR && text_of(kv.key) == key) return &kv.val;
    }
    return nullptr;
}

std::string hex(std::string_view bytes) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char c : bytes) out += digits[c >> 4], out += digits[c & 15];
    return out;
}

// sha256 and md5 are bytes in a shard (CEP 16); hex strings are accepted as repodata.json has them.
std::string digest(const msgpack_object& o) {
    if (is_nil(o)) return {};
    if (o.type == MSGPACK_OBJECT_BIN) return hex({o.via.bin.ptr, o.via.bin.size});
    return std::string(text_of(o));
}

std::uint64_t unsigned_of(const msgpack_object& o) {
    if (o.type == MSGPACK_OBJECT_POSITIVE_INTEGER) return o.via.u64;
    if (o.type == MSGPACK_OBJECT_FLOAT64 || o.type == MSGPACK_OBJECT_FLOAT32) {
        if (!(o.via.f64 >= 0) || o.via.f64 > 1.8e19) throw Bad{"a number out of range"};
        return static_cast<std::uint64_t>(o.via.f64);
    }
    throw Bad{"a non-negative integer was expected"};
}

// A list of strings, or (track_features, features) one string separated by spaces or commas.
void strings_of(const msgpack_object& o, std::vector<std::string>& out) {
    out.clear();
    if (is_nil(o)) return;
    if (o.type == MSGPACK_OBJECT_STR) {
        std::string_view s = text_of(o);
        std::size_t i = 0;
        while (i < s.size()) {
            std::size_t j = s.find_first_of(" ,", i);
            if (j == std::string_view::npos) j = s.size();
            if (j > i) out.emplace_back(s.substr(i, j - i));
            i = j + 1;
        }
        return;
    }
    if (o.type != MSGPACK_OBJECT_ARRAY) throw Bad{"a list of strings was expected"};
    for (std::uint32_t i = 0; i < o.via.array.size; ++i) out.emplace_back(text_of(o.via.array.ptr[i]));
}

void read_record(const msgpack_object& obj, IndexRecord& r) {
    if (obj.type != MSGPACK_OBJECT_MAP) throw Bad{"a record that is not a map"};
    for (std::uint32_t i = 0; i < obj.via.map.size; ++i) {
        const auto& kv = obj.via.map.ptr[i];
        if (kv.key.type != MSGPACK_OBJECT_STR) continue;
        std::string_view k = text_of(kv.key);
        const msgpack_object& v = kv.val;
        if (k == "name") r.name = text_of(v);
        else if (k == "version") r.version = text_of(v);
        else if (k == "build") r.build = text_of(v);
        else if (k == "build_number") r.build_number = static_cast<int>(unsigned_of(v));
        else if (k == "depends") strings_of(v, r.depends);
        else if (k == "constrains") strings_of(v, r.constrains);
        else if (k == "track_features") strings_of(v, r.track_features);
        else if (k == "features") strings_of(v, r.features);
        else if (k == "sha256") r.sha256 = digest(v);
        else if (k == "md5") r.md5 = digest(v);
        else if (k == "size") r.size = unsigned_of(v);
        else if (k == "subdir") r.subdir = is_nil(v) ? std::string() : std::string(text_of(v));
        else if (k == "license") r.license = is_nil(v) ? std::string() : std::string(text_of(v));
        else if (k == "noarch") {
            if (v.type == MSGPACK_OBJECT_BOOLEAN) r.noarch = v.via.boolean ? "generic" : "";
            else r.noarch = is_nil(v) ? std::string() : std::string(text_of(v));
        } else if (k == "timestamp") {
            // Seconds in old repodata, milliseconds in new; milliseconds, as the JSON reader keeps.
            std::uint64_t t = unsigned_of(v);
            r.timestamp = t < 100000000000ULL ? t * 1000 : t;
        }
    }
}

std::string with_slash(std::string url) {
    if (url.empty() || url.back() != '/') url += '/';
    return url;
}

}  // namespace

std::string ShardIndex::shard_url(const std::string& name) const {
    auto it = shards.find(name);
    return it == shards.end() ? std::string() : shards_base_url + it->second + ".msgpack.zst";
}

ShardIndex parse_shard_index(std::string_view msgpack, const RepodataSource& source, const std::string& index_url) {
    ShardIndex out;
    out.source = source;
    try {
        Unpacked doc(msgpack);
        const msgpack_object& root = doc.root();
        const msgpack_object* version = field(root, "version");
        if (version && unsigned_of(*version) != 1) throw Bad{"version " + std::to_string(unsigned_of(*version)) + ", not 1"};
        std::string base = "./", shards_base = "./";
        if (const msgpack_object* info = field(root, "info"); info && !is_nil(*info)) {
            if (const auto* b = field(*info, "base_url"); b && !is_nil(*b)) base = text_of(*b);
            if (const auto* s = field(*info, "shards_base_url"); s && !is_nil(*s)) shards_base = text_of(*s);
            if (const auto* s = field(*info, "subdir"); s && !is_nil(*s)) out.subdir = text_of(*s);
        }
        out.base_url = with_slash(url_join(index_url, base));
        out.shards_base_url = with_slash(url_join(index_url, shards_base));
        const msgpack_object* shards = field(root, "shards");
        if (!shards || shards->type != MSGPACK_OBJECT_MAP) throw Bad{"no 'shards' map"};
        for (std::uint32_t i = 0; i < shards->via.map.size; ++i) {
            const auto& kv = shards->via.map.ptr[i];
            std::string_view hash = text_of(kv.val);
            std::string hash_hex = kv.val.type == MSGPACK_OBJECT_BIN ? hex(hash) : std::string(hash);
            if (hash_hex.size() != 64 || hash_hex.find_first_not_of("0123456789abcdef") != std::string::npos)
                throw Bad{"the shard of '" + std::string(text_of(kv.key)) + "' is not named by a sha256"};
            out.shards.emplace(std::string(text_of(kv.key)), std::move(hash_hex));
        }
    } catch (const Bad& b) {
        throw InputError(source.name + ": expected a sharded repodata index (CEP 16): " + b.what);
    }
    return out;
}

IndexRecords parse_shard(std::string_view msgpack, const ShardIndex& index, const std::string& name,
                         const std::string& shard_url) {
    IndexRecords out;
    std::string current;
    try {
        Unpacked doc(msgpack);
        for (const char* section : {"packages", "packages.conda"}) {
            const msgpack_object* records = field(doc.root(), section);
            if (!records || is_nil(*records)) continue;
            if (records->type != MSGPACK_OBJECT_MAP) throw Bad{std::string("'") + section + "' is not a map"};
            for (std::uint32_t i = 0; i < records->via.map.size; ++i) {
                const auto& kv = records->via.map.ptr[i];
                current = text_of(kv.key);
                IndexRecord r;
                read_record(kv.val, r);
                if (r.name.empty() || r.version.empty()) throw Bad{"a record with no name or version"};
                if (r.name != name) continue;
                r.filename = current;
                r.channel = index.source.channel_url;
                if (!index.subdir.empty()) r.subdir = index.subdir;
                else if (r.subdir.empty()) r.subdir = index.source.subdir;
                r.url = index.base_url + current;
                out.push_back(std::move(r));
            }
        }
    } catch (const Bad& b) {
        std::string where = current.empty() ? "" : " (in record '" + current + "')";
        throw InputError(redact_url(shard_url) + ": malformed repodata shard" + where + ": " + b.what);
    }
    return out;
}

bool shard_matches(std::string_view bytes, std::string_view decoded, const std::string& sha256) {
    // CEP 16 names a shard by the hash of its file; a server that hashed the decoded msgpack
    // names it that way, and is taken at its word too.
    return sha256_hex(bytes) == sha256 || sha256_hex(decoded) == sha256;
}

IndexRecords read_fetched_shard(const Document& d, const ShardIndex& index, const std::string& name, const std::string& sha256) {
    std::string decoded = decompress_zstd(d.body(), redact_url(d.url));
    if (!shard_matches(d.body(), decoded, sha256)) {
        // Never kept: a cached shard is used without asking the server again.
        std::error_code ec;
        if (!d.cache_path.empty()) std::filesystem::remove(d.cache_path, ec);
        throw InputError(redact_url(d.url) + ": the shard's bytes do not hash to the sha256 that names it (" + sha256 +
                         "); a damaged or substituted file");
    }
    return parse_shard(decoded, index, name, d.url);
}

IndexRecords shard_records_of(const ShardIndex& index, const std::string& name, const FetchContext& ctx) {
    auto it = index.shards.find(name);
    if (it == index.shards.end()) return {};
    auto docs = get_documents({{index.shard_url(name), "", BodyKind::zstd, true}}, ctx);
    const Document& d = docs.front();
    if (d.missing_offline)
        throw EnvironmentError("offline, and not in the cache:\n  " + redact_url(d.fetched_url) +
                               "\n(run once without --offline to fill the cache)");
    if (!d.ok())
        throw EnvironmentError(!d.error.empty() ? d.error
                                                : "cannot fetch the shard of '" + name + "' at " + redact_url(d.fetched_url) +
                                                      ": HTTP " + std::to_string(d.status) + " (its channel's shard index names it)");
    return read_fetched_shard(d, index, name, it->second);
}

}  // namespace envlock::fetch
