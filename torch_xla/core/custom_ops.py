"""Custom ops (torch.library.custom_op) on XLA tensors, run under functionalization.

A custom op's Python implementation is registered for CompositeExplicitAutograd, so on
an XLA tensor the dispatcher runs it below functionalization, on the raw device tensors.
There a view (narrow, select, an out= argument that is a view) is a new value, not an
alias: writes through it are lost. torch.nn's chunked linear_cross_entropy fills its
per-sample loss with `out.narrow(...).copy_(chunk)` and returned zeros this way.
Registering, for the XLA key, the same implementation run under
torch.func.functionalize makes its views and in-place writes functional again, as they
are for ordinary code on XLA tensors.
"""

import importlib

import torch
from torch._library import custom_ops

# Namespaces whose custom ops are functionalized at import: torch.nn's own, defined by
# modules that torch imports lazily (imported here first). Other libraries' ops can be
# passed to functionalize_custom_op.
NAMESPACES = ('torch_nn',)
MODULES = ('torch.nn.modules.linear_cross_entropy',)


def functionalize_custom_op(opdef):
  """Registers for XLA tensors opdef's implementation run under functionalization
  (unless it already has an XLA kernel)."""
  if 'xla' in opdef._backend_fns or opdef._init_fn is None:
    return
  impl = opdef._init_fn

  def xla_kernel(*args, **kwargs):
    return torch.func.functionalize(impl)(*args, **kwargs)

  opdef.register_kernel('xla')(xla_kernel)


def functionalize_namespaces(namespaces=NAMESPACES, modules=MODULES):
  for module in modules:
    try:
      importlib.import_module(module)
    except ImportError:  # an older torch without it
      pass
  for name, opdef in list(custom_ops.OPDEFS.items()):
    if name.split('::')[0] in namespaces:
      functionalize_custom_op(opdef)
