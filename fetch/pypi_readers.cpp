#include "fetch/pypi_readers.hpp"

#include <strings.h>

#include <cctype>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "fetch/url.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/find_chars.hpp"
#include "resolver/specs/pep508.hpp"
#include "resolver/specs/utf8.hpp"
#include "resolver/specs/wheel.hpp"

namespace envlock::fetch {

namespace {

// Tag and attribute names are ASCII; blanks are the C locale's isspace, inline (it was a call
// per character of every page).
char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool html_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

bool iequals_prefix(std::string_view text, size_t pos, std::string_view word) {
    if (pos + word.size() > text.size()) return false;
    for (size_t i = 0; i < word.size(); ++i)
        if (ascii_lower(text[pos + i]) != word[i]) return false;
    return true;
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}


// The attributes of one tag, from just after its name to its '>'. Returns the position after '>'.
size_t read_attributes(std::string_view html, size_t pos, std::vector<std::pair<std::string, std::string>>& attrs) {
    attrs.clear();
    while (pos < html.size()) {
        while (pos < html.size() && html_space(html[pos])) ++pos;
        if (pos >= html.size()) break;
        if (html[pos] == '>') return pos + 1;
        if (html[pos] == '/') {
            ++pos;
            continue;
        }
        size_t name_start = pos;
        while (pos < html.size() && !html_space(html[pos]) && html[pos] != '=' &&
               html[pos] != '>' && html[pos] != '/')
            ++pos;
        std::string name(html.substr(name_start, pos - name_start));
        for (auto& c : name) c = ascii_lower(c);
        while (pos < html.size() && html_space(html[pos])) ++pos;
        std::string value;
        if (pos < html.size() && html[pos] == '=') {
            ++pos;
            while (pos < html.size() && html_space(html[pos])) ++pos;
            if (pos < html.size() && (html[pos] == '"' || html[pos] == '\'')) {
                char q = html[pos++];
                size_t end = html.find(q, pos);
                if (end == std::string_view::npos) end = html.size();
                value = html_unescape(html.substr(pos, end - pos));
                pos = end + 1;
            } else {
                size_t start = pos;
                while (pos < html.size() && !html_space(html[pos]) && html[pos] != '>') ++pos;
                value = html_unescape(html.substr(start, pos - start));
            }
        }
        if (!name.empty()) attrs.emplace_back(std::move(name), std::move(value));
    }
    return pos;
}

const std::string* attr(const std::vector<std::pair<std::string, std::string>>& attrs, std::string_view name) {
    for (const auto& [k, v] : attrs)
        if (k == name) return &v;
    return nullptr;
}

std::string strip_tags(std::string_view html) {
    if (find_first_of_chars(html, "<>&") == std::string_view::npos) return std::string(html);
    std::string out;
    bool in_tag = false;
    for (char c : html) {
        if (c == '<') in_tag = true;
        else if (c == '>') in_tag = false;
        else if (!in_tag) out += c;
    }
    return html_unescape(out);
}

std::string trim(std::string_view s) {
    while (!s.empty() && html_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && html_space(s.back())) s.remove_suffix(1);
    return std::string(s);
}

IndexRecords records_from_links(const std::vector<Link>& links, std::string_view page_url, std::string_view project) {
    IndexRecords out;
    std::string wanted = normalize_project_name(project);
    for (const auto& link : links) {
        auto dist = parse_dist_filename(link.filename, project);
        if (!dist) continue;
        if (!wanted.empty() && normalize_project_name(dist->name) != wanted) continue;
        IndexRecord r;
        r.ecosystem = Ecosystem::pypi;
        r.name = dist->name;
        r.version = dist->version;
        r.build = dist->build;
        r.filename = link.filename;
        r.url = link.url;
        r.sha256 = link.sha256;
        r.requires_python = link.requires_python;
        r.yanked = link.yanked;
        r.yanked_reason = link.yanked_reason;
        r.index = std::string(page_url);
        if (!link.core_metadata.empty() && link.core_metadata != "false") r.metadata_url = link.url + ".metadata";
        r.depends_known = false;
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace

std::string normalize_project_name(std::string_view name) { return pep508::normalize_name(name); }

std::string html_unescape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        // Runs without '&' are copied whole.
        size_t amp = text.find('&', i);
        if (amp == std::string_view::npos) amp = text.size();
        out.append(text.substr(i, amp - i));
        i = amp;
        if (i == text.size()) break;
        size_t semi = text.find(';', i);
        if (semi == std::string_view::npos || semi - i > 10) {
            out += '&';
            continue;
        }
        std::string_view ent = text.substr(i + 1, semi - i - 1);
        if (ent == "amp") out += '&';
        else if (ent == "lt") out += '<';
        else if (ent == "gt") out += '>';
        else if (ent == "quot") out += '"';
        else if (ent == "apos") out += '\'';
        else if (ent == "nbsp") append_utf8(out, 0xA0);
        else if (!ent.empty() && ent[0] == '#') {
            bool hex = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X');
            std::string digits(ent.substr(hex ? 2 : 1));
            char* end = nullptr;
            unsigned long cp = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
            if (digits.empty() || *end != '\0' || cp > 0x10FFFF) {
                out += '&';
                continue;
            }
            append_utf8(out, cp);
        } else {
            out += '&';
            continue;
        }
        i = semi;
    }
    return out;
}

std::optional<DistFilename> parse_dist_filename(std::string_view filename, std::string_view project) {
    DistFilename d;
    if (ends_with(filename, ".whl")) {
        try {
            auto w = wheel::WheelName::parse(filename);
            d.wheel = true;
            d.name = w.name;
            d.version = w.version;
            // The tag triple as the file writes it (compressed sets like "py2.py3-none-any" kept).
            std::string_view stem = filename.substr(0, filename.size() - 4);
            size_t cut = stem.size();
            for (int dashes = 0; dashes < 3 && cut != std::string_view::npos; ++dashes) cut = stem.rfind('-', cut - 1);
            if (cut == std::string_view::npos) return std::nullopt;
            d.build = stem.substr(cut + 1);
            return d;
        } catch (const InputError&) {
            return std::nullopt;
        }
    }
    auto sdist = wheel::SdistName::try_parse(filename);
    if (auto s = sdist) {
        if (project.empty() || pep508::normalize_name(s->name) == pep508::normalize_name(project)) {
            d.name = s->name;
            d.version = s->version;
            return d;
        }
    }
    std::string_view stem;
    for (std::string_view ext : {".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar.xz", ".tar"}) {
        if (ends_with(filename, ext)) {
            stem = filename.substr(0, filename.size() - ext.size());
            break;
        }
    }
    if (stem.empty()) return std::nullopt;
    size_t split = std::string_view::npos;
    if (!project.empty()) {
        // The project's name, however it is spelled, followed by "-".
        std::string wanted = normalize_project_name(project);
        for (size_t i = stem.find('-'); i != std::string_view::npos; i = stem.find('-', i + 1))
            if (normalize_project_name(stem.substr(0, i)) == wanted) {
                split = i;
                break;
            }
        // "torch-2.0.0-cp38-cp38-m-1.0.0.tar.gz" reads as project "torch-2.0.0-cp38-cp38-m" 1.0.0: when
        // the name/PEP 440 version split names another project, a split at this project's name
        // only counts if what follows is a PEP 440 version too.
        if (split != std::string_view::npos && sdist && !pep440::Version::try_parse(stem.substr(split + 1))) return std::nullopt;
    }
    if (split == std::string_view::npos)
        for (size_t i = stem.find('-'); i != std::string_view::npos; i = stem.find('-', i + 1))
            if (i + 1 < stem.size() && std::isdigit(static_cast<unsigned char>(stem[i + 1]))) {
                split = i;
                break;
            }
    if (split == std::string_view::npos || split == 0 || split + 1 >= stem.size()) return std::nullopt;
    // A version that is not PEP 440 is skipped, as pip ≥ 22 does (packaging dropped LegacyVersion);
    // read for one project "torch-*.0.0.tar.gz" was the version "*.0.0" (found by fuzz/pypi_json).
    if (!pep440::Version::try_parse(stem.substr(split + 1))) return std::nullopt;
    d.name = stem.substr(0, split);
    d.version = stem.substr(split + 1);
    return d;
}

std::vector<Link> parse_html_links(std::string_view html, std::string_view page_url) {
    std::vector<Link> links;
    std::string base(page_url);
    std::vector<std::pair<std::string, std::string>> attrs;
    size_t pos = 0;
    while ((pos = html.find('<', pos)) != std::string_view::npos) {
        if (iequals_prefix(html, pos + 1, "base") &&
            (pos + 5 < html.size() && html_space(html[pos + 5]))) {
            pos = std::min(read_attributes(html, pos + 5, attrs), html.size());
            if (auto href = attr(attrs, "href")) base = url_join(page_url, *href);
            continue;
        }
        bool anchor = iequals_prefix(html, pos + 1, "a") && pos + 2 < html.size() &&
                      (html_space(html[pos + 2]) || html[pos + 2] == '>');
        if (!anchor) {
            ++pos;
            continue;
        }
        // An unterminated tag at the end of the page reads past it: resume at the end.
        pos = std::min(read_attributes(html, pos + 2, attrs), html.size());
        size_t close = pos;
        while ((close = html.find('<', close)) != std::string_view::npos && !iequals_prefix(html, close, "</a")) ++close;
        std::string_view inner = html.substr(pos, close == std::string_view::npos ? std::string_view::npos : close - pos);
        auto href = attr(attrs, "href");
        if (!href || href->empty()) continue;
        Link link;
        std::string absolute = url_join(base, *href);
        std::string_view fragment;
        link.url = std::string(strip_fragment(absolute, &fragment));
        if (fragment.substr(0, 7) == "sha256=") link.sha256 = fragment.substr(7);
        std::string_view path = link.url;
        path = path.substr(0, path.find('?'));
        link.filename = percent_decode(path.substr(path.rfind('/') + 1));
        link.text = trim(strip_tags(inner));
        if (auto v = attr(attrs, "data-requires-python")) link.requires_python = *v;
        if (auto v = attr(attrs, "data-core-metadata")) link.core_metadata = v->empty() ? "true" : *v;
        else if (auto v2 = attr(attrs, "data-dist-info-metadata")) link.core_metadata = v2->empty() ? "true" : *v2;
        if (auto v = attr(attrs, "data-yanked")) {
            link.yanked = true;
            link.yanked_reason = *v;
        }
        links.push_back(std::move(link));
    }
    return links;
}

IndexRecords parse_simple_html(std::string_view html, std::string_view page_url, std::string_view project) {
    return records_from_links(parse_html_links(html, page_url), page_url, project);
}

IndexRecords parse_find_links(std::string_view html, std::string_view page_url, std::string_view project) {
    return records_from_links(parse_html_links(html, page_url), page_url, project);
}

IndexRecords parse_simple_json(std::string_view json, std::string_view page_url, std::string_view project) {
    // simdjson's DOM: numpy's page is 2 MB, a book-sized resolve reads 30 MB of pages cold, and
    // nlohmann's tree of maps took a large part of that run's CPU.
    const std::string where(redact_url(page_url));
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (auto error = parser.parse(json.data(), json.size()).get(doc))   // copies into padded memory
        throw InputError(where + ": malformed PEP 691 project page: " + simdjson::error_message(error));
    simdjson::dom::array files;
    if (!doc.is_object() || doc["files"].get(files))
        throw InputError(where + ": malformed PEP 691 project page: expected an object with a 'files' list");
    std::vector<Link> links;
    std::vector<std::optional<std::uint64_t>> sizes;
    auto text = [](simdjson::dom::element e) { return std::string(std::string_view(e)); };   // throws unless a string
    try {
        for (simdjson::dom::element f : files) {
            Link link;
            simdjson::dom::element url = f.at_key("url");   // throws when missing
            std::string absolute = url_join(page_url, text(url));
            std::string_view fragment;
            link.url = std::string(strip_fragment(absolute, &fragment));
            if (simdjson::dom::element name; !f["filename"].get(name)) link.filename = text(name);
            if (link.filename.empty()) link.filename = percent_decode(link.url.substr(link.url.rfind('/') + 1));
            simdjson::dom::element hashes, sha256;
            if (!f["hashes"].get(hashes) && hashes.is_object() && !hashes["sha256"].get(sha256)) link.sha256 = text(sha256);
            if (simdjson::dom::element rp; !f["requires-python"].get(rp) && rp.is_string()) link.requires_python = text(rp);
            for (const char* key : {"core-metadata", "dist-info-metadata", "data-dist-info-metadata"}) {
                simdjson::dom::element m;
                if (f[key].get(m)) continue;
                if (m.is_bool()) link.core_metadata = bool(m) ? "true" : "";
                else if (m.is_object()) {
                    simdjson::dom::element hash;
                    link.core_metadata = m["sha256"].get(hash) ? "true" : "sha256=" + text(hash);
                }
                break;
            }
            if (simdjson::dom::element y; !f["yanked"].get(y)) {
                if (y.is_string()) {
                    link.yanked = true;
                    link.yanked_reason = text(y);
                } else if (y.is_bool()) {
                    link.yanked = bool(y);
                }
            }
            // A size that is not a non-negative integer is ignored, as an absent one is.
            std::optional<std::uint64_t> size;
            if (simdjson::dom::element n; !f["size"].get(n)) {
                if (n.is_uint64()) size = std::uint64_t(n);
                else if (n.is_int64() && std::int64_t(n) >= 0) size = std::uint64_t(std::int64_t(n));
            }
            sizes.push_back(size);
            links.push_back(std::move(link));
        }
    } catch (const simdjson::simdjson_error& e) {
        throw InputError(where + ": malformed PEP 691 project page: each file needs a 'url' string (" + e.what() + ")");
    }
    auto records = records_from_links(links, page_url, project);
    // PEP 691 gives sizes; carry them over by file name (numpy's page lists ~2000 files: a map,
    // not a scan of the page per record, which took most of a cold resolve's CPU).
    std::unordered_map<std::string_view, std::uint64_t> size_of;
    for (std::size_t i = 0; i < links.size(); ++i)
        if (sizes[i]) size_of.emplace(links[i].filename, *sizes[i]);
    for (auto& r : records)
        if (auto it = size_of.find(r.filename); it != size_of.end()) r.size = it->second;
    return records;
}

IndexRecords parse_pypi_json(std::string_view json, std::string_view url, std::string_view project) {
    const std::string where(redact_url(url));
    IndexRecords out;
    try {
        auto doc = nlohmann::json::parse(json);
        const auto& info = doc.at("info");
        std::string latest = info.value("version", std::string{});
        std::vector<std::string> requires_dist;
        if (info.contains("requires_dist") && info["requires_dist"].is_array())
            requires_dist = info["requires_dist"].get<std::vector<std::string>>();
        std::string info_requires_python =
            info.contains("requires_python") && info["requires_python"].is_string() ? info["requires_python"].get<std::string>() : "";
        std::string page_name = info.contains("name") && info["name"].is_string() ? info["name"].get<std::string>() : "";
        // A page that names another project (a mirror's misrouted answer) holds none of this
        // project's files; its records would carry the other name (found by fuzz/pypi_json).
        if (!project.empty() && !page_name.empty() && normalize_project_name(page_name) != normalize_project_name(project))
            throw InputError(where + ": the PyPI JSON page describes the project '" + page_name + "', not '" +
                             std::string(project) + "'");
        std::string wanted = normalize_project_name(project.empty() ? page_name : project);
        const auto& releases = doc.at("releases");
        for (auto it = releases.begin(); it != releases.end(); ++it) {
            for (const auto& f : it.value()) {
                std::string filename = f.at("filename").get<std::string>();
                auto dist = parse_dist_filename(filename, wanted);
                if (!dist) continue;
                if (!wanted.empty() && normalize_project_name(dist->name) != wanted) continue;
                IndexRecord r;
                r.ecosystem = Ecosystem::pypi;
                r.name = info.value("name", dist->name);
                r.version = it.key();
                r.build = dist->build;
                r.filename = filename;
                r.url = f.at("url").get<std::string>();
                if (f.contains("digests")) {
                    r.sha256 = f["digests"].value("sha256", std::string{});
                    r.md5 = f["digests"].value("md5", std::string{});
                }
                if (f.contains("size") && f["size"].is_number_unsigned()) r.size = f["size"].get<std::uint64_t>();
                if (f.contains("requires_python") && f["requires_python"].is_string())
                    r.requires_python = f["requires_python"].get<std::string>();
                r.yanked = f.value("yanked", false);
                if (f.contains("yanked_reason") && f["yanked_reason"].is_string()) r.yanked_reason = f["yanked_reason"].get<std::string>();
                r.index = where;
                r.depends_known = it.key() == latest;
                if (r.depends_known) {
                    r.depends = requires_dist;
                    if (r.requires_python.empty()) r.requires_python = info_requires_python;
                }
                out.push_back(std::move(r));
            }
        }
    } catch (const nlohmann::json::exception& e) {
        throw InputError(where + ": malformed PyPI JSON API answer: expected 'info' and 'releases' with files (" +
                         std::string(e.what()) + ")");
    }
    return out;
}

CoreMetadata parse_core_metadata(std::string_view given) {
    // Decoded as packaging does (a line that is not UTF-8 is Latin-1), so that what is taken
    // from it can be written as JSON and YAML whatever the file's bytes.
    std::string decoded;
    if (utf8::invalid_at(given)) decoded = utf8::utf8_or_latin1(given);
    std::string_view text = decoded.empty() ? given : std::string_view(decoded);
    CoreMetadata m;
    std::string name, value;
    auto flush = [&] {
        if (name.empty()) return;
        std::string v = trim(value);
        if (strcasecmp(name.c_str(), "Name") == 0) m.name = v;
        else if (strcasecmp(name.c_str(), "Version") == 0) m.version = v;
        else if (strcasecmp(name.c_str(), "Requires-Python") == 0) m.requires_python = v;
        else if (strcasecmp(name.c_str(), "Requires-Dist") == 0) m.requires_dist.push_back(v);
        else if (strcasecmp(name.c_str(), "Metadata-Version") == 0) m.metadata_version = v;
        else if (strcasecmp(name.c_str(), "Dynamic") == 0) m.dynamic.push_back(v);
        name.clear();
        value.clear();
    };
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) break;  // the body (long description) starts here
        if (line.front() == ' ' || line.front() == '\t') {
            value += ' ';
            value += trim(line);
        } else {
            flush();
            auto colon = line.find(':');
            if (colon != std::string_view::npos) {
                name = trim(line.substr(0, colon));
                value = line.substr(colon + 1);
            }
        }
        if (nl == std::string_view::npos) break;
        pos = nl + 1;
    }
    flush();
    return m;
}

}  // namespace envlock::fetch
