// conda MatchSpec: every textual form parsed into its parts, and matched against IndexRecords.
#include <doctest/doctest.h>

#include <string>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"

using envlock::IndexRecord;
using envlock::conda::DistName;
using envlock::conda::MatchSpec;
using envlock::conda::Version;

namespace {

IndexRecord record(std::string name, std::string version, std::string build, int build_number = 0,
                   std::string channel = "https://conda.anaconda.org/conda-forge", std::string subdir = "linux-64") {
    IndexRecord r;
    r.name = std::move(name);
    r.version = std::move(version);
    r.build = std::move(build);
    r.build_number = build_number;
    r.channel = std::move(channel);
    r.subdir = std::move(subdir);
    r.filename = r.name + "-" + r.version + "-" + r.build + ".tar.bz2";
    return r;
}

bool match(const char* spec, const IndexRecord& r) { return MatchSpec::parse(spec).matches(r); }

std::string error_of(const char* spec) {
    try {
        MatchSpec::parse(spec);
    } catch (const envlock::InputError& e) {
        return e.what();
    }
    return "accepted";
}

}  // namespace

TEST_CASE("acceptance: 'pytorch 1.9.* *cuda11.1*' picks the CUDA 11.1 build, not the CPU one") {
    MatchSpec m = MatchSpec::parse("pytorch 1.9.* *cuda11.1*");
    CHECK(m.name == "pytorch");
    CHECK(m.version.str() == "1.9.*");
    CHECK(m.build == "*cuda11.1*");
    CHECK(m.matches(record("pytorch", "1.9.0", "py3.8_cuda11.1_cudnn8.0.5_0")));
    CHECK_FALSE(m.matches(record("pytorch", "1.9.0", "py3.8_cpu_0")));
    CHECK_FALSE(m.matches(record("pytorch", "1.10.0", "py3.8_cuda11.1_cudnn8.0.5_0")));
    CHECK_FALSE(m.matches(record("torchvision", "1.9.0", "py3.8_cuda11.1_cudnn8.0.5_0")));
    CHECK(m.matches(DistName::parse("pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0")));
    CHECK_FALSE(m.matches(DistName::parse("pytorch-1.9.0-py3.8_cpu_0")));
}

TEST_CASE("acceptance: 'numpy >=1.19,<1.20.0a0' excludes 1.20 prereleases") {
    MatchSpec m = MatchSpec::parse("numpy >=1.19,<1.20.0a0");
    CHECK(m.name == "numpy");
    CHECK(m.build.empty());
    CHECK(m.matches(record("numpy", "1.19.5", "py38h18fd61f_1")));
    CHECK(m.matches(record("numpy", "1.19.0", "py38h18fd61f_1")));
    CHECK_FALSE(m.matches(record("numpy", "1.20.0rc1", "py38h18fd61f_0")));
    CHECK_FALSE(m.matches(record("numpy", "1.20.0", "py38h18fd61f_0")));
    CHECK_FALSE(m.matches(record("numpy", "1.18.5", "py38h18fd61f_0")));
    CHECK(m.str() == "numpy[version='>=1.19,<1.20.0a0']");
}

TEST_CASE("'python 3.8.*' and 'cudatoolkit >=11.1,<11.2'") {
    CHECK(match("python 3.8.*", record("python", "3.8.10", "h12debd9_8")));
    CHECK_FALSE(match("python 3.8.*", record("python", "3.9.0", "h12debd9_8")));
    CHECK(match("cudatoolkit >=11.1,<11.2", record("cudatoolkit", "11.1.74", "h6bb024c_0")));
    CHECK_FALSE(match("cudatoolkit >=11.1,<11.2", record("cudatoolkit", "11.2.0", "h73cb219_8")));
    CHECK_FALSE(match("cudatoolkit >=11.1,<11.2", record("cudatoolkit", "11.0.221", "h6bb024c_0")));
}

TEST_CASE("'name=version' is a prefix match; 'name==version' is exact") {
    MatchSpec fuzzy = MatchSpec::parse("numpy=1.19");
    CHECK(fuzzy.version.str() == "1.19.*");
    CHECK(fuzzy.matches(record("numpy", "1.19.5", "py38_0")));
    CHECK(fuzzy.matches(record("numpy", "1.19", "py38_0")));
    CHECK_FALSE(fuzzy.matches(record("numpy", "1.190", "py38_0")));
    CHECK_FALSE(fuzzy.matches(record("numpy", "1.20.0", "py38_0")));
    CHECK(fuzzy.str() == "numpy=1.19");

    MatchSpec exact = MatchSpec::parse("numpy==1.19.5");
    CHECK(exact.version.str() == "1.19.5");
    CHECK(exact.matches(record("numpy", "1.19.5", "py38_0")));
    CHECK_FALSE(exact.matches(record("numpy", "1.19.50", "py38_0")));
    CHECK_FALSE(exact.matches(record("numpy", "1.19.6", "py38_0")));
    CHECK(exact.str() == "numpy==1.19.5");

    CHECK(match("numpy==1.19", record("numpy", "1.19.0", "py38_0")));
    CHECK_FALSE(match("numpy==1.19", record("numpy", "1.19.5", "py38_0")));
}

TEST_CASE("'name=version=build' pins version and build glob the way conda does") {
    MatchSpec m = MatchSpec::parse("numpy=1.19=py38*");
    CHECK(m.name == "numpy");
    CHECK(m.version.str() == "1.19");   // conda keeps the bare version once a build is given
    CHECK(m.build == "py38*");
    CHECK(m.matches(record("numpy", "1.19", "py38h18fd61f_1")));
    CHECK_FALSE(m.matches(record("numpy", "1.19", "py39h18fd61f_1")));
    CHECK_FALSE(m.matches(record("numpy", "1.19.5", "py38h18fd61f_1")));

    MatchSpec n = MatchSpec::parse("numpy=1.19.*=py38*");
    CHECK(n.matches(record("numpy", "1.19.5", "py38h18fd61f_1")));

    MatchSpec p = MatchSpec::parse("numpy==1.19.5=py38h18fd61f_1");
    CHECK(p.version.str() == "==1.19.5");
    CHECK(p.build == "py38h18fd61f_1");
    CHECK(p.matches(record("numpy", "1.19.5", "py38h18fd61f_1")));
    CHECK(p.str() == "numpy==1.19.5=py38h18fd61f_1");
}

TEST_CASE("'name version build' with spaces") {
    MatchSpec m = MatchSpec::parse("numpy 1.19.5 py38h18fd61f_1");
    CHECK(m.version.str() == "1.19.5");
    CHECK(m.build == "py38h18fd61f_1");
    CHECK(m.matches(record("numpy", "1.19.5", "py38h18fd61f_1")));
    CHECK_FALSE(m.matches(record("numpy", "1.19.5", "py38h18fd61f_2")));
    CHECK(m.str() == "numpy==1.19.5=py38h18fd61f_1");

    MatchSpec spaced = MatchSpec::parse("numpy >=1.0 , < 2.0 py34_0");
    CHECK(spaced.version.str() == ">=1.0,<2.0");
    CHECK(spaced.build == "py34_0");

    MatchSpec star = MatchSpec::parse("blas * openblas");
    CHECK(star.version.is_any());
    CHECK(star.build == "openblas");
    CHECK(star.matches(record("blas", "1.0", "openblas")));
    CHECK_FALSE(star.matches(record("blas", "1.0", "mkl")));
}

