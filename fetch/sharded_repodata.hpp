#pragma once
// Reader of sharded repodata (CEP 16, conda/ceps cep-0016.md): a channel subdir may offer
// <subdir>/repodata_shards.msgpack.zst, a zstd-compressed msgpack map
//   {version: 1, info: {base_url, shards_base_url, ...}, shards: {name: <32-byte sha256>}}
// and, per package name, <shards_base_url><sha256 hex>.msgpack.zst holding
//   {packages: {filename: record}, packages.conda: {filename: record}, removed: [...]}
// whose records are repodata.json's with sha256 and md5 as bytes. Both URLs in `info` may be
// relative to the shard index's URL. A shard is named by the hash of its bytes, so a cached one
// never needs revalidating; a shard whose bytes do not hash to its name is refused.
#include <map>
#include <string>
#include <string_view>

#include "fetch/conda_repodata.hpp"
#include "fetch/documents.hpp"
#include "fetch/settings.hpp"
#include "resolver/specs/record.hpp"

namespace envlock::fetch {

struct ShardIndex {
    RepodataSource source;         // channel root and subdir; `name` (the index URL) in errors
    std::string subdir;            // info.subdir, when given
    std::string base_url;          // absolute, ending in '/': where the packages are
    std::string shards_base_url;   // absolute, ending in '/': where the shards are
    std::map<std::string, std::string> shards;   // package name -> sha256 of its shard (hex)

    // <shards_base_url><sha256>.msgpack.zst; "" when the channel has no such name.
    std::string shard_url(const std::string& name) const;
};

// `msgpack` is the decoded index; `index_url` the URL it was fetched as (before mirrors), which
// relative URLs in `info` are resolved against. InputError naming source.name when it is not
// a shard index.
ShardIndex parse_shard_index(std::string_view msgpack, const RepodataSource& source, const std::string& index_url);

// The records of one decoded shard: `packages` then `packages.conda`, each in its order in the
// shard; only those named `name` (a record named otherwise is not that name's). InputError
// naming `shard_url` when it is not a shard.
IndexRecords parse_shard(std::string_view msgpack, const ShardIndex& index, const std::string& name,
                         const std::string& shard_url);

// Whether `bytes` (a shard as fetched, or decoded) hash to `sha256_hex`.
bool shard_matches(std::string_view bytes, std::string_view decoded, const std::string& sha256_hex);

// A shard as fetched (get_documents, answered 200): decoded, checked against the sha256 that
// names it, read. A shard that does not match is removed from the cache (a cached shard is
// used without asking the server again) and is an InputError naming its URL.
IndexRecords read_fetched_shard(const Document& shard, const ShardIndex& index, const std::string& name,
                                const std::string& sha256_hex);

// The records of `name` in a shard index's channel subdir: its one shard fetched (nothing when
// the index does not name it). Errors as find_records'.
IndexRecords shard_records_of(const ShardIndex& index, const std::string& name, const FetchContext& ctx);

}  // namespace envlock::fetch
