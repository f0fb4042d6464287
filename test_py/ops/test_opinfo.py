"""PyTorch's OpInfo database on the device: every OpInfo with float32 support runs its
first samples on the device against eager CPU (values, dtype and shape; random ops by
dtype and shape), in float32 and, where the OpInfo supports them, bfloat16 and int64;
and the gradients of its first differentiable sample in float32. See testing/opinfo_testing.py.

A test fails on a wrong value, on an error where eager works, and on an op that runs
through the CPU fallback (an aten:: counter) unless the lists below name it with the
reason. An op that is named but no longer falls back (or errs) fails too: take it off
the list.
"""

import pytest
import torch
import torch_xla

from testing.opinfo_testing import opinfo_db, opinfo_name, run_opinfo, run_opinfo_grad, supports

# OpInfos that still run, in every dtype, through the CPU fallback: name -> reason.
DATA_DEPENDENT = 'its output shape depends on the values'
ALLOWED_FALLBACKS = {
    'nonzero': DATA_DEPENDENT,
    'argwhere': DATA_DEPENDENT + ' (nonzero)',
    'masked_select': DATA_DEPENDENT,
    'combinations': DATA_DEPENDENT + ' (masked_select)',
    'unique': DATA_DEPENDENT,
    'unique_consecutive': DATA_DEPENDENT,
    'histogram': 'not lowered yet (bin edges from the values: a static shape, a reduction to write)',
    'histogramdd': 'not lowered yet (as histogram, in several dimensions)',
    'nn.functional.embedding_bag': 'not lowered yet (offset2bag, bag_size and max_indices must match eager for the backward)',
    'hash_tensor': 'not lowered yet',
    'linalg.lstsq': "the size of the residuals depends on the matrices' ranks",
    'linalg.lstsq.grad_oriented': "the size of the residuals depends on the matrices' ranks",
}

# Per dtype: OpInfos that fall back, or that the device cannot run, in that dtype only.
ALLOWED_FALLBACKS_BY_DTYPE = {
    torch.float32: {},
    torch.bfloat16: {},
    torch.int64: {},
}

# OpInfos that cannot run on the device at all: name -> reason. The outcome must stay
# 'error' (or 'none': no sample runs on the CPU either).
KNOWN_ERRORS = {
    'jiterator_unary': 'CUDA only (jiterator): no sample runs on the CPU',
    'jiterator_binary': 'CUDA only (jiterator): no sample runs on the CPU',
    'jiterator_4inputs_with_extra_args': 'CUDA only (jiterator): no sample runs on the CPU',
    'jiterator_binary_return_by_ref': 'CUDA only (jiterator): no sample runs on the CPU',
    'jiterator_2inputs_2outputs': 'CUDA only (jiterator): no sample runs on the CPU',
    'to_sparse': 'sparse layouts are not supported on the XLA device',
    'sparse.sampled_addmm': 'sparse layouts are not supported on the XLA device',
    'sparse.mm.reduce': 'sparse layouts are not supported on the XLA device',
    'chalf': 'complex32 is not an XLA element type',
    'tensor_split': ('the split points must be a CPU tensor, as on CUDA (the harness moves them to the device; '
                     'test_cpu_arguments.py runs the CPU form)'),
}

# Gradients that fall back (beyond the ops above): name -> reason.
BACKWARD_NOT_LOWERED = 'the forward is lowered, its backward op not yet'
ALLOWED_GRAD_FALLBACKS = {
    'cdist': BACKWARD_NOT_LOWERED + ' (_cdist_backward)',
    'nn.functional.pdist': BACKWARD_NOT_LOWERED + ' (_pdist_backward)',
    '_segment_reduce.lengths': BACKWARD_NOT_LOWERED + ' (_segment_reduce_backward)',
    '_segment_reduce.offsets': BACKWARD_NOT_LOWERED + ' (_segment_reduce_backward)',
    '_batch_norm_with_update': BACKWARD_NOT_LOWERED + ' (batch_norm_backward)',
    'masked_scatter': 'its backward is masked_select: ' + DATA_DEPENDENT,
}

# Tolerances beyond opinfo_testing.TOLERANCES: (name, dtype, values or gradient) -> (tol, reason).
BF16_ORDER = ("eager rounds its bfloat16 partial results in another order than XLA's fused "
              "computation (a few elements one or two bfloat16 steps apart)")
