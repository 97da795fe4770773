#include "fetch/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "resolver/specs/errors.hpp"

namespace envlock {

std::string read_text_file(const std::string& path, std::string_view what) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        std::string kind = what.empty() ? "file" : std::string(what);
        throw InputError(path + ": no such " + kind);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw EnvironmentError(path + ": cannot read: " + std::strerror(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

void write_file_atomically(const std::string& path, std::string_view content) {
    std::filesystem::path target(path);
    std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    int fd = mkstemp(tmpl.data());
    if (fd < 0) throw EnvironmentError(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
    size_t written = 0;
    while (written < content.size()) {
        ssize_t n = ::write(fd, content.data() + written, content.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            ::unlink(tmpl.c_str());
            throw EnvironmentError(path + ": write failed: " + std::strerror(err));
        }
        written += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        throw EnvironmentError(path + ": write failed: " + std::strerror(err));
    }
    ::chmod(tmpl.c_str(), 0644);
    if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmpl.c_str());
        throw EnvironmentError(path + ": cannot move the new file into place: " + std::strerror(err));
    }
}

}  // namespace envlock
