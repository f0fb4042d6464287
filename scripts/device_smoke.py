"""A first look at the XLA device on a GPU: which plugin and device, a float32 product,
a few SGD steps of a small network and recurrent layers (LSTM, GRU), each against
PyTorch's own CUDA, and the device's memory. The last line says 'ok' or what differed."""
import time

import torch
import torch.nn as nn

import torch_xla
import torch_xla.core.xla_model as xm
from torch_xla import _XLAC

start = time.perf_counter()
device = xm.xla_device()
print('device', device, 'kind', _XLAC._xla_device_kind(), 'count', _XLAC._xla_device_count())
print('client ready in %.2f s' % (time.perf_counter() - start))
problems = []

torch.manual_seed(0)
a, b = torch.randn(512, 256), torch.randn(256, 384)
start = time.perf_counter()
product = (a.to(device) @ b.to(device)).cpu()
print('first product (compile included) %.2f s' % (time.perf_counter() - start))
reference = (a.double() @ b.double()).float()
error = (product - reference).abs().max().item()
print('float32 product: max error against float64 %.3g (CUDA: %.3g)' %
      (error, ((a.cuda() @ b.cuda()).cpu() - reference).abs().max().item()))
if error > 1e-3:
  problems.append('product error %.3g' % error)


def train(dev, steps=5):
  torch.manual_seed(0)
  model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(),
                        nn.Linear(8 * 16 * 16, 10)).to(dev)
  opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
  x, y = torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,))
  losses = []
  for _ in range(steps):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
    loss.backward()
    opt.step()
    if dev != 'cuda':
      xm.mark_step()
    losses.append(loss.item())
  return losses


torch.backends.cudnn.allow_tf32 = False
xla_losses, cuda_losses = train(device), train('cuda')
print('losses XLA ', ['%.5f' % v for v in xla_losses])
print('losses CUDA', ['%.5f' % v for v in cuda_losses])
if max(abs(u - v) for u, v in zip(xla_losses, cuda_losses)) > 1e-3:
  problems.append('training losses differ')


def recurrent(dev, cell):
  """Output and input gradient of a 2-layer bidirectional recurrent layer: on the XLA
  device a loop over the time steps, on CUDA cuDNN's layer."""
  torch.manual_seed(0)
  layer = getattr(nn, cell)(16, 32, num_layers=2, bidirectional=True).to(dev)
  x = torch.randn(12, 4, 16).to(dev).requires_grad_()
  out, _ = layer(x)
  out.square().sum().backward()
  if dev != 'cuda':
    xm.mark_step()
  return out.cpu(), x.grad.cpu()


for cell in ('LSTM', 'GRU'):
  start = time.perf_counter()
  xla_out, xla_grad = recurrent(device, cell)
  cuda_out, cuda_grad = recurrent('cuda', cell)
  difference = max((xla_out - cuda_out).abs().max().item(), (xla_grad - cuda_grad).abs().max().item())
  print('%s: max difference from cuDNN %.3g (%.2f s)' % (cell, difference, time.perf_counter() - start))
  if difference > 1e-3:
    problems.append('%s differs from cuDNN by %.3g' % (cell, difference))
print('memory', xm.get_memory_info(device))
print('ok' if not problems else 'FAILED: ' + '; '.join(problems))
