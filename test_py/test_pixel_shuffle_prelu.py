"""pixel_shuffle / pixel_unshuffle (any dtype, with batch dims, and their gradients) and
PReLU (one weight or one per channel, f32/f64/bf16, input and weight gradients) on the
device against eager CPU; bad arguments raise."""

import pytest
import torch
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from op_testing import DEV, assert_same, check, check_grad, ids, lowered, make

SHUFFLE_CASES = [
    # (input shape of pixel_shuffle, factor)
    ((2, 8, 3, 5), 2),
    ((18, 2, 3), 3),  # no batch dim
    ((2, 3, 4, 2, 2), 2),  # two batch dims
    ((1, 3, 2, 2), 1),
]


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=ids)
@pytest.mark.parametrize('shape,r', SHUFFLE_CASES)
def test_pixel_shuffle_and_unshuffle(shape, r, dtype):
  x = make(shape, dtype)
  y = check(lambda t: F.pixel_shuffle(t, r), x, ops=('pixel_shuffle',))
  check(lambda t: F.pixel_unshuffle(t, r), y.cpu(), ops=('pixel_unshuffle',))


def test_pixel_shuffle_gradient():
  check_grad(lambda t: F.pixel_shuffle(t, 2), make((2, 8, 3, 4), torch.float32), ops=('pixel_shuffle',), rtol=0,
             atol=0)


@pytest.mark.parametrize('call,match', [
    (lambda x: F.pixel_shuffle(x[0, 0], 2), 'at least 3 dimensions'),
    (lambda x: F.pixel_shuffle(x, 0), 'positive upscale_factor'),
    (lambda x: F.pixel_shuffle(x, 3), "'channel' dimension to be divisible by the square of upscale_factor"),
    (lambda x: F.pixel_unshuffle(x, 4), 'height to be divisible by downscale_factor'),
    (lambda x: F.pixel_unshuffle(x[..., :5], 2), 'width to be divisible by downscale_factor'),
])
def test_pixel_shuffle_bad_arguments_raise(call, match):
  x = torch.randn(2, 4, 6, 6, device=DEV)
  with pytest.raises(RuntimeError, match=match):
    call(x)
  assert_same(x * 2, x.cpu() * 2)


PRELU_TOL = {
    torch.float32: dict(rtol=1e-6, atol=1e-6),
    torch.float64: dict(rtol=1e-12, atol=1e-12),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
}


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('shape,channels', [((3, 4, 5, 5), 4), ((3, 4, 5), 1), ((6, 4), 4), ((7,), 1)])
def test_prelu_forward_backward(shape, channels, dtype):
  x = make(shape, dtype, seed=1)
  w = (make((channels,), dtype, seed=2) * 0.5)
  g = make(shape, dtype, seed=3)
  results = {}
  for device in ('cpu', DEV):
    xs = x.to(device).detach().requires_grad_(True)
    ws = w.to(device).detach().requires_grad_(True)
    if device == 'cpu':
      out = F.prelu(xs, ws)
      out.backward(g)
    else:
      with lowered('_prelu_kernel', '_prelu_kernel_backward'):
        out = F.prelu(xs, ws)
        out.backward(g.to(device))
        xm.mark_step()
    results[str(device)] = (out, xs.grad, ws.grad)
  for a, e in zip(results[str(DEV)], results['cpu']):
    # the weight gradient sums many products: bf16 rounds it coarser
    t = dict(PRELU_TOL[dtype])
    if dtype == torch.bfloat16 and e.shape == w.shape:
      t = dict(rtol=5e-2, atol=5e-2)
    assert_same(a, e, **t)


def test_prelu_integer_input_raises():
  x = torch.ones(3, dtype=torch.int64, device=DEV)
  with pytest.raises(RuntimeError, match='prelu: expected a floating point input and weight'):
    torch.ops.aten._prelu_kernel(x, x)


COUNTER_CASES = {
    'pixel_shuffle': (lambda: F.pixel_shuffle(torch.randn(1, 4, 2, 2, device=DEV), 2), 'pixel_shuffle'),
    'pixel_unshuffle': (lambda: F.pixel_unshuffle(torch.randn(1, 1, 4, 4, device=DEV), 2), 'pixel_unshuffle'),
    '_prelu_kernel': (lambda: F.prelu(torch.randn(2, 3, device=DEV), torch.rand(3, device=DEV)), '_prelu_kernel'),
    '_prelu_kernel_backward': (lambda: torch.ops.aten._prelu_kernel_backward(
        torch.randn(2, 3, device=DEV), torch.randn(2, 3, device=DEV), torch.rand(3, device=DEV)),
                               '_prelu_kernel_backward'),
}
