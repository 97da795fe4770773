#include "publish/index_pages.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "fetch/pypi_readers.hpp"
#include "fetch/url.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::publish {
namespace {

namespace fs = std::filesystem;

// Everything but RFC 3986's unreserved characters and '/' escaped: a wheel's '+' (torch's local
// versions) reads the same to every client, as download.pytorch.org writes it.
std::string percent_encode_path(std::string_view path) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') out += static_cast<char>(c);
        else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string html_escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string file_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// The page's own folder: "pypi.org/simple/six/index.html" -> "pypi.org/simple/six".
std::string folder_of(const std::string& page) {
    auto slash = page.rfind('/');
    return slash == std::string::npos ? "" : page.substr(0, slash);
}

// A file's href from a page: relative, escaped, with its sha256 (PEP 503).
std::string href(const std::string& page, const MirroredFile& f) {
    std::string rel = fs::path(f.path).lexically_relative(fs::path(folder_of(page))).generic_string();
    return percent_encode_path(rel) + (f.sha256.empty() ? "" : "#sha256=" + f.sha256);
}

// The page a URL names: a folder URL's index.html.
std::string page_path(std::string_view url) {
    std::string p = mirror_path(url);
    return p.back() == '/' ? p + "index.html" : p;
}

// One PEP 503 anchor; PEP 658's attribute under both of its names (PEP 714 renamed it; pip
// before 23.1 reads only the old one).
std::string anchor(const std::string& page, const MirroredFile& f) {
    std::string a = "<a href=\"" + html_escape(href(page, f)) + "\"";
    if (!f.requires_python.empty()) a += " data-requires-python=\"" + html_escape(f.requires_python) + "\"";
    if (!f.metadata_sha256.empty())
        a += " data-dist-info-metadata=\"sha256=" + f.metadata_sha256 + "\" data-core-metadata=\"sha256=" + f.metadata_sha256 + "\"";
    return a + ">" + html_escape(file_name(f.path)) + "</a><br>\n";
}

std::string links_page(const std::string& title, const std::string& page, const std::vector<const MirroredFile*>& files) {
    std::string html = "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"pypi:repository-version\" content=\"1.1\">\n<title>" +
                       html_escape(title) + "</title>\n</head>\n<body>\n<h1>" + html_escape(title) + "</h1>\n";
    for (const auto* f : files) html += anchor(page, *f);
    return html + "</body>\n</html>\n";
}

// PEP 691 (api-version 1.1, with PEP 700's versions and sizes).
std::string project_json(const std::string& project, const std::string& page, const std::vector<const MirroredFile*>& files) {
    nlohmann::json j;
    j["meta"] = {{"api-version", "1.1"}};
    j["name"] = project;
    std::set<std::string> versions;
    nlohmann::json list = nlohmann::json::array();
    for (const auto* f : files) {
        versions.insert(f->version);
        nlohmann::json e = {{"filename", file_name(f->path)}, {"url", percent_encode_path(fs::path(f->path).lexically_relative(fs::path(folder_of(page))).generic_string())},
                            {"hashes", nlohmann::json::object()}, {"size", f->size}};
        if (!f->sha256.empty()) e["hashes"]["sha256"] = f->sha256;
        if (!f->requires_python.empty()) e["requires-python"] = f->requires_python;
        nlohmann::json meta = f->metadata_sha256.empty() ? nlohmann::json(false) : nlohmann::json({{"sha256", f->metadata_sha256}});
        e["core-metadata"] = meta;
        e["dist-info-metadata"] = meta;
        list.push_back(std::move(e));
    }
    j["files"] = std::move(list);
    j["versions"] = versions;
    return j.dump(1) + "\n";
}

// repodata.json: conda's packages (.tar.bz2) and packages.conda (.conda) keyed by file name.
std::string repodata(const std::string& subdir, const std::vector<const MirroredFile*>& files) {
    nlohmann::json j;
    j["info"] = {{"subdir", subdir}};
    j["packages"] = nlohmann::json::object();
    j["packages.conda"] = nlohmann::json::object();
    for (const auto* f : files) {
        std::string name = file_name(f->path);
        bool conda_format = name.size() > 6 && name.compare(name.size() - 6, 6, ".conda") == 0;
        j[conda_format ? "packages.conda" : "packages"][name] = f->record;
    }
    j["removed"] = nlohmann::json::array();
    j["repodata_version"] = 1;
    return j.dump(1) + "\n";
}

}  // namespace

