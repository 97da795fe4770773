#include "fetch/conda_repodata.hpp"

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include <simdjson.h>

#include "fetch/url.hpp"
#include "resolver/specs/errors.hpp"

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

// Strings are read straight from the input buffer (simdjson's raw string pointer) instead of
// being unescaped into the parser's string buffer: repodata strings almost never contain
// escapes, and skipping the copy keeps peak memory near the file's own size.
// `p` points just past the opening quote; returns the text up to the closing quote.
std::string_view raw_span(const char* p, bool& escaped) {
    const char* q = p;
    while (true) {
        const char* quote = static_cast<const char*>(std::memchr(q, '"', SIZE_MAX >> 1));
        // Count the backslashes right before the quote: an odd number escapes it.
        const char* b = quote;
        while (b > p && b[-1] == '\\') --b;
        if (((quote - b) & 1) == 0) {
            size_t n = static_cast<size_t>(quote - p);
            escaped = std::memchr(p, '\\', n) != nullptr;
            return {p, n};
        }
        q = quote + 1;
    }
}


// JSON string unescaping for the rare string with backslashes.
void unescape_into(std::string_view s, std::string& out) {
    out.clear();
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c != '\\' || i + 1 >= s.size()) {
            out += c;
            continue;
        }
        char e = s[++i];
        switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
            auto hex4 = [&](size_t at) -> unsigned {
                unsigned v = 0;
                for (size_t k = at; k < at + 4 && k < s.size(); ++k) {
                    char h = s[k];
                    v = v * 16 + (h >= '0' && h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
                }
                return v;
            };
            unsigned cp = hex4(i + 1);
            i += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < s.size() + 0 && s[i + 1] == '\\' && s[i + 2] == 'u') {
                unsigned lo = hex4(i + 3);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
            append_utf8(out, cp);
            break;
        }
        default: out += e; break;  // \" \\ \/
        }
    }
}

// The string's text straight from the input: simdjson's raw token (which already knows where
// the string ends, from its structural index) minus the quotes and trailing whitespace.
void assign_token(std::string_view tok, std::string& out, bool null_ok = false) {
    if (null_ok && tok.substr(0, 4) == "null") {
        out.clear();
        return;
    }
    while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t'))
        tok.remove_suffix(1);
    if (tok.size() < 2 || tok.front() != '"' || tok.back() != '"') throw simdjson::simdjson_error(simdjson::INCORRECT_TYPE);
    tok = tok.substr(1, tok.size() - 2);
    if (std::memchr(tok.data(), '\\', tok.size())) unescape_into(tok, out);
    else out.assign(tok.data(), tok.size());
}

void assign_string(od::value& v, std::string& out) { assign_token(v.raw_json_token(), out); }
void assign_string_or_empty(od::value& v, std::string& out) { assign_token(v.raw_json_token(), out, true); }

std::string_view key_of(od::field& field) {
    bool escaped = false;
    return raw_span(field.key().raw(), escaped);
}

std::string string_or_empty(od::value v) {
    std::string s;
    assign_string_or_empty(v, s);
    return s;
}

void read_strings(od::value& v, std::vector<std::string>& out) {
    if (v.is_null()) {
        out.clear();
        return;
    }
    if (v.type() == od::json_type::string) {
        // track_features is a space- or comma-separated string in most repodata.
        out.clear();
        std::string s;
        assign_string(v, s);
        size_t i = 0;
        while (i < s.size()) {
            size_t j = s.find_first_of(" ,", i);
            if (j == std::string::npos) j = s.size();
            if (j > i) out.emplace_back(s.substr(i, j - i));
            i = j + 1;
        }
        return;
    }
    // Strings already in `out` keep their buffers (a streaming walk reuses one record).
    size_t n = 0;
    for (auto item : v.get_array()) {
        if (n == out.size()) out.emplace_back();
        assign_token(std::string_view(item.raw_json_token()), out[n++]);
    }
    out.resize(n);
}

// Record keys are matched by their raw bytes including the closing quote ("name\""), so a
// key's length never has to be found first. The input is padded, so reading a few bytes
// past a short key is safe.
bool key_is(const char* raw, std::string_view word_with_quote) {
    return std::memcmp(raw, word_with_quote.data(), word_with_quote.size()) == 0;
}

