// Loading knowledge files: YAML -> JSON (keeping each value's line), schema check, rows into
// structs, and the override merge of user files over the embedded ones.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>
#include <simdjson.h>
#include <yaml-cpp/yaml.h>

#include "resolver/specs/errors.hpp"
#include "resolver/lock/json_schema.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/yaml_json.hpp"
#include "resolver/lock/sha256.hpp"

namespace envlock::knowledge {

std::vector<std::pair<std::string_view, std::string_view>> embedded_files();  // generated

namespace {

using nlohmann::json;
const json& schema() {
    static const json s = [] {
        for (const auto& [name, text] : embedded_files())
            if (name == "knowledge.schema.json") return json::parse(text);
        throw InputError("knowledge: the build embedded no knowledge.schema.json");
    }();
    return s;
}

// Parses and validates one file; InputError names file, line and rule. The builtin files
// arrive as JSON, converted and validated at build time (tools/knowledge_to_json.cpp).
json parse_file(const std::string& name, const std::string& text) {
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json") return json::parse(text);
    JsonLines lines;
    json doc;
    try {
        YAML::Node root = YAML::Load(text);
        if (root.IsNull()) return json::object();   // an empty file adds nothing
        if (!root.IsMap()) throw InputError(name + ": expected a mapping of knowledge tables at the top level");
        doc = yaml_to_json(root, "", &lines);
    } catch (const YAML::Exception& e) {
        throw InputError(name + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
    }
    auto violations = validate(schema(), doc);
    if (!violations.empty()) {
        const auto& v = violations.front();
        std::string more = violations.size() > 1 ? " (and " + std::to_string(violations.size() - 1) + " more)" : "";
        throw InputError(name + ":" + std::to_string(line_of(lines, v.path)) + ": " + (v.path.empty() ? "/" : v.path) + ": " +
                         v.message + " (schemas/knowledge.schema.json)" + more);
    }
    return doc;
}

// A row's fields, read the same way from either JSON form: nlohmann's (a user's YAML file,
// converted with its lines for messages) or simdjson's (the embedded files, converted and
// validated at build time, where a DOM of nlohmann values would be most of the load).
std::string str(const json& row, const char* key) {
    auto it = row.find(key);
    return it == row.end() || it->is_null() ? std::string() : it->get<std::string>();
}
bool flag(const json& row, const char* key) {
    auto it = row.find(key);
    return it != row.end() && it->is_boolean() && it->get<bool>();
}
std::vector<std::string> strings(const json& row, const char* key) {
    std::vector<std::string> out;
    if (auto it = row.find(key); it != row.end())
        for (const auto& s : *it) out.push_back(s.get<std::string>());
    return out;
}
bool has(const json& row, const char* key) { return row.contains(key); }
int integer(const json& row, const char* key) { return row.at(key).get<int>(); }
const json& child(const json& row, const char* key) { return row.at(key); }
template <class F>
void each_in(const json& doc, const char* key, F&& fn) {
    if (auto it = doc.find(key); it != doc.end())
        for (const auto& row : *it) fn(row);
}
template <class F>
void with(const json& doc, const char* key, F&& fn) {
    if (auto it = doc.find(key); it != doc.end()) fn(*it);
}

using Element = simdjson::dom::element;

std::string kind_error(const char* key, const char* expected) {
    return std::string("knowledge: '") + key + "' is not " + expected;
}
std::optional<Element> field(const Element& row, const char* key) {
    Element v;
    if (row.type() != simdjson::dom::element_type::OBJECT || row.get_object()[key].get(v) != simdjson::SUCCESS)
        return std::nullopt;
    return v;
}
std::string text_of(const Element& v, const char* key) {
    std::string_view s;
    if (v.get_string().get(s) != simdjson::SUCCESS) throw InputError(kind_error(key, "a string"));
    return std::string(s);
}
std::string str(const Element& row, const char* key) {
    auto v = field(row, key);
    return !v || v->is_null() ? std::string() : text_of(*v, key);
}
bool flag(const Element& row, const char* key) {
    auto v = field(row, key);
    bool b = false;
    return v && v->get_bool().get(b) == simdjson::SUCCESS && b;
}
template <class F>
void items(const Element& v, const char* key, F&& fn) {
    if (v.type() == simdjson::dom::element_type::ARRAY) {
        simdjson::dom::array list = v.get_array().value_unsafe();
        for (Element e : list) fn(e);
    } else if (v.type() == simdjson::dom::element_type::OBJECT) {
        simdjson::dom::object map = v.get_object().value_unsafe();
        for (auto kv : map) fn(kv.value);
    } else {
        throw InputError(kind_error(key, "a list"));
    }
}
std::vector<std::string> strings(const Element& row, const char* key) {
    std::vector<std::string> out;
    if (auto v = field(row, key)) items(*v, key, [&](const Element& e) { out.push_back(text_of(e, key)); });
    return out;
}
bool has(const Element& row, const char* key) { return field(row, key).has_value(); }
int integer(const Element& row, const char* key) {
    auto v = field(row, key);
    if (!v) throw InputError(std::string("knowledge: '") + key + "' is missing");
    std::int64_t i = 0;
    double d = 0;
    if (v->get_int64().get(i) == simdjson::SUCCESS) return static_cast<int>(i);
    if (v->get_double().get(d) == simdjson::SUCCESS) return static_cast<int>(d);
    throw InputError(kind_error(key, "a number"));
}
Element child(const Element& row, const char* key) {
    auto v = field(row, key);
    if (!v) throw InputError(std::string("knowledge: '") + key + "' is missing");
    return *v;
}
template <class F>
void each_in(const Element& doc, const char* key, F&& fn) {
    if (auto v = field(doc, key)) items(*v, key, fn);
}
template <class F>
void with(const Element& doc, const char* key, F&& fn) {
    if (auto v = field(doc, key)) fn(*v);
}

std::string index_url(const std::string& cuda, const std::string& torch_series) {
    std::string dir;
    if (cuda == "cpu") dir = "cpu";
    else if (cuda == "mps") return "";
    else {
        dir = "cu";
        for (char c : cuda) if (c != '.') dir += c;
    }
    return "https://download.openmmlab.com/mmcv/dist/" + dir + "/torch" + torch_series + ".0/index.html";
}

// One file's rows, already parsed into structs.
template <class J>
Knowledge rows_of(const std::string& name, const J& doc) {
    Knowledge k;
    auto each = [&](const char* table, const std::function<void(const J&)>& fn) { each_in(doc, table, fn); };
    each("cuda_drivers", [&](const J& r) {
        CudaDriverRow row{str(r, "cuda"), str(r, "label"), str(r, "linux"), str(r, "windows"), str(r, "source")};
        row.unknown = flag(r, "unknown");
        row.why = str(r, "why");
        k.cuda_drivers.push_back(std::move(row));
    });
    each("minor_version_compatibility", [&](const J& r) {
        k.minor_version_rules.push_back({integer(r, "cuda_major"), str(r, "min_driver"),
                                         str(r, "windows_min_driver"), str(r, "note"), str(r, "source")});
    });
    with(doc, "no_minor_version_compatibility", [&](const J& r) {
        k.no_mvc_up_to = str(r, "up_to_cuda");
        k.no_mvc_source = str(r, "source");
    });
    each("driver_limitations", [&](const J& r) { k.facts.push_back({name, str(r, "what"), str(r, "source")}); });
    each("nvcc_targets", [&](const J& r) {
        k.nvcc_targets.push_back({str(r, "cuda"), strings(r, "sm"), str(r, "note"), str(r, "source")});
    });
    each("gpus", [&](const J& r) {
        auto sm = parse_sm(str(r, "cc"));
        k.gpus.push_back({str(r, "name"), *sm / 10, *sm % 10, str(r, "source"), flag(r, "unverified"), str(r, "why")});
    });
    each("host_compilers", [&](const J& r) {
        HostCompilerLimit h;
        h.cuda = str(r, "cuda");
        h.gcc_max = integer(r, "gcc_max");
        h.gcc_min = str(r, "gcc_min");
        if (has(r, "clang_max")) h.clang_max = integer(r, "clang_max");
        h.clang_min = str(r, "clang_min");
        h.source = str(r, "source");
        h.unverified = flag(r, "unverified");
        h.why = str(r, "why");
        k.host_compilers.push_back(h);
    });
    each("torch_releases", [&](const J& r) {
        TorchRelease t;
        t.version = str(r, "version");
        const auto& py = child(r, "python");
        t.python_min = str(py, "min");
        t.python_max = str(py, "max");
        t.python_note = str(py, "note");
        t.variants = strings(r, "pip");
        t.conda_cuda = strings(r, "conda");
        t.pypi_default = str(r, "pypi-default");
        t.pypi_default_source = str(r, "pypi_default_source");
        t.variants_unverified = flag(r, "variants_unverified");
        t.torchvision = str(r, "torchvision");
        t.torchaudio = str(r, "torchaudio");
        t.note = str(r, "note");
        t.python_source = str(r, "python_source");
        t.source = str(r, "source");
        k.torch_releases.push_back(t);
    });
    each("torch_platform", [&](const J& r) { k.facts.push_back({name, str(r, "fact"), str(r, "source")}); });
    each("torch_arch_lists", [&](const J& r) {
        TorchArchRow t;
        t.torch = strings(r, "torch");
        t.kind = str(r, "kind");
        t.variants = strings(r, "variants");
        t.arch_list = str(r, "arch_list");
        t.archs = parse_arch_list(t.arch_list);
        t.note = str(r, "note");
        t.source = str(r, "source");
        t.unverified = flag(r, "unverified");
        t.why = str(r, "why");
        k.torch_arch_lists.push_back(t);
    });
    each("torch_cpp_extension", [&](const J& r) {
        k.cpp_extension.push_back({strings(r, "torch"), strings(r, "arches"), str(r, "source"), flag(r, "unverified"), str(r, "why")});
    });
    with(doc, "torch_cpp_extension_rules", [&](const J& r) {
        k.cpp_extension_rules = {str(r, "unknown_arch"), str(r, "arch_list_unset"), str(r, "nvcc_major_mismatch"),
                                 str(r, "nvcc_minor_mismatch"), str(r, "source"), flag(r, "unverified"), str(r, "why")};
    });
    each("mmcv_wheels", [&](const J& r) {
        // A row lists many versions (2,143 wheels from a few hundred rows): its fields are read once.
        MmcvWheel w;
        w.torch = str(r, "torch");
        w.cuda = str(r, "cuda");
        w.source = str(r, "source");
        w.package = str(r, "package");
        w.os = str(r, "os");
        w.index_url = w.os == "Linux" || w.os == "Windows" ? index_url(w.cuda, w.torch) : "";
        for (auto& v : strings(r, "versions")) {
            w.mmcv_version = std::move(v);
            k.mmcv_wheels.push_back(w);
        }
    });
    each("gates", [&](const J& r) {
        k.gates.push_back({str(r, "package"), str(r, "version"), str(r, "requires"), str(r, "source"), str(r, "kind"),
                           flag(r, "unverified"), str(r, "why")});
    });
    with(doc, "mmdet3d_0_17_pins", [&](const J& r) {
        std::string all;
        for (const auto& s : strings(r, "runtime")) all += (all.empty() ? "" : ", ") + s;
        k.facts.push_back({name, "mmdet3d " + str(r, "versions") + " requirements/runtime.txt: " + all, str(r, "source")});
    });
    each("mmdet3d_numba_pins", [&](const J& r) {
        k.facts.push_back({name, "mmdet3d " + str(r, "mmdet3d") + " pins numba " + str(r, "numba") +
                                     (has(r, "numpy") ? ", numpy " + str(r, "numpy") : ""), str(r, "source")});
    });
    each("openmmlab_facts", [&](const J& r) { k.facts.push_back({name, str(r, "fact"), str(r, "source")}); });
    each("numba", [&](const J& r) {
        k.numba.push_back({str(r, "version"), str(r, "python"), str(r, "numpy"), str(r, "llvmlite"), str(r, "note"), str(r, "source")});
    });
    each("numba_cuda", [&](const J& r) {
        k.numba_cuda.push_back({str(r, "numba"), str(r, "cuda"), str(r, "effect"), str(r, "fix"), str(r, "source"),
                                flag(r, "unverified"), str(r, "why")});
    });
    each("advisories", [&](const J& r) {
        k.advisories.push_back({str(r, "id"), strings(r, "when"), str(r, "symptom"), str(r, "fix"), str(r, "source"), str(r, "needs")});
    });
    each("build_failures", [&](const J& r) {
        k.build_failures.push_back({str(r, "id"), str(r, "where"), str(r, "match"), str(r, "cause"), str(r, "fix"),
                                    str(r, "source"), flag(r, "unverified"), str(r, "why")});
    });
    each("target_warnings", [&](const J& r) {
        k.target_warnings.push_back({str(r, "id"), strings(r, "when"), strings(r, "unless"), str(r, "target"), str(r, "symptom"),
                                     str(r, "fix"), str(r, "source")});
    });
    each("unverified", [&](const J& r) { k.unverified.push_back({name, str(r, "claim"), str(r, "why")}); });
    each("knowledge_changes", [&](const J& release) {
        each_in(release, "rows", [&](const J& r) {
            k.changes.push_back({str(release, "release"), str(release, "replaces"), str(r, "row"), str(r, "change"),
                                 strings(r, "concerns"), str(r, "source")});
        });
    });
    return k;
}

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// User rows go in front (preferred by lookups); builtin rows with the same key are dropped.
template <class Row, class Key>
void overlay(std::vector<Row>& base, std::vector<Row> user, Key key) {
    if (user.empty()) return;
    base.erase(std::remove_if(base.begin(), base.end(),
                              [&](const Row& b) {
                                  return std::any_of(user.begin(), user.end(), [&](const Row& u) { return key(u) == key(b); });
                              }),
               base.end());
    user.insert(user.end(), std::make_move_iterator(base.begin()), std::make_move_iterator(base.end()));
    base = std::move(user);
}

void merge(Knowledge& k, Knowledge u) {
    overlay(k.cuda_drivers, std::move(u.cuda_drivers), [](const CudaDriverRow& r) { return r.cuda; });
    overlay(k.minor_version_rules, std::move(u.minor_version_rules), [](const MinorVersionRule& r) { return r.cuda_major; });
    if (!u.no_mvc_up_to.empty()) { k.no_mvc_up_to = u.no_mvc_up_to; k.no_mvc_source = u.no_mvc_source; }
    overlay(k.nvcc_targets, std::move(u.nvcc_targets), [](const NvccTargetsRow& r) { return major_minor(r.cuda); });
    overlay(k.gpus, std::move(u.gpus), [](const GpuRow& r) { return lower(r.name); });
    overlay(k.host_compilers, std::move(u.host_compilers), [](const HostCompilerLimit& r) { return major_minor(r.cuda); });
    overlay(k.torch_releases, std::move(u.torch_releases), [](const TorchRelease& r) { return r.version; });
    overlay(k.torch_arch_lists, std::move(u.torch_arch_lists),
            [](const TorchArchRow& r) { return r.kind + "|" + nlohmann::json(r.torch).dump() + "|" + nlohmann::json(r.variants).dump(); });
    overlay(k.cpp_extension, std::move(u.cpp_extension), [](const CppExtensionRow& r) { return nlohmann::json(r.torch).dump(); });
    if (!u.cpp_extension_rules.source.empty()) k.cpp_extension_rules = u.cpp_extension_rules;
    overlay(k.mmcv_wheels, std::move(u.mmcv_wheels),
            [](const MmcvWheel& r) { return r.package + "|" + r.os + "|" + r.cuda + "|" + r.torch + "|" + r.mmcv_version; });
    overlay(k.gates, std::move(u.gates), [](const Gate& r) {
        std::string req = r.requires_spec;
        auto end = req.find_first_of("<>=!~[ ;");
        return r.package + "|" + r.version_spec + "|" + lower(req.substr(0, end));
    });
    overlay(k.numba, std::move(u.numba), [](const NumbaRelease& r) { return r.version; });
    overlay(k.numba_cuda, std::move(u.numba_cuda), [](const NumbaCudaLimit& r) { return r.numba + "|" + r.cuda; });
    overlay(k.advisories, std::move(u.advisories), [](const Advisory& r) { return r.id; });
    overlay(k.build_failures, std::move(u.build_failures), [](const BuildFailure& r) { return r.id; });
    overlay(k.target_warnings, std::move(u.target_warnings), [](const TargetWarning& r) { return r.id; });
    k.facts.insert(k.facts.end(), u.facts.begin(), u.facts.end());
    k.unverified.insert(k.unverified.end(), u.unverified.begin(), u.unverified.end());
    k.changes.insert(k.changes.end(), u.changes.begin(), u.changes.end());
}

}  // namespace

Knowledge load_texts(const std::vector<std::pair<std::string, std::string>>& extra) {
    std::vector<std::pair<std::string, std::string_view>> files;
    for (const auto& [name, text] : embedded_files())
        if (name.size() > 10 && name.substr(name.size() - 10) == ".yaml.json") files.emplace_back(std::string(name), text);
    for (const auto& [name, text] : extra) files.emplace_back(name, text);
    // The files are parsed into rows on two threads, half the bytes each (the machines this
    // runs on have two cores or more; a thread per file costs more in malloc arenas and page
    // faults than it saves): the knowledge base is most of a re-resolve that reuses its lock,
    // and the files do not depend on each other. The merge and the version hash stay in file
    // order, and the first bad file (in order) is the error.
    auto parse = [&files](std::size_t i) {
        const auto& [name, text] = files[i];
        if (name.size() > 5 && name.substr(name.size() - 5) == ".json") {
            simdjson::dom::parser parser;
            Element doc;
            if (auto error = parser.parse(text.data(), text.size()).get(doc); error != simdjson::SUCCESS)
                throw InputError(name + ": not valid JSON: " + simdjson::error_message(error));
            if (doc.type() != simdjson::dom::element_type::OBJECT)
                throw InputError(name + ": expected a mapping of knowledge tables at the top level");
            return rows_of(name, doc);
        }
        return rows_of(name, parse_file(name, std::string(text)));
    };
    // Largest first, each to the thread with fewer bytes so far.
    std::vector<std::size_t> by_size(files.size());
    for (std::size_t i = 0; i < files.size(); ++i) by_size[i] = i;
    std::sort(by_size.begin(), by_size.end(), [&](std::size_t a, std::size_t b) { return files[a].second.size() > files[b].second.size(); });
    std::vector<bool> other(files.size());
    std::size_t bytes[2] = {0, 0};
    for (std::size_t i : by_size) {
        other[i] = bytes[1] < bytes[0];
        bytes[other[i] ? 1 : 0] += files[i].second.size();
    }
    std::vector<std::optional<Knowledge>> rows(files.size());
    std::vector<std::exception_ptr> errors(files.size());
    auto run = [&](bool on_other) {
        for (std::size_t i = 0; i < files.size(); ++i) {
            if (other[i] != on_other) continue;
            try {
                rows[i] = parse(i);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    auto second = std::async(std::launch::async, run, true);
    run(false);
    second.get();
    Knowledge k;
    Sha256 hash;
    for (std::size_t i = 0; i < files.size(); ++i) {
        const auto& [name, text] = files[i];
        if (errors[i]) std::rethrow_exception(errors[i]);
        Knowledge part = std::move(*rows[i]);
        hash.update(name);
        hash.update(std::string(1, '\0'));
        hash.update(text);
        hash.update(std::string(1, '\0'));
        // Builtin files each hold tables of their own, so the overlay only matters for user files.
        merge(k, std::move(part));
        k.files.push_back(name);
    }
    k.version = hash.hex_digest();
    return k;
}

Knowledge load_builtin() { return load_texts({}); }

std::vector<std::string> knowledge_files_in(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".yaml" || e.path().extension() == ".yml") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

Knowledge load(const std::vector<std::string>& extra_files) {
    std::vector<std::pair<std::string, std::string>> texts;
    for (const auto& path : extra_files) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw InputError(path + ": cannot read knowledge file");
        std::ostringstream ss;
        ss << in.rdbuf();
        texts.emplace_back(path, ss.str());
    }
    return load_texts(texts);
}

}  // namespace envlock::knowledge
