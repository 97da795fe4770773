// The envlock.yaml reader (resolver/lock: read_lock, with the schema check and the spec and
// target readers inside it), and spec_from_yaml_text on the same text. Property: a lock read,
// written, read and written again is byte-identical.
#include "fuzz/fuzz.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/lock/spec_io.hpp"
#include "resolver/specs/errors.hpp"

using namespace envlock;
using envlock::fuzz::property;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto input = fuzz::text(data, size);
    try {
        (void)spec_from_yaml_text(input, "envlock.yaml");
    } catch (const Error&) {
    }
    Lock lock;
    try {
        lock = read_lock(input, "envlock.yaml");
    } catch (const Error&) {
        return 0;
    }
    std::string first = write_lock(lock);
    Lock back;
    try {
        back = read_lock(first, "envlock.yaml");
    } catch (const Error& e) {
        fuzz::violated("a written lock reads back", first, e.what());
    }
    std::string second = write_lock(back);
    property(second == first, "write_lock(read_lock(write_lock(read_lock(x)))) == write_lock(read_lock(x))", first, second);
    return 0;
}
