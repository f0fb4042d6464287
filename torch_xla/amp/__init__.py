"""Automatic mixed precision on XLA devices, as in torch_xla.

`autocast` runs the ops of a region in bfloat16 where PyTorch's op lists allow it;
`GradScaler` scales the loss and unscales the gradients, skipping the steps whose
gradients overflowed; the optimizers of `syncfree` take that decision on the device, so
that a step never waits for it.
"""
from . import syncfree  # noqa: F401
from .autocast_mode import autocast  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
