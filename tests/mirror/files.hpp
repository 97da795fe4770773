#pragma once
// Writing the tree: every file goes under the build's staging root, parents created.
#include <string>

namespace envlock::mirror {

void write_file(const std::string& root, const std::string& relative, const std::string& bytes);

// Percent-encodes what a URL path segment must not carry raw ('+' -> %2B, as
// download.pytorch.org writes its hrefs).
std::string url_escape(const std::string& path);
std::string html_escape(const std::string& text);

// "a/b/c.html" -> "../../" (from the directory of `from_file` back to the root).
std::string up_to_root(const std::string& from_file);

}  // namespace envlock::mirror
