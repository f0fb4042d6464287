"""scan_layers: layers of one structure applied in sequence as one device loop.

`scan_layers(layers, x)` computes `nn.Sequential(*layers)(x)` with the layers'
parameters stacked along a new leading dimension and one layer traced once, applied by
scan over the stacks: the graph and its compile time do not grow with the number of
layers. Gradients reach each layer's own parameters (through the stacking).
"""
import copy

import torch
from torch.utils._pytree import tree_flatten

from torch_xla.experimental.scan import scan


def scan_layers(layers, input_data, partition_fn=None, is_layer_pure=False):
  """Runs each of `layers` in turn, starting from `input_data`; returns the last
  layer's output. The layers must have the same structure (parameter and buffer names
  and shapes) and compute the same function of their parameters. `partition_fn` and
  `is_layer_pure` are accepted for compatibility (see scan)."""
  layers = list(layers)
  if not layers:
    return input_data
  params = [dict(layer.named_parameters()) for layer in layers]
  buffers = [dict(layer.named_buffers()) for layer in layers]
  for kind, dicts in (('parameters', params), ('buffers', buffers)):
    first = {name: (t.shape, t.dtype) for name, t in dicts[0].items()}
    for i, d in enumerate(dicts[1:], start=1):
      if {name: (t.shape, t.dtype) for name, t in d.items()} != first:
        raise ValueError(f'scan_layers: layer {i} has other {kind} than layer 0 '
                         f'({sorted(d)} against {sorted(first)}, or other shapes)')
  stacked = ({name: torch.stack([d[name] for d in params]) for name in params[0]},
             {name: torch.stack([d[name] for d in buffers]) for name in buffers[0]})
  # A copy of the first layer is the template the stacked parameters are applied to; the
  # layers' own parameters stay out of the traced function.
  template = copy.deepcopy(layers[0])

  def one_layer(carry, params_and_buffers):
    weights, bufs = params_and_buffers
    return torch.func.functional_call(template, {**weights, **bufs}, (carry,), strict=True), None

  final, _ = scan(one_layer, input_data, stacked, partition_fn=partition_fn, is_fn_pure=is_layer_pure)
  return final
