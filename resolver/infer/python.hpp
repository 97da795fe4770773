#pragma once
// A small reader for the Python that setup.py files are made of: it tokenizes the file and
// reads literal values (strings, lists, tuples, dicts, names, calls and `+` of lists) without
// running anything. What it cannot read as a literal becomes `other`, never an error.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace envlock::infer {

struct PyValue {
    enum class Kind { string, list, dict, name, call, concat, other };
    Kind kind = Kind::other;
    std::string text;                       // string value, dotted name, or called function's dotted name
    std::vector<PyValue> items;             // list/tuple items, call positional args, dict values, concat operands
    std::vector<std::string> keys;          // dict keys (string keys; "" otherwise), call keyword names
    std::vector<PyValue> keyword_values;    // call keyword values, parallel to keys for calls
    int line = 0;                           // 1-based line where the value starts

    const PyValue* keyword(std::string_view key) const;   // a call's keyword argument
    const PyValue* entry(std::string_view key) const;     // a dict's value
};

struct PyModule {
    std::map<std::string, PyValue> assignments;   // `NAME = value` anywhere; the last one wins
    std::vector<PyValue> calls;                    // every call, nested ones included, in source order
    std::vector<std::string> names;                // every identifier token, for "does it mention X"
};

PyModule read_python(std::string_view source);

// Flattens a value into strings: a string, a list of strings, `a + b`, or a name bound to one.
// Calls and other expressions contribute nothing (their values are not known statically).
std::vector<std::pair<std::string, int>> string_items(const PyValue& v, const PyModule& module, int depth = 0);

}  // namespace envlock::infer
