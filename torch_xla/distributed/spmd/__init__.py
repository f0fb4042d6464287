"""torch_xla.distributed.spmd: SPMD sharding of tensors over a device mesh.

After torch_xla.runtime.use_spmd(), the XLA device stands for every device of the run,
and a tensor can be split over them by a partition spec over a logical mesh:

  >>> import torch_xla.runtime as xr
  >>> import torch_xla.distributed.spmd as xs
  >>> xr.use_spmd()
  >>> mesh = xs.Mesh(np.arange(4), (2, 2), ('data', 'model'))
  >>> x = xs.mark_sharding(torch.randn(8, 16, device='xla'), mesh, ('data', None))

The modules: mesh (Mesh, HybridMesh, the global mesh), sharding (partition spec ->
XLA sharding text), hlo_sharding (reading sharding text: ShardingType, each device's
tile), xla_sharded_tensor (XLAShardedTensor, XLAShard), api (mark_sharding and the
functions around it), debugging (text pictures of a sharding), xla_sharding
(torch_xla's module path, the same names).

`xla_patched_nn_linear_forward(m, input)` is the forward that
torch_xla.distributed.fsdp.utils.apply_xla_patch_to_nn_linear gives an nn.Linear: the
linear product by XLAPatchedLinear, whose backward reads the weight parameter itself.
"""
from torch_xla.distributed.fsdp.utils import XLAPatchedLinear

from .hlo_sharding import ShardingType, sharding_type_from_text
from .mesh import HybridMesh, Mesh, MeshError, get_1d_mesh, get_global_mesh, set_global_mesh
from .sharding import PartitionSpec
from .xla_sharded_tensor import XLAShard, XLAShardedTensor
from .api import (MarkShardingFunction, _mark_manual_sharding, annotate_custom_sharding, ShardingSpec, apply_backward_optimization_barrier, clear_sharding,
                  disable_manual_sharding,
                  enable_manual_sharding, get_sharding_type, mark_sharding, mark_sharding_with_gradients,
                  unwrap_sharded_tensor, wrap_as_sharded_tensor, wrap_if_sharded)

__all__ = [
    'Mesh', 'HybridMesh', 'get_1d_mesh', 'set_global_mesh', 'get_global_mesh', 'PartitionSpec', 'ShardingType',
    'ShardingSpec', 'sharding_type_from_text', 'get_sharding_type', 'XLAShard', 'XLAShardedTensor',
    'mark_sharding', 'mark_sharding_with_gradients', 'MarkShardingFunction', 'clear_sharding', 'wrap_if_sharded',
    'wrap_as_sharded_tensor', 'unwrap_sharded_tensor', 'enable_manual_sharding', 'disable_manual_sharding',
    'XLAPatchedLinear', 'xla_patched_nn_linear_forward', 'apply_backward_optimization_barrier',
    'annotate_custom_sharding'
]


def xla_patched_nn_linear_forward(m, input):
  """The forward of the nn.Linear `m` on `input` through XLAPatchedLinear (for
  apply_xla_patch_to_nn_linear): the same values and gradients as m(input)."""
  return XLAPatchedLinear.apply(input, m.weight, m.bias)
