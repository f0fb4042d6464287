"""Runs test files of a torch_xla checkout against the installed torch_xla, as that
project's CI runs them (`python FILE` with PJRT_DEVICE=CPU), and prints a table.

Usage: python scripts/reference_tests.py CHECKOUT [FILE_SUBSTRING...]

The files are read from the checkout the caller names; nothing of them is kept here.
The multi-process files (test_mp_*.py) guard their checks with a list of device kinds
that leaves out the CPU; they are run from a temporary copy whose guard also accepts
the CPU, which is the only change made to any file.
"""
import dataclasses
import os
import re
import subprocess
import sys
import tempfile
import time

# (file, extra environment). The environment is what the checkout's run_tests.sh
# gives the same file.
FILES = [
    ("test/test_operations.py", {}),
    ("test/test_metrics.py", {}),
    ("test/test_data_type.py", {}),
    ("test/pjrt/test_dtypes.py", {}),
    ("test/pjrt/test_runtime.py", {}),
    ("test/test_devices.py", {"CPU_NUM_DEVICES": "4"}),
    ("test/test_async_closures.py", {}),
    ("test/test_input_output_aliases.py", {}),
    ("test/test_torch_distributed_xla_backend.py", {}),
    ("test/test_persistent_cache.py", {}),
    ("test/eager/test_eager.py", {}),
    ("test/eager/test_eager_with_torch_compile.py", {}),
    ("test/debug_tool/test_pt_xla_debug.py",
     {"PT_XLA_DEBUG": "1", "PT_XLA_DEBUG_FILE": "/tmp/pt_xla_debug.txt"}),
    ("test/test_autocast.py", {}),
    ("test/test_profiler_session.py", {}),
    # It looks for the graph's compilation in the profile: torch_xla has no persistent
    # compile cache by default, which would load the graph instead.
    ("test/pjrt/test_profiler.py", {"XLA_PERSISTENT_CACHE_PATH": "0"}),
    ("test/test_mp_replication.py", {"CPU_NUM_DEVICES": "4"}),
    ("test/test_mp_all_to_all.py", {"CPU_NUM_DEVICES": "4"}),
    ("test/test_mp_all_gather.py", {"CPU_NUM_DEVICES": "4"}),
    ("test/test_mp_reduce_scatter.py", {"CPU_NUM_DEVICES": "4"}),
    ("test/test_mp_distributed_mm.py", {"CPU_NUM_DEVICES": "4"}),
    ("test/test_mp_save.py", {"CPU_NUM_DEVICES": "4"}),
    ("test/test_mp_mesh_reduce.py", {"CPU_NUM_DEVICES": "4"}),
    ("test/test_mp_sync_batch_norm.py", {"CPU_NUM_DEVICES": "4"}),
    ("test/test_mp_collective_permute.py", {"CPU_NUM_DEVICES": "4"}),
]

# Tests that assert on the reference's private text formats, which this project does
# not reproduce; each with the reason. Reported apart from the failures.
_HLO_TEXT = ("asserts on the reference's HLO text (e.g. '%all-reduce.3 = ... all-reduce('); "
             "graphs here are compiled from StableHLO, which _get_xla_tensors_hlo returns")
_IR_TEXT = ("asserts on the reference's IR dump ('prim::Constant', 'aten::add' node names); "
            "the IR here names nodes by their StableHLO ops")
