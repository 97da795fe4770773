#pragma once
// Where the mirror's version facts come from: ../shared/facts when it is there, otherwise
// the smaller copy compiled into tables_builtin.cpp (each row names its source).
#include <string>

#include "tests/mirror/model.hpp"

namespace envlock::mirror {

Tables builtin_tables();

// Reads facts/torch.yaml, facts/mmcv.yaml and facts/python_libs.yaml under shared_dir;
// a table whose file is missing stays the built-in one. Throws InputError naming the
// file when a present file is malformed.
Tables load_tables(const std::string& shared_dir);

// "pip: cu102, cu111, cpu, rocm4.0.1; conda: 10.2, 11.3(conda-forge)" -> {cpu, cu102, cu111};
// free-text forms such as "11.8 (stable), 12.1 (experimental)" give {cpu, cu118, cu121}.
std::vector<std::string> parse_pip_variants(const std::string& text);
// "'>=3.6, <=3.9'" -> {6, 9}; false when no bound can be read.
bool parse_python_range(const std::string& text, int& min_minor, int& max_minor);

}  // namespace envlock::mirror
