#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "tests/mirror/archive.hpp"
#include "tests/mirror/artifacts.hpp"
#include "tests/mirror/files.hpp"
#include "tests/mirror/publish.hpp"

namespace envlock::mirror {
namespace {

using nlohmann::ordered_json;

constexpr const char* kUploadTime = "2021-06-01T00:00:00";

struct Built {
    const Published* pub;
    std::string sha256, md5, metadata_sha256;
    size_t size = 0;
};

// Builds and writes one file (and, with `metadata`, its PEP 658 .metadata sibling).
Built build_and_write(const std::string& root, const Published& p, bool metadata) {
    std::string bytes = p.dist.is_sdist() ? build_sdist(p.dist) : build_wheel(p.dist);
    write_file(root, p.path, bytes);
    Built b{&p, sha256_hex_of(bytes), md5_hex(bytes), "", bytes.size()};
    if (metadata && !p.dist.is_sdist()) {
        std::string meta = core_metadata(p.dist);
        write_file(root, p.path + ".metadata", meta);
        b.metadata_sha256 = sha256_hex_of(meta);
    }
    return b;
}

struct Pep440 {
    std::vector<int> release;
    int pre_kind = 3;  // 0 a, 1 b, 2 rc, 3 none
    int pre = 0, post = -1, dev = -1;
};

Pep440 parse440(const std::string& v) {
    Pep440 p;
    std::string s = v.substr(0, v.find('+'));
    std::transform(s.begin(), s.end(), s.begin(), ::tolower);
    size_t i = 0;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
        size_t j = i;
        while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
        if (j > i) p.release.push_back(std::stoi(s.substr(i, j - i)));
        i = j;
        if (i < s.size() && s[i] == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) ++i;
        else break;
    }
    static const std::regex pre(R"((a|alpha|b|beta|rc|c)\.?(\d*))"), post(R"(post\.?(\d*))"), dev(R"(dev\.?(\d*))");
    std::string rest = s.substr(i);
    std::smatch m;
    if (std::regex_search(rest, m, dev)) p.dev = m[1].str().empty() ? 0 : std::stoi(m[1]);
    if (std::regex_search(rest, m, post)) p.post = m[1].str().empty() ? 0 : std::stoi(m[1]);
    std::string nopost = std::regex_replace(rest, std::regex(R"(post\.?\d*|dev\.?\d*)"), "");
    if (std::regex_search(nopost, m, pre)) {
        std::string k = m[1];
        p.pre_kind = k[0] == 'a' ? 0 : k[0] == 'b' ? 1 : 2;
        p.pre = m[2].str().empty() ? 0 : std::stoi(m[2]);
    } else if (p.dev >= 0 && p.post < 0) {
        p.pre_kind = -1;  // 1.0.dev0 sorts before 1.0a0
    }
    while (!p.release.empty() && p.release.back() == 0) p.release.pop_back();
    return p;
}

bool is_prerelease(const std::string& v) {
    auto p = parse440(v);
    return p.pre_kind < 3 || p.dev >= 0;
}

std::string python_version_field(const PyDist& d) {
    if (d.is_sdist()) return "source";
    return d.tag.substr(0, d.tag.find('-'));
}

ordered_json json_api_file(const Built& b, const std::string& url) {
    const PyDist& d = b.pub->dist;
    ordered_json f;
    f["comment_text"] = "";
    f["digests"] = {{"md5", b.md5}, {"sha256", b.sha256}};
    f["downloads"] = -1;
    f["filename"] = d.filename();
    f["has_sig"] = false;
    f["md5_digest"] = b.md5;
    f["packagetype"] = d.is_sdist() ? "sdist" : "bdist_wheel";
    f["python_version"] = python_version_field(d);
    f["requires_python"] = d.requires_python.empty() ? ordered_json(nullptr) : ordered_json(d.requires_python);
    f["size"] = b.size;
    f["upload_time"] = kUploadTime;
    f["upload_time_iso_8601"] = std::string(kUploadTime) + ".000000Z";
    f["url"] = url;
    f["yanked"] = false;
    f["yanked_reason"] = nullptr;
    return f;
}

ordered_json json_api_info(const std::string& display, const std::string& norm, const std::string& version,
                           const PyDist* meta) {
    ordered_json info;
    info["author"] = "";
    info["classifiers"] = ordered_json::array();
    info["description"] = "";
    info["home_page"] = "https://example.invalid/" + norm;
    info["license"] = "";
    info["name"] = display;
    info["package_url"] = "https://pypi.org/project/" + norm + "/";
    info["project_url"] = "https://pypi.org/project/" + norm + "/";
    info["release_url"] = "https://pypi.org/project/" + norm + "/" + version + "/";
    // The JSON API reports the metadata of the release's first uploaded file; an sdist-only
    // release has requires_dist null, as on the real API.
    info["requires_dist"] = meta && !meta->is_sdist() && !meta->requires_dist.empty() ? ordered_json(meta->requires_dist)
                                                                                      : ordered_json(nullptr);
    info["requires_python"] = meta && !meta->requires_python.empty() ? meta->requires_python : "";
    info["summary"] = meta ? (meta->summary.empty() ? display + " (envlock mirror stand-in)" : meta->summary) : "";
    info["version"] = version;
    info["yanked"] = false;
    info["yanked_reason"] = nullptr;
    return info;
}

std::string link_line(const std::string& href, const std::string& text, const PyDist& d, const std::string& meta_sha) {
    std::string a = "    <a href=\"" + href + "\"";
    if (!d.requires_python.empty()) a += " data-requires-python=\"" + html_escape(d.requires_python) + "\"";
    if (!meta_sha.empty())
        a += " data-dist-info-metadata=\"sha256=" + meta_sha + "\" data-core-metadata=\"sha256=" + meta_sha + "\"";
    return a + ">" + html_escape(text) + "</a><br />\n";
}

std::string simple_page(const std::string& title, const std::string& body) {
    return "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"1.1\">\n    <title>" +
           html_escape(title) + "</title>\n  </head>\n  <body>\n    <h1>" + html_escape(title) + "</h1>\n" + body +
           "  </body>\n</html>\n";
}

// The simple index of one project, in both forms, for files published anywhere in the tree.
void write_project_index(const std::string& root, const std::string& dir, const std::string& norm,
                         const std::vector<Built>& files) {
    std::string html_file = dir + "/" + norm + "/index.html";
    std::string up = up_to_root(html_file);
    std::string body;
    ordered_json jfiles = ordered_json::array();
    std::set<std::string, decltype(&pep440_less)> versions(&pep440_less);
    for (const auto& b : files) {
        const PyDist& d = b.pub->dist;
        std::string url = up + url_escape(b.pub->path);
        body += link_line(url + "#sha256=" + b.sha256, d.filename(), d, b.metadata_sha256);
        ordered_json f;
        f["filename"] = d.filename();
        f["url"] = url;
        f["hashes"] = {{"sha256", b.sha256}};
        if (!d.requires_python.empty()) f["requires-python"] = d.requires_python;
        if (!b.metadata_sha256.empty()) {
            f["core-metadata"] = {{"sha256", b.metadata_sha256}};
            f["dist-info-metadata"] = {{"sha256", b.metadata_sha256}};
        } else {
            f["core-metadata"] = false;
            f["dist-info-metadata"] = false;
        }
        f["size"] = b.size;
        f["upload-time"] = std::string(kUploadTime) + ".000000Z";
        f["yanked"] = false;
        jfiles.push_back(f);
        versions.insert(d.version);
    }
    write_file(root, html_file, simple_page("Links for " + norm, body));
    ordered_json j;
    j["meta"] = {{"api-version", "1.1"}};
    j["name"] = norm;
    j["versions"] = ordered_json(std::vector<std::string>(versions.begin(), versions.end()));
    j["files"] = jfiles;
    write_file(root, dir + "/" + norm + "/index.json", j.dump(1) + "\n");
}

void write_root_index(const std::string& root, const std::string& dir, const std::set<std::string>& projects) {
    std::string body;
    ordered_json list = ordered_json::array();
    for (const auto& p : projects) {
        body += "    <a href=\"" + p + "/\">" + p + "</a><br />\n";
        list.push_back({{"name", p}});
    }
    write_file(root, dir + "/index.html", simple_page("Simple index", body));
    write_file(root, dir + "/index.json", ordered_json{{"meta", {{"api-version", "1.1"}}}, {"projects", list}}.dump(1) + "\n");
}

}  // namespace