void read_record(od::object obj, IndexRecord& r) {
    bool depends = false, constrains = false, track_features = false, features = false;
    // The fields stay inside simdjson_result (no copy into od::field): copying them costs
    // store-forwarding stalls that showed up as the hottest lines of the whole parse.
    for (auto field : obj) {
        const char* k = od::raw_json_string(field.key()).raw();
        od::value v = field.value();
        switch (k[0]) {
        case 'b':
            if (key_is(k, "build\"")) assign_string(v, r.build);
            else if (key_is(k, "build_number\"")) r.build_number = static_cast<int>(v.get_int64());
            break;
        case 'c':
            if (key_is(k, "constrains\"")) read_strings(v, r.constrains), constrains = true;
            break;
        case 'd':
            if (key_is(k, "depends\"")) read_strings(v, r.depends), depends = true;
            break;
        case 'f':
            // conda's `features` (a space- or comma-separated string, or a list).
            if (key_is(k, "features\"")) read_strings(v, r.features), features = true;
            break;
        case 'l':
            if (key_is(k, "license\"")) assign_string_or_empty(v, r.license);
            break;
        case 'm':
            if (key_is(k, "md5\"")) assign_string_or_empty(v, r.md5);
            break;
        case 'n':
            if (key_is(k, "name\"")) assign_string(v, r.name);
            else if (key_is(k, "noarch\"")) {
                if (v.type() == od::json_type::boolean) r.noarch = v.get_bool() ? "generic" : "";
                else assign_string_or_empty(v, r.noarch);
            }
            break;
        case 's':
            if (key_is(k, "sha256\"")) assign_string_or_empty(v, r.sha256);
            else if (key_is(k, "size\"")) r.size = v.get_uint64();
            else if (key_is(k, "subdir\"")) assign_string_or_empty(v, r.subdir);
            break;
        case 't':
            if (key_is(k, "timestamp\"")) {
                // Seconds in old repodata, milliseconds in new; normalise to milliseconds.
                std::uint64_t t = v.get_number_type() == od::number_type::floating_point_number
                                      ? static_cast<std::uint64_t>(double(v.get_double()))
                                      : v.get_uint64().value();
                r.timestamp = t < 100000000000ULL ? t * 1000 : t;
            } else if (key_is(k, "track_features\"")) {
                read_strings(v, r.track_features);
                track_features = true;
            }
            break;
        case 'v':
            if (key_is(k, "version\"")) assign_string(v, r.version);
            break;
        default:
            break;
        }
    }
    if (!depends) r.depends.clear();
    if (!constrains) r.constrains.clear();
    if (!track_features) r.track_features.clear();
    if (!features) r.features.clear();
}

// Empties a record but keeps its strings' buffers, so a streaming walk allocates little.
void reset_record(IndexRecord& r) {
    r.ecosystem = Ecosystem::conda;
    for (std::string* s : {&r.name, &r.version, &r.build, &r.filename, &r.url, &r.sha256, &r.md5, &r.channel, &r.subdir,
                           &r.index, &r.noarch, &r.license, &r.requires_python, &r.yanked_reason, &r.metadata_url, &r.git, &r.rev})
        s->clear();
    r.build_number = 0;
    r.size = r.timestamp = 0;
    // depends/constrains/track_features are emptied by read_record when absent, so their
    // strings' buffers survive from one record to the next.
    r.yanked = false;
    r.depends_known = true;
}

// A top-level section given twice is malformed: JSON readers disagree on which copy counts
// (Python's json keeps the last "info"; a streaming reader applied the first to the records
// before the second, and the index reader the last to all: found by fuzz/repodata).
class TopLevelKeys {
public:
    void see(std::string_view key) {
        int bit = key == "info" ? 1 : key == "packages" ? 2 : key == "packages.conda" ? 4 : 0;
        if (seen_ & bit) throw Malformed{"the top-level key '" + std::string(key) + "' appears twice"};
        seen_ |= bit;
    }

private:
    int seen_ = 0;
};

