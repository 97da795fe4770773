#include "resolver/infer/python.hpp"

#include <cctype>
#include <cstring>

namespace envlock::infer {

const PyValue* PyValue::keyword(std::string_view key) const {
    if (kind != Kind::call) return nullptr;
    for (std::size_t i = 0; i < keys.size() && i < keyword_values.size(); ++i)
        if (keys[i] == key) return &keyword_values[i];
    return nullptr;
}

const PyValue* PyValue::entry(std::string_view key) const {
    if (kind != Kind::dict) return nullptr;
    for (std::size_t i = 0; i < keys.size() && i < items.size(); ++i)
        if (keys[i] == key) return &items[i];
    return nullptr;
}

namespace {

enum class Tok { name, string, number, op, newline, end };

struct Token {
    Tok kind;
    std::string text;   // decoded value for strings
    int line;
};

bool is_keyword(const std::string& s) {
    static const char* const words[] = {"and",    "as",     "assert", "async", "await",  "break", "class",
                                        "continue", "def",  "del",    "elif",  "else",   "except", "finally",
                                        "for",    "from",   "global", "if",    "import", "in",    "is",
                                        "lambda", "nonlocal", "not",  "or",    "pass",   "raise", "return",
                                        "try",    "while",  "with",   "yield"};
    for (const char* w : words)
        if (s == w) return true;
    return false;
}

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<Token> tokenize(std::string_view s) {
    std::vector<Token> out;
    int line = 1;
    int depth = 0;
    std::size_t i = 0;
    auto newline = [&] {
        if (depth == 0 && !out.empty() && out.back().kind != Tok::newline) out.push_back({Tok::newline, "", line});
    };
    while (i < s.size()) {
        char c = s[i];
        if (c == '\n') {
            newline();
            ++line;
            ++i;
            continue;
        }
        if (c == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
            ++line;
            i += 2;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(c))) {
            ++i;
            continue;
        }
        if (c == '#') {
            while (i < s.size() && s[i] != '\n') ++i;
            continue;
        }
        // String literal, with an optional prefix of up to two letters (r, b, u, f).
        std::size_t p = i;
        bool raw = false;
        while (p < s.size() && p - i < 2 && std::strchr("rRbBuUfF", s[p]) && s[p] != '\0') {
            if (s[p] == 'r' || s[p] == 'R') raw = true;
            ++p;
        }
        if (p < s.size() && (s[p] == '\'' || s[p] == '"') && (p == i || !is_name_char(i > 0 ? s[i - 1] : ' '))) {
            char q = s[p];
            bool triple = p + 2 < s.size() && s[p + 1] == q && s[p + 2] == q;
            std::size_t j = p + (triple ? 3 : 1);
            int start_line = line;
            std::string value;
            while (j < s.size()) {
                if (triple ? (s.compare(j, 3, std::string(3, q)) == 0) : s[j] == q) break;
                if (!triple && s[j] == '\n') break;  // unterminated: stop at the line end
                if (s[j] == '\\' && j + 1 < s.size()) {
                    char e = s[j + 1];
                    if (raw) {
                        value += s[j];
                        value += e;
                    } else if (e == 'n') {
                        value += '\n';
                    } else if (e == 't') {
                        value += '\t';
                    } else if (e == '\n') {
                        // escaped newline: nothing
                    } else {
                        value += e;
                    }
                    if (e == '\n') ++line;
                    j += 2;
                    continue;
                }
                if (s[j] == '\n') ++line;
                value += s[j++];
            }
            j += (j < s.size()) ? (triple ? 3 : 1) : 0;
            out.push_back({Tok::string, value, start_line});
            i = j;
            continue;
        }
        if (is_name_start(c)) {
            std::size_t j = i;
            while (j < s.size() && is_name_char(s[j])) ++j;
            out.push_back({Tok::name, std::string(s.substr(i, j - i)), line});
            i = j;
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            std::size_t j = i;
            while (j < s.size() && (is_name_char(s[j]) || s[j] == '.')) ++j;
            out.push_back({Tok::number, std::string(s.substr(i, j - i)), line});
            i = j;
            continue;
        }
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
        std::string op(1, c);
        if (i + 1 < s.size()) {
            char d = s[i + 1];
            if (d == '=' && std::strchr("=!<>+-*/%&|^:@", c)) op += d;
            else if ((c == '*' && d == '*') || (c == '/' && d == '/') || (c == '-' && d == '>')) op += d;
        }
        out.push_back({Tok::op, op, line});
        i += op.size();
    }
    newline();
    out.push_back({Tok::end, "", line});
    return out;
}

struct Parser {
    std::vector<Token> t;
    std::size_t i = 0;
    PyModule module;

