"""torch_xla.distributed.fsdp: sharded data parallel training over the replicas.

`XlaFullyShardedDataParallel` (classic FSDP: each replica keeps 1/N of the parameters,
gathered for the forward and backward, the gradients reduce-scattered), the
consolidation of its per-replica checkpoints (`consolidate_sharded_model_checkpoints`,
`consolidate_sharded_state_dicts`) and `checkpoint_module` (activation checkpointing of a
module's forward); torch_xla.distributed.fsdp.wrap has the auto-wrap policies and
torch_xla.distributed.fsdp.utils the patched linear layer.
"""
from .state_dict_utils import (consolidate_sharded_model_checkpoints,
                               consolidate_sharded_state_dicts)
from .utils import checkpoint_module
from .xla_fully_sharded_data_parallel import XlaFullyShardedDataParallel

__all__ = [
    'XlaFullyShardedDataParallel',
    'consolidate_sharded_model_checkpoints',
    'consolidate_sharded_state_dicts',
    'checkpoint_module',
]
