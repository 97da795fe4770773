#include "resolver/lock/target_io.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/utf8.hpp"

namespace envlock {
namespace {

nlohmann::json or_null(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

std::string sm_text(const Gpu& g) {
    if (g.sm_major == 0) return "";
    return "sm_" + std::to_string(g.sm_major * 10 + g.sm_minor);
}

struct Reader {
    std::string file;

    [[noreturn]] void fail(const YAML::Node& n, const std::string& what) const {
        throw InputError(file + ":" + std::to_string(n.Mark().line + 1) + ": " + what);
    }
    std::string string(const YAML::Node& n, const std::string& key, bool nullable = true) const {
        if (n.IsNull()) {
            if (nullable) return "";
            fail(n, key + ": expected a value, got null");
        }
        if (!n.IsScalar()) fail(n, key + ": expected a string");
        // yaml-cpp decodes the escapes "\_", "\N", "\L", "\P" to single bytes, not UTF-8.
        if (utf8::invalid_at(n.Scalar())) fail(n, key + ": expected UTF-8 text (an escape such as \"\\_\" decodes to a lone byte)");
        return n.Scalar();
    }
    std::vector<std::string> strings(const YAML::Node& n, const std::string& key) const {
        std::vector<std::string> out;
        if (n.IsNull()) return out;
        if (!n.IsSequence()) fail(n, key + ": expected a list of strings");
        for (const auto& item : n) out.push_back(string(item, key, false));
        return out;
    }
    long long integer(const YAML::Node& n, const std::string& key) const {
        if (n.IsNull()) return 0;
        try {
            long long v = n.as<long long>();
            if (v < 0) fail(n, key + ": expected a non-negative integer");
            return v;
        } catch (const YAML::Exception&) {
            fail(n, key + ": expected a non-negative integer");
        }
    }
    // A dotted number with `min`..`max` parts ("525.60.13", "11.4", "2.31"), as the same value
    // given as a flag must be: a target file is validated as strictly as the command line.
    std::string version(const YAML::Node& n, const std::string& key, int min, int max, const char* example) const {
        std::string v = string(n, key);
        if (v.empty()) return v;
        int parts = 1;
        bool ok = std::isdigit(static_cast<unsigned char>(v.front())) && std::isdigit(static_cast<unsigned char>(v.back()));
        for (std::size_t i = 0; ok && i < v.size(); ++i) {
            if (v[i] == '.') {
                ++parts;
                ok = i + 1 < v.size() && v[i + 1] != '.';
            } else {
                ok = std::isdigit(static_cast<unsigned char>(v[i])) != 0;
            }
        }
        if (!ok || parts < min || parts > max) fail(n, key + ": expected a version such as " + example + ", got '" + v + "'");
        return v;
    }
    bool boolean(const YAML::Node& n, const std::string& key) const {
        try {
            return n.as<bool>();
        } catch (const YAML::Exception&) {
            fail(n, key + ": expected true or false");
        }
    }
    void only_keys(const YAML::Node& map, const std::set<std::string>& allowed, const std::string& where) const {
        for (const auto& kv : map)
            if (!allowed.count(kv.first.Scalar())) fail(kv.first, where + "unknown key '" + kv.first.Scalar() + "'");
    }
    template <class Fn>
    void each_map(const YAML::Node& n, const std::string& key, Fn fn) const {
        if (n.IsNull()) return;
        if (!n.IsSequence()) fail(n, key + ": expected a list");
        std::size_t i = 0;
        for (const auto& item : n) {
            if (!item.IsMap()) fail(item, key + "[" + std::to_string(i) + "]: expected a mapping");
            fn(item, key + "[" + std::to_string(i++) + "]");
        }
    }
};

}  // namespace

nlohmann::json target_to_json(const Target& t) {
    using nlohmann::json;
    json j = json::object();
    auto kept = [&](const char* key) { return std::find(t.left_out.begin(), t.left_out.end(), key) == t.left_out.end(); };
    // The inventory fields are left out when empty: a lock's targets hold only locked_facts(),
    // and a left-out fact (leave_out) not even as null.
    j["platform"] = or_null(t.platform);
    if (!t.kernel.empty()) j["kernel"] = t.kernel;
    if (!t.osx.empty()) j["osx"] = t.osx;
    if (kept("wsl")) j["wsl"] = t.wsl;
    if (kept("glibc")) j["glibc"] = or_null(t.glibc);
    if (!t.cpu_model.empty()) j["cpu-model"] = t.cpu_model;
    if (kept("cpu-flags")) j["cpu-flags"] = t.cpu_flags;
    if (t.cores) j["cores"] = t.cores;
    if (t.memory_bytes) j["memory-bytes"] = t.memory_bytes;
    if (kept("driver")) {
        j["driver"] = or_null(t.driver_version);
        j["driver-cuda"] = or_null(t.driver_cuda);
    }
    if (kept("gpus")) {
        j["gpus"] = json::array();
        for (const auto& g : t.gpus) j["gpus"].push_back({{"name", or_null(g.name)}, {"sm", or_null(sm_text(g))}});
    }
    if (kept("compilers")) {
        j["compilers"] = json::array();
        for (const auto& c : t.compilers) {
            json cj = {{"kind", c.kind}, {"version", c.version}};
            if (!c.path.empty()) cj["path"] = c.path;
            j["compilers"].push_back(cj);
        }
    }
    if (kept("cuda-toolkits")) {
        j["cuda-toolkits"] = json::array();
        for (const auto& tk : t.toolkits)
            j["cuda-toolkits"].push_back({{"path", tk.path}, {"version", tk.version}, {"gpu-archs", tk.gpu_archs}});
    }
    if (!t.given.empty()) j["given"] = t.given;
    if (!t.left_out.empty()) j["left-out"] = t.left_out;
    return j;
}

std::string target_to_yaml(const Target& t) {
    YAML::Emitter e;
    auto str = [&](const std::string& s) {
        if (s.empty()) e << YAML::Null;
        else e << YAML::DoubleQuoted << s;
    };
    auto kept = [&](const char* key) { return std::find(t.left_out.begin(), t.left_out.end(), key) == t.left_out.end(); };
    e << YAML::BeginMap;
    e << YAML::Key << "platform" << YAML::Value; str(t.platform);
    if (!t.kernel.empty()) { e << YAML::Key << "kernel" << YAML::Value; str(t.kernel); }
    if (!t.osx.empty()) { e << YAML::Key << "osx" << YAML::Value; str(t.osx); }
    if (kept("wsl")) e << YAML::Key << "wsl" << YAML::Value << t.wsl;
    if (kept("glibc")) { e << YAML::Key << "glibc" << YAML::Value; str(t.glibc); }
    if (!t.cpu_model.empty()) { e << YAML::Key << "cpu-model" << YAML::Value; str(t.cpu_model); }
    if (kept("cpu-flags")) {
        e << YAML::Key << "cpu-flags" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& f : t.cpu_flags) e << f;
        e << YAML::EndSeq;
    }
    if (t.cores) e << YAML::Key << "cores" << YAML::Value << t.cores;
    if (t.memory_bytes) e << YAML::Key << "memory-bytes" << YAML::Value << t.memory_bytes;
    if (kept("driver")) {
        e << YAML::Key << "driver" << YAML::Value; str(t.driver_version);
        e << YAML::Key << "driver-cuda" << YAML::Value; str(t.driver_cuda);
    }
    if (kept("gpus")) {
        e << YAML::Key << "gpus" << YAML::Value << YAML::BeginSeq;
        for (const auto& g : t.gpus) {
            e << YAML::BeginMap << YAML::Key << "name" << YAML::Value; str(g.name);
            e << YAML::Key << "sm" << YAML::Value; str(sm_text(g));
            e << YAML::EndMap;
        }
        e << YAML::EndSeq;
    }
    if (kept("compilers")) {
        e << YAML::Key << "compilers" << YAML::Value << YAML::BeginSeq;
        for (const auto& c : t.compilers) {
            e << YAML::BeginMap << YAML::Key << "kind" << YAML::Value; str(c.kind);
            if (!c.path.empty()) { e << YAML::Key << "path" << YAML::Value; str(c.path); }
            e << YAML::Key << "version" << YAML::Value; str(c.version);
            e << YAML::EndMap;
        }
        e << YAML::EndSeq;
    }
    if (kept("cuda-toolkits")) {
        e << YAML::Key << "cuda-toolkits" << YAML::Value << YAML::BeginSeq;
        for (const auto& tk : t.toolkits) {
            e << YAML::BeginMap << YAML::Key << "path" << YAML::Value; str(tk.path);
            e << YAML::Key << "version" << YAML::Value; str(tk.version);
            e << YAML::Key << "gpu-archs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const auto& a : tk.gpu_archs) e << a;
            e << YAML::EndSeq << YAML::EndMap;
        }
        e << YAML::EndSeq;
    }
    if (!t.given.empty()) {
        e << YAML::Key << "given" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& g : t.given) e << g;
        e << YAML::EndSeq;
    }
    if (!t.left_out.empty()) {
        e << YAML::Key << "left-out" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& g : t.left_out) e << g;
        e << YAML::EndSeq;
    }
    e << YAML::EndMap;
    return std::string(e.c_str()) + "\n";
}

