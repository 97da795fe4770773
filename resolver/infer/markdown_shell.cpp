// Code blocks out of install docs (md4c, so fences, indented blocks and lists are read the way
// GitHub reads them) and the simple commands in them (a small POSIX-ish word splitter).
#include <md4c.h>

#include <cctype>
#include <sstream>

#include "resolver/infer/parts.hpp"

namespace envlock::infer {

namespace {

struct MdState {
    const char* begin;
    const char* end;
    std::vector<CodeBlock> blocks;
    std::string context;       // running text of the current/last prose block
    std::string heading;       // text of the current/last heading
    bool in_heading = false;
    bool in_code = false;
    int code_first_line = 0;
    int newlines_before_first = 0;
};

int line_at(const MdState& st, const char* p) {
    int line = 1;
    for (const char* q = st.begin; q < p; ++q)
        if (*q == '\n') ++line;
    return line;
}

int enter_block(MD_BLOCKTYPE type, void* detail, void* userdata) {
    auto& st = *static_cast<MdState*>(userdata);
    if (type == MD_BLOCK_CODE) {
        auto* d = static_cast<MD_BLOCK_CODE_DETAIL*>(detail);
        CodeBlock block;
        if (d->fence_char != 0 && d->info.text) block.info = std::string(d->info.text, d->info.size);
        block.context = st.context;
        block.heading = st.heading;
        st.blocks.push_back(block);
        st.in_code = true;
        st.code_first_line = 0;
        st.newlines_before_first = 0;
    } else if (type == MD_BLOCK_P || type == MD_BLOCK_H || type == MD_BLOCK_LI || type == MD_BLOCK_TH ||
               type == MD_BLOCK_TD) {
        st.context.clear();
        if (type == MD_BLOCK_H) {
            st.heading.clear();
            st.in_heading = true;
        }
    }
    return 0;
}

int leave_block(MD_BLOCKTYPE type, void*, void* userdata) {
    auto& st = *static_cast<MdState*>(userdata);
    if (type == MD_BLOCK_CODE) {
        auto& block = st.blocks.back();
        block.first_line = st.code_first_line ? st.code_first_line - st.newlines_before_first : 0;
        st.in_code = false;
    }
    if (type == MD_BLOCK_H) st.in_heading = false;
    return 0;
}

int span(MD_SPANTYPE, void*, void*) { return 0; }

int text(MD_TEXTTYPE type, const MD_CHAR* t, MD_SIZE size, void* userdata) {
    auto& st = *static_cast<MdState*>(userdata);
    if (st.in_code) {
        auto& block = st.blocks.back();
        bool in_doc = t >= st.begin && t < st.end;
        bool newline = size == 1 && t[0] == '\n';
        // Newline chunks may point at a static "\n"; the first chunk inside the document fixes the line.
        if (!st.code_first_line && in_doc && !newline) st.code_first_line = line_at(st, t);
        if (!st.code_first_line && newline) ++st.newlines_before_first;
        block.text.append(t, size);
        return 0;
    }
    if (type == MD_TEXT_SOFTBR || type == MD_TEXT_BR) {
        st.context += ' ';
    } else {
        st.context.append(t, size);
        if (st.in_heading) st.heading.append(t, size);
    }
    return 0;
}

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

bool is_name(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

// `$ cmd`, `(env) $ cmd`, `!pip ...` (notebooks) -> `cmd`.
std::string strip_prompt(std::string line) {
    line = trim(line);
    if (!line.empty() && line[0] == '(') {
        auto close = line.find(')');
        if (close != std::string::npos) {
            auto rest = trim(line.substr(close + 1));
            if (!rest.empty() && rest[0] == '$') line = rest;
        }
    }
    if (line.size() >= 2 && line[0] == '$' && line[1] == ' ') line = trim(line.substr(2));
    if (line == "$") line.clear();
    if (!line.empty() && line[0] == '!' && line.size() > 1 && std::isalpha(static_cast<unsigned char>(line[1])))
        line = line.substr(1);
    return line;
}

void split_line(const std::string& line, int number, bool commented, std::vector<ShellCommand>& out) {
    ShellCommand cmd;
    cmd.line = number;
    cmd.commented_out = commented;
    std::string word;
    bool have_word = false;
    std::size_t cmd_start = 0;
    auto finish_word = [&] {
        if (have_word) cmd.words.push_back(word);
        word.clear();
        have_word = false;
    };
    auto finish_command = [&](std::size_t end) {
        finish_word();
        cmd.text = trim(line.substr(cmd_start, end - cmd_start));
        // Leading NAME=value words are the command's environment.
        std::size_t k = 0;
        while (k < cmd.words.size()) {
            auto eq = cmd.words[k].find('=');
            if (eq == std::string::npos || !is_name(cmd.words[k].substr(0, eq))) break;
            cmd.assignments.emplace_back(cmd.words[k].substr(0, eq), cmd.words[k].substr(eq + 1));
            ++k;
        }
        cmd.words.erase(cmd.words.begin(), cmd.words.begin() + static_cast<long>(k));
        if (!cmd.words.empty() || !cmd.assignments.empty()) out.push_back(cmd);
        cmd = ShellCommand{};
        cmd.line = number;
        cmd.commented_out = commented;
    };
    std::size_t i = 0;
    while (i < line.size()) {
        char c = line[i];
        if (c == '\'') {
            auto close = line.find('\'', i + 1);
            if (close == std::string::npos) close = line.size();
            word += line.substr(i + 1, close - i - 1);
            have_word = true;
            i = close + 1;
            continue;
        }
        if (c == '"') {
            ++i;
            while (i < line.size() && line[i] != '"') {
                if (line[i] == '\\' && i + 1 < line.size() && std::string("\"\\$`").find(line[i + 1]) != std::string::npos)
                    ++i;
                word += line[i++];
            }
            ++i;
            have_word = true;
            continue;
        }
        if (c == '\\' && i + 1 < line.size()) {
            word += line[i + 1];
            have_word = true;
            i += 2;
            continue;
        }
        if (c == ' ' || c == '\t') {
            finish_word();
            ++i;
            continue;
        }
        if (c == '#' && !have_word) {
            auto comment = trim(line.substr(i + 1));
            finish_command(i);
            if (!out.empty() && out.back().line == number && out.back().comment.empty()) out.back().comment = comment;
            return;
        }
        if (c == ';' || c == '|' || c == '&') {
            std::size_t len = (i + 1 < line.size() && (line[i + 1] == c)) ? 2 : 1;
            finish_command(i);
            i += len;
            cmd_start = i;
            continue;
        }
        word += c;
        have_word = true;
        ++i;
    }
    finish_command(line.size());
}

}  // namespace

std::vector<CodeBlock> markdown_code_blocks(std::string_view markdown) {
    MdState st{markdown.data(), markdown.data() + markdown.size(), {}, {}, {}, false, false, 0, 0};
    MD_PARSER parser{};
    parser.abi_version = 0;
    parser.flags = MD_FLAG_NOHTML;
    parser.enter_block = enter_block;
    parser.leave_block = leave_block;
    parser.enter_span = span;
    parser.leave_span = span;
    parser.text = text;
    md_parse(markdown.data(), static_cast<MD_SIZE>(markdown.size()), &parser, &st);
    return st.blocks;
}

std::vector<ShellCommand> shell_commands(std::string_view text, int first_line) {
    std::vector<ShellCommand> out;
    std::istringstream in{std::string(text)};
    std::string physical, logical;
    int number = first_line - 1;
    int start = first_line;
    while (std::getline(in, physical)) {
        ++number;
        if (!physical.empty() && physical.back() == '\r') physical.pop_back();
        if (logical.empty()) start = number;
        auto t = trim(physical);
        if (!t.empty() && t.back() == '\\' && t.front() != '#') {
            logical += t.substr(0, t.size() - 1) + " ";
            continue;
        }
        logical += physical;
        auto line = strip_prompt(logical);
        logical.clear();
        if (line.empty()) continue;
        if (line[0] == '#') {
            auto rest = line.find_first_not_of("# \t");
            if (rest != std::string::npos) split_line(line.substr(rest), start, true, out);
            continue;
        }
        split_line(line, start, false, out);
    }
    if (!logical.empty()) split_line(strip_prompt(logical), start, false, out);
    return out;
}

}  // namespace envlock::infer
