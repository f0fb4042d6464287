"""pixel_shuffle / pixel_unshuffle (any dtype, with batch dims, and their gradients) and
channel_shuffle on the device against eager CPU; bad arguments raise."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, FLOATS, assert_same, check, check_grad, ids, make


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


# ---------------------------------------------------------------------------------
# channel_shuffle

@pytest.mark.parametrize('dtype', FLOATS + [torch.int64], ids=ids)
@pytest.mark.parametrize('shape,groups', [((2, 6, 3, 3), 3), ((1, 4, 5), 2), ((2, 8, 2, 2, 2), 4)], ids=str)
def test_channel_shuffle(shape, groups, dtype):
  check(lambda t: F.channel_shuffle(t, groups), make(shape, dtype), ops=('channel_shuffle',))
  if dtype.is_floating_point:
    check_grad(lambda t: F.channel_shuffle(t, groups), make(shape, dtype), ops=('channel_shuffle',))


def test_channel_shuffle_bad_groups_raise():
  x = torch.randn(1, 6, 2, device=DEV)
  with pytest.raises(RuntimeError, match='divisible by groups'):
    F.channel_shuffle(x, 4)


# ---- counter cases ------------------------------------------------------------


COUNTER_CASES = {
    'pixel_shuffle': (lambda: F.pixel_shuffle(torch.randn(1, 4, 2, 2, device=DEV), 2), 'pixel_shuffle'),
    'pixel_unshuffle': (lambda: F.pixel_unshuffle(torch.randn(1, 1, 4, 4, device=DEV), 2), 'pixel_unshuffle'),
    'channel_shuffle': (lambda: F.channel_shuffle(torch.randn(1, 4, 2, 2, device=DEV), 2), 'channel_shuffle'),
}