Target target_from_text(const std::string& text, const std::string& filename) {
    utf8::require(text, filename);
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw InputError(filename + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML or JSON: " + e.msg);
    }
    return target_from_yaml(root, filename);
}

Target target_from_yaml(const YAML::Node& root, const std::string& filename) {
    Reader r{filename};
    if (!root.IsMap()) throw InputError(filename + ":1: expected a target mapping (platform, glibc, gpus …) as written by `envlock detect`");
    r.only_keys(root, {"platform", "kernel", "osx", "wsl", "glibc", "cpu-model", "cpu-flags", "cores", "memory-bytes", "driver",
                       "driver-cuda", "gpus", "compilers", "cuda-toolkits", "given", "left-out"}, "");
    Target t;
    const YAML::Node& croot = root;   // const lookups never insert keys
    auto get = [&](const char* key) { return croot[key]; };
    if (auto n = get("platform")) {
        t.platform = r.string(n, "platform");
        static const std::set<std::string> platforms = {"linux-64", "linux-aarch64", "linux-ppc64le", "osx-64", "osx-arm64", "win-64"};
        if (!t.platform.empty() && !platforms.count(t.platform))
            r.fail(n, "platform: expected one of linux-64, linux-aarch64, linux-ppc64le, osx-64, osx-arm64, win-64, got '" + t.platform + "'");
    }
    if (auto n = get("kernel")) t.kernel = r.string(n, "kernel");
    if (auto n = get("osx")) t.osx = r.version(n, "osx", 1, 3, "13.6");
    if (auto n = get("wsl")) t.wsl = r.boolean(n, "wsl");
    if (auto n = get("glibc")) t.glibc = r.version(n, "glibc", 2, 3, "2.31");
    if (auto n = get("cpu-model")) t.cpu_model = r.string(n, "cpu-model");
    if (auto n = get("cpu-flags")) t.cpu_flags = r.strings(n, "cpu-flags");
    if (auto n = get("cores")) t.cores = static_cast<int>(r.integer(n, "cores"));
    if (auto n = get("memory-bytes")) t.memory_bytes = static_cast<std::uint64_t>(r.integer(n, "memory-bytes"));
    if (auto n = get("driver")) t.driver_version = r.version(n, "driver", 1, 3, "525.60.13");
    if (auto n = get("driver-cuda")) t.driver_cuda = r.version(n, "driver-cuda", 2, 2, "12.0");
    if (auto n = get("gpus"))
        r.each_map(n, "gpus", [&](const YAML::Node& g, const std::string& where) {
            r.only_keys(g, {"name", "sm"}, where + ": ");
            Gpu gpu;
            if (g["name"]) gpu.name = r.string(g["name"], where + ".name");
            std::string sm = g["sm"] ? r.string(g["sm"], where + ".sm") : "";
            if (!sm.empty()) {
                std::string digits = sm.rfind("sm_", 0) == 0 ? sm.substr(3) : "";
                if (digits.size() < 2 || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos)
                    r.fail(g["sm"], where + ".sm: expected sm_XY (e.g. sm_86), got '" + sm + "'");
                int n2 = std::stoi(digits);
                gpu.sm_major = n2 / 10;
                gpu.sm_minor = n2 % 10;
            }
            t.gpus.push_back(gpu);
        });
    if (auto n = get("compilers"))
        r.each_map(n, "compilers", [&](const YAML::Node& c, const std::string& where) {
            r.only_keys(c, {"kind", "path", "version"}, where + ": ");
            HostCompiler hc;
            hc.kind = c["kind"] ? r.string(c["kind"], where + ".kind", false) : "";
            hc.path = c["path"] ? r.string(c["path"], where + ".path") : "";
            hc.version = c["version"] ? r.version(c["version"], where + ".version", 1, 4, "12.2.0") : "";
            if (hc.kind.empty() || hc.version.empty()) r.fail(c, where + ": expected kind and version");
            t.compilers.push_back(hc);
        });
    if (auto n = get("cuda-toolkits"))
        r.each_map(n, "cuda-toolkits", [&](const YAML::Node& c, const std::string& where) {
            r.only_keys(c, {"path", "version", "gpu-archs"}, where + ": ");
            CudaToolkit tk;
            tk.path = c["path"] ? r.string(c["path"], where + ".path") : "";
            tk.version = c["version"] ? r.version(c["version"], where + ".version", 2, 4, "11.8") : "";
            if (tk.version.empty()) r.fail(c, where + ": expected a version");
            if (c["gpu-archs"]) tk.gpu_archs = r.strings(c["gpu-archs"], where + ".gpu-archs");
            t.toolkits.push_back(tk);
        });
    if (auto n = get("given")) {
        static const std::set<std::string> keys = {"platform", "kernel", "osx", "glibc", "cpu-flags", "driver", "driver-cuda", "gpus"};
        t.given = r.strings(n, "given");
        for (const auto& g : t.given)
            if (!keys.count(g)) r.fail(n, "given: expected fact names among platform, kernel, osx, glibc, cpu-flags, driver, driver-cuda, gpus, got '" + g + "'");
    }
    if (auto n = get("left-out")) {
        const auto& keys = facts_a_lock_may_leave_out();
        t.left_out = r.strings(n, "left-out");
        std::string names;
        for (const auto& k : keys) names += (names.empty() ? "" : ", ") + k;
        for (const auto& f : t.left_out)
            if (std::find(keys.begin(), keys.end(), f) == keys.end()) r.fail(n, "left-out: expected fact names among " + names + ", got '" + f + "'");
            else if (croot[f]) r.fail(croot[f], f + ": a fact listed in left-out cannot also be given");
    }
    return t;
}

}  // namespace envlock