KNOWN_DIFFERENCES = {
    "XlaBackendTest.test_allreduce": _HLO_TEXT,
    "XlaBackendTest.test_allreduce_with_mesh": _HLO_TEXT,
    "XlaBackendTest.test_allgather": _HLO_TEXT,
    "XlaBackendTest.test_all_scalar_allgather": _HLO_TEXT,
    "XlaBackendTest.test_allgather_coalesced": _HLO_TEXT,
    "XlaBackendTest.test_broadcast": _HLO_TEXT,
    "XlaBackendTest.test_reduce_scatter": _HLO_TEXT,
    "TestAtenXlaTensor.test_pow_constant": _IR_TEXT,
    "TestDebuggingUtil.test_get_xla_tensor_debug_info": _IR_TEXT,
    # These check the dtype first (which holds), then a line of the IR dump by position.
    "TestAtenXlaTensor.test_view_as_complex_f32": _IR_TEXT,
    "TestAtenXlaTensor.test_view_as_complex_f64": _IR_TEXT,
    "TestAtenXlaTensor.test_view_as_real_c64": _IR_TEXT,
    "TestAtenXlaTensor.test_view_as_real_c128": _IR_TEXT,
    # The dtype each reports holds (a per-tensor dtype under the precision modes); then
    # they read the device type from a line of the IR dump by position, in XLA's names
    # ('s32' where this dump says 'i32').
    "XlaDataTypeTest.test_datatype_use_bf16": _IR_TEXT,
    "XlaDataTypeTest.test_datatype_downcast_bf16": _IR_TEXT,
    "XlaDataTypeTest.test_datatype_use_32bit_long": _IR_TEXT,
    "XlaDataTypeTest.test_module_to_dtype": _IR_TEXT,
    "TestAtenXlaTensor.test_patched_linear_3D": (
        "asserts that the HLO text has no 'reshape'; the StableHLO here contracts a 3-D "
        "input by reshaping it to 2-D around one dot_general"),
    "TestLoweringContext.test_api": (
        "asserts on the HLO module's protobuf text ('opcode: \"parameter\"'); "
        "LoweringContext.hlo_text() gives the StableHLO module here"),
}

# Tests that count the reference's own internal events where this project does less work
# by design. They are not text formats: they are reported apart, each with its reason.
BY_DESIGN = {
    "TestAtenXlaTensor.test_replace_xla_tensor": (
        "counts DestroyXlaTensor after `t += 1` and a sync: the reference makes and frees "
        "a device tensor for the Python number 1, which is a scalar of the graph here"),
    "MetricsTest.test_eager_metrics": (
        "expects eager mode to compile a graph for torch.tensor(156, device=...); the "
        "number is transferred to the device here, with no graph"),
    "InputOutputAliasesTest.test_aliasing_with_cloned": (
        "expects t1's buffer donated while its clone exists: the reference copies the "
        "buffer for the clone in the step's graph; a clone shares the buffer here (no "
        "copy), so t1's update gets a new one"),
}

TIMEOUT_S = int(os.environ.get("REFERENCE_TEST_TIMEOUT", "900"))

# A device-kind guard of the multi-process files, e.g. `in ('TPU', 'NEURON')`.
_GUARD = re.compile(r"xla_device_hw\(device\) in (\(|\[)'TPU'")


@dataclasses.dataclass
class Result:
  file: str
  ran: int = 0
  failed: int = 0
  errors: int = 0
  skipped: int = 0
  status: str = ""
  seconds: float = 0.0
  failing: list = dataclasses.field(default_factory=list)

  @property
  def passed(self):
    return max(0, self.ran - self.failed - self.errors - self.skipped)


def _widened_copy(path, tmpdir):
  text = open(path).read()
  widened = _GUARD.sub(lambda m: m.group(0).replace("'TPU'", "'CPU', 'TPU'"), text)
  if widened == text:
    return path
  copy = os.path.join(tmpdir, os.path.basename(path))
  with open(copy, "w") as f:
    f.write(widened)
  return copy


def _parse_unittest(output, result):
  ran = re.findall(r"^Ran (\d+) tests? in", output, re.M)
  if ran:
    result.ran = int(ran[-1])
  summary = re.findall(r"^(OK|FAILED)(?: \((.*)\))?$", output, re.M)
  if summary:
    verdict, counts = summary[-1]
    for key, value in re.findall(r"(\w+)=(\d+)", counts or ""):
      if key == "failures":
        result.failed = int(value)
      elif key == "errors":
        result.errors = int(value)
      elif key == "skipped":
        result.skipped = int(value)
  # "FAIL: test_x (__main__.Class.test_x)", or "(__main__.Class)" on older Pythons.
  result.failing = [(name, cls[:-len(name) - 1] if cls.endswith("." + name) else cls)
                    for name, cls in re.findall(r"^(?:FAIL|ERROR): (\S+) \(([\w.]+)\)",
                                                output, re.M)]


