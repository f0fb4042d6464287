"""PyTorch's OpInfo database on the device: every OpInfo with float32 support runs its
first samples on the device against eager CPU (values, dtype and shape; random ops by
dtype and shape), in float32 and, where the OpInfo supports them, bfloat16 and int64;
and the gradients of its first differentiable sample in float32. See opinfo_testing.py.

A test fails on a wrong value, on an error where eager works, and on an op that runs
through the CPU fallback (an aten:: counter) unless the lists below name it with the
reason. An op that is named but no longer falls back (or errs) fails too: take it off
the list.
"""

import pytest
import torch

from opinfo_testing import opinfo_db, opinfo_name, run_opinfo, run_opinfo_grad, supports

# OpInfos that still run, in every dtype, through the CPU fallback: name -> reason.
DATA_DEPENDENT = 'its output shape depends on the values'
ALLOWED_FALLBACKS = {
    'nonzero': DATA_DEPENDENT,
    'argwhere': DATA_DEPENDENT + ' (nonzero)',
    'masked_select': DATA_DEPENDENT,
    'combinations': DATA_DEPENDENT + ' (masked_select)',
    'unique': DATA_DEPENDENT,
    'unique_consecutive': DATA_DEPENDENT,
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
}

# Gradients that fall back (beyond the ops above): name -> reason.
ALLOWED_GRAD_FALLBACKS = {}

SAMPLES = {torch.float32: 3, torch.bfloat16: 2, torch.int64: 2}

OPS = [op for op in opinfo_db() if supports(op, torch.float32)]


def _check(outcome, name, allowed):
  if name in KNOWN_ERRORS:
    assert outcome.kind in ('error', 'none'), (
        f'{name} is listed as failing ({KNOWN_ERRORS[name]}) but is {outcome.kind}: take it off KNOWN_ERRORS')
    return
  assert outcome.kind != 'wrong', f'{name}: wrong result: {outcome.detail}'
  assert outcome.kind != 'error', f'{name}: error where eager works: {outcome.detail}'
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
  outcome = run_opinfo(op, dtype, SAMPLES[dtype])
  allowed = {**ALLOWED_FALLBACKS, **ALLOWED_FALLBACKS_BY_DTYPE[dtype]}
  if outcome.kind == 'none' and name not in KNOWN_ERRORS:
    pytest.skip(f'no {dtype} sample runs on the CPU')
  _check(outcome, name, allowed)


@pytest.mark.parametrize('op', [op for op in OPS if op.supports_autograd], ids=opinfo_name)
def test_opinfo_gradients(op):
  name = opinfo_name(op)
  outcome = run_opinfo_grad(op, torch.float32, 1)
  if outcome.kind == 'none' and name not in KNOWN_ERRORS:
    pytest.skip('no sample has a gradient to compare (random, or none differentiable)')
  _check(outcome, name, {**ALLOWED_FALLBACKS, **ALLOWED_GRAD_FALLBACKS})


def test_coverage_of_float32_opinfos():
  """The share of float32 OpInfos that run lowered and correct (the lists above hold
  the rest): at least 95%."""
  allowed = set(ALLOWED_FALLBACKS) | set(ALLOWED_FALLBACKS_BY_DTYPE[torch.float32]) | set(KNOWN_ERRORS)
  lowered = len([op for op in OPS if opinfo_name(op) not in allowed])
  assert lowered >= 0.95 * len(OPS), f'{lowered} of {len(OPS)} float32 OpInfos lowered'
