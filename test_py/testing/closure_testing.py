"""An autograd function whose backward queues a step closure, for tests of closures
queued on PyTorch's autograd thread (which runs the backward of each device)."""
import threading

import torch

import torch_xla.core.xla_model as xm


class ClosureInBackward(torch.autograd.Function):
  """The identity. Its backward appends ('queued', whether it runs on the main thread) to
  `seen` and queues a step closure that appends ('ran', the gradient's values)."""

  @staticmethod
  def forward(ctx, x, seen):
    ctx.seen = seen
    return x * 1

  @staticmethod
  def backward(ctx, grad):
    ctx.seen.append(('queued', threading.current_thread() is threading.main_thread()))
    xm.add_step_closure(lambda g: ctx.seen.append(('ran', g.cpu().tolist())), args=(grad,))
    return grad, None
