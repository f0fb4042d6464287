"""max_unpool2d on the device against eager CPU: the indices of max_pool2d, default and
larger output sizes, float32, bfloat16 and float64 (integers raise, as in eager),
batched and unbatched, the gradient; bad arguments raise."""

import pytest
import torch
import torch.nn.functional as F

from op_testing import DEV, assert_same, check, check_grad, ids, make


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.float64], ids=ids)
@pytest.mark.parametrize('shape,kw,out', [((2, 3, 6, 8), dict(kernel_size=2), None),
                                          ((3, 7, 5), dict(kernel_size=3, stride=2, padding=1), None),
                                          ((2, 2, 7, 7), dict(kernel_size=2), (7, 7))])
def test_max_unpool2d(shape, kw, out, dtype):
  x = make(shape, torch.float32)
  pooled, indices = F.max_pool2d(x, return_indices=True, **kw)
  check(lambda p, i: F.max_unpool2d(p, i, output_size=out, **kw), pooled.to(dtype), indices, ops=('max_unpool2d',))


def test_max_unpool2d_integer_input_raises_like_eager():
  for device in ('cpu', DEV):
    x = torch.ones(1, 1, 2, 2, dtype=torch.int64, device=device)
    with pytest.raises(NotImplementedError, match="\"max_unpool2d\" not implemented for 'Long'"):
      F.max_unpool2d(x, torch.zeros_like(x), 2)


def test_max_unpool2d_gradient():
  pooled, indices = F.max_pool2d(make((2, 3, 6, 6), torch.float32), 2, return_indices=True)
  check_grad(lambda p: F.max_unpool2d(p, indices.to(p.device), 2), pooled, ops=('max_unpool2d',), rtol=0, atol=0)


@pytest.mark.parametrize('call,match', [
    (lambda x, i: torch.ops.aten.max_unpool2d(x, i.int(), [4, 4]), 'should be type int64'),
    (lambda x, i: torch.ops.aten.max_unpool2d(x, i[..., :1], [4, 4]), 'Expected shape of indices'),
    (lambda x, i: torch.ops.aten.max_unpool2d(x[0, 0], i[0, 0], [4, 4]), '3d or 4d Tensor'),
    (lambda x, i: torch.ops.aten.max_unpool2d(x, i, [4]), 'exactly two elements'),
])
def test_max_unpool2d_bad_arguments_raise(call, match):
  x = torch.randn(2, 3, 2, 2, device=DEV)
  i = torch.zeros(2, 3, 2, 2, dtype=torch.int64, device=DEV)
  with pytest.raises(RuntimeError, match='max_unpool2d: .*' + match):
    call(x, i)
  assert_same(x * 2, x.cpu() * 2)


COUNTER_CASES = {
    'max_unpool2d': (lambda: F.max_unpool2d(*F.max_pool2d(torch.randn(1, 1, 4, 4, device=DEV), 2, return_indices=True),
                                            2), 'max_unpool2d'),
}
