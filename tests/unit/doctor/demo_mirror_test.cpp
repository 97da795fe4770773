// The numpy / numpy-base split out of step, made with the demo mirror's defaults channel
// (tests/mirror: defaults splits numpy into a thin numpy pinning one numpy-base build) by
// `envlock resolve` and `envlock install` themselves: numpy 1.19.2 resolved and installed,
// then a lock whose numpy-base is 1.21.5's installed over it, as `conda install --force` or a
// hand-edited lock would leave it.
#include <doctest/doctest.h>

#include "install/doctor.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "tests/unit/install/install_fixture.hpp"
#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

fs::path resolve_numpy(const std::string& version) {
    fs::path dir = temp_dir("doctor-demo-" + version);
    write_file(dir / "spec.yaml", "spec:\n  name: numpy-split\n  channels: [defaults]\n  requirements:\n"
                                  "    - {conda: python=3.8}\n    - {conda: numpy=" + version + "}\n");
    write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    auto r = resolve_with({(dir / "spec.yaml").string(), "--target", (dir / "target.yaml").string()}, dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return dir / "envlock.yaml";
}

}  // namespace

TEST_CASE("demo mirror: numpy 1.19.2 over numpy-base 1.21.5, installed by envlock, is named; with the lock, --repair's plan puts it back") {
    fs::path lock_a = resolve_numpy("1.19.2"), lock_b = resolve_numpy("1.21.5");
    Lock a = read_lock(read_file(lock_a), lock_a.string());
    Lock b = read_lock(read_file(lock_b), lock_b.string());
    auto base_of = [](const Lock& l) {
        auto it = std::find_if(l.packages.begin(), l.packages.end(), [](const LockedPackage& p) { return p.name == "numpy-base"; });
        REQUIRE(it != l.packages.end());
        return *it;
    };
    CHECK(base_of(a).version == "1.19.2");
    Lock skewed = a;
    for (auto& p : skewed.packages)
        if (p.name == "numpy-base") p = base_of(b);
    fs::path work = make_temp_dir("doctor-demo"), prefix = work / "env", cache = work / "cache";
    write_bytes(work / "skewed.yaml", write_lock(skewed));
    auto install = [&](const fs::path& lock) {
        std::vector<std::string> args{"install", lock.string(), "--prefix", prefix.string()};
        auto mirrors = mirror_flags(cache);
        args.insert(args.end(), mirrors.begin(), mirrors.end());
        auto r = run_envlock(args);
        REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    };
    install(lock_a);
    install(work / "skewed.yaml");

    const auto k = knowledge::load_builtin();
    install::DoctorMachine m;
    m.target.platform = "linux-64";
    m.nofile_soft = m.nofile_hard = 65536;
    auto scan = install::scan_prefix(prefix.string());
    auto r = install::diagnose(scan, m, k);
    const install::Finding* split = nullptr;
    for (const auto& f : r.findings)
        if (f.check == "split-package") split = &f;
    REQUIRE(split);
    CHECK(split->what == "conda numpy 1.19.2 but numpy-base 1.21.5");
    CHECK(split->fix == "conda install -p " + prefix.string() + " \"numpy=1.19.2\" \"numpy-base=1.19.2\"");
    bool depends = false;
    for (const auto& f : r.findings)
        depends |= f.check == "requirement" && f.what.find("conda numpy 1.19.2 depends on numpy-base 1.19.2") == 0;
    CHECK(depends);

    auto preview = install::repair_preview(a, prefix.string());
    CHECK(preview.refused.empty());
    auto with_lock = install::diagnose(scan, m, k, &a, lock_a.string(), &preview);
    REQUIRE(with_lock.repair);
    REQUIRE(with_lock.repair->plan.plan.add.size() == 1);
    CHECK(with_lock.repair->plan.plan.add[0].name == "numpy-base");
    CHECK(with_lock.repair->plan.plan.add[0].version == "1.19.2");
    std::error_code ec;
    fs::remove_all(work, ec);
}
