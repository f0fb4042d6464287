"""torch_xla.distributed.fsdp: helpers for sharded data parallel training.

`checkpoint_module` (activation checkpointing of a module's forward) is here;
torch_xla.distributed.fsdp.utils also has the patched linear layer.
"""
from .utils import checkpoint_module

__all__ = ['checkpoint_module']