def run_file(checkout, rel, env_extra, tmpdir, log_dir):
  path = os.path.join(checkout, rel)
  result = Result(rel)
  if not os.path.exists(path):
    result.status = "missing"
    return result
  script = _widened_copy(path, tmpdir) if "test_mp_" in rel else path
  env = dict(os.environ)
  # The checkout's test folder first (its files import test_utils from there), then
  # the caller's PYTHONPATH, so that a source tree set there is the torch_xla tested.
  pythonpath = [os.path.dirname(path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
  # A fresh compile cache per file, as on the reference's CI machines: graphs compiled
  # by an earlier file would otherwise load from disk and compile nothing.
  cache = tempfile.mkdtemp(dir=tmpdir)
  env.update({"PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": "1",
              "PYTHONPATH": os.pathsep.join(pythonpath), "XLA_PERSISTENT_CACHE_PATH": cache})
  env.update(env_extra)
  start = time.time()
  try:
    # Only test_operations.py parses a verbosity flag of its own.
    args = ["--verbosity=2"] if rel.endswith("test_operations.py") else []
    proc = subprocess.run([sys.executable, script] + args,
                          cwd=os.path.dirname(path), env=env, capture_output=True,
                          text=True, timeout=TIMEOUT_S)
    output, code = proc.stdout + proc.stderr, proc.returncode
  except subprocess.TimeoutExpired as e:
    output = (e.stdout or b"").decode() + (e.stderr or b"").decode()
    code = "timeout"
  result.seconds = time.time() - start
  with open(os.path.join(log_dir, rel.replace("/", "_") + ".log"), "w") as f:
    f.write(output)
  _parse_unittest(output, result)
  if code == "timeout":
    result.status = f"timeout after {TIMEOUT_S}s"
  elif result.ran == 0 and result.failed + result.errors == 0:
    # A file of one multi-process program, or one that stopped before its tests.
    result.ran = 1
    if code == 0:
      result.status = "ok"
    else:
      result.failed = 1
      last = [l for l in output.strip().splitlines() if l.strip()][-1:] or [""]
      result.status = f"exit {code}: {last[0][:100]}"
  else:
    # An error in setUpClass is counted, though no test of the class ran.
    result.ran = max(result.ran, result.failed + result.errors + result.skipped)
    result.status = "ok" if code == 0 else f"exit {code}"
  return result


def main():
  if len(sys.argv) < 2:
    sys.exit(__doc__)
  checkout = os.path.abspath(sys.argv[1])
  filters = sys.argv[2:]
  log_dir = os.environ.get("REFERENCE_TEST_LOGS", "/tmp/reference_test_logs")
  os.makedirs(log_dir, exist_ok=True)
  results = []
  with tempfile.TemporaryDirectory() as tmpdir:
    for rel, env_extra in FILES:
      if filters and not any(f in rel for f in filters):
        continue
      r = run_file(checkout, rel, env_extra, tmpdir, log_dir)
      results.append(r)
      print(f"{r.file:48s} {r.passed:4d}/{r.ran:<4d} {r.seconds:6.0f}s {r.status}",
            flush=True)
  print()
  print(f"{'file':48s} {'pass':>5s} {'fail':>5s} {'err':>5s} {'skip':>5s} {'known':>5s} "
        f"{'design':>6s}")
  total = Result("total")
  for r in results:
    known = sum(1 for name, cls in r.failing
                if f"{cls.rsplit('.', 1)[-1]}.{name}" in KNOWN_DIFFERENCES)
    design = sum(1 for name, cls in r.failing if f"{cls.rsplit('.', 1)[-1]}.{name}" in BY_DESIGN)
    print(f"{r.file:48s} {r.passed:5d} {r.failed:5d} {r.errors:5d} {r.skipped:5d} "
          f"{known:5d} {design:6d}")
    for field in ("ran", "failed", "errors", "skipped"):
      setattr(total, field, getattr(total, field) + getattr(r, field))
  print(f"{'total':48s} {total.passed:5d} {total.failed:5d} {total.errors:5d} "
        f"{total.skipped:5d}")
  print(f"\nlogs: {log_dir}")
  unexplained = [(r.file, n, c) for r in results for n, c in r.failing
                 if f"{c.rsplit('.', 1)[-1]}.{n}" not in KNOWN_DIFFERENCES and
                 f"{c.rsplit('.', 1)[-1]}.{n}" not in BY_DESIGN]
  if unexplained:
    print("\nfailing tests:")
    for file, name, cls in unexplained:
      print(f"  {file}: {cls}.{name}")
  for name, reason in KNOWN_DIFFERENCES.items():
    print(f"known difference: {name}: {reason}")
  for name, reason in BY_DESIGN.items():
    print(f"different by design: {name}: {reason}")


if __name__ == "__main__":
  main()
