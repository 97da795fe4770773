#include "resolver/lock/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace envlock {

namespace {

// The algorithm fetched from OpenSSL's provider once: EVP_sha256() would fetch it again on
// every init (OpenSSL 3, "Performance" in crypto(7)), most of hashing a short text.
const EVP_MD* sha256_md() {
    static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
    return md;
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
    const EVP_MD* md = sha256_md();
    if (!ctx_ || !md || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), md, nullptr) != 1)
        throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::string_view bytes) {
    EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size());
}

std::string Sha256::hex_digest() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), digest, &length);
    static const char* hex = "0123456789abcdef";
    std::string out;
    out.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
        out.push_back(hex[digest[i] >> 4]);
        out.push_back(hex[digest[i] & 0xf]);
    }
    return out;
}

std::string sha256_hex(std::string_view bytes) {
    Sha256 hash;
    hash.update(bytes);
    return hash.hex_digest();
}

}  // namespace envlock