bool pep440_less(const std::string& a, const std::string& b) {
    Pep440 x = parse440(a), y = parse440(b);
    size_t n = std::max(x.release.size(), y.release.size());
    for (size_t i = 0; i < n; ++i) {
        int u = i < x.release.size() ? x.release[i] : 0, v = i < y.release.size() ? y.release[i] : 0;
        if (u != v) return u < v;
    }
    if (x.pre_kind != y.pre_kind) return x.pre_kind < y.pre_kind;
    if (x.pre != y.pre) return x.pre < y.pre;
    if (x.post != y.post) return x.post < y.post;
    if (x.dev != y.dev) return (x.dev < 0 ? INT32_MAX : x.dev) < (y.dev < 0 ? INT32_MAX : y.dev);
    return a.substr(a.find('+') == std::string::npos ? a.size() : a.find('+')) <
           b.substr(b.find('+') == std::string::npos ? b.size() : b.find('+'));
}

int write_pypi(const std::string& root, const std::vector<Published>& dists) {
    std::map<std::string, std::vector<Built>> by_project;
    std::map<std::string, std::string> display;
    for (const auto& p : dists) {
        std::string norm = normalize_project(p.dist.project);
        by_project[norm].push_back(build_and_write(root, p, /*metadata=*/true));
        display.emplace(norm, p.dist.project);
    }
    std::set<std::string> projects;
    for (auto& [norm, files] : by_project) {
        std::sort(files.begin(), files.end(), [](const Built& x, const Built& y) {
            if (x.pub->dist.version != y.pub->dist.version) return pep440_less(x.pub->dist.version, y.pub->dist.version);
            return x.pub->dist.filename() < y.pub->dist.filename();
        });
        projects.insert(norm);
        write_project_index(root, "pypi/simple", norm, files);

        // JSON API: /pypi/<name>/json (latest release's info) and /pypi/<name>/<version>/json.
        std::map<std::string, std::vector<const Built*>> releases;
        for (const auto& b : files) releases[b.pub->dist.version].push_back(&b);
        std::string latest;
        for (const auto& [v, _] : releases)
            if (!is_prerelease(v) && (latest.empty() || pep440_less(latest, v))) latest = v;
        if (latest.empty()) latest = files.back().pub->dist.version;
        auto release_json = [&](const std::string& json_path, const std::string& version) {
            std::string up = up_to_root(json_path);
            ordered_json rel = ordered_json::object();
            std::vector<std::string> order;
            for (const auto& [v, _] : releases) order.push_back(v);
            std::sort(order.begin(), order.end(), pep440_less);
            for (const auto& v : order) {
                ordered_json arr = ordered_json::array();
                for (const auto* b : releases[v]) arr.push_back(json_api_file(*b, up + url_escape(b->pub->path)));
                rel[v] = arr;
            }
            const auto& mine = releases[version];
            const PyDist* meta = nullptr;
            for (const auto* b : mine)
                if (!b->pub->dist.is_sdist()) {
                    meta = &b->pub->dist;
                    break;
                }
            if (!meta && !mine.empty()) meta = &mine.front()->pub->dist;
            ordered_json doc;
            doc["info"] = json_api_info(display[norm], norm, version, meta);
            doc["last_serial"] = 1;
            if (json_path.find("/" + version + "/") == std::string::npos) doc["releases"] = rel;
            ordered_json urls = ordered_json::array();
            for (const auto* b : mine) urls.push_back(json_api_file(*b, up + url_escape(b->pub->path)));
            doc["urls"] = urls;
            doc["vulnerabilities"] = ordered_json::array();
            write_file(root, json_path, doc.dump(1) + "\n");
        };
        release_json("pypi/pypi/" + norm + "/json", latest);
        for (const auto& [v, _] : releases) release_json("pypi/pypi/" + norm + "/" + v + "/json", v);
    }
    write_root_index(root, "pypi/simple", projects);
    return static_cast<int>(dists.size());
}

