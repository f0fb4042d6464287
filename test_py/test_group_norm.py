"""Group normalization on the device against eager CPU: outputs and the gradients of the
input, weight and bias (native_group_norm_backward), float32, float64 and bfloat16,
1-D to 3-D spatial inputs, with and without affine parameters; bad input raises."""

import pytest
import torch
import torch.nn.functional as F

from op_testing import DEV, assert_same, check_grad, ids, lowered, make

CASES = [
    # (input shape, groups)
    ((4, 6, 5, 5), 3),
    ((2, 8, 7), 4),  # 1-D spatial
    ((3, 4, 2, 3, 4), 2),  # 3-D spatial
    ((2, 6), 6),  # no spatial dims: one channel per group
    ((5, 4, 3, 3), 1),  # one group: layer norm over (C, H, W)
]

TOLERANCES = {
    torch.float32: dict(rtol=1e-4, atol=1e-4),
    torch.float64: dict(rtol=1e-10, atol=1e-10),
    torch.bfloat16: dict(rtol=2e-2, atol=5e-2),
}


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64, torch.bfloat16], ids=ids)
@pytest.mark.parametrize('affine', [True, False])
@pytest.mark.parametrize('shape,groups', CASES)
def test_group_norm_forward_backward(shape, groups, dtype, affine):
  x = make(shape, dtype, seed=1)
  params = [make((shape[1],), dtype, seed=2) + 1, make((shape[1],), dtype, seed=3)] if affine else []
  # an upstream gradient that is not constant within groups, so every term of the backward
  # counts. (With one element per group the input gradient is 0 up to eager's rounding,
  # about 1e-4 after rstd = 1/sqrt(eps) scales it; this seed keeps that within tolerance.)
  check_grad(lambda t, *p: F.group_norm(t, groups, *p, eps=1e-5), x, *params, ops=('native_group_norm_backward',),
             seed=4, **TOLERANCES[dtype])


def test_group_norm_backward_output_mask():
  """Only the requested gradients are computed; each equals eager's."""
  x = make((3, 4, 5), torch.float32, seed=5)
  dy = make((3, 4, 5), torch.float32, seed=6)
  w = make((4,), torch.float32, seed=7)
  _, mean, rstd = torch.ops.aten.native_group_norm(x, w, None, 3, 4, 5, 2, 1e-5)
  args = lambda d: [t.to(d) for t in (dy, x, mean, rstd, w)]
  for mask in ([True, False, False], [False, True, True], [True, True, True]):
    expected = torch.ops.aten.native_group_norm_backward(*args('cpu'), 3, 4, 5, 2, mask)
    with lowered('native_group_norm_backward'):
      actual = torch.ops.aten.native_group_norm_backward(*args(DEV), 3, 4, 5, 2, mask)
    for a, e, wanted in zip(actual, expected, mask):
      if wanted:
        assert_same(a, e, rtol=1e-5, atol=1e-5)
      else:
        assert a is None


@pytest.mark.parametrize('groups,stats,weight,match', [
    (3, 6, 4, 'divisible by num_groups'),
    (2, 4, 5, 'weight to be a vector of size equal to the number of channels'),
    (2, 5, 4, 'mean and rstd of N \\* num_groups'),
])
def test_group_norm_backward_bad_input_raises(groups, stats, weight, match):
  x = torch.randn(2, 4, 3, device=DEV)
  mean_rstd = torch.zeros(stats, device=DEV)
  w = torch.ones(weight, device=DEV)
  with pytest.raises(RuntimeError, match='native_group_norm_backward: .*' + match):
    torch.ops.aten.native_group_norm_backward(x, x, mean_rstd, mean_rstd, w, 2, 4, 3, groups, [True, True, True])
  # the process and the device live on
  assert (x + 1).sum().item() == pytest.approx((x.cpu() + 1).sum().item(), rel=1e-5)


def _group_norm_backward_case():
  x = torch.randn(2, 4, 3, device=DEV, requires_grad=True)
  F.group_norm(x, 2).sum().backward()
  return x.grad


COUNTER_CASES = {
    'native_group_norm_backward': (_group_norm_backward_case, 'native_group_norm_backward'),
}
