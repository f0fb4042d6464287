"""Execution modes and device loops: eager mode (eager.py), while_loop and fori_loop
(fori_loop.py), scan (scan.py) and scan_layers (scan_layers.py); checkpoints of SPMD
state through torch.distributed.checkpoint (distributed_checkpoint/)."""
from .eager import eager_mode, is_eager_mode, eager_mode_context
# Registers torch.while_loop's kernel for XLA tensors.
from . import fori_loop as _fori_loop  # noqa: F401

__all__ = [
    "eager_mode",
    "is_eager_mode",
    "eager_mode_context",
]