int write_torch_find_links(const std::string& root, const std::vector<Published>& wheels) {
    std::vector<Built> built;
    for (const auto& w : wheels) built.push_back(build_and_write(root, w, /*metadata=*/false));
    std::sort(built.begin(), built.end(), [](const Built& a, const Built& b) { return a.pub->path < b.pub->path; });
    // torch_stable.html: one line per wheel, relative href from whl/, no <html> wrapper, as the
    // real page. The #sha256 fragment is the mirror's addition (the real page has none).
    std::string page;
    std::map<std::string, std::map<std::string, std::vector<Built>>> per_variant;  // variant -> project -> files
    for (const auto& b : built) {
        std::string rel = b.pub->path.substr(4);  // drop "whl/"
        std::string href = url_escape(rel);
        page += "<a href=\"" + href + "#sha256=" + b.sha256 + "\">" + href + "</a><br>\n";
        auto slash = rel.find('/');
        std::string project = normalize_project(b.pub->dist.project);
        if (slash != std::string::npos) per_variant[rel.substr(0, slash)][project].push_back(b);
    }
    write_file(root, "whl/torch_stable.html", page);
    // whl/<variant>/torch_stable.html: the same page for one CUDA variant (detectron2's docs use
    // the cu111 one), links relative to the variant's folder.
    std::map<std::string, std::string> variant_pages;
    for (const auto& b : built) {
        std::string rel = b.pub->path.substr(4);
        auto slash = rel.find('/');
        if (slash == std::string::npos) continue;
        std::string href = "../" + url_escape(rel);
        variant_pages[rel.substr(0, slash)] += "<a href=\"" + href + "#sha256=" + b.sha256 + "\">" + url_escape(rel) + "</a><br>\n";
    }
    for (const auto& [variant, text] : variant_pages) write_file(root, "whl/" + variant + "/torch_stable.html", text);
    // download.pytorch.org/whl/<variant>/ simple indexes (the --index-url form from torch 1.11).
    // Unlabeled torchaudio wheels of the top level are listed under every variant.
    for (auto& [variant, projects] : per_variant) {
        for (const auto& b : built)
            if (b.pub->path.find('/', 4) == std::string::npos) projects[normalize_project(b.pub->dist.project)].push_back(b);
        std::set<std::string> names;
        for (const auto& [project, files] : projects) {
            write_project_index(root, "whl/" + variant, project, files);
            names.insert(project);
        }
        write_root_index(root, "whl/" + variant, names);
    }
    return static_cast<int>(built.size());
}

