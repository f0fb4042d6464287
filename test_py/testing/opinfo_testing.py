"""Runs PyTorch's OpInfo database on the device against eager CPU.

For one OpInfo and dtype, each of its first samples runs on the CPU and, with every
tensor moved to the device, on the device; the outcome of the op is the worst of its
samples:

  lowered   every sample matched eager and ran no CPU fallback (no aten:: counter)
  fallback  every sample matched eager, some through the CPU fallback
  wrong     a value, dtype or shape differed from eager
  error     the device raised where eager did not

Random ops (whose eager result changes with the seed) and the uninitialized results of
the empty* factories are compared by dtype and shape.

Run as a script for the coverage report:
  python3 testing/opinfo_testing.py [--dtype float32] [--samples 3] [--only name,...] [--grad]
(--grad: the gradients of the first sample that has one, instead of the values.)
"""

import argparse
import dataclasses
import os
import sys
import time
import traceback

import torch
from torch.utils import _pytree as pytree

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from testing.op_testing import is_op_fallback

DEV = xm.xla_device()

# Tolerances by dtype, for values computed by a different algorithm than eager's (XLA
# fuses, reassociates sums and uses its own transcendental approximations).
TOLERANCES = {
    torch.float32: dict(rtol=1e-4, atol=1e-5),
    torch.float64: dict(rtol=1e-7, atol=1e-7),
    torch.bfloat16: dict(rtol=1.6e-2, atol=1e-2),
    torch.float16: dict(rtol=1e-3, atol=1e-3),
    torch.complex64: dict(rtol=1e-4, atol=1e-5),
    torch.complex128: dict(rtol=1e-7, atol=1e-7),
}

# Ops whose results are uninitialized memory: compared by dtype and shape.
UNINITIALIZED = {'empty', 'empty_like', 'new_empty', 'new_empty_strided', 'empty_strided', 'empty_permuted'}


def opinfo_db():
  from torch.testing._internal.common_methods_invocations import op_db
  return op_db


def opinfo_name(op):
  return op.name + ('.' + op.variant_test_name if op.variant_test_name else '')


def supports(op, dtype):
  return dtype in op.supported_dtypes('cpu')


@dataclasses.dataclass
class Outcome:
  kind: str  # 'lowered', 'fallback', 'wrong', 'error', 'none' (no sample ran on the CPU)
  fallbacks: tuple = ()
  detail: str = ''
  samples: int = 0


def _to_device(tree):
  return pytree.tree_map(lambda x: x.to(DEV) if isinstance(x, torch.Tensor) else x, tree)


def _to_cpu(tree):
  return pytree.tree_map(lambda x: x.cpu() if isinstance(x, torch.Tensor) else x, tree)


def _detached_clone(tree):
  return pytree.tree_map(lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x,
                         tree)


def _parts(sample):
  return (sample.input, sample.args, sample.kwargs)


def _call(op, parts):
  inp, args, kwargs = parts
  return op(inp, *args, **kwargs)


def _is_random(op, sample, expected):
  """Whether the op's eager result depends on the seed."""
  # OpInfos of random ops seed the generator themselves (torch.testing's
  # wrapper_set_seed): shift every seed for the second run.
  manual_seed = torch.manual_seed
  torch.manual_seed = lambda seed: manual_seed(seed + 1)
  try:
    torch.manual_seed(0)
    again = _call(op, _detached_clone(sample))
  except Exception:
    return False
  finally:
    torch.manual_seed = manual_seed
  try:
    _compare(again, expected, dict(rtol=0, atol=0))
    return False
  except AssertionError:
    return True


def _tolerance(dtype, tol):
  """`tol` where given, else the tolerance of the output's dtype (exact for integers)."""
  return tol or TOLERANCES.get(dtype, dict(rtol=0, atol=0))


