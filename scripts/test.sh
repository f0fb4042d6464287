#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs every test: the googletest programs through
# ctest, then the Python suite with pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build/release --output-on-failure -j2
# Run from test_py/ so that the installed package, not the source tree, is imported.
cd test_py && python3 -m pytest -q -p no:cacheprovider .
