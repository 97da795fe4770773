#include "fetch/conda_repodata.hpp"

#include <zstd.h>

#include <simdjson.h>

#include "fetch/url.hpp"
#include "resolver/errors.hpp"

namespace envlock::fetch {

namespace od = simdjson::ondemand;

namespace {

struct Info {
    std::string subdir;
    std::string base_url;   // absolute, no trailing slash; "" when the file has none
};

// Thrown inside the walk with the part of the file that was being read.
struct Malformed {
    std::string what;
};

std::string_view string_or_empty(od::value v) {
    if (v.is_null()) return {};
    return v.get_string();
}

void read_strings(od::value v, std::vector<std::string>& out) {
    out.clear();
    if (v.is_null()) return;
    if (v.type() == od::json_type::string) {
        // track_features is a space- or comma-separated string in most repodata.
        std::string_view s = v.get_string();
        size_t i = 0;
        while (i < s.size()) {
            size_t j = s.find_first_of(" ,", i);
            if (j == std::string_view::npos) j = s.size();
            if (j > i) out.emplace_back(s.substr(i, j - i));
            i = j + 1;
        }
        return;
    }
    for (auto item : v.get_array()) out.emplace_back(std::string_view(item.get_string()));
}

void read_record(od::object obj, IndexRecord& r) {
    for (auto field : obj) {
        std::string_view key = field.unescaped_key();
        od::value v = field.value();
        switch (key.size()) {
        case 4:
            if (key == "name") r.name = v.get_string().value();
            else if (key == "size") r.size = v.get_uint64();
            break;
        case 5:
            if (key == "build") r.build = v.get_string().value();
            break;
        case 6:
            if (key == "sha256") r.sha256 = string_or_empty(v);
            else if (key == "noarch") {
                if (v.type() == od::json_type::boolean) r.noarch = v.get_bool() ? "generic" : "";
                else r.noarch = string_or_empty(v);
            } else if (key == "subdir") r.subdir = string_or_empty(v);
            break;
        case 7:
            if (key == "version") r.version = v.get_string().value();
            else if (key == "depends") read_strings(v, r.depends);
            else if (key == "license") r.license = string_or_empty(v);
            break;
        case 3:
            if (key == "md5") r.md5 = string_or_empty(v);
            break;
        case 9:
            if (key == "timestamp") {
                // Seconds in old repodata, milliseconds in new; normalise to milliseconds.
                std::uint64_t t = v.type() == od::json_type::number && v.get_number_type() != od::number_type::unsigned_integer &&
                                          v.get_number_type() != od::number_type::signed_integer
                                      ? static_cast<std::uint64_t>(double(v.get_double()))
                                      : v.get_uint64().value();
                r.timestamp = t < 100000000000ULL ? t * 1000 : t;
            }
            break;
        case 10:
            if (key == "constrains") read_strings(v, r.constrains);
            break;
        case 12:
            if (key == "build_number") r.build_number = static_cast<int>(v.get_int64());
            break;
        case 14:
            if (key == "track_features") read_strings(v, r.track_features);
            break;
        default:
            break;
        }
    }
}

void read_info(od::object obj, const RepodataSource& source, Info& info) {
    for (auto field : obj) {
        std::string_view key = field.unescaped_key();
        if (key == "subdir") info.subdir = string_or_empty(field.value());
        else if (key == "base_url") info.base_url = string_or_empty(field.value());
    }
}

bool starts_with_package(std::string_view filename, std::string_view package) {
    return package.empty() ||
           (filename.size() > package.size() && filename.substr(0, package.size()) == package && filename[package.size()] == '-');
}

bool is_archive_name(std::string_view key) {
    auto ends = [&](std::string_view s) { return key.size() > s.size() && key.substr(key.size() - s.size()) == s; };
    return ends(".tar.bz2") || ends(".conda");
}

class Walker {
public:
    Walker(const RepodataSource& source, std::string_view package, const std::function<void(IndexRecord&)>& visit)
        : source_(source), package_(package), visit_(visit) {}

    void walk(od::document& doc) {
        od::object top = doc.get_object();
        bool need_info_first = false;
        for (auto field : top) {
            std::string_view key = field.unescaped_key();
            if (key == "info") {
                read_info(field.value().get_object(), source_, info_);
                info_seen_ = true;
            } else if (key == "packages" || key == "packages.conda") {
                if (!info_seen_) {
                    need_info_first = true;
                    break;
                }
                read_packages(field.value().get_object());
            } else if (is_archive_name(key)) {
                read_one(key, field.value());  // flat {filename: record} index
            }
        }
        if (need_info_first) {
            // Rare: "info" after "packages". Find it, then read the records.
            doc.rewind();
            for (auto field : doc.get_object())
                if (std::string_view(field.unescaped_key()) == "info") read_info(field.value().get_object(), source_, info_);
            info_seen_ = true;
            doc.rewind();
            for (auto field : doc.get_object()) {
                std::string_view key = field.unescaped_key();
                if (key == "packages" || key == "packages.conda") read_packages(field.value().get_object());
                else if (is_archive_name(key)) read_one(key, field.value());
            }
        }
    }

private:
    void read_packages(od::object packages) {
        for (auto field : packages) {
            std::string_view filename = field.unescaped_key();
            read_one(filename, field.value());
        }
    }

