"""Floating-point buffers whose last dimension is short (convolution weights: 3x3, 7x7)
are one-dimensional on the device (runtime/device_dims.h), and element-wise updates of
them are computed in that form (lowering/flat_elementwise.h). The tensors keep their
shapes: every value must match eager's, whatever reads the buffer."""
import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

DEV = xm.xla_device()


def _conv_pair():
  torch.manual_seed(0)
  model = torch.nn.Conv2d(32, 64, 3, bias=False)  # weight 64x32x3x3: 18432 elements
  ref = torch.nn.Conv2d(32, 64, 3, bias=False)
  ref.load_state_dict(model.state_dict())
  model.to(DEV)
  return ((model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)),
          (ref, torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)))


def test_conv_weight_updates_are_computed_flat_and_match_eager():
  pair = _conv_pair()
  (model, opt), (ref, ref_opt) = pair
  x = torch.randn(4, 32, 8, 8)
  for step in range(3):
    for (m, o), inp in zip(pair, (x.to(DEV), x)):
      o.zero_grad()
      m(inp).pow(2).mean().backward()
      o.step()
    if step == 2:
      # The pending update of the weight: its old value and momentum are parameters of
      # the device form, and its arithmetic runs on that form.
      module = torch_xla._get_stablehlo([model.weight, opt.state[model.weight]['momentum_buffer']])
      assert module.count('tensor<18432xf32>') >= 6, module
      assert '"stablehlo.add"' in module
      assert any('"stablehlo.add"' in line and line.rstrip().endswith('-> tensor<18432xf32>')
                 for line in module.splitlines()), module
    xm.mark_step()
  torch.testing.assert_close(model.weight.cpu(), ref.weight, rtol=1e-5, atol=1e-6)
  torch.testing.assert_close(opt.state[model.weight]['momentum_buffer'].cpu(),
                             ref_opt.state[ref.weight]['momentum_buffer'], rtol=1e-5, atol=1e-6)
  assert model.weight.shape == (64, 32, 3, 3)


def test_flat_buffers_read_back_in_every_form():
  for dtype, shape in ((torch.float32, (64, 64, 3, 3)), (torch.bfloat16, (128, 40, 7)),
                       (torch.float64, (4096, 1)), (torch.float32, (8, 512, 2, 2))):
    x = torch.randn(shape).to(dtype)
    d = x.to(DEV)
    xm.mark_step()
    assert d.shape == x.shape and d.dtype == dtype
    torch.testing.assert_close(d.cpu(), x, rtol=0, atol=0)
    # Views and reductions over the tensor's own dimensions.
    torch.testing.assert_close(d[1:, ..., -1].cpu(), x[1:, ..., -1], rtol=0, atol=0)
    torch.testing.assert_close(d.transpose(0, -1).cpu(), x.transpose(0, -1), rtol=0, atol=0)
    tol = 1e-2 if dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(d.float().sum(-1).cpu(), x.float().sum(-1), rtol=tol, atol=tol)


def test_updates_mixing_flat_buffers_with_broadcasts_and_computed_values():
  shape = (64, 64, 3, 3)
  torch.manual_seed(1)
  w, m, row = torch.randn(shape), torch.randn(shape), torch.randn(3)
  dw, dm = w.to(DEV), m.to(DEV)
  xm.mark_step()
  for _ in range(2):
    for ww, mm, r in ((dw, dm, row.to(DEV)), (w, m, row)):
      # A broadcast of a non-scalar (the row), a value computed in the tensor's shape
      # (exp), a scalar, a comparison and a conversion, updated in place.
      mm.mul_(0.5).add_(ww.exp().clamp(max=4.0) * r)
      ww.sub_(torch.where(mm > 0, mm, mm * 0.1).to(torch.bfloat16).float() * 0.01)
    xm.mark_step()
  # XLA's exp may differ from eager's in the last bit, which can move a bfloat16
  # rounding by one step (2^-8 relative, times 0.01).
  torch.testing.assert_close(dm.cpu(), m, rtol=1e-4, atol=2e-4)
  torch.testing.assert_close(dw.cpu(), w, rtol=1e-4, atol=2e-4)


def test_flat_buffers_are_donated_to_their_updates():
  w = torch.ones(64, 64, 3, 3, device=DEV)
  xm.mark_step()
  before = met.counter_value('DonatedToUpdates') or 0
  for _ in range(3):
    w.mul_(0.5).add_(1.0)
    xm.mark_step()
  assert (met.counter_value('DonatedToUpdates') or 0) - before == 3
  torch.testing.assert_close(w.cpu(), torch.full((64, 64, 3, 3), 1.875))


def test_small_and_integer_tensors_keep_their_dims_on_the_device():
  # Below 4096 elements, or integers: held in their own dims; still exact.
  for x in (torch.randn(4, 3), torch.arange(3 * 4096).reshape(4096, 3)):
    d = x.to(DEV) * 2
    xm.mark_step()
    torch.testing.assert_close(d.cpu(), x * 2)
    module = torch_xla._get_stablehlo([d + 1])
    assert 'tensor<%dx%d' % tuple(x.shape) in module


def test_convolution_reads_a_flat_weight_and_its_gradient_updates_it():
  torch.manual_seed(2)
  x, w = torch.randn(2, 16, 10, 10), torch.randn(32, 16, 3, 3)  # weight: 4608 elements
  dw = w.to(DEV).requires_grad_()
  dx = x.to(DEV)
  xm.mark_step()
  y = F.conv2d(dx, dw, padding=1)
  y.sum().backward()
  with torch.no_grad():
    dw -= 0.1 * dw.grad
  xm.mark_step()
  ew = w.clone().requires_grad_()
  F.conv2d(x, ew, padding=1).sum().backward()
  torch.testing.assert_close(y.detach().cpu(), F.conv2d(x, w, padding=1), rtol=1e-4, atol=1e-4)
  torch.testing.assert_close(dw.detach().cpu(), w - 0.1 * ew.grad, rtol=1e-4, atol=1e-4)