TEST_CASE("'pkg *' and a bare name match any version") {
    CHECK(MatchSpec::parse("pkg *").version.is_any());
    CHECK(match("pkg *", record("pkg", "0.0.1a1", "0")));
    CHECK(match("pkg", record("pkg", "99", "0")));
    CHECK(MatchSpec::parse("pkg * *").build.empty());
    CHECK(MatchSpec::parse("numpy=").version.is_any());   // conda accepts a lone '='
}

TEST_CASE("'|' alternatives in a MatchSpec") {
    MatchSpec m = MatchSpec::parse("numpy >=1.19|<1.0");
    CHECK(m.matches(record("numpy", "0.9", "0")));
    CHECK(m.matches(record("numpy", "1.21", "0")));
    CHECK_FALSE(m.matches(record("numpy", "1.5", "0")));
    CHECK(match("numpy 1.8.0|1.9.*", record("numpy", "1.9.2", "0")));
    MatchSpec alt = MatchSpec::parse("numpy=1.11.1|1.11.3");
    CHECK(alt.matches(record("numpy", "1.11.1", "0")));
    CHECK(alt.matches(record("numpy", "1.11.1.5", "0")));   // '=1.11.1' keeps its prefix meaning
    CHECK(alt.matches(record("numpy", "1.11.3", "0")));
    CHECK_FALSE(alt.matches(record("numpy", "1.11.2", "0")));
}

TEST_CASE("'numpy 1.8*' is the glob form of 1.8.*") {
    MatchSpec m = MatchSpec::parse("numpy 1.8*");
    CHECK(m.version.str() == "1.8.*");
    CHECK(m.matches(record("numpy", "1.8.2", "0")));
    CHECK_FALSE(m.matches(record("numpy", "1.80", "0")));
    CHECK(m.str() == "numpy=1.8");
}

TEST_CASE("channel, subdir and namespace prefixes") {
    MatchSpec a = MatchSpec::parse("conda-forge::numpy");
    CHECK(a.channel == "conda-forge");
    CHECK(a.subdir.empty());
    CHECK(a.name == "numpy");
    CHECK(a.matches(record("numpy", "1.0", "0", 0, "https://conda.anaconda.org/conda-forge")));
    CHECK(a.matches(record("numpy", "1.0", "0", 0, "conda-forge")));
    CHECK(a.matches(record("numpy", "1.0", "0", 0, "https://conda.anaconda.org/conda-forge/linux-64/")));
    CHECK_FALSE(a.matches(record("numpy", "1.0", "0", 0, "https://conda.anaconda.org/pytorch")));
    CHECK_FALSE(a.matches(record("numpy", "1.0", "0", 0, "https://conda.anaconda.org/not-conda-forge")));
    CHECK(a.str() == "conda-forge::numpy");

    MatchSpec b = MatchSpec::parse("conda-forge/linux-64::numpy >=1.19");
    CHECK(b.channel == "conda-forge");
    CHECK(b.subdir == "linux-64");
    CHECK(b.matches(record("numpy", "1.19.2", "0")));
    CHECK_FALSE(b.matches(record("numpy", "1.19.2", "0", 0, "https://conda.anaconda.org/conda-forge", "noarch")));
    CHECK(b.str() == "conda-forge/linux-64::numpy[version='>=1.19']");

    MatchSpec c = MatchSpec::parse("pkgs/main::python 3.8.*");
    CHECK(c.channel == "pkgs/main");
    CHECK(c.matches(record("python", "3.8.5", "0", 0, "https://repo.anaconda.com/pkgs/main")));
    CHECK_FALSE(c.matches(record("python", "3.8.5", "0", 0, "https://conda.anaconda.org/conda-forge")));

    // anaconda.org URLs reduce to the channel name, as conda prints them.
    MatchSpec url = MatchSpec::parse("https://conda.anaconda.org/pytorch/linux-64::pytorch");
    CHECK(url.channel == "pytorch");
    CHECK(url.subdir == "linux-64");
    CHECK(url.matches(record("pytorch", "1.9.0", "0", 0, "https://conda.anaconda.org/pytorch")));
    CHECK(url.str() == "pytorch/linux-64::pytorch");
    CHECK(MatchSpec::parse("https://repo.anaconda.com/pkgs/free::numpy").str() == "pkgs/free::numpy");

    // Any other URL is kept and must be the record's channel URL.
    MatchSpec own = MatchSpec::parse("https://download.example.com/ml/linux-64::pytorch");
    CHECK(own.channel == "https://download.example.com/ml");
    CHECK(own.subdir == "linux-64");
    CHECK(own.matches(record("pytorch", "1.9.0", "0", 0, "https://download.example.com/ml/")));
    CHECK_FALSE(own.matches(record("pytorch", "1.9.0", "0", 0, "https://mirror.example/ml")));
    CHECK(own.matches(record("pytorch", "1.9.0", "0", 0, "ml")));   // a record that knows only the name

    MatchSpec defaults = MatchSpec::parse("defaults::numpy");
    CHECK(defaults.matches(record("numpy", "1", "0", 0, "https://repo.anaconda.com/pkgs/main")));
    CHECK(defaults.matches(record("numpy", "1", "0", 0, "https://repo.anaconda.com/pkgs/r")));
    CHECK_FALSE(defaults.matches(record("numpy", "1", "0", 0, "https://conda.anaconda.org/conda-forge")));


    MatchSpec bracket = MatchSpec::parse("numpy[channel=conda-forge/noarch]");
    CHECK(bracket.channel == "conda-forge");
    CHECK(bracket.subdir == "noarch");

    MatchSpec sub = MatchSpec::parse("numpy[subdir=linux-64]");
    CHECK(sub.subdir == "linux-64");
    CHECK(sub.str() == "numpy[subdir=linux-64]");
}

