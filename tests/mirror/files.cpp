#include "tests/mirror/files.hpp"

#include <filesystem>
#include <fstream>

#include "resolver/specs/errors.hpp"

namespace envlock::mirror {

void write_file(const std::string& root, const std::string& relative, const std::string& bytes) {
    namespace fs = std::filesystem;
    fs::path p = fs::path(root) / relative;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw EnvironmentError("cannot write " + p.string());
}

std::string url_escape(const std::string& path) {
    std::string out;
    for (unsigned char c : path) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
            out += static_cast<char>(c);
        } else {
            static const char* hex = "0123456789ABCDEF";
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string html_escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string up_to_root(const std::string& from_file) {
    std::string out;
    for (char c : from_file)
        if (c == '/') out += "../";
    return out;
}

}  // namespace envlock::mirror
