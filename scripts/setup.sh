#!/usr/bin/env bash
# Installs the Debian 12 packages envlock builds with, then configures and builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PACKAGES="cmake g++ ninja-build pkg-config git ccache zstd
  libsolv-dev libsolvext-dev libcurl4-openssl-dev libyaml-cpp-dev nlohmann-json3-dev libssl-dev
  libcli11-dev doctest-dev libarchive-dev libzstd-dev libbz2-dev libsimdjson-dev libfmt-dev
  libmd4c-dev libcpp-httplib-dev libtomlplusplus-dev libvalijson-dev conda-package-handling
  python3-pip python3-venv python3-installer python3-dev python3-setuptools python3-wheel unzip
  python3-torch libtorch-dev pybind11-dev clang-14 libfuzzer-14-dev libmsgpack-dev libmimalloc-dev zlib1g-dev fish
  nginx-light"
missing=""
for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
# Real wheels two doctor tests install (tests/unit/doctor/real_wheels_test.cpp), fetched once
# through pip as this machine configures it (tests themselves talk to loopback only); where no
# index is reachable the download fails quickly and those tests say so and skip.
mkdir -p build/test-wheels
for w in numba==0.56.4 yapf==0.40.2; do
  ls build/test-wheels/"${w%%==*}-${w##*==}"-*.whl >/dev/null 2>&1 && continue
  /usr/bin/python3 -m pip download -q --no-deps --disable-pip-version-check --timeout 15 --retries 1 \
    -d build/test-wheels --only-binary=:all: --python-version 3.8 --implementation cp \
    --platform manylinux2014_x86_64 "$w" >/dev/null 2>&1 ||
    echo "setup: pip could not download $w; the doctor test that installs it will skip"
done