TEST_CASE("bracket keys: version, build, build_number and the exact-value keys") {
    MatchSpec m = MatchSpec::parse("numpy[version='>=1.19',build_number='>3']");
    CHECK(m.version.str() == ">=1.19");
    CHECK(m.build_number == ">3");
    CHECK(m.matches(record("numpy", "1.19.5", "py38_4", 4)));
    CHECK_FALSE(m.matches(record("numpy", "1.19.5", "py38_3", 3)));
    CHECK_FALSE(m.matches(record("numpy", "1.18.5", "py38_4", 4)));
    CHECK(m.str() == "numpy[version='>=1.19',build_number=>3]");   // conda quotes only values with ", ="
    CHECK(MatchSpec::parse(m.str().c_str()).build_number == ">3");

    MatchSpec q = MatchSpec::parse("numpy[version=\">=1.19,<2\", build=py38*]");
    CHECK(q.version.str() == ">=1.19,<2");
    CHECK(q.build == "py38*");

    MatchSpec o = MatchSpec::parse("numpy 1.0 [version='2.0']");   // brackets win over the text
    CHECK(o.version.str() == "2.0");

    MatchSpec bn = MatchSpec::parse("numpy[build_number=0]");
    CHECK(bn.matches(record("numpy", "1", "py_0", 0)));
    CHECK_FALSE(bn.matches(record("numpy", "1", "py_1", 1)));
    for (const char* op : {">=2", "<=2", "<3", "!=1", "==2", "=2"}) {
        CAPTURE(op);
        CHECK(MatchSpec::parse((std::string("x[build_number='") + op + "']").c_str()).matches(record("x", "1", "b_2", 2)));
    }

    IndexRecord r = record("numpy", "1.19.5", "py38_0");
    r.md5 = "0123456789abcdef0123456789abcdef";
    r.sha256 = std::string(64, 'a');
    r.track_features = {"cuda"};
    r.license = "BSD-3-Clause";
    CHECK(match("numpy[md5=0123456789abcdef0123456789abcdef]", r));
    CHECK_FALSE(match("numpy[md5=ffffffffffffffffffffffffffffffff]", r));
    CHECK(match(("numpy[sha256=" + std::string(64, 'a') + "]").c_str(), r));
    CHECK_FALSE(match(("numpy[sha256=" + std::string(64, 'b') + "]").c_str(), r));
    CHECK(match("numpy[track_features=cuda]", r));
    CHECK_FALSE(match("numpy[track_features=mkl]", r));
    CHECK(match("numpy[license=BSD*]", r));
    CHECK_FALSE(match("numpy[license=GPL*]", r));
    CHECK(match("numpy[fn=numpy-1.19.5-*.tar.bz2]", r));
    CHECK(match("*[track_features=cuda]", r));
}

TEST_CASE("virtual packages: '__cuda >=11.1'") {
    MatchSpec m = MatchSpec::parse("__cuda >=11.1");
    CHECK(m.name == "__cuda");
    CHECK(m.matches(record("__cuda", "11.2", "0", 0, "@", "")));
    CHECK_FALSE(m.matches(record("__cuda", "10.2", "0", 0, "@", "")));
    CHECK(match("__glibc >=2.17,<3.0.a0", record("__glibc", "2.31", "0", 0, "@", "")));
}

TEST_CASE("parenthesised and quoted forms") {
    MatchSpec opt = MatchSpec::parse("numpy >=1.19 (optional)");
    CHECK(opt.optional);
    CHECK(opt.version.str() == ">=1.19");
    CHECK(MatchSpec::parse("numpy (optional)").optional);
    CHECK(MatchSpec::parse("numpy (target=numpy-1.0-0, optional)").optional);
    // A parenthesised version expression stays a version expression.
    MatchSpec grouped = MatchSpec::parse("numpy (>=1.0,<1.5)|>2");
    CHECK(grouped.version.str() == ">=1.0,<1.5|>2");
    CHECK(grouped.matches(record("numpy", "1.2", "0")));
    CHECK(grouped.matches(record("numpy", "2.1", "0")));
    CHECK_FALSE(grouped.matches(record("numpy", "1.7", "0")));
    CHECK_FALSE(MatchSpec::parse("numpy >=1.19").optional);
}

TEST_CASE("comments, conditionals and whitespace are ignored") {
    MatchSpec m = MatchSpec::parse("  numpy >=1.19   # needed for x ");
    CHECK(m.name == "numpy");
    CHECK(m.version.str() == ">=1.19");
    CHECK(MatchSpec::parse("numpy >=1.19 if __unix").version.str() == ">=1.19");
}

TEST_CASE("a package file name or URL pins name, version and build") {
    MatchSpec m = MatchSpec::parse("https://conda.anaconda.org/conda-forge/linux-64/numpy-1.19.5-py38h18fd61f_1.tar.bz2");
    CHECK(m.name == "numpy");
    CHECK(m.version.str() == "1.19.5");
    CHECK(m.build == "py38h18fd61f_1");
    CHECK(m.channel == "conda-forge");
    CHECK(m.subdir == "linux-64");
    CHECK(m.extra.at("fn") == "numpy-1.19.5-py38h18fd61f_1.tar.bz2");
    IndexRecord r = record("numpy", "1.19.5", "py38h18fd61f_1");
    r.url = "https://conda.anaconda.org/conda-forge/linux-64/numpy-1.19.5-py38h18fd61f_1.tar.bz2";
    CHECK(m.matches(r));
    r.url = "https://mirror.example/conda-forge/linux-64/numpy-1.19.5-py38h18fd61f_1.tar.bz2";
    CHECK_FALSE(m.matches(r));   // the URL itself is part of the spec
    CHECK_FALSE(m.matches(record("numpy", "1.19.5", "py38h18fd61f_0")));
    MatchSpec f = MatchSpec::parse("pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0.conda");
    CHECK(f.name == "pytorch");
    CHECK(f.build == "py3.8_cuda11.1_cudnn8.0.5_0");
}

TEST_CASE("name globs and regexes") {
    CHECK(match("py*", record("pytorch", "1", "0")));
    CHECK_FALSE(match("py*", record("numpy", "1", "0")));
    CHECK(match("*", record("anything", "1", "0")));
    CHECK(match("numpy *[build=^py3[89].*$]", record("numpy", "1", "py38_0")));
    CHECK_FALSE(match("numpy *[build=^py3[89].*$]", record("numpy", "1", "py37_0")));
}

TEST_CASE("a record with an unparsable version does not match a version constraint") {
    CHECK_FALSE(match("numpy >=1", record("numpy", "1..2", "0")));
    CHECK(match("numpy", record("numpy", "1..2", "0")));
}

TEST_CASE("the pre-parsed overload agrees with the parsing one") {
    MatchSpec m = MatchSpec::parse("numpy >=1.19,<1.20.0a0");
    IndexRecord r = record("numpy", "1.19.5", "py38_0");
    CHECK(m.matches(r, Version::parse(r.version)));
    CHECK(m.matches_version(Version::parse("1.19.1")));
    CHECK_FALSE(m.matches_version(Version::parse("1.20.0rc1")));
}

TEST_CASE("malformed match specs are rejected with one line naming the spec") {
    CHECK(error_of("") == "invalid conda match spec '': empty spec");
    CHECK(error_of(">=1.0") == "invalid conda match spec '>=1.0': no package name found");
    CHECK(error_of("numpy >=") == "invalid conda match spec 'numpy >=': invalid conda version spec '>=': missing version after '>='");
    CHECK(error_of("numpy[version='>=1'") == "invalid conda match spec 'numpy[version='>=1'': missing ']'");
    CHECK(error_of("numpy[foo=bar]") == "invalid conda match spec 'numpy[foo=bar]': cannot match on field 'foo'");
    CHECK(error_of("numpy[version]").find("expected key=value") != std::string::npos);
    CHECK(error_of("numpy[version='1.0]").find("unterminated quote") != std::string::npos);
    CHECK(error_of("numpy[build_number=abc]").find("invalid build_number") != std::string::npos);
    CHECK(error_of("numpy 1.0 py38 extra").find("extra text") != std::string::npos);
    CHECK(error_of("numpy >=1.0,,<2") != "accepted");
    CHECK(error_of("numpy[version=1][build=2]") ==
          "invalid conda match spec 'numpy[version=1][build=2]': multiple bracket sections not allowed");
    CHECK(error_of("::numpy") == "invalid conda match spec '::numpy': empty channel before '::'");
}