TOLERANCE_OVERRIDES = {
    ('baddbmm', torch.bfloat16, 'values'): (dict(rtol=1.6e-2, atol=3e-2), BF16_ORDER),
    ('native_group_norm', torch.bfloat16, 'values'): (dict(rtol=1.6e-2, atol=2e-2), BF16_ORDER),
    ('nn.functional.group_norm', torch.bfloat16, 'values'): (dict(rtol=1.6e-2, atol=2e-2), BF16_ORDER),
    ('nn.functional.conv_transpose3d', torch.bfloat16, 'values'): (dict(rtol=1.6e-2, atol=3e-2), BF16_ORDER),
    ('nn.functional.grid_sample', torch.bfloat16, 'values'): (
        dict(rtol=1.6e-2, atol=0.2), "eager computes the sample coordinates and weights in bfloat16, the device "
        "in float32 (the taps can differ by a pixel)"),
    ('grid_sampler_2d', torch.bfloat16, 'values'): (
        dict(rtol=1.6e-2, atol=0.2), "eager computes the sample coordinates and weights in bfloat16, the device "
        "in float32 (the taps can differ by a pixel)"),
    ('grid_sampler_3d', torch.bfloat16, 'values'): (
        dict(rtol=1.6e-2, atol=0.2), "eager computes the sample coordinates and weights in bfloat16, the device "
        "in float32 (the taps can differ by a pixel)"),
    ('logcumsumexp', torch.float32, 'gradient'): (
        dict(rtol=5e-3, atol=5e-3), "the backward formula exponentiates differences of cumulative log-sums; "
        "float32 rounding of the forward grows there (0.2% apart at most)"),
}

# On devices other than the CPU these run through the CPU fallback: the CPU device runs
# them as host calls of LAPACK inside its graphs, and StableHLO has no general lowering of
# LU, QR, SVD and eigen decompositions or of what is built on them. An OpInfo whose
# fallbacks are all here passes there.
HOST_LINALG = {
    'aten::' + name for name in (
        '_cholesky_solve_helper', '_linalg_det', '_linalg_eigh', '_linalg_slogdet', '_linalg_solve_ex', '_linalg_svd',
        'cholesky', 'cholesky_inverse', 'geqrf', 'linalg_cholesky_ex', 'linalg_eig', 'linalg_householder_product',
        'linalg_inv_ex', 'linalg_ldl_factor_ex', 'linalg_ldl_solve', 'linalg_lu', 'linalg_lu_factor_ex',
        'linalg_lu_solve', 'linalg_matrix_exp', 'linalg_pinv', 'linalg_qr', 'linalg_solve_triangular', 'lu_unpack',
        'ormqr', 'triangular_solve')
}
ON_CPU = torch_xla._XLAC._xla_device_kind() == 'CPU'

SAMPLES = {torch.float32: 3, torch.bfloat16: 2, torch.int64: 2}

OPS = [op for op in opinfo_db() if supports(op, torch.float32)]


def _check(outcome, name, allowed):
  if name in KNOWN_ERRORS:
    assert outcome.kind in ('error', 'none'), (
        f'{name} is listed as failing ({KNOWN_ERRORS[name]}) but is {outcome.kind}: take it off KNOWN_ERRORS')
    return
  assert outcome.kind != 'wrong', f'{name}: wrong result: {outcome.detail}'
  assert outcome.kind != 'error', f'{name}: error where eager works: {outcome.detail}'
  if not ON_CPU and outcome.kind == 'fallback' and set(outcome.fallbacks) <= HOST_LINALG:
    return
  if name in allowed:
    assert outcome.kind == 'fallback', (
        f'{name} is listed as falling back ({allowed[name]}) but is {outcome.kind}: take it off the list')
  else:
    assert outcome.kind != 'fallback', f'{name}: new CPU fallback {outcome.fallbacks}'


@pytest.mark.parametrize('dtype', list(SAMPLES), ids=lambda d: str(d).replace('torch.', ''))
@pytest.mark.parametrize('op', OPS, ids=opinfo_name)
def test_opinfo_values(op, dtype):
  if not supports(op, dtype):
    pytest.skip(f'the OpInfo does not support {dtype}')
  name = opinfo_name(op)
  tol = TOLERANCE_OVERRIDES.get((name, dtype, 'values'), (None, ''))[0]
  outcome = run_opinfo(op, dtype, SAMPLES[dtype], tol)
  allowed = {**ALLOWED_FALLBACKS, **ALLOWED_FALLBACKS_BY_DTYPE[dtype]}
  if outcome.kind == 'none' and name not in KNOWN_ERRORS:
    pytest.skip(f'no {dtype} sample runs on the CPU')
  _check(outcome, name, allowed)


@pytest.mark.parametrize('op', [op for op in OPS if op.supports_autograd], ids=opinfo_name)
def test_opinfo_gradients(op):
  name = opinfo_name(op)
  tol = TOLERANCE_OVERRIDES.get((name, torch.float32, 'gradient'), (None, ''))[0]
  outcome = run_opinfo_grad(op, torch.float32, 1, tol)
  if outcome.kind == 'none' and name not in KNOWN_ERRORS:
    pytest.skip('no sample has a gradient to compare (random, or none differentiable)')
  _check(outcome, name, {**ALLOWED_FALLBACKS, **ALLOWED_GRAD_FALLBACKS})


def test_coverage_of_float32_opinfos():
  """The share of float32 OpInfos that run lowered and correct (the lists above hold
  the rest): at least 95%."""
  allowed = set(ALLOWED_FALLBACKS) | set(ALLOWED_FALLBACKS_BY_DTYPE[torch.float32]) | set(KNOWN_ERRORS)
  lowered = len([op for op in OPS if opinfo_name(op) not in allowed])
  assert lowered >= 0.95 * len(OPS), f'{lowered} of {len(OPS)} float32 OpInfos lowered'
