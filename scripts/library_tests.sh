#!/usr/bin/env bash
# Runs the tests of the libraries people train with (test_py/libraries: Hugging Face
# transformers' Trainer and accelerate's Accelerator, Lightning) against this checkout's
# install.
# The libraries go into a virtual environment of their own (VENV, default
# build/library-venv) that sees the system's torch and torch_xla, so the project's own
# environment stays as scripts/setup.sh leaves it. Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=$(realpath -m "${VENV:-build/library-venv}")
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv --system-site-packages "$VENV"
fi
# Pinned to the releases the tests were written against; torch itself is never
# reinstalled (the system's CPU build is used).
"$VENV/bin/python" -m pip install -q "transformers==5.24.0" "accelerate==1.15.0" "lightning==2.6.6"
"$VENV/bin/python" -c "import torch; assert torch.__version__.startswith('2.13'), torch.__version__"
cd test_py && "$VENV/bin/python" -m pytest -q -p no:cacheprovider libraries "$@"