TEST_CASE("'=>' and '=<' are typos, not operators: 'torch=>1.9' is refused instead of read as '>1.9*'") {
    // conda's documented operators are ==, !=, <, <=, >, >=, = and ~= (conda docs, "Package match
    // specifications"); its "=1.9 means 1.9*" rewrite would otherwise swallow the typo.
    CHECK(error_of("torch=>1.9") == "invalid conda match spec 'torch=>1.9': invalid operator '=>' (did you mean '>='?)");
    CHECK(error_of("numpy =<1.20") == "invalid conda match spec 'numpy =<1.20': invalid operator '=<' (did you mean '<='?)");
    CHECK(error_of("torch>=1.9") == "accepted");
}

TEST_CASE("str() gives conda's canonical text, and that text parses back to the same spec") {
    struct Case {
        const char* in;
        const char* out;
    };
    for (Case c : {Case{"numpy", "numpy"},
                   Case{"numpy 1.19.*", "numpy=1.19"},
                   Case{"numpy >=1.19", "numpy[version='>=1.19']"},
                   Case{"numpy !=1.19", "numpy!=1.19"},
                   Case{"numpy ~=1.19", "numpy~=1.19"},
                   Case{"numpy 1.19.5 py38_0", "numpy==1.19.5=py38_0"},
                   Case{"numpy * mkl", "numpy[build=mkl]"},
                   Case{"numpy 1.19.* py38*", "numpy=1.19[build=py38*]"},
                   Case{"numpy !=1.19 py38*", "numpy[version='!=1.19',build=py38*]"},
                   Case{"pytorch 1.*.*", "pytorch[version='1.*.*']"},
                   Case{"conda-forge/linux-64::numpy 1.19.5", "conda-forge/linux-64::numpy==1.19.5"},
                   Case{"numpy[md5=abc, license='BSD 3']", "numpy[md5=abc,license='BSD 3']"},
                   Case{"numpy >=1 (optional)", "numpy[version='>=1'] (optional)"}}) {
        CAPTURE(c.in);
        MatchSpec m = MatchSpec::parse(c.in);
        CHECK(m.str() == c.out);
        MatchSpec again = MatchSpec::parse(m.str());
        CHECK(again.str() == m.str());
        CHECK(again.optional == m.optional);
    }
    // The glob form keeps its meaning through the round trip.
    MatchSpec glob = MatchSpec::parse(MatchSpec::parse("pytorch 1.*.*").str());
    CHECK(glob.matches(record("pytorch", "1.9.0", "0")));
    CHECK_FALSE(glob.matches(record("pytorch", "1.9", "0")));
}

TEST_CASE("conda's own table of specs against numpy-1.7.1-py27_0") {
    IndexRecord r = record("numpy", "1.7.1", "py27_0", 0);
    struct Row {
        const char* spec;
        bool matches;
    };
    for (Row row : {Row{"numpy 1.7*", true}, Row{"numpy 1.7.1", true}, Row{"numpy 1.7", false},
                    Row{"numpy 1.5*", false}, Row{"numpy >=1.5", true}, Row{"numpy >=1.5,<2", true},
                    Row{"numpy >=1.8,<1.9", false}, Row{"numpy >1.5,<2,!=1.7.1", false},
                    Row{"numpy >1.8,<2|==1.7", false}, Row{"numpy >1.8,<2|>=1.7.1", true},
                    Row{"numpy >=1.8|1.7*", true}, Row{"numpy ==1.7", false}, Row{"numpy >=1.5,>1.6", true},
                    Row{"numpy ==1.7.1", true}, Row{"numpy ==1.7.1.0", true}, Row{"numpy==1.7.1.0.0", true},
                    Row{"numpy >=1,*.7.*", true}, Row{"numpy *.7.*,>=1", true}, Row{"numpy >=1,*.8.*", false},
                    Row{"numpy >=2,*.7.*", false}, Row{"numpy 1.6*|1.7*", true}, Row{"numpy 1.6*|1.8*", false},
                    Row{"numpy 1.6.2|1.7*", true}, Row{"numpy 1.6.2|1.7.1", true}, Row{"numpy 1.6.2|1.7.0", false},
                    Row{"numpy 1.7.1 py27_0", true}, Row{"numpy 1.7.1 py26_0", false}, Row{"numpy >1.7.1a", true},
                    Row{"python", false}}) {
        CAPTURE(row.spec);
        CHECK(MatchSpec::parse(row.spec).matches(r) == row.matches);
    }
    CHECK_FALSE(match("numpy >=1.0.1", record("numpy", "1.0.1a", "0")));
    CHECK_FALSE(match("numpy >=1.0.1.vc11", record("numpy", "1.0.1a.vc11", "0")));
    CHECK(match("numpy >=1.0.1*.vc11", record("numpy", "1.0.1a.vc11", "0")));
    CHECK(match("numpy <1.0.1", record("numpy", "1.0.1.vc11", "0")));
    CHECK(match("numpy <1.0.1", record("numpy", "1.0.1a.vc11", "0")));
    CHECK_FALSE(match("numpy >=1.0.1.vc11", record("numpy", "1.0.1a", "0")));
    CHECK(match("numpy >=1.0.1a", record("numpy", "1.0.1z", "0")));
    CHECK(match("numpy >=1.0.1a py27*", record("numpy", "1.0.1z", "py27_1", 1)));
    CHECK(match("blas * openblas_0", record("blas", "1.0", "openblas_0")));
    CHECK(match("openssl>=1.0.1_", record("openssl", "1.0.1_", "4", 4)));
    CHECK_FALSE(match("openssl>=1.0.1", record("openssl", "1.0.1_", "4", 4)));
}

