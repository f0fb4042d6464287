"""Checkpoints of SPMD-sharded state through torch.distributed.checkpoint (DCP).

SPMDSavePlanner and SPMDLoadPlanner are DCP planners for state_dicts holding XLA
tensors: a sharded tensor is written as its distinct tiles and loaded into whatever
sharding the target has now (another mesh, another spec, none). CheckpointManager saves
a run by step under one path (local or fsspec), in the background if asked, and keeps
the newest. prime_optimizer creates an optimizer's state so a checkpoint can load into
it. See docs/spmd.md.
"""
from .manager import CheckpointManager
from .planners import SPMDLoadPlanner, SPMDSavePlanner
from .util import prime_optimizer

__all__ = [
    'CheckpointManager',
    'SPMDSavePlanner',
    'SPMDLoadPlanner',
    'prime_optimizer',
]
