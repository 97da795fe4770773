#include "resolver/lock/sha256.hpp"

// OpenSSL's own SHA-256 functions, not EVP: OpenSSL 3's EVP interface fetches the algorithm
// from its provider on first use, which initialises the provider machinery (measured: 0.9 ms
// of CPU for one short hash, a twentieth of a re-resolve that keeps its lock). The functions
// are deprecated in 3.0 in favour of EVP, not removed; suppressing the warning is deliberate.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace envlock {

Sha256::Sha256() : ctx_(new SHA256_CTX) { SHA256_Init(static_cast<SHA256_CTX*>(ctx_)); }

Sha256::~Sha256() { delete static_cast<SHA256_CTX*>(ctx_); }

void Sha256::update(std::string_view bytes) { SHA256_Update(static_cast<SHA256_CTX*>(ctx_), bytes.data(), bytes.size()); }

std::string Sha256::hex_digest() {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256_Final(digest, static_cast<SHA256_CTX*>(ctx_));
    static const char* hex = "0123456789abcdef";
    std::string out;
    out.reserve(2 * SHA256_DIGEST_LENGTH);
    for (unsigned char b : digest) {
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 0xf]);
    }
    return out;
}

std::string sha256_hex(std::string_view bytes) {
    Sha256 hash;
    hash.update(bytes);
    return hash.hex_digest();
}

}  // namespace envlock
