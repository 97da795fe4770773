#pragma once
// Reading a failed build or import log: which known failure it shows (the knowledge base's
// build_failures rows, each with its source) and, for an unknown one, the log's first error line.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/knowledge/knowledge.hpp"

namespace envlock::install {

struct ExplainedFailure {
    std::string id;          // the row's id: "unsupported-gnu-version" …
    std::string where;       // build | import | run
    std::string line;        // the log line the match starts on, trimmed
    std::string cause, fix;  // with the match's groups filled in
    std::string source;
};

// Every known failure the log shows, in log order (a row is reported once, at its first match).
// InputError when a row's pattern is not a valid regular expression (a user knowledge file).
std::vector<ExplainedFailure> explain_log(std::string_view log, const knowledge::Knowledge& k);

// The first line a compiler, nvcc, ninja or Python marks as an error: ninja's first `FAILED:` is
// skipped for the `error` line after it (the command line itself says nothing), and a Python
// traceback is answered with its last line. "" when nothing looks like an error.
std::string first_error_line(std::string_view log);

}  // namespace envlock::install
