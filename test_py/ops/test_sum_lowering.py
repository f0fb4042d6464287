"""Float sums on the CPU device run the row-sum host kernel (runtime/row_sum_kernel.h)
where their innermost reduced dimensions make at least 16 rows of 128 to 4096 elements,
the remaining reduced dimensions by a reduction (lowering/rules_reduce_matmul.cpp);
values against eager CPU, and the form."""
import pytest
import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
from testing.op_testing import DEV, assert_same, check, make
from testing.device_marks import cpu_lowering

pytestmark = cpu_lowering('sums as products by rows and the column-sum kernel')

PASS_THROUGH = 'torch_xla_pass_through'
ROW_SUM = 'torch_xla_row_sum'

# (shape, reduced dims, uses the row-sum kernel)
CASES = [
    ((128, 10, 12, 12), (0, 2, 3), True),  # batch norm's statistics: rows of 144
    ((2048, 256), (1,), True),  # layer norm's: rows of 256
    ((4, 5, 300), (2,), True),
    ((4, 5, 300), (0, 2), True),  # a leading dim left to reduce after the product
    ((64, 128), (0, 1), True),  # everything: rows of 128 (a whole 8192 is too long)
    ((7, 128), (0, 1), False),  # everything: 896 elements, too few rows
    ((20, 8192), (1,), False),  # rows too long: XLA's windowed reduction is faster
    ((64, 32, 256), (1, 2), True),  # rows of 256, the 32 reduced after the product
    ((4, 9, 16, 8), (2, 3), True),  # rows of exactly 128
    ((4, 9, 16, 7), (2, 3), False),  # 112: a plain reduction
    ((300, 5), (0,), False),  # trailing dim kept
]


def pending_hlo(t):
    return torch_xla._get_stablehlo([t])


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize('case', CASES, ids=lambda c: f'{list(c[0])}-{list(c[1])}')
def test_sum_matches_eager(case, dtype):
    shape, dims, by_kernel = case
    x = make(shape, dtype, seed=len(shape))
    # float32 sums of N standard normal values: rounding errors grow with N
    count = 1
    for d in dims:
        count *= shape[d]
    tol = dict(rtol=1e-5, atol=2e-7 * count) if dtype == torch.float32 else {}
    check(lambda t: t.sum(dims), x, ops=('sum',), **tol)
    check(lambda t: t.mean(dims, keepdim=True), x, ops=('mean',))
    for operand in (x.to(DEV), x.to(DEV) * 2):  # an argument and a computed matrix
      hlo = pending_hlo(operand.sum(dims))
      assert (ROW_SUM in hlo) == by_kernel, hlo
      # The kernel's operand is a buffer anyway: nothing passes through, no product.
      assert PASS_THROUGH not in hlo and 'stablehlo.dot_general' not in hlo, hlo


def test_sum_of_computed_rows_matches_eager():
    a, b = make((64, 10, 12, 12), torch.float32, seed=1), make((64, 10, 12, 12), torch.float32, seed=2)
    check(lambda x, y: (x * y + 1).sum((0, 2, 3)), a, b, ops=('sum',))
    check(lambda x, y: ((x - y) ** 2).sum((1, 2, 3)), a, b, ops=('sum',))


def test_nan_and_inf_propagate_as_in_a_sum():
    x = torch.ones(4, 3, 200)
    x[0, 0, 5] = float('nan')
    x[1, 1, 7] = float('inf')
    x[2, 2, 9] = float('inf')
    x[2, 2, 11] = float('-inf')
    x[3, 0, 13] = float('-inf')
    got = x.to(DEV).sum(2).cpu()
    want = x.sum(2)
    torch.testing.assert_close(got, want, equal_nan=True)
    assert torch.isnan(got[0, 0]) and got[1, 1] == float('inf') and torch.isnan(got[2, 2])
    assert got[3, 0] == float('-inf')