TEST_CASE("conda's canonical string forms") {
    struct Row {
        const char* in;
        const char* out;
    };
    for (Row r : {Row{"numpy", "numpy"},
                  Row{"numpy=1.7", "numpy=1.7"},
                  Row{"numpy 1.7*", "numpy=1.7"},
                  Row{"numpy 1.7.*", "numpy=1.7"},
                  Row{"numpy[version='1.7*']", "numpy=1.7"},
                  Row{"numpy[version=1.7.*]", "numpy=1.7"},
                  Row{"numpy==1.7", "numpy==1.7"},
                  Row{"numpy[version='1.7']", "numpy==1.7"},
                  Row{"numpy 1.7", "numpy==1.7"},
                  Row{"numpy[version='1.7|1.8']", "numpy[version='1.7|1.8']"},
                  Row{"numpy[version=\"1.7,1.8\"]", "numpy[version='1.7,1.8']"},
                  Row{"numpy >1.7", "numpy[version='>1.7']"},
                  Row{"numpy>=1.7", "numpy[version='>=1.7']"},
                  Row{"numpy=1.7=py3*_2", "numpy==1.7[build=py3*_2]"},
                  Row{"numpy=1.7.*=py3*_2", "numpy=1.7[build=py3*_2]"},
                  Row{"defaults::numpy", "defaults::numpy"},
                  Row{"numpy[channel=defaults]", "defaults::numpy"},
                  Row{"numpy[channel=conda-forge]", "conda-forge::numpy"},
                  Row{"numpy[channel=defaults,subdir=osx-64]", "defaults/osx-64::numpy"},
                  Row{"numpy[channel=https://repo.anaconda.com/pkgs/free/osx-64, subdir=linux-64]",
                      "pkgs/free/linux-64::numpy"},
                  Row{"numpy[subdir=linux-64, channel=https://repo.anaconda.com/pkgs/free/osx-64]",
                      "pkgs/free/linux-64::numpy"},
                  Row{"https://repo.anaconda.com/pkgs/free/win-32::numpy", "pkgs/free/win-32::numpy"},
                  Row{"defaults/win-32::numpy", "defaults/win-32::numpy"},
                  Row{"numpy[channel=conda-forge,subdir=noarch]", "conda-forge/noarch::numpy"},
                  Row{"numpy[subdir=win-32]", "numpy[subdir=win-32]"},
                  Row{"*/win-32::numpy", "numpy[subdir=win-32]"},
                  Row{"*/win-32::numpy[subdir=\"osx-64\"]", "numpy[subdir=osx-64]"},
                  Row{"numpy=1.10=py38_0", "numpy==1.10=py38_0"},
                  Row{"numpy==1.10=py38_0", "numpy==1.10=py38_0"},
                  Row{"numpy[version=1.10 build=py38_0]", "numpy==1.10=py38_0"},
                  Row{"numpy!=1.10", "numpy!=1.10"},
                  Row{"numpy !=1.10", "numpy!=1.10"},
                  Row{"numpy!=1.10 py38_0", "numpy[version='!=1.10',build=py38_0]"},
                  Row{"numpy!=1.10=py38_0", "numpy[version='!=1.10',build=py38_0]"},
                  Row{"numpy >1.7,!=1.10 py38_0", "numpy[version='>1.7,!=1.10',build=py38_0]"},
                  Row{"numpy!=1.10.*", "numpy!=1.10.*"},
                  Row{"numpy!=1.10,!=1.11", "numpy[version='!=1.10,!=1.11']"},
                  Row{"numpy=1.10.*,!=1.10.2", "numpy[version='=1.10.*,!=1.10.2']"},
                  Row{"numpy ~=1.10.1", "numpy~=1.10.1"},
                  Row{"numpy ~=1.10.1 py38_0", "numpy[version='~=1.10.1',build=py38_0]"},
                  Row{"openssl=1.1.1_", "openssl=1.1.1_"},
                  Row{"openssl>=1.1.1_,!=1.1.1c", "openssl[version='>=1.1.1_,!=1.1.1c']"},
                  Row{"mkl@", "*[track_features=mkl]"},
                  Row{"pkgs/main::*", "pkgs/main::*"},
                  Row{"foo >= 1.0", "foo[version='>=1.0']"},
                  Row{"foo >=1.0 , < 2.0", "foo[version='>=1.0,<2.0']"},
                  Row{"FOO-Bar >=1.0", "foo-bar[version='>=1.0']"},
                  Row{"https://conda.anaconda.org/conda-canary/linux-64/conda-4.3.21.post699+1dab973-py36h4a561cd_0.tar.bz2",
                      "conda-canary/linux-64::conda==4.3.21.post699+1dab973=py36h4a561cd_0"}}) {
        CAPTURE(r.in);
        CHECK(MatchSpec::parse(r.in).str() == r.out);
    }
}

TEST_CASE("conda's parse table: name, version and build of the hard forms") {
    struct Row {
        const char* in;
        const char* name;
        const char* version;
        const char* build;
    };
    for (Row r : {Row{"numpy~=1.7.1", "numpy", "~=1.7.1", ""},
                  Row{"numpy>1.8,<2|==1.7", "numpy", ">1.8,<2|==1.7", ""},
                  Row{"numpy >1.8,<2|==1.7,!=1.9,~=1.7.1 py34_0", "numpy", ">1.8,<2|==1.7,!=1.9,~=1.7.1", "py34_0"},
                  Row{"*>1.8,<2|==1.7", "*", ">1.8,<2|==1.7", ""},
                  Row{"* >1.8,<2|==1.7", "*", ">1.8,<2|==1.7", ""},
                  Row{"* 1 *", "*", "1", ""},
                  Row{"* * openblas_0", "*", "*", "openblas_0"},
                  Row{"* * *", "*", "*", ""},
                  Row{"* 2.7.4", "*", "2.7.4", ""},
                  Row{"* >=1.3 2", "*", ">=1.3", "2"},
                  Row{"numpy==1.7", "numpy", "1.7", ""},
                  Row{"numpy ==1.7", "numpy", "1.7", ""},
                  Row{"numpy =1.7", "numpy", "1.7.*", ""},
                  Row{"numpy !=1.7", "numpy", "!=1.7", ""},
                  Row{"defaults::numpy=1.8=py27_0", "numpy", "1.8", "py27_0"},
                  Row{"defaults::numpy 1.8 py27_0[channel=anaconda]", "numpy", "1.8", "py27_0"},
                  Row{"defaults::numpy=1.8=py27_0 [channel=anaconda,version=1.9, build=3]", "numpy", "1.9", "3"},
                  Row{"defaults::numpy=1.8=py27_0 [channel='anaconda',version=\">=1.8,<2|1.9\", build='3']", "numpy",
                      ">=1.8,<2|1.9", "3"},
                  Row{"conda-forge/linux-32::foo>=1.0", "foo", ">=1.0", ""}}) {
        CAPTURE(r.in);
        MatchSpec m = MatchSpec::parse(r.in);
        CHECK(m.name == r.name);
        CHECK(m.version.str() == r.version);
        CHECK(m.build == r.build);
    }
    CHECK(MatchSpec::parse("defaults::numpy=1.8=py27_0 [channel=anaconda,version=1.9, build=3]").channel == "anaconda");
    MatchSpec parens = MatchSpec::parse("conda-forge::foo[build=3](target=blarg,optional)");
    CHECK(parens.channel == "conda-forge");
    CHECK(parens.build == "3");
    CHECK(parens.optional);
    MatchSpec star_subdir = MatchSpec::parse("*/linux-32::foo>=1.0");
    CHECK(star_subdir.channel == "*");
    CHECK(star_subdir.subdir == "linux-32");
    for (const char* bad : {"!xyz 1.3", "blas [optional", "blas [test=]", "blas[invalid=\"1\"]"}) {
        CAPTURE(bad);
        CHECK(error_of(bad) != "accepted");
    }
}

TEST_CASE("channel matching between names, URLs and defaults") {
    CHECK_FALSE(match("pkgs/main::x", record("x", "1", "0", 0, "defaults")));
    CHECK(match("defaults::x", record("x", "1", "0", 0, "pkgs/main")));
    CHECK_FALSE(match("https://repo.anaconda.com/pkgs/main::x", record("x", "1", "0", 0, "defaults")));
    CHECK(match("defaults::x", record("x", "1", "0", 0, "https://repo.anaconda.com/pkgs/main")));
    CHECK(match("https://conda.anaconda.org/conda-forge::x", record("x", "1", "0", 0, "conda-forge")));
    CHECK(match("conda-forge::x", record("x", "1", "0", 0, "https://conda.anaconda.org/conda-forge")));
    CHECK_FALSE(match("https://repo.anaconda.com/pkgs/main::x", record("x", "1", "0", 0, "conda-forge")));
}