# Ops whose index outputs may pick any of several equal elements (PyTorch leaves the
# choice to the implementation): such an output is compared by the values it selects
# from the input along the op's dimension. name -> (indices of the index outputs, the
# position of `dim` among the positional arguments after the input, its default).
TIE_INDEX_OUTPUTS = {
    'sort': ((1,), 0, -1),
    'argsort': ((0,), 0, -1),
    'topk': ((1,), 1, -1),
    'kthvalue': ((1,), 1, -1),
    'mode': ((1,), 0, -1),
}


def _selected(parts, index, name):
  inp, args, kwargs = parts
  _, pos, default = TIE_INDEX_OUTPUTS[name]
  dim = kwargs.get('dim', args[pos] if len(args) > pos else default)
  inp = inp.cpu()
  if index.dim() < inp.dim():  # keepdim=False dropped the dimension
    index = index.unsqueeze(dim)
  return torch.take_along_dim(inp, index, dim)


def _compare(actual, expected, tol, values=True, ties=None):
  a_leaves, a_spec = pytree.tree_flatten(actual)
  e_leaves, e_spec = pytree.tree_flatten(expected)
  assert len(a_leaves) == len(e_leaves), f'{len(a_leaves)} outputs, eager has {len(e_leaves)}'
  for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
    if isinstance(e, torch.Tensor):
      assert isinstance(a, torch.Tensor), f'output {i}: {type(a).__name__}, eager a tensor'
      assert a.dtype == e.dtype, f'output {i}: dtype {a.dtype}, eager {e.dtype}'
      assert a.shape == e.shape, f'output {i}: shape {tuple(a.shape)}, eager {tuple(e.shape)}'
      if values and ties and i in TIE_INDEX_OUTPUTS[ties[0]][0]:
        torch.testing.assert_close(_selected(ties[1], a, ties[0]), _selected(ties[1], e, ties[0]), equal_nan=True,
                                   rtol=0, atol=0)
      elif values:
        torch.testing.assert_close(a, e, equal_nan=True, **_tolerance(e.dtype, tol))
    elif values:
      assert a == e or (a != a and e != e), f'output {i}: {a!r}, eager {e!r}'


def _trace_sample(op, sample):
  """Runs one sample in eager and traces it on the device without computing it. None
  where eager cannot run it; else a dict with the eager result and the device's pending
  result (or the error the device raised)."""
  sample = _parts(sample)
  cpu_sample = _detached_clone(sample)
  torch.manual_seed(0)
  try:
    expected = _call(op, cpu_sample)
  except Exception:
    return None
  traced = dict(sample=sample, cpu_sample=cpu_sample, expected=expected,
                random=op.name in UNINITIALIZED or _is_random(op, sample, expected))
  dev_sample = _to_device(_detached_clone(sample))
  met.clear_counters()
  try:
    traced['actual'] = _call(op, dev_sample)
    traced['fallbacks'] = tuple(sorted(n for n in met.counter_names() if is_op_fallback(n)))
  except Exception as e:
    traced['error'] = f'{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ""}'
  return traced


def _finish_sample(op, traced, dtype, tol):
  """(kind, fallbacks, detail) of a traced sample, its device result read back."""
  if 'error' in traced:
    return 'error', (), traced['error']
  fallbacks = traced['fallbacks']
  try:
    actual = _to_cpu(traced['actual'])
  except Exception as e:
    return 'error', (), f'{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ""}'
  expected, random, sample = traced['expected'], traced['random'], traced['sample']
  try:
    ties = (op.name, traced['cpu_sample']) if op.name in TIE_INDEX_OUTPUTS else None
    _compare(actual, expected, tol, values=not random, ties=ties)
  except AssertionError as e:
    if random or dtype != torch.bfloat16 or not _as_close_as_eager(op, sample, actual, expected, tol):
      return 'wrong', fallbacks, str(e).replace('\n', ' ')[:300]
  return ('fallback' if fallbacks else 'lowered'), fallbacks, ''


