// Markdown, shell and Dockerfile inference (resolver/infer: markdown_shell, doc_commands,
// dockerfile): the input's first byte picks the file it becomes in a checkout (README.md,
// install.sh or Dockerfile), the rest is its text; the pieces (markdown_code_blocks,
// shell_commands, read_dockerfile) run on it directly, then infer_spec reads the checkout.
// Property: the inferred spec printed and re-read is equal.
#include "fuzz/spec_round_trip.hpp"
#include "resolver/infer/parts.hpp"

using namespace envlock;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const char* const kFiles[] = {"README.md", "install.sh", "Dockerfile", "docs/install.md"};
    const char* file = kFiles[data[0] % 4];
    std::string text(fuzz::text(data + 1, size - 1));
    for (const auto& block : infer::markdown_code_blocks(text)) (void)infer::shell_commands(block.text, block.first_line);
    (void)infer::shell_commands(text, 1);
    (void)infer::read_dockerfile(text);
    fuzz::check_inferred_checkout(file, text);
    return 0;
}