// simdjson's on-demand reader validates only what it reads: a skipped value such as the missing
// one in `"info": {"":}` can close the object early, and what follows is never looked at. Each
// pass over the document must end at its end (found by fuzz/repodata: the two readers parted
// at such a spot and read different records).
void expect_end(od::document& doc) {
    // simdjson 3.0 has no document::at_end(); current_location() is OUT_OF_BOUNDS exactly there.
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS)
        throw Malformed{"the top-level object ends before the file does, or a value is missing"};
}

void read_info(od::object obj, const RepodataSource& source, Info& info) {
    for (auto field_result : obj) {
        od::field field = std::move(field_result);
        std::string_view key = key_of(field);
        od::value v = field.value();
        if (key == "subdir") info.subdir = string_or_empty(v);
        else if (key == "base_url") info.base_url = string_or_empty(v);
        else if (v.type().error()) throw Malformed{"'info' has no value for '" + std::string(key) + "'"};   // `"info": {"":}`
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

// The file name, channel, subdir and URL of a record just read from its JSON object.
void finish_record(std::string_view filename, const Info& info, const RepodataSource& source, IndexRecord& r) {
    if (r.name.empty() || r.version.empty())
        throw Malformed{"record '" + std::string(filename) + "' has no name or version"};
    r.filename.assign(filename.data(), filename.size());
    r.channel = source.channel_url;
    if (!info.subdir.empty()) r.subdir = info.subdir;
    else if (r.subdir.empty()) r.subdir = source.subdir;
    if (!info.base_url.empty()) {
        // base_url may be relative to the subdir's own URL (CEP 15).
        std::string base = info.base_url;
        if (base.find("://") == std::string::npos) base = url_join(source.channel_url + "/" + r.subdir + "/", base);
        if (base.back() != '/') base += '/';
        r.url = base;
        r.url += filename;
    } else {
        r.url.reserve(source.channel_url.size() + r.subdir.size() + filename.size() + 2);
        r.url = source.channel_url;
        r.url += '/';
        r.url += r.subdir;
        r.url += '/';
        r.url += filename;
    }
}

class Walker {
public:
    Walker(const RepodataSource& source, std::string_view package, const std::function<void(IndexRecord&)>& visit)
        : source_(source), package_(package), visit_(visit) {}

    void walk(od::document& doc) {
        od::object top = doc.get_object();
        bool need_info_first = false;
        TopLevelKeys keys;
        for (auto field_result : top) {
            od::field field = std::move(field_result);
            std::string_view key = key_of(field);
            keys.see(key);
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
                read_flat(field);  // flat {filename: record} index
            }
        }
        if (!need_info_first) {
            expect_end(doc);
        } else {
            // Rare: "info" after "packages". Find it, then read the records.
            doc.rewind();
            TopLevelKeys all_keys;
            for (auto field_result : doc.get_object()) {
                od::field field = std::move(field_result);
                all_keys.see(key_of(field));
                if (key_of(field) == "info") read_info(field.value().get_object(), source_, info_);
            }
            expect_end(doc);
            info_seen_ = true;
            doc.rewind();
            for (auto field_result : doc.get_object()) {
                od::field field = std::move(field_result);
                std::string_view key = key_of(field);
                if (key == "packages" || key == "packages.conda") read_packages(field.value().get_object());
                else if (is_archive_name(key)) read_flat(field);
            }
            expect_end(doc);
        }
    }

private:
    void read_packages(od::object packages) {
        for (auto field : packages) {
            // File names of real channels have no escapes; one that does is read unescaped.
            bool escaped = false;
            std::string_view filename = raw_span(od::raw_json_string(field.key()).raw(), escaped);
            if (escaped) {
                unescape_into(filename, filename_buf_);
                filename = filename_buf_;
            }
            read_one(filename, field.value());
        }
    }

    // A flat index's top-level file name, read unescaped like those under "packages" (the
    // sparse reader did, this one did not: found by fuzz/repodata).
    void read_flat(od::field& field) {
        bool escaped = false;
        std::string_view filename = raw_span(field.key().raw(), escaped);
        if (escaped) {
            unescape_into(filename, filename_buf_);
            filename = filename_buf_;
        }
        read_one(filename, field.value());
    }

    void read_one(std::string_view filename, od::value value) {
        if (!starts_with_package(filename, package_)) return;
        current_ = filename;
        if (value.type() != od::json_type::object)
            throw Malformed{"record '" + std::string(filename) + "' is not a JSON object"};
        reset_record(record_);
        read_record(value.get_object(), record_);
        if (!package_.empty() && record_.name != package_) return;
        finish_record(filename, info_, source_, record_);
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
    std::string filename_buf_;
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
    // Real repodata spends 500-650 bytes per record; pages never touched cost no memory.
    out.reserve(json.size() / 400 + 16);
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

namespace {

// "torch-1.9.0-py38_0.tar.bz2" -> "torch": versions and builds hold no '-', names may.
// "" when the file name does not have that shape.
std::string_view name_from_filename(std::string_view f) {
    for (std::string_view ext : {std::string_view(".tar.bz2"), std::string_view(".conda")})
        if (f.size() > ext.size() && f.substr(f.size() - ext.size()) == ext) f.remove_suffix(ext.size());
    auto build = f.rfind('-');
    if (build == std::string_view::npos || build == 0) return {};
    auto version = f.rfind('-', build - 1);
    if (version == std::string_view::npos || version == 0) return {};
    return f.substr(0, version);
}

std::string key_text(const SparseRepodata& rd, const SparseRepodata::Raw& raw) {
    std::string_view key = rd.document().substr(raw.key, raw.key_size);
    std::string out;
    if (key.find('\\') != std::string_view::npos) unescape_into(key, out);
    else out.assign(key);
    return out;
}

// Reads one raw record object; `parser` must not be iterating anything else.
void read_raw_record(od::parser& parser, const SparseRepodata& rd, const SparseRepodata::Raw& raw, IndexRecord& r) {
    const char* at = rd.document().data() + raw.record;
    // The indexing pass skipped over the record without validating it, and the on-demand
    // parser reads past the end of an unbalanced span (a SEGV found by fuzz/repodata): check
    // that the span is one well-formed JSON value first (a few microseconds a record).
    thread_local simdjson::dom::parser validator;
    if (validator.parse(at, raw.record_size, false).error()) throw Malformed{"record is not well-formed JSON"};
    od::document doc = parser.iterate(at, raw.record_size, rd.document().size() - raw.record + PaddedBuffer::kPadding);
    reset_record(r);
    read_record(doc.get_object(), r);
}

[[noreturn]] void rethrow_malformed(const std::string& source_name, const std::string& current) {
    std::string where = current.empty() ? "" : " (in record '" + current + "')";
    try {
        throw;
    } catch (const Malformed& m) {
        throw InputError(source_name + ": malformed repodata: " + m.what);
    } catch (const simdjson::simdjson_error& e) {
        std::string expected = e.error() == simdjson::INCORRECT_TYPE ? "a field of another type than repodata has" : std::string(e.what());
        throw InputError(source_name + ": malformed repodata" + where + ": expected a JSON object with 'info' and 'packages'; " + expected);
    }
}

// Whether a record's JSON text holds `"name": "<name>"` (or without the space), the name
// spelled with no escape: true for nearly every record of a real channel.
bool says_name(std::string_view record, std::string_view name) {
    for (std::string_view key : {std::string_view("\"name\": \""), std::string_view("\"name\":\"")}) {
        for (std::size_t at = record.find(key); at != std::string_view::npos; at = record.find(key, at + 1)) {
            std::string_view rest = record.substr(at + key.size());
            if (rest.size() > name.size() && rest.substr(0, name.size()) == name && rest[name.size()] == '"') return true;
        }
    }
    return false;
}

// A built index's storage: what SparseRepodata's spans point into.
struct BuiltIndex {
    std::vector<SparseRepodata::Name> names;
    std::vector<SparseRepodata::Raw> raws;
    std::string strings;
};

}  // namespace

std::span<const SparseRepodata::Raw> SparseRepodata::records_named(std::string_view name) const {
    auto it = std::lower_bound(names.begin(), names.end(), name,
                               [&](const Name& n, std::string_view want) { return name_of(n) < want; });
    if (it == names.end() || name_of(*it) != name) return {};
    if (std::uint64_t(it->first) + it->count > raws.size()) throw StaleNameIndex{"a name's records lie past the index's end"};
    return raws.subspan(it->first, it->count);
}

SparseRepodata index_repodata(std::string json, std::size_t offset, const RepodataSource& source) {
    return index_repodata(PaddedBuffer(std::move(json)), offset, source);
}

SparseRepodata index_repodata(PaddedBuffer json, std::size_t offset, const RepodataSource& source) {
    SparseRepodata out;
    out.source = source;
    out.json = std::move(json);
    if (offset > out.json.size()) offset = out.json.size();
    out.offset = offset;
    const char* base = out.json.data() + offset;
    const std::size_t size = out.json.size() - offset;
    od::parser parser, side;
    Info info;
    IndexRecord scratch;
    std::string_view current;   // the record being indexed, for error messages
    std::string unescaped;
    // Records come sorted by file name, so one name's records are mostly adjacent.
    std::unordered_map<std::string, std::vector<SparseRepodata::Raw>> by_name;
    std::string_view last_name;
    std::vector<SparseRepodata::Raw>* last = nullptr;
    by_name.reserve(size / 8192);   // conda-forge: ~26k names in ~264 MB
    auto add = [&](const char* raw_key, od::value value) {
        bool escaped = false;
        std::string_view key = raw_span(raw_key, escaped);
        current = key;
        if (escaped) {
            unescape_into(key, unescaped);
            current = unescaped;
        }
        if (value.type() != od::json_type::object) throw Malformed{"record '" + std::string(current) + "' is not a JSON object"};
        od::object object = value.get_object();
        std::string_view record = object.raw_json();
        // The span runs to the next token: the last record of a section takes the white
        // space before the section's closing brace with it.
        while (record.size() > 1 && (record.back() == ' ' || record.back() == '\n' || record.back() == '\r' || record.back() == '\t'))
            record.remove_suffix(1);
        if (key.size() > UINT32_MAX || record.size() > UINT32_MAX) throw Malformed{"record '" + std::string(current) + "' is too large"};
        SparseRepodata::Raw raw{static_cast<std::uint64_t>(key.data() - base), static_cast<std::uint64_t>(record.data() - base),
                                static_cast<std::uint32_t>(key.size()), static_cast<std::uint32_t>(record.size())};
        // A record is its `name`'s, as conda reads it, whatever its file is called ("anaconda-
        // custom-0.tar.bz2" is dummy-anaconda's in conda's test index). The file name says
        // which name to expect; the record is read in full only when it does not say that
        // name in the usual spelling.
        std::string_view name = name_from_filename(current);
        if (name.empty() || !says_name(record, name)) {
            read_raw_record(side, out, raw, scratch);
            name = scratch.name;
        }
        if (!last || name != last_name) {
            auto it = by_name.try_emplace(std::string(name)).first;
            last = &it->second;
            last_name = it->first;   // node-based map: the key stays put
        }
        last->push_back(raw);
    };
    try {
        od::document doc = parser.iterate(base, size, size + PaddedBuffer::kPadding);
        TopLevelKeys keys;
        for (auto field_result : doc.get_object()) {
            od::field field = std::move(field_result);
            std::string_view key = key_of(field);
            keys.see(key);
            if (key == "info") {
                read_info(field.value().get_object(), source, info);
            } else if (key == "packages" || key == "packages.conda") {
                for (auto f : field.value().get_object()) add(od::raw_json_string(f.key()).raw(), f.value());
            } else if (is_archive_name(key)) {
                add(field.key().raw(), field.value());   // flat {filename: record} index
            }
        }
        expect_end(doc);
    } catch (...) {
        rethrow_malformed(source.name, std::string(current));
    }
    out.subdir = std::move(info.subdir);
    out.base_url = std::move(info.base_url);

    // Flattened: names sorted, each name's records one run in file order.
    auto built = std::make_shared<BuiltIndex>();
    std::vector<const std::pair<const std::string, std::vector<SparseRepodata::Raw>>*> sorted;
    sorted.reserve(by_name.size());
    std::size_t total = 0, text = 0;
    for (const auto& entry : by_name) {
        sorted.push_back(&entry);
        total += entry.second.size();
        text += entry.first.size();
    }
    std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    built->names.reserve(sorted.size());
    built->raws.reserve(total);
    built->strings.reserve(text);
    for (const auto* entry : sorted) {
        built->names.push_back({built->strings.size(), static_cast<std::uint32_t>(entry->first.size()),
                                static_cast<std::uint32_t>(built->raws.size()), static_cast<std::uint32_t>(entry->second.size()), 0});
        built->strings += entry->first;
        built->raws.insert(built->raws.end(), entry->second.begin(), entry->second.end());
    }
    out.names = built->names;
    out.raws = built->raws;
    out.strings = built->strings;
    out.index_storage = std::move(built);
    return out;
}

std::vector<std::string> names_of(const SparseRepodata& rd) {
    std::vector<std::string> out;
    out.reserve(rd.names.size());
    for (const auto& n : rd.names) out.emplace_back(rd.name_of(n));
    return out;
}

void visit_records_of(const SparseRepodata& rd, const std::string& name,
                      const std::function<void(IndexRecord&, std::size_t)>& visit) {
    auto raws = rd.records_named(name);
    if (raws.empty()) return;
    od::parser parser;
    Info info{rd.subdir, rd.base_url};
    IndexRecord r;
    std::string filename;
    const std::string_view doc = rd.document();
    for (const auto& raw : raws) {
        if (rd.saved) {
            // A saved index is trusted only as far as its positions land where it says: on a
            // quoted file name of this package and on one JSON object.
            bool fits = raw.key >= 1 && raw.key + raw.key_size < doc.size() && raw.record + raw.record_size <= doc.size() &&
                        raw.record_size >= 2 && doc[raw.key - 1] == '"' && doc[raw.key + raw.key_size] == '"' &&
                        doc[raw.record] == '{' && doc[raw.record + raw.record_size - 1] == '}';
            if (!fits) throw StaleNameIndex{"a record of '" + name + "' is not where the index says"};
        }
        filename = key_text(rd, raw);
        try {
            read_raw_record(parser, rd, raw, r);
            // Every record is filed under its own name; one that is not was filed by another
            // document or is damaged.
            if (r.name != name) {
                if (rd.saved) throw StaleNameIndex{"the index files '" + filename + "' under '" + name + "'"};
                continue;
            }
            finish_record(filename, info, rd.source, r);
        } catch (...) {
            rethrow_malformed(rd.source.name, filename);
        }
        visit(r, raw.record);
    }
}

IndexRecords in_file_order(std::vector<std::pair<std::size_t, IndexRecord>> records) {
    std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    IndexRecords out;
    out.reserve(records.size());
    for (auto& [position, r] : records) out.push_back(std::move(r));
    return out;
}

IndexRecords records_of(const SparseRepodata& rd, const std::set<std::string>& names) {
    std::vector<std::pair<std::size_t, IndexRecord>> found;
    for (const auto& name : names)
        visit_records_of(rd, name, [&](IndexRecord& r, std::size_t position) { found.emplace_back(position, std::move(r)); });
    return in_file_order(std::move(found));
}

std::string decompress_zstd(std::string_view compressed, std::string_view source_name, std::size_t max_size) {
    std::string out;
    unsigned long long known = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
    if (known == ZSTD_CONTENTSIZE_ERROR)
        throw InputError(std::string(source_name) + ": not zstd-compressed data (bad frame header)");
    auto too_large = [&] {
        return EnvironmentError(std::string(source_name) + ": decodes to more than " + std::to_string(max_size >> 20) +
                          " MB, more than any repodata (a zstd bomb?)");
    };
    if (known != ZSTD_CONTENTSIZE_UNKNOWN && known > max_size) throw too_large();
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
        if (out.size() + o.pos > max_size) {
            ZSTD_freeDCtx(ctx);
            throw too_large();
        }
        out.append(chunk.data(), o.pos);
    }
    ZSTD_freeDCtx(ctx);
    if (ret != 0) throw InputError(std::string(source_name) + ": truncated zstd data");
    out.reserve(out.size() + simdjson::SIMDJSON_PADDING);
    return out;
}

}  // namespace envlock::fetch
