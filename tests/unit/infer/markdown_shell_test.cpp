// Code blocks out of markdown and simple commands out of shell text.
#include <doctest/doctest.h>

#include "resolver/infer/parts.hpp"

using namespace envlock::infer;

TEST_CASE("markdown: fenced blocks with their info string, first line and the prose before them") {
    auto blocks = markdown_code_blocks(
        "# Install\n\n**a. Create an env.**\n```shell\nconda create -n x python=3.8 -y\nconda activate x\n```\n");
    REQUIRE(blocks.size() == 1);
    CHECK(blocks[0].info == "shell");
    CHECK(blocks[0].first_line == 5);
    CHECK(blocks[0].context == "a. Create an env.");
    CHECK(blocks[0].text == "conda create -n x python=3.8 -y\nconda activate x\n");
}

TEST_CASE("markdown: indented code blocks count, with their line") {
    auto blocks = markdown_code_blocks("Install:\n\n    pip install -r requirements.txt\n    sh make.sh\n\nDone.\n");
    REQUIRE(blocks.size() == 1);
    CHECK(blocks[0].info == "");
    CHECK(blocks[0].first_line == 3);
    CHECK(blocks[0].text.find("sh make.sh") != std::string::npos);
}

TEST_CASE("markdown: a block inside a list item takes the item's text as context") {
    auto blocks = markdown_code_blocks("1. Install gcc (optional)\n   ```bash\n   conda install gcc\n   ```\n");
    REQUIRE(blocks.size() == 1);
    CHECK(blocks[0].context.find("optional") != std::string::npos);
    CHECK(blocks[0].first_line == 3);
}

TEST_CASE("markdown: a block whose first line is empty still reports the right line") {
    auto blocks = markdown_code_blocks("```\n\npip install a\n```\n");
    REQUIRE(blocks.size() == 1);
    auto cmds = shell_commands(blocks[0].text, blocks[0].first_line);
    REQUIRE(cmds.size() == 1);
    CHECK(cmds[0].line == 3);
}

TEST_CASE("shell: && and ; split commands on one line") {
    auto cmds = shell_commands("git clone https://x/y.git && cd y; pip install -e .", 10);
    REQUIRE(cmds.size() == 3);
    CHECK(cmds[0].words[0] == "git");
    CHECK(cmds[1].words == std::vector<std::string>{"cd", "y"});
    CHECK(cmds[2].text == "pip install -e .");
    CHECK(cmds[2].line == 10);
}

TEST_CASE("shell: backslash continuations join, the first line is kept") {
    auto cmds = shell_commands("pip install torch==1.9.1 \\\n    torchvision==0.10.1 \\\n  -f https://x/torch_stable.html\nls\n", 5);
    REQUIRE(cmds.size() == 2);
    CHECK(cmds[0].line == 5);
    CHECK(cmds[0].words.size() == 6);
    CHECK(cmds[1].line == 8);
}

TEST_CASE("shell: quotes are removed, their content kept whole") {
    auto cmds = shell_commands("python -m pip install 'git+https://github.com/facebookresearch/detectron2.git' \"a b\"", 1);
    REQUIRE(cmds.size() == 1);
    CHECK(cmds[0].words[4] == "git+https://github.com/facebookresearch/detectron2.git");
    CHECK(cmds[0].words[5] == "a b");
}

TEST_CASE("shell: $ prompts are dropped") {
    auto cmds = shell_commands("$ pip install a\n(open-mmlab) $ pip install b\n", 1);
    REQUIRE(cmds.size() == 2);
    CHECK(cmds[0].words[0] == "pip");
    CHECK(cmds[1].words[2] == "b");
}

TEST_CASE("shell: a trailing comment is kept apart from the command") {
    auto cmds = shell_commands("git checkout v0.17.1 # Other versions may not be compatible.", 1);
    REQUIRE(cmds.size() == 1);
    CHECK(cmds[0].words == std::vector<std::string>{"git", "checkout", "v0.17.1"});
    CHECK(cmds[0].comment == "Other versions may not be compatible.");
    CHECK_FALSE(cmds[0].commented_out);
}

TEST_CASE("shell: a commented-out command comes back marked, with its own words") {
    auto cmds = shell_commands("#  pip install mmcv-full==1.4.0 -f https://x/index.html\n", 7);
    REQUIRE(cmds.size() == 1);
    CHECK(cmds[0].commented_out);
    CHECK(cmds[0].words[2] == "mmcv-full==1.4.0");
    CHECK(cmds[0].line == 7);
}

TEST_CASE("shell: leading NAME=value words are the command's environment") {
    auto cmds = shell_commands("TORCH_CUDA_ARCH_LIST='8.0' FORCE_CUDA=1 python setup.py build install", 1);
    REQUIRE(cmds.size() == 1);
    REQUIRE(cmds[0].assignments.size() == 2);
    CHECK(cmds[0].assignments[0].first == "TORCH_CUDA_ARCH_LIST");
    CHECK(cmds[0].assignments[0].second == "8.0");
    CHECK(cmds[0].words[0] == "python");
}

TEST_CASE("shell: a background & separates commands") {
    auto cmds = shell_commands("cd ckpts & wget https://x/y.pth", 1);
    REQUIRE(cmds.size() == 2);
    CHECK(cmds[1].words[0] == "wget");
}

TEST_CASE("paths: joining, .. and git URLs") {
    CHECK(join_path("a/b", "../c") == "a/c");
    CHECK(join_path("", "..") == "..");
    CHECK(join_path("..", "Mask2Former") == "../Mask2Former");
    CHECK(join_path("x", "./y/./z") == "x/y/z");
    CHECK(normalize_git_url("git@github.com:facebookresearch/detectron2.git") == "https://github.com/facebookresearch/detectron2");
    CHECK(normalize_git_url("https://github.com/open-mmlab/mmdetection3d.git") == "https://github.com/open-mmlab/mmdetection3d");
    CHECK(repo_basename("git+https://github.com/klintan/pypcd.git") == "pypcd");
}
