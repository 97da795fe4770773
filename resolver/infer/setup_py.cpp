// setup.py read statically: the arguments of setup(...) and the extension modules it builds.
#include <algorithm>

#include "resolver/infer/parts.hpp"
#include "resolver/infer/python.hpp"

namespace envlock::infer {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string last_part(const std::string& dotted) {
    auto dot = dotted.rfind('.');
    return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

// Strings ending in .txt mentioned anywhere inside a value: `parse_requirements('requirements/runtime.txt')`,
// `open("requirements.txt").read().splitlines()` and the like.
void txt_mentions(const PyValue& v, const PyModule& m, std::vector<std::pair<std::string, int>>& out, int depth = 0) {
    if (depth > 8) return;
    if (v.kind == PyValue::Kind::string && ends_with(v.text, ".txt")) out.emplace_back(v.text, v.line);
    if (v.kind == PyValue::Kind::name) {
        auto it = m.assignments.find(v.text);
        if (it != m.assignments.end()) txt_mentions(it->second, m, out, depth + 1);
    }
    for (const auto& item : v.items) txt_mentions(item, m, out, depth + 1);
    for (const auto& kw : v.keyword_values) txt_mentions(kw, m, out, depth + 1);
}

// install_requires as literal strings, plus any requirements file its expression names.
void requirements_from(const PyValue& v, const PyModule& m, const std::string& path, PackageInfo& info,
                       std::vector<SpecRequirement>& into) {
    for (const auto& [text, line] : string_items(v, m)) into.push_back({text, "pypi", {path, line}});
    std::vector<std::pair<std::string, int>> txt;
    txt_mentions(v, m, txt);
    for (auto& t : txt) info.requirement_files.push_back(t);
}

}  // namespace

PackageInfo read_setup_py(std::string_view text, const std::string& path) {
    auto m = read_python(text);
    PackageInfo info;

    bool torch_ext = std::find(m.names.begin(), m.names.end(), "cpp_extension") != m.names.end() ||
                     std::find(m.names.begin(), m.names.end(), "CUDAExtension") != m.names.end() ||
                     std::find(m.names.begin(), m.names.end(), "CppExtension") != m.names.end() ||
                     std::find(m.names.begin(), m.names.end(), "BuildExtension") != m.names.end();
    info.cuda = std::find(m.names.begin(), m.names.end(), "CUDAExtension") != m.names.end();

    // Names bound to an extension class: `extension = CUDAExtension` (Deformable-DETR's ops).
    std::vector<std::string> ctors = {"CUDAExtension", "CppExtension"};
    for (const auto& [name, value] : m.assignments)
        if (value.kind == PyValue::Kind::name &&
            (last_part(value.text) == "CUDAExtension" || last_part(value.text) == "CppExtension"))
            ctors.push_back(name);

    for (const auto& call : m.calls) {
        auto fn = last_part(call.text);
        if (fn == "setup") {
            if (auto* n = call.keyword("name"); n && n->kind == PyValue::Kind::string) info.name = n->text;
            info.declares = true;
            if (auto* r = call.keyword("install_requires")) {
                std::size_t before = info.install_requires.size() + info.requirement_files.size();
                requirements_from(*r, m, path, info, info.install_requires);
                bool empty_list = r->kind == PyValue::Kind::list && r->items.empty();
                if (!empty_list && info.install_requires.size() + info.requirement_files.size() == before)
                    info.requirements_unreadable = true;
            }
            if (auto* r = call.keyword("setup_requires")) {
                for (const auto& [t, line] : string_items(*r, m)) info.build_requires.push_back({t, "pypi", {path, line}});
            }
            if (auto* p = call.keyword("python_requires")) {
                auto items = string_items(*p, m);
                if (!items.empty()) {
                    info.python_requires = items[0].first;
                    info.python_from = {path, items[0].second};
                }
            }
            if (auto* e = call.keyword("extras_require")) {
                const PyValue* dict = e;
                if (e->kind == PyValue::Kind::name) {
                    auto it = m.assignments.find(e->text);
                    if (it != m.assignments.end()) dict = &it->second;
                }
                if (dict->kind == PyValue::Kind::dict) {
                    for (std::size_t i = 0; i < dict->keys.size() && i < dict->items.size(); ++i)
                        for (const auto& [t, line] : string_items(dict->items[i], m))
                            info.extras.push_back({"extra", t,
                                                   "extras_require['" + dict->keys[i] + "'], not installed by default",
                                                   {path, line}});
                }
            }
            continue;
        }
        if (!torch_ext) continue;
        bool is_ctor = std::find(ctors.begin(), ctors.end(), fn) != ctors.end() ||
                       std::find(ctors.begin(), ctors.end(), call.text) != ctors.end();
        const PyValue* name = call.keyword("name");
        if (!name && is_ctor && !call.items.empty()) name = &call.items[0];
        const PyValue* module = call.keyword("module");
        // mmdetection3d's make_cuda_ext(name=..., module=..., sources=[...]) helper.
        bool helper = !is_ctor && name && module && call.keyword("sources");
        // An empty name is no module (found by fuzz/setup_py: CUDAExtension('', ...)).
        if (!(is_ctor || helper) || !name || name->kind != PyValue::Kind::string || name->text.empty()) continue;
        ExtensionModule ext;
        ext.module = name->text;
        if (module && module->kind == PyValue::Kind::string) ext.module = module->text + "." + name->text;
        ext.line = call.line;
        if (std::none_of(info.extensions.begin(), info.extensions.end(),
                         [&](const ExtensionModule& e) { return e.module == ext.module; }))
            info.extensions.push_back(ext);
    }
    if (!info.extensions.empty()) info.extension_line = info.extensions.front().line;
    std::sort(info.requirement_files.begin(), info.requirement_files.end());
    info.requirement_files.erase(std::unique(info.requirement_files.begin(), info.requirement_files.end()),
                                 info.requirement_files.end());
    return info;
}

}  // namespace envlock::infer
