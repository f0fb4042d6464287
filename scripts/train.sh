#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and trains the guides' MNIST network on the default
# XLA device (synthetic MNIST-shaped data). Extra arguments go to the script.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd examples && python3 train_mnist.py "$@"
