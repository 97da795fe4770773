// `envlock inspect gpu|driver|cuda|torch|advisories`: answers from the knowledge base, each fact
// with its source; --json on each. Unknown names and versions are bad input (exit 2).
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/shared_flags.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/knowledge/public_source.hpp"

namespace envlock::cli {
namespace {

namespace kb = knowledge;
using nlohmann::json;

struct InspectOptions {
    std::string query;
    bool json = false;
    std::vector<std::string> knowledge_files;
};


std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
}

void print_row(const std::string& key, const std::string& value) {
    std::string label = key + ":";
    if (label.size() < 22) label.resize(22, ' ');
    std::cout << label << " " << value << "\n";
}

std::string unverified_tag(bool unverified) { return unverified ? " (unverified)" : ""; }

// First toolkit whose nvcc lists the plain sm target.
std::string first_nvcc_for(const kb::Knowledge& k, int sm) {
    std::string best;
    for (const auto& row : k.nvcc_targets) {
        auto t = kb::nvcc_sm_targets(k, row.cuda);
        if (std::find(t.begin(), t.end(), sm) != t.end() && (best.empty() || kb::compare_dotted(row.cuda, best) < 0))
            best = row.cuda;
    }
    return best;
}

json arch_json(const kb::ArchList& a) {
    json sass = json::array(), ptx = json::array();
    for (int s : a.sass) sass.push_back(kb::sm_name(s));
    for (int p : a.ptx) ptx.push_back("compute_" + std::to_string(p));
    return {{"sass", sass}, {"ptx", ptx}};
}

// ---------------------------------------------------------------- gpu

void inspect_gpu(const InspectOptions& o) {
    kb::Knowledge k = kb::load(user_knowledge_files(o.knowledge_files));
    auto cc = kb::gpu_compute_capability(k, o.query);
    if (!cc)
        throw InputError("inspect gpu: " + kb::unknown_gpu_message(k, o.query) + " (the knowledge base knows " +
                         std::to_string(k.gpus.size()) + " GPU names; give sm_XY, or add the GPU with --knowledge FILE)");
    int sm = cc->first * 10 + cc->second;
    const kb::GpuRow* row = kb::parse_sm(o.query) ? nullptr : kb::find_gpu(k, o.query);
    std::string first = first_nvcc_for(k, sm);
    if (o.json) {
        json j = {{"query", o.query}, {"sm", kb::sm_name(sm)}, {"compute-capability", kb::cc_name(sm)},
                  {"name", row ? json(row->name) : json(nullptr)}, {"unverified", row && row->unverified},
                  {"source", row ? json(kb::public_source(row->source)) : json(nullptr)}, {"first-nvcc", first.empty() ? json(nullptr) : json(first)}};
        if (row && row->unverified) j["why"] = row->why;
        std::cout << j.dump(2) << "\n";
        return;
    }
    if (row) print_row("gpu", row->name + unverified_tag(row->unverified));
    print_row("compute capability", kb::cc_name(sm) + " (" + kb::sm_name(sm) + ")");
    if (!first.empty()) print_row("nvcc builds it from", "CUDA " + first);
    if (row && row->unverified) print_row("why unverified", row->why);
    if (row) print_row("source", kb::public_source(row->source));
}

// ---------------------------------------------------------------- driver

void inspect_driver(const InspectOptions& o) {
    kb::Knowledge k = kb::load(user_knowledge_files(o.knowledge_files));
    auto max = kb::driver_max_cuda(k, o.query);
    if (!max)
        throw InputError("inspect driver: '" + o.query + "' is not a driver version the knowledge base can place (expected e.g. 525.60.13, at least " +
                         (k.cuda_drivers.empty() ? std::string("?") : k.cuda_drivers.front().linux_driver) + ")");
    const kb::CudaDriverRow* row = nullptr;
    for (const auto& r : k.cuda_drivers)
        if (kb::major_minor(r.cuda) == *max && kb::compare_dotted(r.linux_driver, o.query) <= 0 &&
            (!row || kb::compare_dotted(row->cuda, r.cuda) < 0))
            row = &r;
    const kb::MinorVersionRule* mvc = kb::minor_version_rule(k, *max);
    bool mvc_applies = mvc && kb::compare_dotted(o.query, mvc->min_driver) >= 0;
    // Past every known toolkit driver, a newer toolkit whose driver no source gives may still run.
    std::vector<const kb::CudaDriverRow*> later_unknown;
    bool newest_known = true;
    for (const auto& r : k.cuda_drivers)
        if (!r.unknown && kb::compare_dotted(kb::major_minor(r.cuda), *max) > 0) newest_known = false;
    if (newest_known)
        for (const auto* u : kb::unknown_driver_rows_after(k, *max))
            if (std::none_of(later_unknown.begin(), later_unknown.end(),
                             [&](const kb::CudaDriverRow* seen) { return kb::major_minor(seen->cuda) == kb::major_minor(u->cuda); }))
                later_unknown.push_back(u);
    if (o.json) {
        json j = {{"driver", o.query}, {"max-cuda", *max}, {"toolkit-release", row ? json(row->cuda) : json(nullptr)},
                  {"source", row ? json(kb::public_source(row->source)) : json(nullptr)}};
        j["newer-toolkits-driver-unknown"] = json::array();
        for (const auto* u : later_unknown)
            j["newer-toolkits-driver-unknown"].push_back({{"cuda", kb::major_minor(u->cuda)}, {"why", u->why}});
        j["minor-version-compatibility"] = mvc_applies
            ? json{{"cuda-major", mvc->cuda_major}, {"min-driver", mvc->min_driver}, {"source", kb::public_source(mvc->source)}}
            : json(nullptr);
        std::cout << j.dump(2) << "\n";
        return;
    }
    print_row("driver", o.query);
    print_row("max CUDA", *max + (row ? " (the driver of CUDA " + row->cuda + " is " + row->linux_driver + ")" : ""));
    if (mvc_applies)
        print_row("minor-version compat", "newer CUDA " + std::to_string(mvc->cuda_major) +
                                              ".x runtimes also run (limited features; PTX JIT of newer toolkits does not), driver >= " + mvc->min_driver);
    if (row) print_row("source", kb::public_source(row->source));
    for (const auto* u : later_unknown)
        print_row("CUDA " + kb::major_minor(u->cuda), "its driver is unknown (no source), so this driver may run it: " + u->why);
}

// ---------------------------------------------------------------- cuda

void inspect_cuda(const InspectOptions& o) {
    kb::Knowledge k = kb::load(user_knowledge_files(o.knowledge_files));
    auto linux_min = kb::min_driver_for_cuda(k, o.query);
    auto windows_min = kb::min_driver_for_cuda(k, o.query, true);
    const kb::NvccTargetsRow* targets = kb::nvcc_targets_row(k, o.query);
    auto hc = kb::host_compiler_limit(k, o.query);
    auto unknown = kb::unknown_driver_rows(k, o.query);
    if (!linux_min && !targets && !hc && unknown.empty())
        throw InputError("inspect cuda: the knowledge base has nothing on CUDA '" + o.query + "' (expected a toolkit version such as 11.1)");
    const kb::MinorVersionRule* mvc = kb::minor_version_rule(k, o.query);
    const kb::CudaDriverRow* drow = nullptr;
    if (linux_min)
        for (const auto& r : k.cuda_drivers)
            if (kb::major_minor(r.cuda) == kb::major_minor(o.query) && r.linux_driver == *linux_min) { drow = &r; break; }
    if (o.json) {
        json j = {{"cuda", o.query}};
        j["min-driver"] = {{"linux", linux_min ? json(*linux_min) : json(nullptr)},
                           {"windows", windows_min ? json(*windows_min) : json(nullptr)},
                           {"source", drow ? json(kb::public_source(drow->source)) : json(nullptr)}};
        if (!linux_min && !unknown.empty()) j["min-driver"]["unknown"] = {{"releases", [&] {
            json a = json::array();
            for (const auto* u : unknown) a.push_back(u->cuda);
            return a;
        }()}, {"why", unknown.front()->why}};
        j["minor-version-compatibility"] = mvc ? json{{"min-driver", mvc->min_driver}, {"source", kb::public_source(mvc->source)}} : json(nullptr);
        if (targets) {
            json sm = json::array();
            for (int s : kb::nvcc_sm_targets(k, o.query)) sm.push_back(kb::sm_name(s));
            j["nvcc"] = {{"sm", sm}, {"targets", targets->sm}, {"source", kb::public_source(targets->source)}};
            if (!targets->note.empty()) j["nvcc"]["note"] = targets->note;
        } else {
            j["nvcc"] = nullptr;
        }
        if (hc) {
            j["host-compiler"] = {{"gcc-max", hc->gcc_max}, {"clang-max", hc->clang_max ? json(*hc->clang_max) : json(nullptr)},
                                  {"unverified", hc->unverified}, {"source", kb::public_source(hc->source)}};
            if (hc->unverified) j["host-compiler"]["why"] = hc->why;
        } else {
            j["host-compiler"] = nullptr;
        }
        std::cout << j.dump(2) << "\n";
        return;
    }
    print_row("cuda", o.query);
    if (linux_min) print_row("min driver (linux)", *linux_min + (drow ? " (" + drow->label + ")" : ""));
    else if (!unknown.empty()) print_row("min driver (linux)", "unknown (no source): " + unknown.front()->why);
    if (windows_min) print_row("min driver (windows)", *windows_min);
    if (mvc) print_row("minor-version compat", "CUDA " + std::to_string(mvc->cuda_major) + ".x runs on driver >= " + mvc->min_driver + " (limited features)");
    else if (linux_min) print_row("minor-version compat", "none: this toolkit needs its own driver");
    if (drow) print_row("driver source", kb::public_source(drow->source));
    if (targets) {
        std::vector<std::string> plain;
        for (int s : kb::nvcc_sm_targets(k, o.query)) plain.push_back(kb::sm_name(s));
        print_row("nvcc sm targets", join(plain, " "));
        if (plain.size() != targets->sm.size()) print_row("all nvcc targets", join(targets->sm, " "));
        if (!targets->note.empty()) print_row("note", targets->note);
        print_row("targets source", kb::public_source(targets->source));
    }
    if (hc) {
        print_row("newest gcc", std::to_string(hc->gcc_max) + unverified_tag(hc->unverified));
        if (hc->clang_max) print_row("newest clang", std::to_string(*hc->clang_max) + unverified_tag(hc->unverified));
        if (hc->unverified) print_row("why unverified", hc->why);
        print_row("compiler source", kb::public_source(hc->source));
    }
}

// ---------------------------------------------------------------- torch

void inspect_torch(const InspectOptions& o) {
    kb::Knowledge k = kb::load(user_knowledge_files(o.knowledge_files));
    auto rel = kb::torch_release(k, o.query);
    if (!rel) throw InputError("inspect torch: the knowledge base has no torch release '" + o.query + "' (expected e.g. 1.9.1)");
    struct Arch { std::string kind, variant; const kb::TorchArchRow* row; };
    std::vector<Arch> archs;
    for (const auto& v : rel->variants)
        if (v.rfind("cu", 0) == 0) archs.push_back({"pip", v, kb::torch_arch_row(k, o.query, v, "pip")});
    for (const auto& c : rel->conda_cuda) {
        // conda-forge builds are not the pytorch channel's; their arch lists are not in the data.
        bool forge = c.find("conda-forge") != std::string::npos;
        std::string v = c.substr(0, c.find(' '));
        archs.push_back({forge ? "conda-forge" : "conda", v, forge ? nullptr : kb::torch_arch_row(k, o.query, v, "conda")});
    }
    auto cpp = kb::torch_cpp_extension_row(k, o.query);
    if (o.json) {
        json j = {{"torch", o.query}, {"release", rel->version}, {"series-releases", kb::torch_series_releases(k, o.query)},
                  {"python", {{"min", rel->python_min.empty() ? json(nullptr) : json(rel->python_min)},
                              {"max", rel->python_max.empty() ? json(nullptr) : json(rel->python_max)}}},
                  {"variants", rel->variants}, {"variants-unverified", rel->variants_unverified}, {"conda-cuda", rel->conda_cuda},
                  {"pypi-default", rel->pypi_default.empty() ? json(nullptr) : json(rel->pypi_default)},
                  {"torchvision", rel->torchvision}, {"torchaudio", rel->torchaudio}, {"source", kb::public_source(rel->source)},
                  {"python-source", kb::public_source(rel->python_source)}};
        if (!rel->note.empty()) j["note"] = rel->note;
        if (!rel->pypi_default_source.empty()) j["pypi-default-source"] = kb::public_source(rel->pypi_default_source);
        j["arch-lists"] = json::array();
        for (const auto& a : archs) {
            json e = {{"kind", a.kind}, {"variant", a.variant}};
            if (a.row) {
                e.update(arch_json(a.row->archs));
                e["arch-list"] = a.row->arch_list;
                e["unverified"] = a.row->unverified;
                if (a.row->unverified) e["why"] = a.row->why;
                e["source"] = kb::public_source(a.row->source);
            } else {
                e["arch-list"] = nullptr;
            }
            j["arch-lists"].push_back(e);
        }
        j["cpp-extension"] = cpp ? json{{"arches", cpp->arches}, {"unverified", cpp->unverified}, {"source", kb::public_source(cpp->source)}} : json(nullptr);
        std::cout << j.dump(2) << "\n";
        return;
    }
    print_row("torch", rel->version);
    auto series = kb::torch_series_releases(k, o.query);
    if (series.size() > 1) print_row("releases of " + o.query, join(series, " ") + " (shown: the newest)");
    std::string py = (rel->python_min.empty() ? "?" : rel->python_min) + " - " + (rel->python_max.empty() ? "?" : rel->python_max);
    if (!rel->python_note.empty()) py += " (" + rel->python_note + ")";
    print_row("python", py);
    print_row("pip variants", join(rel->variants) + unverified_tag(rel->variants_unverified));
    print_row("plain PyPI wheel", rel->pypi_default.empty() ? std::string("CUDA build unknown (no source)") : rel->pypi_default);
    if (!rel->conda_cuda.empty()) print_row("conda CUDA", join(rel->conda_cuda));
    print_row("torchvision", rel->torchvision);
    print_row("torchaudio", rel->torchaudio);
    if (!rel->note.empty()) print_row("note", rel->note);
    print_row("source", kb::public_source(rel->source));
    if (!rel->pypi_default_source.empty()) print_row("PyPI wheel source", kb::public_source(rel->pypi_default_source));
    for (const auto& a : archs) {
        std::string label = a.kind + " " + a.variant;
        if (!a.row) { print_row(label, "arch list not in the knowledge base"); continue; }
        print_row(label, kb::describe(a.row->archs) + unverified_tag(a.row->unverified));
        if (a.row->unverified && !a.row->why.empty()) print_row("why unverified", a.row->why);
    }
    if (cpp) print_row("cpp_extension archs", join(cpp->arches, " ") + unverified_tag(cpp->unverified));
}

// ---------------------------------------------------------------- advisories

void inspect_advisories(const InspectOptions& o) {
    kb::Knowledge k = kb::load(user_knowledge_files(o.knowledge_files));
    auto list = kb::advisories(k);
    if (o.json) {
        json j = json::array();
        for (const auto& a : list)
            j.push_back({{"id", a.id}, {"when", a.when}, {"needs", a.needs.empty() ? json(nullptr) : json(a.needs)},
                         {"symptom", a.symptom}, {"fix", a.fix}, {"source", kb::public_source(a.source)}});
        std::cout << j.dump(2) << "\n";
        return;
    }
    for (const auto& a : list) {
        std::cout << a.id << "\n";
        print_row("  when", a.when.empty() ? "(machine conditions only)" : join(a.when, " + "));
        if (!a.needs.empty()) print_row("  needs", a.needs);
        print_row("  symptom", a.symptom);
        print_row("  fix", a.fix);
        print_row("  source", kb::public_source(a.source));
        std::cout << "\n";
    }
}

// ---------------------------------------------------------------- changes

void inspect_changes(const InspectOptions& o) {
    kb::Knowledge k = kb::load(user_knowledge_files(o.knowledge_files));
    std::vector<kb::KnowledgeChange> list = k.changes;
    if (!o.query.empty()) {
        std::string version;
        for (const auto& c : k.changes)
            if (c.replaces.rfind(o.query, 0) == 0) { version = c.replaces; break; }
        auto since = version.empty() ? std::nullopt : kb::changes_since(k, version);
        if (!since)
            throw InputError("inspect changes: no knowledge release replaced a version starting with '" + o.query +
                             "' (the current version is " + k.version + ")");
        list = *since;
    }
    if (o.json) {
        json j = json::array();
        for (const auto& c : list)
            j.push_back({{"release", c.release}, {"replaces", c.replaces}, {"row", c.row}, {"change", c.change},
                         {"concerns", c.concerns}, {"source", kb::public_source(c.source)}});
        std::cout << j.dump(2) << "\n";
        return;
    }
    std::string release;
    for (const auto& c : list) {
        if (c.release != release) {
            release = c.release;
            std::cout << release << " (replaces knowledge " << c.replaces << ")\n";
        }
        std::cout << "  " << c.row << ": " << c.change << "\n";
        print_row("    source", kb::public_source(c.source));
    }
    std::cout << "current knowledge version: " << k.version << "\n";
}

void add_one(CLI::App& inspect, int& exit_code, const char* name, const char* help, const char* arg_help,
             void (*fn)(const InspectOptions&), bool arg_required = true) {
    auto opts = std::make_shared<InspectOptions>();
    auto* cmd = inspect.add_subcommand(name, help);
    if (arg_help) {
        auto* opt = cmd->add_option("query", opts->query, arg_help);
        if (arg_required) opt->required();
    }
    cmd->add_flag("--json", opts->json, "Print JSON");
    cmd->add_option("--knowledge", opts->knowledge_files, "Extra knowledge file (YAML), overriding built-in rows; repeatable")->allow_extra_args(false);
    cmd->callback([opts, fn, &exit_code] {
        fn(*opts);
        exit_code = 0;
    });
}

}  // namespace

void add_inspect_knowledge(CLI::App& inspect, int& exit_code) {
    add_one(inspect, exit_code, "gpu", "Compute capability of a GPU (\"RTX 4090\", \"NVIDIA A100-SXM4-80GB\", sm_89)",
            "GPU name or sm_XY", inspect_gpu);
    add_one(inspect, exit_code, "driver", "Highest CUDA an NVIDIA driver runs", "driver version, e.g. 525.60.13", inspect_driver);
    add_one(inspect, exit_code, "cuda", "A CUDA toolkit's minimum driver, nvcc targets and newest host compilers",
            "CUDA version, e.g. 11.1", inspect_cuda);
    add_one(inspect, exit_code, "torch", "A torch release's Python range, CUDA variants and arch lists",
            "torch version, e.g. 1.9.1", inspect_torch);
    add_one(inspect, exit_code, "advisories", "Known-bad package combinations, with symptom, fix and source", nullptr,
            inspect_advisories);
    add_one(inspect, exit_code, "changes", "Knowledge rows each release changed, with their sources (since VERSION, if given)",
            "a knowledge version (or its first characters) a lock was resolved with", inspect_changes, false);
}

}  // namespace envlock::cli
