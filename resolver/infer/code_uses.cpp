#include "resolver/infer/code_uses.hpp"

#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

#include "resolver/specs/errors.hpp"

namespace envlock {

namespace fs = std::filesystem;

namespace {

struct Rule {
    const char* use;
    std::regex line;
    bool python_only;   // configs (yaml, cfg) cannot import anything
};

const std::vector<Rule>& rules() {
    static const std::vector<Rule> r = {
        // torch.nn.SyncBatchNorm itself, its converter, and the OpenMMLab / detectron2 config names.
        {"code-uses:torch.nn.SyncBatchNorm", std::regex(R"(SyncBatchNorm|convert_sync_batchnorm|['"]SyncBN['"])"), false},
        // The aliases numpy 1.20 deprecated and 1.24 removed (np.float32, np.int_ are not them).
        {"code-uses:numpy.float-aliases", std::regex(R"(\b(np|numpy)\.(float|int|bool|object|complex|str|long|unicode)\b[^\w])"), true},
        {"code-uses:torch.utils.tensorboard", std::regex(R"(torch\.utils\.tensorboard|from\s+torch\.utils\s+import\s+tensorboard)"), true},
        {"numba-cuda", std::regex(R"(from\s+numba\s+import\s+cuda|numba\.cuda|@cuda\.jit)"), true},
        {"cuda-extensions", std::regex(R"(\bCUDAExtension\b|torch\.utils\.cpp_extension)"), true},
    };
    return r;
}

bool skipped_dir(const std::string& name) {
    return name.empty() || name[0] == '.' || name == "build" || name == "dist" || name == "site-packages" ||
           name == "node_modules" || name == "__pycache__";
}

}  // namespace

std::map<std::string, std::string> code_uses(const std::string& dir, std::size_t max_files) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw InputError(dir + ": no such directory (expected the code's checkout)");
    std::map<std::string, std::string> out;
    std::size_t files = 0;
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator() && files < max_files; it.increment(ec)) {
        if (ec) break;
        std::string name = it->path().filename().string();
        if (it->is_directory(ec)) {
            if (skipped_dir(name)) it.disable_recursion_pending();
            continue;
        }
        std::string ext = it->path().extension().string();
        bool python = ext == ".py";
        if (!python && ext != ".yaml" && ext != ".yml" && ext != ".cfg") continue;
        if (!it->is_regular_file(ec) || it->file_size(ec) > (2u << 20)) continue;
        ++files;
        std::ifstream in(it->path());
        std::string rel = it->path().lexically_relative(dir).string();
        std::size_t n = 0;
        for (std::string line; std::getline(in, line);) {
            ++n;
            size_t b = line.find_first_not_of(" \t");
            if (b == std::string::npos || line[b] == '#') continue;
            line.push_back('\n');   // so a use at the end of a line is followed by a non-word character
            for (const auto& r : rules()) {
                if ((r.python_only && !python) || out.count(r.use)) continue;
                if (std::regex_search(line, r.line)) out[r.use] = rel + ":" + std::to_string(n);
            }
        }
    }
    return out;
}

}  // namespace envlock
