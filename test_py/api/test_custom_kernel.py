"""torch_xla.experimental.custom_kernel: repeat_with_fixed_output_size against
torch.repeat_interleave (cut, filled with the last element, integer elements), with no
op on the CPU fallback; bad input; the TPU-only Pallas kernels raise clearly."""

import pytest
import torch

import torch_xla
import torch_xla.debug.metrics as met
from torch_xla.experimental import custom_kernel
from torch_xla.experimental.custom_kernel import repeat_with_fixed_output_size

DEV = torch_xla.device()


@pytest.mark.parametrize('values,repeats,length', [
    (torch.arange(10.0) * 1.5, [0, 1, 2, 0, 4, 0, 6, 7, 8, 9], 20),  # cut at 20 of 37
    (torch.arange(10.0) - 3, [0, 5, 2, 0, 4, 9, 6, 7, 8, 0], 100),  # 41 repeats, then the last element
    (torch.arange(8, dtype=torch.int32), [3, 6, 2, 14, 27, 47, 8, 28], 135),  # exactly
    (torch.tensor([2.5, -1.0]), [0, 0], 3),  # no repeats at all
], ids=['cut', 'filled', 'exact', 'empty'])
def test_repeat_with_fixed_output_size_matches_repeat_interleave(values, repeats, length):
  repeats = torch.tensor(repeats)
  met.clear_all()
  out = repeat_with_fixed_output_size(values.to(DEV), repeats.to(DEV), length)
  assert met.executed_fallback_ops() == []
  base = torch.repeat_interleave(values, repeats)[:length]
  expected = torch.cat((base, values[-1].repeat(length - base.shape[0])))
  assert out.shape == (length,) and out.dtype == values.dtype
  assert torch.equal(out.cpu(), expected)


def test_repeat_with_fixed_output_size_bad_input_raises():
  with pytest.raises(ValueError, match=r'1-D input and repeats, got shapes \(2, 2\) and \(2,\)'):
    repeat_with_fixed_output_size(torch.ones(2, 2, device=DEV), torch.ones(2, dtype=torch.int64, device=DEV), 4)
  with pytest.raises(ValueError, match='3 elements but repeats has 2'):
    repeat_with_fixed_output_size(torch.ones(3, device=DEV), torch.ones(2, dtype=torch.int64, device=DEV), 4)


def test_pallas_kernels_raise_not_implemented():
  with pytest.raises(NotImplementedError, match='flash_attention is a Pallas kernel written for TPUs'):
    custom_kernel.flash_attention
  with pytest.raises(AttributeError):
    custom_kernel.no_such_kernel
