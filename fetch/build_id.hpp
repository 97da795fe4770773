#pragma once
// Which envlock binary is running: what the cache keeps from one run for the next (a resolve's
// memo, an index page's records) is bound to it, so a rebuilt envlock never reuses what an
// older parser or solver made.
#include <string>

namespace envlock {

// The GNU build id of the running executable (any rebuild changes it), else its size and mtime.
std::string binary_build_id();

}  // namespace envlock