TEST_CASE("dist strings and package files with a channel in front") {
    IndexRecord r = record("python", "3.6.6", "0", 0, "https://someurl.org/anaconda", "linux-64");
    r.filename = "python-3.6.6-0.tar.bz2";
    MatchSpec a = MatchSpec::parse("anaconda/linux-64::python-3.6.6-0.tar.bz2");
    CHECK(a.channel == "anaconda");
    CHECK(a.subdir == "linux-64");
    CHECK(a.name == "python");
    CHECK(a.matches(r));
    MatchSpec b = MatchSpec::parse("https://someurl.org/anaconda::python-3.6.6-0.conda");
    CHECK(b.name == "python");
    CHECK(b.channel == "https://someurl.org/anaconda");
    CHECK(b.extra.count("url") == 0);   // "channel::file" names a channel, not a download URL
    r.filename = "python-3.6.6-0.conda";
    CHECK(b.matches(r));
    MatchSpec c = MatchSpec::parse("file:///var/folders/T/my dir/flask-0.10.1-py35_2.tar.bz2");
    CHECK(c.name == "flask");
    CHECK(c.version.str() == "0.10.1");
    CHECK(c.build == "py35_2");
    CHECK(c.extra.at("url") == "file:///var/folders/T/my dir/flask-0.10.1-py35_2.tar.bz2");
}

TEST_CASE("track_features must be the same set; features must be present; licenses fold case") {
    IndexRecord r = record("foo", "1.2.3", "4", 4);
    CHECK_FALSE(match("*[track_features=test]", r));
    r.track_features = {"test"};
    CHECK(match("*[track_features=test]", r));
    CHECK_FALSE(match("*[track_features=test2]", r));
    r.track_features = {"test", "me"};
    CHECK_FALSE(match("*[track_features=test]", r));
    CHECK(match("*[track_features='me test']", r));
    CHECK(match("*[track_features='test,me']", r));
    CHECK_FALSE(match("*[features=test]", r));
    CHECK(MatchSpec::parse("*[features=test]").str() == "*[features=test]");

    IndexRecord l = record("numpy", "1.11.0", "py34_7", 7);
    l.license = "LGPLv3+";
    CHECK(match("*[license='*gpl*']", l));
    CHECK(match("*[license='*v3+']", l));
    CHECK(match("*[license=lgplv3+]", l));
    CHECK_FALSE(match("*[license=MIT]", l));
    CHECK(match("*[license_family=LGPL]", l));   // not in IndexRecord: cannot filter
    CHECK(match("numpy[build_number='7']", l));
    CHECK(match("numpy[build_number='<8']", l));
    CHECK_FALSE(match("numpy[build_number='>7']", l));
    CHECK(match("numpy[build_number='>=7']", l));
    CHECK(match("numpy ~=1.10", l));
    CHECK(match("numpy~=1.10", l));
    CHECK_FALSE(match("numpy[version='>2']", l));
}

// Found by fuzz/matchspec (issue 20): "@" parsed as a track_features query for the empty
// feature, printed as "*[track_features=]", which does not parse. conda's legacy "feature@"
// form names a feature (conda/models/match_spec.py, _parse_spec_str).
TEST_CASE("a legacy 'feature@' spec needs a feature name before '@'") {
    CHECK_THROWS_AS(MatchSpec::parse("@"), envlock::InputError);
    CHECK_THROWS_AS(MatchSpec::parse("mk]l@"), envlock::InputError);
    auto m = MatchSpec::parse("mkl@");
    CHECK(m.extra.at("track_features") == "mkl");
    CHECK(MatchSpec::parse(m.str()).str() == m.str());
}

// Found by fuzz/matchspec (issue 20): a spec holding newlines, control characters and bytes
// that are not UTF-8 parsed, and its canonical form did not read back the same. A spec is one
// line of printable text.
TEST_CASE("a MatchSpec with control characters or bytes that are not UTF-8 is refused") {
    CHECK_THROWS_AS(MatchSpec::parse("p\x02 3"), envlock::InputError);
    CHECK_THROWS_AS(MatchSpec::parse("numpy\n>=1.19"), envlock::InputError);
    CHECK_THROWS_AS(MatchSpec::parse("numpy >=1.19,\xff"), envlock::InputError);
    CHECK(MatchSpec::parse("numpy\t>=1.19").name == "numpy");
}

// Found by fuzz/matchspec (issue 20, session 4): a build string holding ':' printed in the
// compact form "numpy==1.10=py38_0:", where ':' reads as a channel separator and the spec no
// longer parses. Such a build goes quoted into brackets, which conda reads the same way.
TEST_CASE("a build string with ':', ' ', '=' or brackets prints inside brackets, quoted, and reads back") {
    for (const char* text : {"numpy[version=1.10 build=py38_0:]", "numpy[version=1.10,build='a b']", "numpy[build='x=y']"}) {
        CAPTURE(text);
        auto m = MatchSpec::parse(text);
        auto again = MatchSpec::parse(m.str());
        CHECK(again.str() == m.str());
        CHECK(again.build == m.build);
    }
    CHECK(MatchSpec::parse("numpy[version=1.10 build=py38_0:]").str() == "numpy==1.10[build='py38_0:']");
}

// Found by fuzz/matchspec (issue 20, session 5): "x 1..*" means "starts with 1" (conda strips
// the '*' and every '.' before it: conda/models/version.py, VersionSpec), but its text was kept,
// so it printed as "x=1." and read back as "x=1". The prefix now prints in one form.
TEST_CASE("a prefix version with extra dots before '*' prints as its stem and reads back the same") {
    auto m = MatchSpec::parse("pkgs/maiXbYython 1..*");
    CHECK(m.version.str() == "1.*");
    CHECK(MatchSpec::parse(m.str()).str() == m.str());
    auto x = MatchSpec::parse("x 1..*");
    CHECK(x.str() == "x=1");
    CHECK(x.matches(record("x", "1.2", "0")));
    CHECK_FALSE(x.matches(record("x", "10.2", "0")));
}

// Found by fuzz/matchspec (issue 20, session 5): "pytorch-1.lbp as_08_cuda11.1_cudnn8.0.5_0.conda"
// is a name and an exact version; printed compactly as "pytorch-1.lbp==as_08_…_0.conda" it ends
// like a package file, which conda and envlock read as a path (match_spec.py, _parse_spec_str).
TEST_CASE("a spec whose printed form ends in .conda or .tar.bz2 prints with brackets and reads back as a spec") {
    auto m = MatchSpec::parse("pytorch-1.lbp as_08_cuda11.1_cudnn8.0.5_0.conda");
    CHECK(m.name == "pytorch-1.lbp");
    CHECK(m.str() == "pytorch-1.lbp==as_08_cuda11.1_cudnn8.0.5_0.conda[]");
    auto again = MatchSpec::parse(m.str());
    CHECK(again.str() == m.str());
    CHECK(again.name == "pytorch-1.lbp");
    CHECK(MatchSpec::parse("numpy-1.19.5-py38_0.tar.bz2").str() == "numpy==1.19.5=py38_0[fn=numpy-1.19.5-py38_0.tar.bz2]");
}

