#include "resolver/lock/yaml_json.hpp"

namespace envlock {

namespace {

std::string pointer_escape(const std::string& s) {
    std::string out;
    for (char c : s) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
    return out;
}

nlohmann::json scalar_to_json(const YAML::Node& n) {
    const std::string& s = n.Scalar();
    if (n.Tag() == "!") return s;
    if (s == "true" || s == "True") return true;
    if (s == "false" || s == "False") return false;
    if (s == "null" || s == "~" || s.empty()) return nullptr;
    try {
        std::size_t used = 0;
        long long v = std::stoll(s, &used);
        if (used == s.size()) return v;
        double d = std::stod(s, &used);
        if (used == s.size()) return d;
    } catch (...) {
    }
    return s;
}

}  // namespace

nlohmann::json yaml_to_json(const YAML::Node& n, const std::string& ptr, JsonLines* lines) {
    if (lines) (*lines)[ptr] = n.Mark().line + 1;
    switch (n.Type()) {
        case YAML::NodeType::Map: {
            nlohmann::json obj = nlohmann::json::object();
            for (const auto& kv : n) {
                std::string key = kv.first.Scalar();
                obj[key] = yaml_to_json(kv.second, ptr + "/" + pointer_escape(key), lines);
            }
            return obj;
        }
        case YAML::NodeType::Sequence: {
            nlohmann::json arr = nlohmann::json::array();
            std::size_t i = 0;
            for (const auto& item : n) arr.push_back(yaml_to_json(item, ptr + "/" + std::to_string(i++), lines));
            return arr;
        }
        case YAML::NodeType::Scalar: return scalar_to_json(n);
        default: return nullptr;
    }
}

int line_of(const JsonLines& lines, std::string p) {
    while (true) {
        if (auto it = lines.find(p); it != lines.end()) return it->second;
        auto slash = p.rfind('/');
        if (slash == std::string::npos) return 0;
        p = p.substr(0, slash);
    }
}

}  // namespace envlock
