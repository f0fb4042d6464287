"""Optimizers whose step is skipped on the device when the gradients overflowed.

`step(found_inf=t)` takes the overflow flag as a scalar device tensor (what
torch_xla.amp.GradScaler passes them): where it is non-zero the parameters and the
optimizer's state keep their values, by a select in the step's graph rather than a
Python `if`, so the step never waits for the device to say whether it overflowed.
Without found_inf every step is taken. Otherwise they are torch.optim's SGD, Adam and
AdamW, with their state (the step count included) kept on the parameters' device.
"""
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .sgd import SGD  # noqa: F401
