#!/usr/bin/env bash
# The project on an NVIDIA GPU through the CUDA PJRT plugin (jax-cuda13-pjrt or
# jax-cuda12-pjrt), in one run of a few minutes: builds it against the torch installed
# there, runs the GPU subset of the Python tests with PJRT_DEVICE=CUDA and the model
# benchmarks against PyTorch's own CUDA (eager and inductor), and writes a report.
#
#   bash scripts/device_check.sh [REPORT_DIR]      (default: device_report)
#
# Each phase has a time limit (BUILD_TIMEOUT, TEST_TIMEOUT, OPINFO_TIMEOUT,
# BENCH_TIMEOUT, seconds); a phase that fails or runs out is reported and the next one
# runs. Wheels in .whl/ (expecttest for the OpInfo tests) are installed first, without
# a network. PHASES picks phases (default "build smoke tests opinfo bench"); without
# "build" it uses torch_xla/_XLAC*.so and torch_xla/lib built beforehand for that Python
# and torch by scripts/build_for_device.sh, so that the GPU's time goes to the rest.
set -uo pipefail
cd "$(dirname "$0")/.."
report=$(realpath -m "${1:-device_report}")
mkdir -p "$report"
py=${PYTHON:-python3}
phases=" ${PHASES:-build smoke tests opinfo bench} "
summary="$report/summary.txt"
log() { echo "[$(date +%T)] $*" | tee -a "$summary"; }
has() { [[ "$phases" == *" $1 "* ]]; }

# PJRT_DEVICE=CPU runs the same phases on the CPU device (a dry run of the script).
export PJRT_DEVICE=${PJRT_DEVICE:-CUDA} PYTHONUNBUFFERED=1
# Several test processes, and PyTorch's CUDA in the benchmarks, share the GPU with the
# plugin: it takes memory as it needs it instead of 75% at start.
export PJRT_ALLOCATOR_PREALLOCATE=${PJRT_ALLOCATOR_PREALLOCATE:-0}
log "host $(hostname); $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
log "$($py -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)' 2>&1 | tail -1)"

if compgen -G ".whl/*.whl" >/dev/null; then
  $py -m pip install -q --no-index --no-deps --no-compile --target /tmp/device_site .whl/*.whl >"$report/wheels.log" 2>&1 &&
    export PYTHONPATH=/tmp/device_site${PYTHONPATH:+:$PYTHONPATH}
fi

# ---- build: the C++ core and the Cython module, copied into torch_xla/ (TORCH_XLA_INPLACE)
build=build/device
if has build; then
  start=$(date +%s)
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORCH_XLA_BUILD_TESTS=OFF -DTORCH_XLA_INPLACE=ON \
    -DPython_EXECUTABLE="$(command -v $py)" >"$report/build.log" 2>&1 &&
    timeout "${BUILD_TIMEOUT:-480}" ninja -C $build -k 0 >>"$report/build.log" 2>&1
  rc=$?
  log "build: exit $rc in $(($(date +%s) - start)) s"
  if [ $rc -ne 0 ]; then
    grep -E -A6 "error|FAILED" "$report/build.log" | head -300 >"$report/build_errors.txt"
    log "build failed: see build_errors.txt"
    exit 1
  fi
fi
module=$($py -c 'import sysconfig; print("_XLAC" + sysconfig.get_config_var("EXT_SUFFIX"))')
if [ ! -f "torch_xla/$module" ]; then
  log "no torch_xla/$module: run the build phase, or build for this Python and torch elsewhere (TORCH_XLA_INPLACE)"
  exit 1
fi
has build || log "using the prebuilt torch_xla/$module and torch_xla/lib"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
log "plugin: $($py -m pip show jax-cuda13-pjrt jax-cuda12-pjrt 2>/dev/null | grep -E '^(Name|Version)' | tr '\n' ' ')"

# ---- smoke: the plugin loads, a product and a training step match PyTorch's CUDA
if has smoke; then
  timeout 180 $py scripts/device_smoke.py >"$report/smoke.log" 2>&1
  log "smoke: exit $? ($(tail -1 "$report/smoke.log"))"
fi

# ---- tests: every op family, the executor, donation, the persistent cache, precision
# modes, torch.compile, replication over the visible GPUs. The float32 and bfloat16
# results are compared with eager PyTorch on the CPU (the tests' reference).
workers=${TEST_WORKERS:-12}
if has tests; then
  files=${TEST_SELECT:-$(cd test_py && find . -name 'test_*.py' | sed 's|^\./||' | sort | grep -v -E \
    '(^|/)test_(host_|cpu_arguments|plugin_pages|processes|exit|packaging|op_coverage|opinfo|utils_pure|data_utilities|device_dims|examples|lowering_device_kind)' |
    sed 's|^|test_py/|')}
  start=$(date +%s)
  LIVE_FAILURES="$report/test_failures.txt" XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_autotune_level=0" \
    PYTHONPATH=$PWD/scripts:$PYTHONPATH timeout "${TEST_TIMEOUT:-200}" \
    $py -m pytest -n "$workers" -p no:cacheprovider -p pytest_live_failures -p no:benchmark -q -rfE --timeout 240 \
    $files >"$report/tests.log" 2>&1
  log "tests: exit $? in $(($(date +%s) - start)) s: $(grep -E '(passed|failed|error)' "$report/tests.log" | tail -1)"
fi
if has opinfo; then
  start=$(date +%s)
  LIVE_FAILURES="$report/opinfo_failures.txt" XLA_FLAGS="${XLA_FLAGS:-} --xla_gpu_autotune_level=0" \
    PYTHONPATH=$PWD/scripts:$PYTHONPATH timeout "${OPINFO_TIMEOUT:-100}" \
    $py -m pytest -n "$workers" -p no:cacheprovider -p pytest_live_failures -p no:benchmark -q -rfE --timeout 200 \
    test_py/ops/test_opinfo.py ${OPINFO_K:+-k "$OPINFO_K"} >"$report/opinfo.log" 2>&1
  log "opinfo: exit $? in $(($(date +%s) - start)) s: $(grep -E '(passed|failed|error)' "$report/opinfo.log" | tail -1)"
fi

# ---- benchmarks: each stock model against eager CUDA and inductor on the same GPU
if has bench; then
  start=$(date +%s)
  timeout "${BENCH_TIMEOUT:-240}" $py benchmarks/bench_models.py --row-timeout "${ROW_TIMEOUT:-150}" \
    ${BENCH_ARGS:-} >"$report/bench.log" 2>&1
  log "bench: exit $? in $(($(date +%s) - start)) s"
  grep -v "^{" "$report/bench.log" | tail -20 >>"$summary"
fi
log "done"