    const Token& cur() const { return t[i]; }
    bool is_op(const char* op) const { return t[i].kind == Tok::op && t[i].text == op; }
    bool at_delimiter() const {
        const auto& k = t[i];
        if (k.kind == Tok::end || k.kind == Tok::newline) return true;
        if (k.kind != Tok::op) return false;
        return k.text == "," || k.text == ")" || k.text == "]" || k.text == "}" || k.text == ":" || k.text == "=";
    }

    // Skips the rest of an expression we do not understand, keeping brackets balanced.
    void skip_expression() {
        int depth = 0;
        while (t[i].kind != Tok::end) {
            if (depth == 0 && at_delimiter()) return;
            if (t[i].kind == Tok::newline && depth == 0) return;
            if (t[i].kind == Tok::op) {
                const auto& o = t[i].text;
                if (o == "(" || o == "[" || o == "{") ++depth;
                if (o == ")" || o == "]" || o == "}") {
                    if (depth == 0) return;
                    --depth;
                }
            }
            // Calls inside an expression we skip are still worth recording (ext lists in ifs).
            if (t[i].kind == Tok::name && (i == 0 || !(t[i - 1].kind == Tok::op && t[i - 1].text == "."))) {
                std::size_t save = i;
                auto v = primary();
                if (i == save) ++i;
                (void)v;
                continue;
            }
            ++i;
        }
    }

    // Items up to `close`, with optional keyword arguments (calls) or key: value pairs (dicts).
    void sequence(PyValue& into, const char* close, bool call, bool dict) {
        while (!is_op(close) && cur().kind != Tok::end) {
            if (cur().kind == Tok::newline) {
                ++i;
                continue;
            }
            if (is_op("*") || is_op("**")) ++i;
            if (call && cur().kind == Tok::name && t[i + 1].kind == Tok::op && t[i + 1].text == "=") {
                into.keys.push_back(cur().text);
                i += 2;
                into.keyword_values.push_back(expression());
            } else if (dict) {
                auto key = expression();
                if (is_op(":")) {
                    ++i;
                    into.keys.push_back(key.kind == PyValue::Kind::string ? key.text : "");
                    into.items.push_back(expression());
                } else {
                    into.keys.push_back("");
                    into.items.push_back(key);
                }
            } else {
                into.items.push_back(expression());
                if (cur().kind == Tok::name && cur().text == "for") {  // comprehension
                    into.items.back().kind = PyValue::Kind::other;
                    skip_to(close);
                    break;
                }
            }
            if (is_op(",")) {
                ++i;
            } else if (!is_op(close)) {
                skip_expression();
                if (is_op(",")) ++i;
                else if (!is_op(close)) skip_to(close);
            }
        }
        if (is_op(close)) ++i;
    }

    void skip_to(const char* close) {
        int depth = 0;
        while (cur().kind != Tok::end) {
            if (cur().kind == Tok::op) {
                const auto& o = cur().text;
                if (depth == 0 && o == close) return;
                if (o == "(" || o == "[" || o == "{") ++depth;
                if (o == ")" || o == "]" || o == "}") --depth;
            }
            ++i;
        }
    }

