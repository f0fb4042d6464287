#!/usr/bin/env bash
# Runs the reference torch_xla's own test files against the installed torch_xla, as its
# CI runs them, and prints a table of passes and failures.
# Usage: scripts/reference_tests.sh PATH_TO_TORCH_XLA_CHECKOUT [FILE_SUBSTRING...]
# The test files are read from that checkout. Not part of CI: scripts/test.sh is.
set -euo pipefail
if [ $# -lt 1 ] || [ ! -d "$1/test" ]; then
  echo "usage: $0 PATH_TO_TORCH_XLA_CHECKOUT [FILE_SUBSTRING...]" >&2
  exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
# What the reference tests import beside torch_xla.
python3 -m pip install -q absl-py expecttest
exec python3 "$here/reference_tests.py" "$@"