std::string mirror_path(std::string_view url) {
    std::string bare = fetch::strip_userinfo(fetch::strip_fragment(url));
    if (auto q = bare.find('?'); q != std::string::npos) bare.resize(q);
    auto scheme = bare.find("://");
    if (scheme == std::string::npos) throw InputError("the URL " + fetch::redact_url(url) + " has no scheme (https://, file://)");
    std::string rest = bare.substr(scheme + 3);
    std::string host = bare.compare(0, scheme, "file") == 0 ? "file" : rest.substr(0, rest.find('/'));
    std::string path = bare.compare(0, scheme, "file") == 0 ? rest.substr(rest.find('/') == std::string::npos ? rest.size() : rest.find('/'))
                                                            : (rest.find('/') == std::string::npos ? "/" : rest.substr(rest.find('/')));
    if (host.empty() || host == "." || host == "..") throw InputError("the URL " + fetch::redact_url(url) + " names no host");
    std::string decoded = fetch::percent_decode(path);
    // Each part of the path becomes a folder: none may climb out of the mirror or be empty.
    std::size_t start = 1;
    while (start < decoded.size()) {
        std::size_t end = decoded.find('/', start);
        std::string part = decoded.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (part == "." || part == ".." || (part.empty() && end != std::string::npos) || part.find('\0') != std::string::npos)
            throw InputError("the URL " + fetch::redact_url(url) + " has a path a mirror folder cannot hold ('" + part + "')");
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return host + decoded;
}

std::string url_origin(std::string_view url) {
    std::string bare = fetch::strip_userinfo(url);
    auto scheme = bare.find("://");
    if (scheme == std::string::npos) return "";
    if (bare.compare(0, scheme, "file") == 0) return "file://";
    auto slash = bare.find('/', scheme + 3);
    return bare.substr(0, slash);
}

std::vector<Page> index_pages(const std::vector<MirroredFile>& files) {
    // Grouped by the page that lists them, each group in file-name order.
    std::map<std::pair<std::string, std::string>, std::vector<const MirroredFile*>> channels;   // (channel, subdir)
    std::map<std::string, std::vector<const MirroredFile*>> projects, find_links;                // by page URL
    for (const auto& f : files) {
        if (f.channel.empty()) continue;
        if (f.kind == Ecosystem::conda) channels[{f.channel, f.subdir}].push_back(&f);
        else if (f.find_links) find_links[f.channel].push_back(&f);
        else if (f.channel.back() == '/') projects[f.channel].push_back(&f);
        else find_links[f.channel].push_back(&f);   // a page, not a folder: what a find-links page is
    }
    auto by_name = [](const MirroredFile* a, const MirroredFile* b) { return file_name(a->path) < file_name(b->path); };
    std::map<std::string, std::string> pages;

    std::set<std::string> channel_roots;
    for (auto& [key, list] : channels) {
        std::sort(list.begin(), list.end(), by_name);
        std::string root = mirror_path(fetch::trim_trailing_slashes(key.first));
        channel_roots.insert(root);
        pages[root + "/" + key.second + "/repodata.json"] = repodata(key.second, list);
    }
    // conda and mamba read <channel>/noarch beside the platform's subdir and fail without it.
    for (const auto& root : channel_roots)
        if (!pages.count(root + "/noarch/repodata.json")) pages[root + "/noarch/repodata.json"] = repodata("noarch", {});

    std::map<std::string, std::set<std::string>> index_projects;   // index folder -> project folders
    for (auto& [url, list] : projects) {
        std::sort(list.begin(), list.end(), by_name);
        std::string folder = mirror_path(url);                      // "pypi.org/simple/six/"
        folder.pop_back();
        std::string project = folder.substr(folder.rfind('/') + 1);
        std::string index = folder_of(folder);
        index_projects[index].insert(project);
        pages[folder + "/index.html"] = links_page("Links for " + project, folder + "/index.html", list);
        pages[folder + "/index.json"] = project_json(project, folder + "/index.json", list);
    }
    for (const auto& [index, names] : index_projects) {
        std::string html = "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"pypi:repository-version\" content=\"1.1\">\n"
                           "<title>Simple index</title>\n</head>\n<body>\n";
        nlohmann::json j;
        j["meta"] = {{"api-version", "1.1"}};
        j["projects"] = nlohmann::json::array();
        for (const auto& n : names) {
            html += "<a href=\"" + percent_encode_path(n) + "/\">" + html_escape(n) + "</a><br>\n";
            j["projects"].push_back({{"name", n}});
        }
        pages[index + "/index.html"] = html + "</body>\n</html>\n";
        pages[index + "/index.json"] = j.dump(1) + "\n";
    }

    for (auto& [url, list] : find_links) {
        std::sort(list.begin(), list.end(), by_name);
        std::string page = page_path(url);
        pages[page] = links_page("Links", page, list);
    }

    std::vector<Page> out;
    for (auto& [path, text] : pages) out.push_back({path, std::move(text)});
    return out;
}

}  // namespace envlock::publish
