// PyPI HTML readers (fetch/pypi_readers): PEP 503 simple pages, find-links pages and their
// links (parse_html_links, html_unescape), and PEP 658 core metadata (parse_core_metadata),
// which the same index pages point to. No property beyond "no crash, no sanitizer report,
// only InputError": these readers accept any text.
#include "fetch/pypi_readers.hpp"
#include "fuzz/fuzz.hpp"
#include "resolver/specs/errors.hpp"

using namespace envlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto input = fuzz::text(data, size);
    auto each = [](auto&& read) {
        try {
            read();
        } catch (const Error&) {
        }
    };
    each([&] { (void)fetch::parse_html_links(input, "https://download.example/whl/torch_stable.html"); });
    each([&] { (void)fetch::parse_simple_html(input, "https://pypi.example/simple/mmcv-full/", "mmcv-full"); });
    each([&] { (void)fetch::parse_simple_html(input, "https://pypi.example/simple/mmcv-full/"); });
    each([&] { (void)fetch::parse_find_links(input, "https://download.example/mmcv/dist/cu111/torch1.9.0/index.html"); });
    each([&] { (void)fetch::html_unescape(input); });
    each([&] { (void)fetch::parse_core_metadata(input); });
    return 0;
}