    void read_one(std::string_view filename, od::value value) {
        if (!starts_with_package(filename, package_)) return;
        current_ = filename;
        if (value.type() != od::json_type::object)
            throw Malformed{"record '" + std::string(filename) + "' is not a JSON object"};
        record_ = IndexRecord{};
        record_.ecosystem = Ecosystem::conda;
        read_record(value.get_object(), record_);
        if (!package_.empty() && record_.name != package_) return;
        if (record_.name.empty() || record_.version.empty())
            throw Malformed{"record '" + std::string(filename) + "' has no name or version"};
        record_.filename = filename;
        record_.channel = source_.channel_url;
        if (!info_.subdir.empty()) record_.subdir = info_.subdir;
        else if (record_.subdir.empty()) record_.subdir = source_.subdir;
        record_.index = source_.name;
        if (!info_.base_url.empty()) {
            // base_url may be relative to the subdir's own URL (CEP 15).
            std::string base = info_.base_url;
            if (base.find("://") == std::string::npos)
                base = url_join(source_.channel_url + "/" + record_.subdir + "/", base);
            if (base.back() != '/') base += '/';
            record_.url = base;
            record_.url += filename;
        } else {
            record_.url.reserve(source_.channel_url.size() + record_.subdir.size() + filename.size() + 2);
            record_.url = source_.channel_url;
            record_.url += '/';
            record_.url += record_.subdir;
            record_.url += '/';
            record_.url += filename;
        }
        visit_(record_);
    }

public:
    std::string current_;

private:
    const RepodataSource& source_;
    std::string_view package_;
    const std::function<void(IndexRecord&)>& visit_;
    Info info_;
    bool info_seen_ = false;
    IndexRecord record_;
};

void walk_padded(const char* data, size_t len, size_t capacity, const RepodataSource& source,
                 std::string_view package, const std::function<void(IndexRecord&)>& visit) {
    od::parser parser;
    Walker walker(source, package, visit);
    try {
        od::document doc = parser.iterate(data, len, capacity);
        walker.walk(doc);
    } catch (const Malformed& m) {
        throw InputError(source.name + ": malformed repodata: " + m.what);
    } catch (const simdjson::simdjson_error& e) {
        std::string where = walker.current_.empty() ? "" : " (in record '" + walker.current_ + "')";
        std::string expected = e.error() == simdjson::INCORRECT_TYPE
                                   ? "a field of another type than repodata has"
                                   : std::string(e.what());
        throw InputError(source.name + ": malformed repodata" + where +
                         ": expected a JSON object with 'info' and 'packages'; " + expected);
    }
}

}  // namespace

void visit_repodata(const std::string& json, const RepodataSource& source, std::string_view package,
                    const std::function<void(IndexRecord&)>& visit) {
    if (json.capacity() >= json.size() + simdjson::SIMDJSON_PADDING) {
        walk_padded(json.data(), json.size(), json.capacity(), source, package, visit);
    } else {
        visit_repodata(std::string_view(json), source, package, visit);
    }
}

void visit_repodata(std::string_view json, const RepodataSource& source, std::string_view package,
                    const std::function<void(IndexRecord&)>& visit) {
    simdjson::padded_string padded(json);
    walk_padded(padded.data(), padded.size(), padded.size() + simdjson::SIMDJSON_PADDING, source, package, visit);
}

void visit_repodata_padded(std::string_view json, const RepodataSource& source, std::string_view package,
                           const std::function<void(IndexRecord&)>& visit) {
    walk_padded(json.data(), json.size(), json.size() + simdjson::SIMDJSON_PADDING, source, package, visit);
}

IndexRecords parse_repodata(std::string_view json, const RepodataSource& source) {
    IndexRecords out;
    visit_repodata(json, source, {}, [&](IndexRecord& r) { out.push_back(std::move(r)); });
    return out;
}

IndexRecords parse_repodata(std::string_view json, std::string_view channel_url, std::string_view source_name) {
    return parse_repodata(json, RepodataSource{trim_trailing_slashes(channel_url), "", std::string(source_name)});
}

IndexRecords parse_repodata_for(std::string_view json, const RepodataSource& source, std::string_view package) {
    IndexRecords out;
    visit_repodata(json, source, package, [&](IndexRecord& r) { out.push_back(std::move(r)); });
    return out;
}

std::string decompress_zstd(std::string_view compressed, std::string_view source_name) {
    std::string out;
    unsigned long long known = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
    if (known == ZSTD_CONTENTSIZE_ERROR)
        throw InputError(std::string(source_name) + ": not zstd-compressed data (bad frame header)");
    ZSTD_DCtx* ctx = ZSTD_createDCtx();
    if (known != ZSTD_CONTENTSIZE_UNKNOWN) out.reserve(known + simdjson::SIMDJSON_PADDING);
    ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
    std::string chunk(ZSTD_DStreamOutSize(), '\0');
    size_t ret = 1;
    while (in.pos < in.size) {
        ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
        ret = ZSTD_decompressStream(ctx, &o, &in);
        if (ZSTD_isError(ret)) {
            ZSTD_freeDCtx(ctx);
            throw InputError(std::string(source_name) + ": damaged zstd data: " + ZSTD_getErrorName(ret));
        }
        out.append(chunk.data(), o.pos);
    }
    ZSTD_freeDCtx(ctx);
    if (ret != 0) throw InputError(std::string(source_name) + ": truncated zstd data");
    out.reserve(out.size() + simdjson::SIMDJSON_PADDING);
    return out;
}

}  // namespace envlock::fetch
