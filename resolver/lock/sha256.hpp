#pragma once
// SHA-256 over bytes already in memory (content hashes, index records). Files are hashed
// by fetch/ and install/, which own the filesystem.
#include <string>
#include <string_view>

namespace envlock {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(std::string_view bytes);
    std::string hex_digest();   // lowercase hex; finishes the hash

private:
    void* ctx_;
};

std::string sha256_hex(std::string_view bytes);

}  // namespace envlock