int write_mmcv_pages(const std::string& root, const std::vector<Published>& wheels) {
    std::map<std::string, std::vector<Built>> pages;  // page dir -> files
    for (const auto& w : wheels) {
        auto b = build_and_write(root, w, /*metadata=*/false);
        pages[w.path.substr(0, w.path.rfind('/'))].push_back(b);
    }
    for (auto& [dir, files] : pages) {
        std::sort(files.begin(), files.end(), [](const Built& a, const Built& b) { return a.pub->path < b.pub->path; });
        // Links as download.openmmlab.com writes them: "../torch1.9.0/<file>" (relative to the
        // page's own folder), one per line; the #sha256 fragment is the mirror's addition.
        std::string torch_dir = dir.substr(dir.rfind('/') + 1);
        std::string page;
        for (const auto& b : files) {
            std::string href = "../" + torch_dir + "/" + url_escape(b.pub->dist.filename());
            page += "<a href=\"" + href + "#sha256=" + b.sha256 + "\">" + "../" + torch_dir + "/" + b.pub->dist.filename() +
                    "</a><br>\n";
        }
        write_file(root, dir + "/index.html", page);
        // EchoFusion's docs point at cu111/torch1.9.1; its wheels are the torch1.9.0 builds
        // (mmcv's docs: a torch1.x.0 wheel serves every 1.x.y). The mirror answers that URL
        // with the same page; SOURCES.md lists it among the deviations.
        const std::string torch190 = "/torch1.9.0";
        if (dir.size() > torch190.size() && dir.compare(dir.size() - torch190.size(), torch190.size(), torch190) == 0)
            write_file(root, dir.substr(0, dir.size() - 1) + "1/index.html", page);
    }
    return static_cast<int>(wheels.size());
}

}  // namespace envlock::mirror
