"""PyTorch on XLA devices through PJRT plugins.

Importing this package loads the compiled core, which registers the XLA device's
kernels with PyTorch. `PJRT_DEVICE` (CPU, CUDA, TPU) picks the plugin.
"""
import importlib.util
import os
import sys

import torch  # noqa: F401  (the core links against torch's libraries)

from .version import __version__  # noqa: E402,F401

# The device kind when none is named: the CPU, unless PJRT_SELECT_DEFAULT_DEVICE=0 asks
# for none (torch_xla.runtime.device_type() then says None).
if 'PJRT_DEVICE' not in os.environ and os.environ.get('PJRT_SELECT_DEFAULT_DEVICE', '1') != '0':
  os.environ['PJRT_DEVICE'] = 'CPU'

# The CPU plugin logs two lines at every start (absl's "All log messages before
# absl::InitializeLog()..." and the device count) unless told to keep INFO quiet; its
# warnings and errors still show. A value the user set wins.
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '1')


def _find_plugin(kind):
  """The plugin shipped by a wheel for `kind`, or None."""
  candidates = {
      'CPU': [('xla_plugins.xla_cpu_pjrt', 'xla_cpu_pjrt.so')],
      'CUDA': [('jax_plugins.xla_cuda13', 'xla_cuda_plugin.so'),
               ('jax_plugins.xla_cuda12', 'xla_cuda_plugin.so')],
      'TPU': [('libtpu', 'libtpu.so')],
  }.get(kind, [])
  for module, filename in candidates:
    try:
      spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
      spec = None
    if spec is None or not spec.submodule_search_locations:
      continue
    for folder in spec.submodule_search_locations:
      path = os.path.join(folder, filename)
      if os.path.exists(path):
        return path
  return None


from . import _XLAC  # noqa: E402

for _kind in ('CPU', 'CUDA', 'TPU'):
  _path = _find_plugin(_kind)
  if _path:
    _XLAC._set_default_plugin_path(_kind, _path)


def _configure_process_runtime():
  """Under torchrun, a plugin whose runtime spans processes (not the CPU's, whose
  collectives across processes torch_xla runs itself) is told which process this is
  and meets the others' in the launcher's store."""
  from .core import _processes
  if not _processes.launched() or os.environ.get('PJRT_DEVICE', 'CPU').upper() == 'CPU':
    return
  local_world = int(os.environ.get('LOCAL_WORLD_SIZE', '1'))
  # One process per device: its device; one per host: all of them.
  visible = [int(os.environ.get('LOCAL_RANK', '0'))] if local_world > 1 else []
  _XLAC._xla_configure_process_runtime(_processes.index(), _processes.count(), visible,
                                       os.environ.get('MASTER_ADDR', '127.0.0.1'),
                                       int(os.environ.get('MASTER_PORT', '29500')))


_configure_process_runtime()

from .debug import _exit_reports  # noqa: E402

_exit_reports.install()

from .core import custom_ops as _custom_ops  # noqa: E402

_custom_ops.functionalize_namespaces()

from . import _device_module  # noqa: E402

# torch.xla, which PyTorch looks up by device type (once: importlib.reload(torch_xla)
# must not register it again).
if not hasattr(torch, 'xla'):
  torch._register_device_module('xla', _device_module)

from .core import fused_optimizers as _fused_optimizers  # noqa: E402

_fused_optimizers.install()

from .core import clip_grad_norm as _clip_grad_norm  # noqa: E402

_clip_grad_norm.install()


def device(n=None):
  """The XLA device `xla:n`; when n is None, the calling replica's device
  (xla:0 outside replication)."""
  from .core import xla_model
  return xla_model.xla_device(n)


def devices():
  """All addressable XLA devices (in SPMD mode xla:0, which stands for all of them)."""
  count = 1 if _XLAC._xla_is_spmd() else _XLAC._xla_device_count()
  return [torch.device('xla', i) for i in range(count)]


def real_devices():
  """The runtime's names of the addressable devices ('CPU:0', 'CUDA:0', ...)."""
  return _XLAC._xla_real_devices([str(d) for d in devices()])


def device_count():
  """Number of addressable XLA devices."""
  return _XLAC._xla_device_count()


def sync(wait=False, reset_scope=True):
  """Compiles and runs the pending graph of the devices, then the step closures
  (xm.mark_step() is the same).

  In a replica, the replica's device (its graph with collectives runs together with the
  other replicas'); otherwise every device. wait=True blocks until the device work is
  done. A sync inside a profiler annotation (xp.Trace) is an error, as in torch_xla
  (the annotation would name ops of two steps), unless reset_scope=False.
  """
  from .core import xla_model
  from .core import _processes
  if reset_scope:
    profiler = sys.modules.get('torch_xla.debug.profiler')
    if profiler is not None:
      profiler._check_no_open_scope()
  closures = xla_model._step_closures()
  closures.wait_async()
  try:
    xla_model._xlac()._xla_sync(xla_model._sync_devices(), wait)
  except RuntimeError as e:
    explained = _processes.explain(e)
    if explained is e:
      raise
    raise explained from e
  closures.run_pending()


def manual_seed(seed, device=None):
  """Seeds the random number generator of `device` (default: the current XLA device)."""
  from .core import xla_model
  xla_model.set_rng_state(seed, device)


def launch(fn, args=(), start_method='spawn', debug_single_process=False):
  """Runs fn(index, *args) once per XLA device of this process, as replicas
  (xmp.spawn with every device); debug_single_process runs one replica."""
  from .distributed import xla_multiprocessing
  return xla_multiprocessing.spawn(fn, args=args,
                                   nprocs=1 if debug_single_process else None,
                                   start_method=start_method)


def _get_stablehlo(tensors):
  """The StableHLO text of the pending graph that computes `tensors`."""
  return _XLAC._get_stablehlo(list(tensors))


from ._compile import compile, step  # noqa: E402,F401
from . import experimental  # noqa: E402,F401  (eager mode; torch.while_loop's XLA kernel)

# XLA_USE_SPMD=1 (torch_xla's switch) turns SPMD mode on at import, as
# torch_xla.runtime.use_spmd() does. The mode is a setting of the core, read when the
# runtime starts: turning it on here starts nothing.
if os.environ.get('XLA_USE_SPMD', '').strip().lower() in ('1', 'true', 'yes', 'on'):
  _XLAC._xla_use_spmd()
