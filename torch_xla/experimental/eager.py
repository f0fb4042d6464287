"""Eager mode: each op on the XLA device is compiled and run when it is called.

By default torch_xla traces ops into a pending graph that `torch_xla.sync()` (or
`xm.mark_step()`) compiles and runs as one. In eager mode every op runs at once, as a
graph of its own: results are device data as soon as the op returns, and errors surface
at the op that caused them. Each op's graph is found in the compile cache by its hash,
so an op repeated with the same shapes and dtypes compiles once. Functions wrapped in
`torch_xla.compile` are still traced into one graph.

Compiles and executions of eager ops count in the metrics `EagerOpCompileTime` and
`EagerOpExecuteTime` (not `CompileTime`/`ExecuteTime`).
"""
import contextlib

from torch_xla._extension import xlac as _xlac


def eager_mode(enable: bool):
  """Turns eager mode on or off for the whole process."""
  _xlac()._set_use_eager_mode(bool(enable))


def is_eager_mode() -> bool:
  """Whether eager mode is on."""
  return _xlac()._get_use_eager_mode()


@contextlib.contextmanager
def eager_mode_context(enable: bool):
  """Eager mode on or off inside the block; the mode before is restored after it.
  Yields the mode before."""
  saved = is_eager_mode()
  eager_mode(enable)
  try:
    yield saved
  finally:
    eager_mode(saved)