// Found by fuzz/matchspec (issue 20, session 5): the name regex "^1{77777777777777777777}$"
// reached std::regex, whose compiler overflows a signed int reading the count (UBSan). Name and
// build regexes are checked as version regexes are.
TEST_CASE("a name or build regex with a huge repeat count or a backreference is refused before std::regex") {
    CHECK_THROWS_AS(MatchSpec::parse("^1{77777777777777777777}$"), envlock::InputError);
    CHECK_THROWS_AS(MatchSpec::parse("numpy[build='^py\\77777777777777777777$']"), envlock::InputError);
    CHECK(MatchSpec::parse("^py(torch|thon)$").name == "^py(torch|thon)$");
}

// Found by fuzz/matchspec (issue 20, session 5): "nump @ y" has the version "@", compared as
// text; printed as "nump==@=y" it no longer parsed. Such a version prints inside brackets.
TEST_CASE("a version compared as text ('@' in it) prints in brackets and reads back") {
    auto m = MatchSpec::parse("nump             @                y[subdir=linux-64]");
    auto again = MatchSpec::parse(m.str());
    CHECK(again.str() == m.str());
    CHECK(m.str().find("version='@'") != std::string::npos);
}

// Found by fuzz/matchspec (issue 20, session 5): a glob version holding "'" printed as
// version='spec'to…', which does not parse. A bracket value holding ' is quoted with ", and one
// holding both kinds of quote cannot be written back, so it is refused.
TEST_CASE("bracket values holding a quote print with the other quote; both kinds are refused") {
    auto m = MatchSpec::parse("conda-canary/linux-64 spec 'to you m.*ean mt6995-N1+1dab973=py36h4a561cd_0");
    CHECK(m.str().find("version=\"spec'toyoum.*eanmt6995-n1+1dab973\"") != std::string::npos);
    CHECK(MatchSpec::parse(m.str()).str() == m.str());
    CHECK(MatchSpec::parse("x[build=\"a'b\"]").str() == "x[build=\"a'b\"]");
    CHECK_THROWS_AS(MatchSpec::parse("x 1'*\"2"), envlock::InputError);
}

// Found by fuzz/matchspec (issue 20, session 5): "&@~" parsed as the name "&@", which printed
// as "&@", the legacy "feature@" form. Package names never hold '@'.
TEST_CASE("a package name holding '@' is refused; 'feature@' stays a track_features query") {
    CHECK_THROWS_AS(MatchSpec::parse("&@~"), envlock::InputError);
    CHECK_THROWS_AS(MatchSpec::parse("num@py >=1"), envlock::InputError);
    CHECK(MatchSpec::parse("mkl@").extra.at("track_features") == "mkl");
}

// Found by fuzz/matchspec (issue 20, session 5): the channel "defa4numpy[channel=defa4]" printed
// as "defa4numpy[channel=defa4]::numpy", which reads back as another spec. No channel holds a
// bracket.
TEST_CASE("a channel or subdir holding a bracket is refused") {
    CHECK_THROWS_AS(MatchSpec::parse("numpy[channel=defa4numpy[channel=defa4]]"), envlock::InputError);
    CHECK(MatchSpec::parse("numpy[channel=conda-forge]").str() == "conda-forge::numpy");
    CHECK_THROWS_AS(MatchSpec::parse("nupkL*G /: P/://P=p=py38_0"), envlock::InputError);   // a space in the channel
}

// Found by the CI's brief fuzz run (issue 20, session 5): a package file name with capitals kept
// them in the spec's name, which the printed form then folded: "numpyJ" read back as "numpyj".
TEST_CASE("a spec given as a package file folds its name to lower case, as any spec does") {
    auto m = MatchSpec::parse("numpyJ-1.19.5-py38_0.tar.bz2");
    CHECK(m.name == "numpyj");
    CHECK(MatchSpec::parse(m.str()).str() == m.str());
}

// Found by the 10-minute fuzz/matchspec run (issue 20, session 5): the license value "y[fo"
// printed unquoted as "*[license=y[fo]", whose '[' the reader counts, so the section never
// closed. One table of characters decides when any bracket value is quoted.
TEST_CASE("a bracket value holding '[' or ']' prints quoted and reads back") {
    auto m = MatchSpec::parse("*[license='y[fo']");
    CHECK(m.str() == "*[license='y[fo']");
    CHECK(MatchSpec::parse(m.str()).str() == m.str());
    auto b = MatchSpec::parse("x[license='a]b']");
    CHECK(b.str() == "x[license='a]b']");
    CHECK(MatchSpec::parse(b.str()).str() == b.str());
    CHECK(MatchSpec::parse("x[license=MIT]").str() == "x[license=MIT]");
}

// Found by fuzz/matchspec (issue 20, session 5): "ufnm17][]" read as the name "ufnm17]" with an
// empty section; printed back as "ufnm17]" it did not parse. A ']' outside the section is refused
// wherever it stands (conda's package names are [a-z0-9_.-]).
TEST_CASE("a ']' outside the bracket section is refused before or after it") {
    CHECK_THROWS_WITH_AS(MatchSpec::parse("ufnm17][]"), doctest::Contains("unbalanced ']'"), envlock::InputError);
    CHECK_THROWS_AS(MatchSpec::parse("numpy]"), envlock::InputError);
    CHECK(MatchSpec::parse("numpy[]").name == "numpy");
}

// Found by CI's brief fuzz run (issue 20, session 6): "conda-a==4.3.21.post699+1dab9.*=py36h…_0"
// keeps the version "==4.3.21.post699+1dab9.*" beside its build (conda strips "==" only without
// a build: match_spec.py, _parse_spec_str), which means "== 4.3.21.post699+1dab9"
// (conda/models/version.py drops a '.*' after '=='); the compact form printed "===4.3…".
TEST_CASE("a version with an operator and a trailing '*' prints in brackets as written and reads back") {
    for (const char* text : {"conda-a==4.3.21.post699+1dab9.*=py36h4a565cd_0", "x[version='=1.9.*']", "x[version='==1.9.*']"}) {
        CAPTURE(text);
        auto m = MatchSpec::parse(text);
        auto again = MatchSpec::parse(m.str());
        CHECK(again.str() == m.str());
        CHECK(again.version.str() == m.version.str());
    }
    // Found by fuzz/matchspec too: the version "=p9" beside the build "yu" printed as "===p9=yu".
    auto p9 = MatchSpec::parse("ursion[version='=p9',build=yu]");
    CHECK(MatchSpec::parse(p9.str()).str() == p9.str());
    auto m = MatchSpec::parse("x ==1.9.*=py_0");
    CHECK(m.str() == "x[version='==1.9.*',build=py_0]");
    CHECK(m.matches(record("x", "1.9", "py_0")));
    CHECK_FALSE(m.matches(record("x", "1.9.1", "py_0")));
}

// conda >= 25.9 (#31's differential run): the bracket form `pkg[version='==1.0*']` is `pkg 1.0*`.
TEST_CASE("pkg[version='==1.0*'] matches 1.0 and 1.0.1, as pkg 1.0* does (conda >= 25.9)") {
    auto m = MatchSpec::parse("pkg[version='==1.0*']");
    CHECK(m.matches(record("pkg", "1.0", "0")));
    CHECK(m.matches(record("pkg", "1.0.1", "0")));
    CHECK_FALSE(m.matches(record("pkg", "1.1", "0")));
    CHECK(MatchSpec::parse(m.str()).matches(record("pkg", "1.0.1", "0")));
}

