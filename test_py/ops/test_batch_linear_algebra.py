"""Linear algebra on the CPU device: PyTorch's LAPACK kernels run inside the compiled
graph as a host kernel (cpp/aten/host_aten_ops.cpp). Values and gradients against
eager, in float32 and float64, no CPU fallback, one execution for a graph around them,
and PyTorch's own errors for bad input."""

import pytest
import torch

import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

from testing.op_testing import DEV, check, check_grad, lowered
from testing.device_marks import cpu_lowering

pytestmark = cpu_lowering('LAPACK as host calls inside the graph (elsewhere these ops run through the CPU fallback, which test_opinfo.py checks)')

FLOAT_TYPES = [torch.float32, torch.float64]
TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.float64: dict(rtol=1e-10, atol=1e-10)}


def spd(n, dtype, batch=(), seed=0):
  """A well-conditioned symmetric positive-definite matrix."""
  g = torch.Generator().manual_seed(seed)
  a = torch.randn(*batch, n, n, generator=g, dtype=torch.float64)
  return (a @ a.mT + n * torch.eye(n, dtype=torch.float64)).to(dtype)


def general(m, n, dtype, batch=(), seed=1):
  g = torch.Generator().manual_seed(seed)
  return (torch.randn(*batch, m, n, generator=g, dtype=torch.float64) + 3 * torch.eye(m, n, dtype=torch.float64)).to(dtype)


@pytest.mark.parametrize('dtype', FLOAT_TYPES, ids=str)
def test_inverse_solve_det(dtype):
  a, b = general(4, 4, dtype, (2,)), general(4, 3, dtype, (2,), seed=2)
  check(torch.linalg.inv, a, ops=['linalg_inv_ex'], **TOL[dtype])
  check(torch.linalg.solve, a, b, ops=['_linalg_solve_ex'], **TOL[dtype])
  check(torch.linalg.det, a, ops=['_linalg_det'], **TOL[dtype])
  check(lambda x: torch.linalg.slogdet(x), a, ops=['_linalg_slogdet'], **TOL[dtype])


@pytest.mark.parametrize('dtype', FLOAT_TYPES, ids=str)
def test_factorizations(dtype):
  s, a = spd(5, dtype, (3,)), general(5, 3, dtype, (3,))
  check(torch.linalg.cholesky, s, ops=['linalg_cholesky_ex'], **TOL[dtype])
  check(lambda x: torch.linalg.qr(x), a, ops=['linalg_qr'], **TOL[dtype])
  check(lambda x: torch.linalg.lu_factor(x), s, ops=['linalg_lu_factor_ex'], **TOL[dtype])
  check(lambda x: torch.linalg.eigh(x), s, ops=['_linalg_eigh'], **TOL[dtype])
  # Singular vectors are unique up to sign: compare the reconstruction and the values.
  check(lambda x: torch.linalg.svdvals(x), a, ops=['_linalg_svd'], **TOL[dtype])
  with lowered('_linalg_svd'):
    u, sv, vh = torch.linalg.svd(a.to(DEV), full_matrices=False)
    rebuilt = (u * sv.unsqueeze(-2)) @ vh
  torch.testing.assert_close(rebuilt.cpu(), a, **TOL[dtype])


def test_eig_returns_complex_values():
  a = general(4, 4, torch.float32)
  check(torch.linalg.eigvals, a, ops=['linalg_eig'], rtol=1e-4, atol=1e-4)


def test_gradients_of_inverse_and_solve():
  a, b = general(3, 3, torch.float32), general(3, 2, torch.float32, seed=3)
  check_grad(torch.linalg.inv, a, ops=['linalg_inv_ex'], rtol=1e-4, atol=1e-4)
  check_grad(torch.linalg.solve, a, b, ops=['_linalg_solve_ex'], rtol=1e-4, atol=1e-4)
  check_grad(lambda x: torch.linalg.cholesky(x @ x.mT + 3 * torch.eye(3, device=x.device)), a,
             ops=['linalg_cholesky_ex'], rtol=1e-4, atol=1e-4)


def test_the_kernel_runs_inside_one_graph():
  # (torch.linalg.inv itself reads the factorization's status to raise PyTorch's error
  # for a singular matrix, which runs the graph so far: inv_ex leaves the status to the
  # caller.)
  a = general(4, 4, torch.float32).to(DEV)
  xm.mark_step()
  before = met.metric_data('ExecuteTime')[0] if met.metric_data('ExecuteTime') else 0
  out = (torch.linalg.inv_ex(a * 2).inverse @ a + 1).sum()
  xm.mark_step()
  after = met.metric_data('ExecuteTime')[0]
  assert after - before == 1
  torch.testing.assert_close(out.cpu(), (torch.linalg.inv(a.cpu() * 2) @ a.cpu() + 1).sum(), rtol=1e-4, atol=1e-4)


def test_bad_input_raises_pytorchs_error():
  with pytest.raises(RuntimeError, match='square'):
    torch.linalg.inv(torch.ones(2, 3, device=DEV))
  # A matrix that is not positive-definite: the error PyTorch raises, at the sync that
  # reads the factorization's status.
  with pytest.raises(RuntimeError, match='positive-definite'):
    torch.linalg.cholesky(-torch.eye(3, device=DEV)).cpu()
  # The device is usable afterwards.
  check(torch.linalg.inv, general(2, 2, torch.float32), ops=['linalg_inv_ex'])


def test_traced_shapes_are_kept_per_argument_shapes_and_errors_stay():
  # The outputs' shapes of a host call's meta computation are kept by its arguments'
  # shapes and values: a call traced again takes them, other shapes get their own, and
  # arguments the meta kernel rejects are rejected every time.
  reused = lambda: met.counter_value('HostAtenMetaShapesReused') or 0
  seen = set()
  for n in (3, 3, 5, 3):
    a = general(n, n, torch.float32, (2,), seed=n)
    before = reused()
    out = torch.linalg.inv(a.to(DEV))
    assert out.shape == (2, n, n)
    torch.testing.assert_close(out.cpu(), torch.linalg.inv(a), rtol=1e-4, atol=1e-4)
    if n in seen:
      assert reused() > before
    seen.add(n)
  for _ in range(2):
    before = reused()
    with pytest.raises(RuntimeError, match='square'):
      torch.linalg.inv(torch.ones(2, 3, device=DEV))
    assert reused() == before
  # Another batch size gets shapes of its own.
  x = general(4, 4, torch.float32, (3,))
  torch.testing.assert_close(torch.linalg.inv(x.to(DEV)).cpu(), torch.linalg.inv(x), rtol=1e-4, atol=1e-4)
