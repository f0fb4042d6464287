#!/usr/bin/env bash
# Builds the project here for a GPU machine's Python and torch (by default Python 3.12
# and torch 2.11.0+cu130), so that scripts/device_check.sh spends the GPU's time on tests
# and benchmarks instead of a build. The result is the module and core library in
# torch_xla/ (_XLAC.cpython-312-*.so, lib/libtorch_xla_core.so), with rpaths relative to
# themselves, and .whl/ with expecttest (the GPU machine may have no network); copy those
# with the checkout to the GPU machine and run there:
#
#   bash scripts/build_for_device.sh
#   (there) PHASES="smoke tests opinfo bench" bash scripts/device_check.sh REPORT_DIR
#
# VENV (default /tmp/torch_xla_device_venv), PYTHON_FOR_VENV (a Python 3.12) and
# TORCH_FOR_DEVICE (default 2.11.0) choose the environment; it is made once.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-/tmp/torch_xla_device_venv}
torch_version=${TORCH_FOR_DEVICE:-2.11.0}
# A pyenv shim named python3.12 exists even where 3.12 is not the active version: take the
# first candidate that runs.
python_for_venv=${PYTHON_FOR_VENV:-}
if [ -z "$python_for_venv" ]; then
  for candidate in $(command -v python3.12) ~/.pyenv/versions/3.12*/bin/python; do
    if "$candidate" -c '' 2>/dev/null; then python_for_venv=$candidate; break; fi
  done
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python_for_venv" -m venv "$venv"
  # The CUDA build of torch from PyPI, with the CUDA libraries it needs to import.
  "$venv/bin/pip" install -q "torch==$torch_version" numpy pyyaml cython "scikit-build-core>=0.10" ninja
fi
mkdir -p build/device-prebuilt
cmake -S . -B build/device-prebuilt -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORCH_XLA_BUILD_TESTS=OFF \
  -DTORCH_XLA_INPLACE=ON -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON -DPython_EXECUTABLE="$venv/bin/python" >/dev/null
ninja -C build/device-prebuilt
mkdir -p .whl
"$venv/bin/pip" download -q --no-deps --only-binary=:all: -d .whl expecttest
ls -l torch_xla/_XLAC.cpython-312-*.so torch_xla/lib/libtorch_xla_core.so .whl