def run_sample(op, sample, dtype, tol=None):
  """Runs one sample on both sides; returns (kind, fallbacks, detail), or None where
  eager cannot run it."""
  xm.mark_step()
  traced = _trace_sample(op, sample)
  return None if traced is None else _finish_sample(op, traced, dtype, tol)


def _as_close_as_eager(op, sample, actual, expected, tol):
  """Whether a bfloat16 result that differs from eager's is as accurate as eager's: both
  against the op computed in float64 on the CPU, each element may be off by twice
  eager's own error plus the bfloat16 tolerance. Eager's bfloat16 rounding depends on the
  CPU's instruction set and devices round partial results differently, so neither is
  the reference; float64 is."""
  to64 = lambda x: x.detach().double() if isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16 else x
  try:
    torch.manual_seed(0)
    exact = _call(op, pytree.tree_map(to64, _detached_clone(sample)))
  except Exception:
    return False
  a_leaves, e_leaves = pytree.tree_leaves(actual), pytree.tree_leaves(expected)
  x_leaves = pytree.tree_leaves(exact)
  if len(x_leaves) != len(e_leaves):
    return False
  t = _tolerance(torch.bfloat16, tol)
  for a, e, x in zip(a_leaves, e_leaves, x_leaves):
    if not isinstance(e, torch.Tensor) or not e.is_floating_point():
      if isinstance(e, torch.Tensor) and not torch.equal(a, e):
        return False
      continue
    x = x.double()
    bound = 2 * (e.double() - x).abs() + t['atol'] + t['rtol'] * x.abs()
    error = (a.double() - x).abs()
    if not bool(((error <= bound) | (a.isnan() & x.isnan())).all()):
      return False
  return True


_RANK = {'lowered': 0, 'fallback': 1, 'wrong': 2, 'error': 3}


def _worst_outcome(samples, run_one, max_samples):
  """Runs samples until `max_samples` of them ran on both sides (run_one gives None for
  one that eager cannot run); the worst of their outcomes."""
  worst, fallbacks, detail, ran = 'none', set(), '', 0
  for sample in samples:
    if ran >= max_samples:
      break
    try:
      r = run_one(sample)
    except Exception as e:  # outside the device call: moving a sample (sparse layouts...)
      r = 'error', (), f'{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ""}'
    if r is None:
      continue
    ran += 1
    kind, fb, d = r
    fallbacks.update(fb)
    if worst == 'none' or _RANK[kind] > _RANK[worst]:
      worst, detail = kind, d
  return Outcome(worst, tuple(sorted(fallbacks)), detail, ran)


def run_opinfo(op, dtype, max_samples=3, tol=None):
  """The values of the op's first `max_samples` samples that run in eager. The samples
  are traced first and computed as one graph (one compile for all of them); a sample
  whose graph fails is then computed alone, so its error stays its own."""
  samples = op.sample_inputs('cpu', dtype, requires_grad=False)
  xm.mark_step()
  traced = []
  for sample in samples:
    if len(traced) >= max_samples:
      break
    try:
      t = _trace_sample(op, sample)
    except Exception as e:  # outside the device call: moving a sample (sparse layouts...)
      t = dict(error=f'{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ""}')
    if t is not None:
      traced.append(t)
  try:
    xm.mark_step()
  except Exception:
    pass  # each sample's result is then computed on its own when read
  outcomes = iter([_finish_sample(op, t, dtype, tol) for t in traced])
  return _worst_outcome(range(len(traced)), lambda _: next(outcomes), max_samples)


def _weights_like(tree, seed=3):
  """A fixed, non-uniform upstream gradient for each floating output."""
  g = torch.Generator().manual_seed(seed)
  return [torch.randn(t.shape, generator=g).to(t.dtype) if isinstance(t, torch.Tensor) and
          t.is_floating_point() and t.requires_grad else None for t in pytree.tree_leaves(tree)]


