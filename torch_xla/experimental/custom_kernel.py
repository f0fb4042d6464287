"""torch_xla.experimental.custom_kernel: kernels beyond PyTorch's ops.

`repeat_with_fixed_output_size` repeats elements into an output whose length is fixed
ahead (XLA needs static shapes, where torch.repeat_interleave's length depends on the
values of `repeats`), as mixture-of-experts routing does.

torch_xla's Pallas kernels (flash_attention, paged_attention, gmm and the others) are
written for TPUs; they are not provided here, and naming one raises NotImplementedError.
"""

import torch

_PALLAS_KERNELS = frozenset({
    'flash_attention', 'paged_attention', 'ragged_paged_attention', 'multi_queries_paged_attention', 'gmm', 'tgmm',
    'gmm_backward', 'make_kernel_from_pallas', 'trace_pallas', 'jax_import_guard', 'FlashAttention',
    'non_xla_attetion', 'non_xla_ragged_paged_attention', 'ragged_paged_attention_reference',
    'quantized_matmul_int8', 'fa_custom_forward', 'fa_custom_backward'
})


def repeat_with_fixed_output_size(input: torch.Tensor, repeats: torch.Tensor, total_repeat_length: int):
  """torch.repeat_interleave(input, repeats) with `total_repeat_length` elements: cut
  there when the repeats add up to more, filled with input's last element when they add
  up to less. 1-D `input` and `repeats` of the same length; static shapes throughout (no
  graph break, no value read on the host)."""
  if input.dim() != 1 or repeats.dim() != 1:
    raise ValueError(f'repeat_with_fixed_output_size: expected 1-D input and repeats, got shapes '
                     f'{tuple(input.shape)} and {tuple(repeats.shape)}')
  if input.shape[0] != repeats.shape[0]:
    raise ValueError(f'repeat_with_fixed_output_size: input has {input.shape[0]} elements but repeats has '
                     f'{repeats.shape[0]}')
  if input.shape[0] == 0:
    raise ValueError('repeat_with_fixed_output_size: input is empty')
  if total_repeat_length < 0:
    raise ValueError(f'repeat_with_fixed_output_size: total_repeat_length must be >= 0, got {total_repeat_length}')
  # Output position j takes the element whose block of repeats covers it: the number of
  # blocks that end at or before j (cumulative sums of the repeats are the blocks' ends).
  ends = torch.cumsum(repeats.to(torch.int64), dim=0)
  positions = torch.arange(total_repeat_length, device=input.device, dtype=torch.int64)
  index = (positions.unsqueeze(1) >= ends.unsqueeze(0)).to(torch.int64).sum(dim=1)
  index = torch.clamp(index, max=input.shape[0] - 1)
  return torch.index_select(input, 0, index)


def __getattr__(name):
  if name in _PALLAS_KERNELS:
    raise NotImplementedError(f'torch_xla.experimental.custom_kernel.{name} is a Pallas kernel written for TPUs, '
                              'which this torch_xla does not provide; use the equivalent PyTorch ops (for attention, '
                              'torch.nn.functional.scaled_dot_product_attention), which run on every XLA device')
  raise AttributeError(f"module 'torch_xla.experimental.custom_kernel' has no attribute {name!r}")