    PyValue primary() {
        PyValue v;
        v.line = cur().line;
        if (cur().kind == Tok::string) {
            v.kind = PyValue::Kind::string;
            while (cur().kind == Tok::string) v.text += t[i++].text;  // implicit concatenation
        } else if (cur().kind == Tok::name && is_keyword(cur().text)) {
            // `return [...]`, `in (...)`: a keyword is no value to call or subscript.
            ++i;
            return v;
        } else if (cur().kind == Tok::name) {
            v.kind = PyValue::Kind::name;
            v.text = t[i++].text;
            module.names.push_back(v.text);
            while (is_op(".") && t[i + 1].kind == Tok::name) {
                v.text += "." + t[i + 1].text;
                module.names.push_back(t[i + 1].text);
                i += 2;
            }
        } else if (cur().kind == Tok::number) {
            v.kind = PyValue::Kind::other;
            v.text = t[i++].text;
        } else if (is_op("[") || is_op("(")) {
            const char* close = is_op("[") ? "]" : ")";
            ++i;
            v.kind = PyValue::Kind::list;
            sequence(v, close, false, false);
            if (std::string(close) == ")" && v.items.size() == 1 && t[i - 2].text != ",") {
                // Parenthesized expression, not a tuple.
                auto inner = v.items[0];
                v = inner;
            }
        } else if (is_op("{")) {
            ++i;
            v.kind = PyValue::Kind::dict;
            sequence(v, "}", false, true);
        } else {
            return v;  // kind other, nothing consumed
        }
        // Postfix: calls, attribute access on results, subscripts.
        while (true) {
            if (is_op("(")) {
                ++i;
                PyValue call;
                call.kind = PyValue::Kind::call;
                call.text = v.kind == PyValue::Kind::name ? v.text : "";
                call.line = v.line;
                call.items.clear();
                std::size_t slot = module.calls.size();
                module.calls.emplace_back();  // reserve: outer call first in source order
                sequence(call, ")", true, false);
                module.calls[slot] = call;
                v = call;
            } else if (is_op(".") && t[i + 1].kind == Tok::name) {
                v.text += "." + t[i + 1].text;
                if (v.kind != PyValue::Kind::call) v.kind = PyValue::Kind::other;
                else v.kind = PyValue::Kind::other;
                i += 2;
                if (is_op("(")) {
                    // method call on a value: record it as a call on the dotted text
                    auto text = v.text;
                    v.kind = PyValue::Kind::name;
                    v.text = text;
                }
            } else if (is_op("[")) {
                ++i;
                skip_to("]");
                if (is_op("]")) ++i;
                v.kind = PyValue::Kind::other;
            } else {
                break;
            }
        }
        return v;
    }

    PyValue expression() {
        if (cur().kind == Tok::name && (cur().text == "lambda" || cur().text == "not")) {
            PyValue v;
            v.line = cur().line;
            skip_expression();
            return v;
        }
        std::size_t start = i;
        auto v = primary();
        if (i == start) {
            skip_expression();
            return PyValue{PyValue::Kind::other, "", {}, {}, {}, t[start].line};
        }
        while (is_op("+")) {
            ++i;
            auto rhs = primary();
            if (v.kind != PyValue::Kind::concat) {
                PyValue c;
                c.kind = PyValue::Kind::concat;
                c.line = v.line;
                c.items.push_back(v);
                v = c;
            }
            v.items.push_back(rhs);
        }
        if (!at_delimiter()) {
            // `x if cond else y`, comparisons, `%` formatting...: keep calls seen, value unknown.
            skip_expression();
            PyValue other;
            other.line = v.line;
            return other;
        }
        return v;
    }

    void run() {
        while (cur().kind != Tok::end) {
            bool statement_start = i == 0 || t[i - 1].kind == Tok::newline;
            if (statement_start && cur().kind == Tok::name && t[i + 1].kind == Tok::op && t[i + 1].text == "=") {
                auto name = cur().text;
                i += 2;
                module.assignments[name] = expression();
                continue;
            }
            if (cur().kind == Tok::name || cur().kind == Tok::string || is_op("[") || is_op("(") || is_op("{")) {
                std::size_t save = i;
                primary();
                if (i == save) ++i;
                continue;
            }
            ++i;
        }
    }
};

}  // namespace

PyModule read_python(std::string_view source) {
    Parser p;
    p.t = tokenize(source);
    p.run();
    // Drop placeholder slots of calls whose parse was abandoned.
    std::vector<PyValue> calls;
    for (auto& c : p.module.calls)
        if (c.kind == PyValue::Kind::call) calls.push_back(std::move(c));
    p.module.calls = std::move(calls);
    return std::move(p.module);
}

std::vector<std::pair<std::string, int>> string_items(const PyValue& v, const PyModule& module, int depth) {
    std::vector<std::pair<std::string, int>> out;
    if (depth > 8) return out;
    switch (v.kind) {
        case PyValue::Kind::string:
            out.emplace_back(v.text, v.line);
            break;
        case PyValue::Kind::list:
        case PyValue::Kind::concat:
            for (const auto& item : v.items) {
                auto sub = string_items(item, module, depth + 1);
                out.insert(out.end(), sub.begin(), sub.end());
            }
            break;
        case PyValue::Kind::name: {
            auto it = module.assignments.find(v.text);
            if (it != module.assignments.end()) out = string_items(it->second, module, depth + 1);
            break;
        }
        default:
            break;
    }
    return out;
}

}  // namespace envlock::infer