def _grads(op, parts, weights=None):
  """The output of the sample and the gradients of its leaves that require grad."""
  leaves = [x for x in pytree.tree_leaves(parts) if isinstance(x, torch.Tensor) and x.requires_grad]
  out = _call(op, parts)
  outs = pytree.tree_leaves(out)
  if weights is None:
    weights = _weights_like(out)
  loss = None
  for o, w in zip(outs, weights):
    if w is None or not isinstance(o, torch.Tensor) or not o.requires_grad:
      continue
    term = (o * w.to(o.device)).sum()
    loss = term if loss is None else loss + term
  if loss is None or not leaves:
    return None, weights
  grads = torch.autograd.grad(loss, leaves, allow_unused=True)
  return [g if g is not None else torch.zeros_like(x) for g, x in zip(grads, leaves)], weights


def _leaf_copy(tree, to_device):
  def copy(x):
    if not isinstance(x, torch.Tensor):
      return x
    y = x.detach().clone()
    if to_device:
      y = y.to(DEV)
    return y.requires_grad_(x.requires_grad)
  return pytree.tree_map(copy, tree)


def run_grad_sample(op, sample, dtype, tol=None):
  """The gradients of one sample's outputs (weighted sum) on both sides; returns
  (kind, fallbacks, detail), or None where eager has no gradient to compare."""
  parts = _parts(sample)
  try:
    torch.manual_seed(0)
    values = _call(op, _detached_clone(parts))
    if _is_random(op, _detached_clone(parts), values):
      return None  # a random op's gradients differ with its draws
    expected, weights = _grads(op, _leaf_copy(parts, False))
  except Exception:
    return None
  if expected is None:
    return None
  dev_parts = _leaf_copy(parts, True)
  xm.mark_step()
  met.clear_counters()
  try:
    actual, _ = _grads(op, dev_parts, weights)
    fallbacks = tuple(sorted(n for n in met.counter_names() if is_op_fallback(n)))
    actual = _to_cpu(actual)
  except Exception as e:
    return 'error', (), f'{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ""}'
  try:
    _compare(actual, expected, tol)
  except AssertionError as e:
    return 'wrong', fallbacks, 'gradient: ' + str(e).replace('\n', ' ')[:300]
  return ('fallback' if fallbacks else 'lowered'), fallbacks, ''


def run_opinfo_grad(op, dtype=torch.float32, max_samples=1, tol=None):
  """The gradients of the op's first `max_samples` samples that have one in eager."""
  samples = op.sample_inputs('cpu', dtype, requires_grad=True)
  return _worst_outcome(samples, lambda sample: run_grad_sample(op, sample, dtype, tol), max_samples)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--dtype', default='float32')
  parser.add_argument('--samples', type=int, default=3)
  parser.add_argument('--only', default='')
  parser.add_argument('--grad', action='store_true', help='gradients instead of values')
  args = parser.parse_args()
  dtype = getattr(torch, args.dtype)
  only = set(filter(None, args.only.split(',')))
  counts = {}
  start = time.time()
  for op in opinfo_db():
    name = opinfo_name(op)
    if not supports(op, dtype) or (only and name not in only and op.name not in only):
      continue
    t0 = time.time()
    try:
      if args.grad:
        if not op.supports_autograd:
          continue
        out = run_opinfo_grad(op, dtype, 1)
      else:
        out = run_opinfo(op, dtype, args.samples)
    except Exception as e:
      out = Outcome('error', detail=f'harness: {type(e).__name__}: {e}'[:300])
    counts[out.kind] = counts.get(out.kind, 0) + 1
    print(f'{out.kind:8s} {name:40s} {time.time() - t0:6.2f}s {",".join(out.fallbacks)} {out.detail}',
          flush=True)
  print(f'# {counts} in {time.time() - start:.0f}s', flush=True)


if __name__ == '__main__':
  main()
