"""torch.compile(model, backend='openxla'): dynamo's graphs on the XLA device.

PyTorch registers the 'openxla' backend itself (torch/_dynamo/backends/torchxla.py):
AOTAutograd splits each captured graph into a forward and a backward graph of core ATen
ops, and the first call of each asks extract_compiled_graph() here for the function
that runs it. That function runs the FX graph on the XLA tensors it is given, which
records the ops as IR exactly as lazy mode does, and computes the outputs at once: one
compiled executable per graph, found in the same compile caches (in memory and on disk)
by the graph's hash. Code dynamo cannot capture (a graph break) runs between the graphs
in lazy mode, as any other torch_xla code does.

XLA_DYNAMO_SYNC=0 leaves the outputs pending instead, for scripts that end each step with
xm.mark_step() (or MpDeviceLoader): the forward, backward and optimizer graphs then
compile into one, as in lazy mode, which saves writing out the activations the backward
graph reads (the transformer benchmark's step: 282 ms computed per graph, 168 ms left
pending; see README). A script that never marks a step must not set it: its pending
graph would grow with every call. In eager mode the graph's ops are traced all the
same, and its outputs computed as the graph returns.
"""

import os

import torch
import torch.utils._pytree as pytree

import torch_xla
from torch_xla.debug._sync_cause import sync_cause


def _device_outputs(outputs):
  return [t for t in pytree.tree_leaves(outputs) if isinstance(t, torch.Tensor) and t.device.type == 'xla']


def extract_compiled_graph(graph_module, example_args):
  """The function that runs `graph_module` (an FX graph from dynamo/AOTAutograd) on the
  XLA device: called with the graph's arguments, it returns the graph's outputs, computed."""
  devices = {a.device for a in example_args if isinstance(a, torch.Tensor)}
  if any(d.type not in ('xla', 'cpu') for d in devices):
    raise RuntimeError(f"torch.compile(backend='openxla'): the graph's inputs are on {sorted(map(str, devices))}; "
                       'move the model and its inputs to the XLA device')

  sync = os.environ.get('XLA_DYNAMO_SYNC', '1') != '0'

  def run(*args):
    # The graph is one computation: in eager mode too, its ops are traced, not run one
    # by one.
    xlac = torch_xla._XLAC
    eager = xlac._get_use_eager_mode()
    xlac._set_use_eager_mode(False)
    try:
      if sync or eager:
        # Pending inputs are computed first, as their own graph: the FX graph's
        # computation is then the same whatever produced its inputs (compiled once).
        pending = [a for a in args if isinstance(a, torch.Tensor) and a.device.type == 'xla']
        if pending:
          with sync_cause('torch_xla.sync when dynamo processing input graphs'):
            xlac._xla_sync_tensors(pending)
      outputs = graph_module(*args)
      computed = _device_outputs(outputs) if sync or eager else None
      if computed:
        with sync_cause('dynamo is compiling a FX graph to HLO', 'dynamo is executing a compiled program'):
          xlac._xla_sync_tensors(computed)
    finally:
      xlac._set_use_eager_mode(eager)
    return outputs

  return run