// Found by the 10-minute fuzz/matchspec run (issue 20, session 6): the name regex
// "^1???????????+,…$" ran std::regex's backtracking matcher for minutes (libFuzzer's timeout).
// libstdc++'s std::regex backtracks (bits/regex_executor.tcc, _M_dfs), so stacked repetitions
// and unboundedly repeated groups holding a repetition or an alternation are refused.
TEST_CASE("a regex with stacked or nested repetition is refused before std::regex runs it") {
    std::string slow = "^1???????????+,????????+,??????????????????????????+,???????R1\\.co\\.1$";
    CHECK_THROWS_WITH_AS(MatchSpec::parse(slow), doctest::Contains("a repetition of a repetition"), envlock::InputError);
    CHECK_THROWS_WITH_AS(MatchSpec::parse("^(a+)+$"), doctest::Contains("a repeated group that holds a repetition"), envlock::InputError);
    CHECK_THROWS_WITH_AS(MatchSpec::parse("numpy[build='^(py|px)*$']"), doctest::Contains("holds an alternation"), envlock::InputError);
    CHECK_THROWS_AS(MatchSpec::parse("x ^(1\\.[0-9]+)*$"), envlock::InputError);
    // "[]" is an empty class in ECMAScript: the count after it is checked (UBSan in libstdc++).
    CHECK_THROWS_AS(MatchSpec::parse("py[build='^py[]?{17777777777777777777}.*py[+*$']"), envlock::InputError);
    CHECK_THROWS_WITH_AS(MatchSpec::parse("py[build='^py[]{17777777777777777777}$']"), doctest::Contains("a repeat count above 9999"),
                         envlock::InputError);
    // What conda's own specs use stays: lazy forms, optional groups, classes holding '+' or '*'.
    for (const char* ok : {"^py(torch|thon)$", "^.*cuda.*$", "^(py|python)?3$", "numpy[build='^py[+*?]{2}.*?$']", "numpy[build='^py3[0-9]+_.*$']"})
        CHECK_NOTHROW(MatchSpec::parse(ok));
}

// Found by the 10-minute fuzz/matchspec run (issue 20, session 6): a package file's URL may hold
// a space ("file:///my dir/…"), but as a channel the location printed as "my dir::x==1=0", which
// reads back as another spec. Such a location stays in the URL, which pins the file anyway.
TEST_CASE("a package file URL with a space keeps its location in url= and reads back") {
    auto m = MatchSpec::parse("file:///my dir/linux-64/x-1-0.tar.bz2");
    CHECK(m.channel.empty());
    CHECK(m.extra.at("url") == "file:///my dir/linux-64/x-1-0.tar.bz2");
    CHECK(m.str() == "x==1=0[url='file:///my dir/linux-64/x-1-0.tar.bz2']");
    CHECK(MatchSpec::parse(m.str()).str() == m.str());
    CHECK(MatchSpec::parse("https://conda.anaconda.org/conda-forge/linux-64/x-1-0.tar.bz2").channel.find("conda-forge") != std::string::npos);
}

// Found by the 10-minute fuzz/matchspec run (issue 20, session 6): "numnubumpyr(get ta=nol)" read
// as the name "numnubumpyr(get" and the build "nol)"; printed back, "(get==ta=nol)" was a trailing
// "(key=value)" section. A name holds a parenthesis only as a regex; a build that holds one prints
// quoted in brackets.
TEST_CASE("a parenthesis in a package name is refused unless it is a regex; in a build it prints quoted") {
    CHECK_THROWS_WITH_AS(MatchSpec::parse("numnubumpyr(get ta=nol)"), doctest::Contains("holds a character a spec reads as an operator"),
                         envlock::InputError);
    // Found by fuzz/matchspec too: "py**[name==]" named the package "=".
    CHECK_THROWS_AS(MatchSpec::parse("py**[name==]"), envlock::InputError);
    CHECK_THROWS_AS(MatchSpec::parse("x[name='a b']"), envlock::InputError);
    CHECK(MatchSpec::parse("^py(torch|thon)$").name == "^py(torch|thon)$");
    auto m = MatchSpec::parse("x 1 a)b");
    CHECK(m.str() == "x==1[build='a)b']");
    CHECK(MatchSpec::parse(m.str()).str() == m.str());
    CHECK(MatchSpec::parse("numpy 1.19.5 (optional)").optional);
}

// Found by the 10-minute fuzz/matchspec run (issue 20, session 6): the build "py~38_0" printed as
// "x==2.01=py~38_0", where '~' is an operator, so the reader took "2.01=py~38_0" as the version
// (conda's _parse_version_plus_build takes no build with '-', '=', ',', '|', '<', '>' or '~').
TEST_CASE("a build holding '~', '!' or '-' prints quoted in brackets and reads back") {
    for (const char* text : {"x[version=2.01 build=py~38_0]", "x[version=2.01 build=a!b]", "x[version=2.01 build=a-b]"}) {
        CAPTURE(text);
        auto m = MatchSpec::parse(text);
        CHECK(m.str().find("build='") != std::string::npos);
        CHECK(MatchSpec::parse(m.str()).str() == m.str());
        CHECK(MatchSpec::parse(m.str()).build == m.build);
    }
    CHECK(MatchSpec::parse("numpy==1.19.5=py38_0").str() == "numpy==1.19.5=py38_0");
}

// Found by the 10-minute fuzz/matchspec run (issue 20, session 6), as the space above: a package
// file URL whose location holds brackets printed them as a channel, a bracket section when read.
TEST_CASE("a package file URL with brackets in its location keeps it in url=; as channel:: it is refused") {
    auto m = MatchSpec::parse("numpy[buildump@y-http://aconda.or_number=0]g/1.19.5-py3y-1.19.5-ck5ErrorE.tar.bz2");
    CHECK(m.channel.empty());
    CHECK(MatchSpec::parse(m.str()).str() == m.str());
    CHECK_THROWS_WITH_AS(MatchSpec::parse("https://h/a[1]::x-1-0.tar.bz2"), doctest::Contains("a space or a bracket in the channel"),
                         envlock::InputError);
}

// Found by the 10-minute fuzz/matchspec run (issue 20, session 6): "subdir=os////" printed as
// "defa/os////::numpy", which reads back with the subdir "os". A subdir is one path segment.
TEST_CASE("a subdir holding '/' is refused") {
    CHECK_THROWS_WITH_AS(MatchSpec::parse("numpy[channel=defa,subdir=os////]"), doctest::Contains("'/' in the subdir"), envlock::InputError);
    CHECK(MatchSpec::parse("numpy[channel=conda-forge,subdir=linux-64]").str() == "conda-forge/linux-64::numpy");
}

// Found by CI's 15-second fuzz/matchspec run (session 7): a quoted build holding a tab.
TEST_CASE("a build holding a tab prints quoted and reads back") {
    auto m = MatchSpec::parse("x==1[build='a\tb']");
    CHECK(m.str() == "x==1[build='a\tb']");
    auto again = MatchSpec::parse(m.str());
    CHECK(again.build == "a\tb");
    CHECK(again.str() == m.str());
}
