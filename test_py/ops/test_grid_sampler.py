"""grid_sample (2-D and 3-D, every mode and padding mode) on the XLA device against eager
CPU: values, input gradients, no CPU fallback, and errors that name the op."""

import pytest
import torch
import torch.nn.functional as F

from testing.op_testing import DEV, check_grad, make
from testing.counter_cases import randn_input_grad_case as _input_grad_case


# ---------------------------------------------------------------------------------
# grid sampling

def _grid(shape, seed):
  # a little beyond [-1, 1]: some taps fall outside the input
  return torch.rand(shape, generator=torch.Generator().manual_seed(seed)) * 2.4 - 1.2


@pytest.mark.parametrize('align_corners', [False, True], ids=str)
@pytest.mark.parametrize('padding_mode', ['zeros', 'border', 'reflection'])
@pytest.mark.parametrize('mode', ['bilinear', 'nearest', 'bicubic'])
def test_grid_sample_2d(mode, padding_mode, align_corners):
  fn = lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
  x, g = make((2, 3, 5, 6), torch.float32), _grid((2, 4, 3, 2), 5)
  check_grad(fn, x, g, ops=('grid_sampler_2d', 'grid_sampler_2d_backward'), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('align_corners', [False, True], ids=str)
@pytest.mark.parametrize('padding_mode', ['zeros', 'border', 'reflection'])
@pytest.mark.parametrize('mode', ['bilinear', 'nearest'])
def test_grid_sample_3d(mode, padding_mode, align_corners):
  fn = lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
  x, g = make((2, 2, 3, 4, 5), torch.float32), _grid((2, 3, 2, 4, 3), 6)
  check_grad(fn, x, g, ops=('grid_sampler_3d', 'grid_sampler_3d_backward'), rtol=1e-4, atol=1e-4)


def test_grid_sample_bad_grid_raises():
  x = torch.randn(1, 1, 4, 4, device=DEV)
  with pytest.raises(RuntimeError, match='grid_sampler_2d: .*size 2 in last dimension'):
    torch.ops.aten.grid_sampler_2d(x, torch.zeros(1, 3, 3, 3, device=DEV), 0, 0, False)


# ---- counter cases ------------------------------------------------------------

COUNTER_CASES = {
    'grid_sampler_2d': (lambda: F.grid_sample(torch.randn(1, 2, 4, 4, device=DEV), torch.rand(1, 3, 3, 2, device=DEV),
                                              align_corners=False), 'grid_sampler_2d'),
    'grid_sampler_2d_backward': (_input_grad_case(lambda t: F.grid_sample(t, torch.rand(1, 3, 3, 2, device=DEV),
                                                                    align_corners=False), (1, 2, 4, 4)),
                                 'grid_sampler_2d_backward'),
    'grid_sampler_3d': (lambda: F.grid_sample(torch.randn(1, 2, 3, 4, 4, device=DEV),
                                              torch.rand(1, 2, 3, 3, 3, device=DEV), align_corners=False),
                        'grid_sampler_3d'),
    'grid_sampler_3d_backward': (_input_grad_case(lambda t: F.grid_sample(t, torch.rand(1, 2, 3, 3, 3, device=DEV),
                                                                    align_corners=False), (1, 2, 3, 4, 4)),
                                 'grid_sampler_3d_backward'),
}
