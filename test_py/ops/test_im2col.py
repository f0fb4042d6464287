"""F.unfold (im2col) and F.fold (col2im) on the device against eager CPU: kernel sizes,
strides, padding and dilation, batched, unbatched and empty batches, float32, bfloat16,
float64 and bool (integers raise, as in eager); each one's gradient (the other); bad
geometry raises."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, assert_same, check, check_grad, ids, make


GEOMETRIES = [
    # (image size, unfold arguments)
    ((6, 7), dict(kernel_size=3)),
    ((8, 8), dict(kernel_size=2, stride=2)),
    ((7, 9), dict(kernel_size=(3, 2), stride=(2, 1), padding=1)),
    ((9, 9), dict(kernel_size=3, dilation=2, padding=2, stride=2)),
    ((5, 5), dict(kernel_size=1)),
    ((6, 6), dict(kernel_size=2, stride=3)),  # stride > kernel: pixels in no block
]


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.float64], ids=ids)
@pytest.mark.parametrize('size,kw', GEOMETRIES)
def test_unfold_and_fold(size, kw, dtype):
  for batch in ((2, 3), (3,)):  # batched and unbatched
    x = make(batch + size, dtype)
    cols = check(lambda t: F.unfold(t, **kw), x, ops=('im2col',))
    # fold sums the overlapping blocks back: compare with eager on the same columns
    check(lambda c: F.fold(c, size, **kw), cols.cpu(), ops=('col2im',))


def test_unfold_fold_bool():
  cols = check(lambda t: F.unfold(t, 2, padding=1), make((2, 2, 4, 5), torch.bool), ops=('im2col',))
  check(lambda c: F.fold(c, (4, 5), 2, padding=1), cols.cpu(), ops=('col2im',))


def test_unfold_fold_integer_input_raises_like_eager():
  for device in ('cpu', DEV):
    with pytest.raises(NotImplementedError, match="im2col.* not implemented for 'Long'"):
      F.unfold(torch.ones(1, 1, 4, 4, dtype=torch.int64, device=device), 2)
    with pytest.raises(NotImplementedError, match="col2im.* not implemented for 'Long'"):
      F.fold(torch.ones(1, 4, 9, dtype=torch.int64, device=device), (4, 4), 2)


@pytest.mark.parametrize('size,kw', GEOMETRIES[:4])
def test_unfold_fold_gradients(size, kw):
  """Each one's backward runs the other."""
  x = make((2, 3) + size, torch.float32)
  check_grad(lambda t: F.unfold(t, **kw), x, ops=('im2col', 'col2im'), rtol=1e-5, atol=1e-5)
  check_grad(lambda c: F.fold(c, size, **kw), F.unfold(x, **kw), ops=('col2im', 'im2col'), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('call,match', [
    (lambda x: F.unfold(x, kernel_size=7), 'im2col: Given input with spatial size \\(5, 6\\).*at least one'),
    (lambda x: F.unfold(x, kernel_size=2, stride=0), 'im2col: stride should be greater than zero'),
    (lambda x: F.fold(F.unfold(x, 2), (5, 6), kernel_size=3), "col2im: Expected size of input's dimension 1 to be "
     'divisible by the product of kernel_size'),
    (lambda x: F.fold(F.unfold(x, 2), (6, 6), kernel_size=2), 'col2im: .*calculated number of sliding blocks'),
])
def test_unfold_fold_bad_geometry_raises(call, match):
  x = torch.randn(2, 3, 5, 6, device=DEV)
  with pytest.raises(RuntimeError, match=match):
    call(x)
  assert_same(x * 2, x.cpu() * 2)


def test_unfold_empty_batch():
  x = torch.randn(0, 2, 5, 5)
  out = check(lambda t: F.unfold(t, 3, padding=1), x, ops=('im2col',))
  assert out.shape == (0, 18, 25)


# ---- counter cases ------------------------------------------------------------


COUNTER_CASES = {
    'im2col': (lambda: F.unfold(torch.randn(1, 2, 4, 4, device=DEV), 2), 'im2col'),
    'col2im': (lambda: F.fold(torch.randn(1, 8, 9, device=DEV), (4, 4), 2), 'col2im'),
}
