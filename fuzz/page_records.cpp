// The records of an index page kept in the cache (fetch/page_cache): a damaged file must read as
// "nothing kept", never crash or allocate without bound. The input is the part after the key
// (record count and records), framed as this binary writes a file so the reader gets past the
// key and build id. Property: records that are read write back to the very same bytes.
#include "fetch/page_cache.hpp"
#include "fuzz/fuzz.hpp"

using namespace envlock;
using envlock::fuzz::property;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fetch::PageKey key{"simple-html", "https://pypi.org/simple/torch/", "torch", "http {id}"};
    static const std::string head = [] {
        std::string empty = fetch::page_records_bytes(key, {});
        return empty.substr(0, empty.size() - 16);   // without the count and the length trailer
    }();
    std::string bytes = head + std::string(fuzz::text(data, size));
    std::uint64_t length = bytes.size();
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(length >> (8 * i)));
    if (auto records = fetch::page_records_from_bytes(bytes, key)) {
        std::string again = fetch::page_records_bytes(key, *records);
        property(again == bytes, "page_records_bytes(page_records_from_bytes(b)) == b", again, bytes);
    }
    return 0;
}