def test_integer_sums_keep_the_reduction_and_bfloat16_sums_accumulate_in_float32():
    x = make((6, 256), torch.int32)
    assert_same(x.to(DEV).sum(1), x.sum(1))
    assert ROW_SUM not in pending_hlo(x.to(DEV).sum(1))
    x = make((16, 256), torch.bfloat16)
    assert_same(x.to(DEV).sum(1), x.sum(1), rtol=2e-2, atol=0.5)
    hlo = pending_hlo(x.to(DEV).sum(1))
    assert ROW_SUM + '", api_version = 4 : i32} : (tensor<16x256xf32>) -> tensor<16xf32>' in hlo, hlo


def test_batch_norm_training_step_matches_eager():
    torch.manual_seed(0)
    cpu = torch.nn.BatchNorm2d(10)
    dev = torch.nn.BatchNorm2d(10).to(DEV)
    x = torch.randn(32, 10, 12, 12) * 3 + 1
    for module, inp in ((cpu, x), (dev, x.to(DEV))):
        inp = inp.detach().requires_grad_()
        out = module(inp)
        (out * torch.linspace(-1, 1, out.numel(), device=out.device).reshape(out.shape)).sum().backward()
        module.grad_x = inp.grad
        module.out = out
    xm.mark_step()
    torch.testing.assert_close(dev.out.cpu(), cpu.out.detach(), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(dev.grad_x.cpu(), cpu.grad_x, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(dev.weight.grad.cpu(), cpu.weight.grad, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(dev.running_var.cpu(), cpu.running_var, rtol=1e-5, atol=1e-5)


# Float sums over the leading dimensions (bias gradients) of at least 64 rows of 32
# elements run the column-sum host kernel (runtime/column_sum_kernel.h).
COLUMN_SUM = 'torch_xla_column_sum'
COLUMN_CASES = [
    ((2048, 768), (0,), True),
    ((16, 128, 100), (0, 1), True),
    ((3000, 33), (0,), True),  # columns not a multiple of 16: the parts' edges
    ((64, 5, 40), (1, 0), True),  # the leading dims in any order
    ((63, 100), (0,), False),  # too few rows
    ((500, 31), (0,), False),  # too few columns
    ((16, 128, 100), (0, 2), False),  # not only leading dims
]


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize('case', COLUMN_CASES, ids=lambda c: f'{list(c[0])}-{list(c[1])}')
def test_sum_over_leading_dims_matches_eager(case, dtype):
    shape, dims, by_kernel = case
    x = make(shape, dtype, seed=3)
    count = 1
    for d in dims:
        count *= shape[d]
    tol = dict(rtol=1e-5, atol=2e-7 * count) if dtype == torch.float32 else {}
    check(lambda t: (t * 2).sum(dims), x, ops=('sum',), **tol)
    check(lambda t: t.sum(dims, keepdim=True), x, ops=('sum',), **tol)
    assert (COLUMN_SUM in pending_hlo((x.to(DEV) * 2).sum(dims))) == by_kernel


def test_column_sums_propagate_nan_and_inf_and_keep_bfloat16_and_integers_right():
    x = torch.ones(300, 64)
    x[5, 0] = float('nan')
    x[7, 1] = float('inf')
    x[9, 2], x[11, 2] = float('inf'), float('-inf')
    torch.testing.assert_close(x.to(DEV).sum(0).cpu(), x.sum(0), equal_nan=True)
    b = make((256, 64), torch.bfloat16)
    assert_same(b.to(DEV).sum(0), b.sum(0), rtol=2e-2, atol=0.5)
    i = make((256, 64), torch.int32)
    assert_same(i.to(DEV).sum(0), i.sum(0))
    assert COLUMN_SUM not in pending_hlo(i.to(DEV).sum(0))


def test_linear_bias_gradient_matches_eager():
    x, w, b = make((1024, 48), torch.float32), make((96, 48), torch.float32, seed=1), make((96,), torch.float32, seed=2)
    g = make((1024, 96), torch.float32, seed=3)
    leaves = [t.clone().requires_grad_() for t in (x, w, b)]
    F.linear(*leaves).backward(g)
    dev_leaves = [t.to(DEV).requires_grad_() for t in (x, w, b)]
    F.linear(*dev_leaves).backward(g.to(DEV))
    assert_same(dev_leaves[2].grad, leaves[2].grad, rtol=1e-5, atol=1e-4)
