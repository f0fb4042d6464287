#!/usr/bin/env bash
# Installs what a fresh machine lacks, then builds and installs torch_xla from this
# checkout (C++ runtime, Cython modules, C++ tests in build/release).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for pkg in libgtest-dev ninja-build ccache; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

# torch is pinned: the CPU build of 2.13.0 is what the project builds against.
python3 -m pip install -q "torch==2.13.0" numpy xla-cpu-pjrt fsspec protobuf google-crc32c tqdm \
  "scikit-build-core>=0.10" "cython>=3.0" ninja pytest scikit-learn expecttest
# The C++ tests are built here (googletest is installed above); a plain `pip install .`
# builds them only where googletest is found.
python3 -m pip install -q --no-build-isolation --no-deps -C cmake.define.TORCH_XLA_BUILD_TESTS=ON .
