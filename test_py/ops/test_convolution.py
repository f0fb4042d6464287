"""Convolution forward/backward on the XLA device against eager CPU, in XLA's own forms.

PyTorch routes convolution on the XLA backend to convolution_overrideable and
convolution_backward_overrideable; both must run lowered (xla:: counters), never through
the CPU fallback (aten:: counters). On the CPU device most float32 convolutions run as
host kernels by default (test_host_convolution.py, which reuses the cases below); this
module turns them off, so that it checks the lowering every other device and dtype uses.
"""
import pytest
import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
from testing.device_marks import cpu_lowering

dev = xm.xla_device()


@pytest.fixture(autouse=True)
def xla_convolutions():
    before = torch_xla._XLAC._xla_host_convolution()
    torch_xla._XLAC._xla_set_host_convolution('0')
    yield
    torch_xla._XLAC._xla_set_host_convolution(before)


def counter(name):
    return torch_xla._XLAC._xla_counter_value(name) or 0


def assert_lowered():
    assert counter('aten::convolution_overrideable') == 0
    assert counter('aten::convolution_backward_overrideable') == 0
    assert counter('xla::convolution_overrideable') > 0


def run_both(fn, x, w, b, dtype=torch.float32, grad=True):
    """Runs fn(x, w, b) on CPU and on the device; returns (cpu, xla) outputs and grads."""
    results = []
    for device in ('cpu', dev):
        xs = x.to(dtype).to(device).detach().requires_grad_(grad)
        ws = w.to(dtype).to(device).detach().requires_grad_(grad)
        bs = None if b is None else b.to(dtype).to(device).detach().requires_grad_(grad)
        out = fn(xs, ws, bs)
        grads = []
        if grad:
            # A non-uniform upstream gradient, so every position is checked.
            g = torch.linspace(-1, 1, out.numel()).reshape(out.shape).to(dtype).to(device)
            out.backward(g)
            grads = [xs.grad, ws.grad] + ([] if bs is None else [bs.grad])
        results.append((out, grads))
    xm.mark_step()
    (out_c, grads_c), (out_x, grads_x) = results
    return out_c, out_x.cpu(), grads_c, [t.cpu() for t in grads_x]


def check(fn, x, w, b, dtype=torch.float32, atol=1e-4, rtol=1e-4, grad=True):
    out_c, out_x, grads_c, grads_x = run_both(fn, x, w, b, dtype, grad)
    assert out_x.shape == out_c.shape and out_x.dtype == out_c.dtype
    torch.testing.assert_close(out_x.float(), out_c.float(), atol=atol, rtol=rtol)
    for name, gc, gx in zip(('input', 'weight', 'bias'), grads_c, grads_x):
        assert gx.shape == gc.shape, name
        torch.testing.assert_close(gx.float(), gc.float(), atol=atol, rtol=rtol, msg=lambda m: f'{name} grad: {m}')
    assert_lowered()


CONV2D_CASES = [
    # (N, Cin, H, W, Cout, k, kwargs, bias)
    (1, 3, 8, 8, 5, 3, dict(), True),
    (4, 3, 9, 7, 6, 3, dict(stride=2), True),
    (2, 4, 8, 8, 6, 3, dict(padding=1), True),
    (2, 4, 10, 10, 4, 3, dict(padding=2, dilation=2), True),
    (2, 4, 11, 9, 6, 3, dict(stride=2, padding=1, dilation=2, groups=2), True),
    (4, 6, 8, 8, 6, 3, dict(padding=1, groups=6), True),  # depthwise
    (2, 4, 8, 8, 8, 3, dict(padding=1, groups=4), False),  # depthwise, multiplier 2
    (2, 4, 8, 8, 6, 3, dict(stride=2, padding=1), False),
    (1, 2, 7, 7, 3, 1, dict(stride=2), True),  # 1x1 kernel, unused trailing rows
    (2, 3, 6, 6, 4, 1, dict(padding=1), True),  # padding larger than the kernel reach
    (2, 3, 7, 9, 4, (2, 3), dict(stride=(1, 2), padding=(1, 0), dilation=(2, 1)), True),
    (3, 2, 5, 5, 2, 5, dict(padding=2), True),
]


@pytest.mark.parametrize('case', CONV2D_CASES, ids=lambda c: f'{c[:6]}-{c[6]}-bias{c[7]}')
def test_conv2d_float32(case):
    n, cin, h, w_, cout, k, kw, bias = case
    torch.manual_seed(0)
    groups = kw.get('groups', 1)
    ks = k if isinstance(k, tuple) else (k, k)
    x = torch.randn(n, cin, h, w_)
    w = torch.randn(cout, cin // groups, *ks)
    b = torch.randn(cout) if bias else None
    check(lambda x, w, b: F.conv2d(x, w, b, **kw), x, w, b)


@pytest.mark.parametrize('kw', [dict(padding=1), dict(stride=2, padding=1, groups=2), dict(dilation=2, padding=2)])
def test_conv2d_bfloat16(kw):
    torch.manual_seed(1)
    groups = kw.get('groups', 1)
    x = torch.randn(2, 4, 8, 8)
    w = torch.randn(6, 4 // groups, 3, 3) * 0.3
    b = torch.randn(6)
    check(lambda x, w, b: F.conv2d(x, w, b, **kw), x, w, b, dtype=torch.bfloat16, atol=0.15, rtol=0.05)


def test_nn_conv2d_module_training_step():
    torch.manual_seed(2)
    cpu = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
    xla = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
    xla.load_state_dict(cpu.state_dict())
    xla = xla.to(dev)
    x = torch.randn(4, 3, 16, 16)
    for m, inp in ((cpu, x), (xla, x.to(dev))):
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        loss = (m(inp) ** 2).mean()
        loss.backward()
        opt.step()
        xm.mark_step()
    torch.testing.assert_close(xla.weight.detach().cpu(), cpu.weight.detach(), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(xla.bias.detach().cpu(), cpu.bias.detach(), atol=1e-4, rtol=1e-4)
    assert_lowered()
    assert counter('xla::convolution_backward_overrideable') > 0


def test_conv2d_unbatched_input():
    torch.manual_seed(3)
    x = torch.randn(3, 8, 8)
    w = torch.randn(4, 3, 3, 3)
    check(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, torch.randn(4))


# Note: aten::_convolution runs 1-D convolution as 2-D (view4d/view3d = unsqueeze/squeeze
# below Functionalize, i.e. as_strided on the XLA backend), which still goes through the
# aten::as_strided CPU fallback until as_strided (or unsqueeze/squeeze) is lowered; the
# convolution itself is lowered.
@pytest.mark.parametrize('kw', [dict(), dict(stride=2, padding=1), dict(dilation=3, padding=2, groups=2)])
def test_conv1d(kw):
    torch.manual_seed(4)
    groups = kw.get('groups', 1)
    x = torch.randn(3, 4, 20)
    w = torch.randn(6, 4 // groups, 3)
    check(lambda x, w, b: F.conv1d(x, w, b, **kw), x, w, torch.randn(6))


@pytest.mark.parametrize('kw', [dict(padding=1), dict(stride=2, padding=(0, 1, 1), groups=2)])
def test_conv3d(kw):
    torch.manual_seed(5)
    groups = kw.get('groups', 1)
    x = torch.randn(2, 4, 6, 7, 5)
    w = torch.randn(4, 4 // groups, 3, 3, 3)
    check(lambda x, w, b: F.conv3d(x, w, b, **kw), x, w, torch.randn(4))


TRANSPOSED_CASES = [
    # (N, Cin, H, W, Cout, k, kwargs, bias)
    (2, 4, 5, 5, 3, 3, dict(), True),
    (2, 4, 5, 6, 6, 3, dict(stride=2, padding=1, output_padding=1), True),
    (1, 4, 5, 5, 6, 3, dict(stride=2, padding=1, groups=2), False),
    (2, 4, 6, 6, 2, 3, dict(stride=3, padding=2, dilation=2, output_padding=2), True),
    (2, 4, 5, 5, 4, 4, dict(stride=2, padding=1, groups=4), True),
    (2, 3, 4, 4, 2, 1, dict(stride=2, padding=1, output_padding=1), True),
    (2, 3, 4, 4, 2, 3, dict(stride=1, padding=0, dilation=3, output_padding=2), True),  # output_padding >= stride
]


@pytest.mark.parametrize('case', TRANSPOSED_CASES, ids=lambda c: f'{c[:6]}-{c[6]}-bias{c[7]}')
def test_conv_transpose2d(case):
    n, cin, h, w_, cout, k, kw, bias = case
    torch.manual_seed(6)
    groups = kw.get('groups', 1)
    x = torch.randn(n, cin, h, w_)
    w = torch.randn(cin, cout // groups, k, k)
    b = torch.randn(cout) if bias else None
    check(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw), x, w, b)


def test_conv_transpose1d_and_3d():
    torch.manual_seed(7)
    check(lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
          torch.randn(2, 4, 9), torch.randn(4, 3, 3), torch.randn(3))
    check(lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2, padding=1, groups=2),
          torch.randn(1, 4, 3, 4, 3), torch.randn(4, 2, 3, 3, 3), torch.randn(4))


def test_forward_only_no_grad():
    torch.manual_seed(8)
    x, w, b = torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3), torch.randn(4)
    with torch.no_grad():
        check(lambda x, w, b: F.conv2d(x, w, b, stride=2), x, w, b, grad=False)


def test_only_weight_grad_requested():
    torch.manual_seed(9)
    x = torch.randn(2, 3, 8, 8)
    w = torch.randn(4, 3, 3, 3)
    w_c = w.clone().requires_grad_()
    F.conv2d(x, w_c, padding=1).sum().backward()
    w_x = w.to(dev).requires_grad_()
    F.conv2d(x.to(dev), w_x, padding=1).sum().backward()
    torch.testing.assert_close(w_x.grad.cpu(), w_c.grad, atol=1e-4, rtol=1e-4)
    assert_lowered()


def test_repeated_steps_reuse_compilation():
    torch.manual_seed(10)
    conv = torch.nn.Conv2d(2, 3, 3, padding=1).to(dev)
    outs = []
    for _ in range(3):
        outs.append(conv(torch.randn(1, 2, 6, 6).to(dev)).sum())
        xm.mark_step()
    assert all(torch.isfinite(o.cpu()) for o in outs)


# ---- bad input: a RuntimeError naming the shapes, and the process lives on ----

def test_wrong_channel_count_raises():
    x = torch.randn(1, 4, 8, 8, device=dev)
    w = torch.randn(6, 3, 3, 3, device=dev)
    with pytest.raises(RuntimeError) as e:
        F.conv2d(x, w)
    msg = str(e.value)
    assert '4' in msg and '3' in msg and 'channels' in msg
    # Still alive and working.
    ok = F.conv2d(torch.ones(1, 3, 4, 4, device=dev), torch.ones(2, 3, 3, 3, device=dev))
    assert torch.allclose(ok.cpu(), torch.full((1, 2, 2, 2), 27.0))


def test_groups_not_dividing_channels_raises():
    x = torch.randn(1, 4, 8, 8, device=dev)
    w = torch.randn(5, 2, 3, 3, device=dev)
    with pytest.raises(RuntimeError, match='groups'):
        F.conv2d(x, w, groups=2)
    with pytest.raises(RuntimeError, match='groups'):
        torch.ops.aten.convolution_overrideable(torch.randn(1, 4, 8, 8, device=dev),
                                                torch.randn(6, 2, 3, 3, device=dev), None,
                                                [1, 1], [0, 0], [1, 1], False, [0, 0], 3)


def test_wrong_rank_and_bad_params_raise():
    with pytest.raises(RuntimeError):
        F.conv2d(torch.randn(1, 1, 3, 8, 8, device=dev), torch.randn(2, 1, 3, 3, device=dev))
    with pytest.raises(RuntimeError, match=r'\[2, 1, 3\]'):
        torch.ops.aten.convolution_overrideable(torch.randn(1, 1, 8, 8, device=dev),
                                                torch.randn(2, 1, 3, device=dev), None,
                                                [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    with pytest.raises(RuntimeError):
        F.conv2d(torch.randn(1, 2, 2, 2, device=dev), torch.randn(3, 2, 3, 3, device=dev))  # kernel > input
    with pytest.raises(RuntimeError, match='bias'):
        torch.ops.aten.convolution_overrideable(torch.randn(1, 2, 8, 8, device=dev),
                                                torch.randn(3, 2, 3, 3, device=dev), torch.randn(4, device=dev),
                                                [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    with pytest.raises(RuntimeError, match='grad_output'):
        torch.ops.aten.convolution_backward_overrideable(
            torch.randn(1, 3, 5, 5, device=dev), torch.randn(1, 2, 8, 8, device=dev),
            torch.randn(3, 2, 3, 3, device=dev), [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True])
    with pytest.raises(RuntimeError, match='channels'):
        F.conv_transpose2d(torch.randn(1, 3, 4, 4, device=dev), torch.randn(4, 2, 3, 3, device=dev))
    ok = F.conv1d(torch.ones(1, 1, 5, device=dev), torch.ones(1, 1, 2, device=dev))
    assert torch.allclose(ok.cpu(), torch.full((1, 1, 4), 2.0))


def _grad_out_case(op):
  def run():
    x = torch.randn(2, 3, 6, 6, device=xm.xla_device(), requires_grad=True)
    w = torch.randn(4, 3, 3, 3, device=xm.xla_device(), requires_grad=True)
    torch.nn.functional.conv2d(x, w).sum().backward()
    return x.grad, w.grad
  return run


# yaml entry -> (code using it on the device, counter without "xla::"); see testing/op_testing.py
COUNTER_CASES = {
    'convolution_overrideable': (lambda: torch.nn.functional.conv2d(
        torch.randn(1, 2, 5, 5, device=xm.xla_device()), torch.randn(3, 2, 3, 3, device=xm.xla_device())),
                                 'convolution_overrideable'),
    'convolution_backward_overrideable': (_grad_out_case('backward'), 'convolution_backward_overrideable'),
}


# One input channel (a first layer on grayscale data) with a kernel of at most 49 taps
# is computed on the CPU device as a sum over the taps (ops_conv.cpp); the rest of the
# cases above take XLA's convolution.
SINGLE_CHANNEL_CASES = [
    # (input shape, weight shape, kwargs)
    ((4, 1, 28, 28), (10, 1, 5, 5), dict()),
    ((3, 1, 9, 11), (4, 1, 3, 3), dict(stride=2, padding=1)),
    ((2, 1, 12, 10), (5, 1, 3, 2), dict(stride=(1, 2), padding=(2, 1), dilation=(2, 3))),
    ((2, 1, 7, 7), (3, 1, 7, 7), dict(padding=3)),  # 49 taps
    ((2, 1, 30), (6, 1, 5), dict(stride=3, padding=2)),  # 1-D
    ((2, 1, 6, 7, 5), (4, 1, 3, 3, 3), dict(padding=1)),  # 3-D, 27 taps
    ((1, 1, 5, 5), (2, 1, 5, 5), dict()),  # one output position
    ((2, 1, 8, 9), (3, 1, 7, 8), dict(padding=1)),  # 56 taps: XLA's convolution
]


def check_case(case, dtype, seed):
    """A (input shape, weight shape, kwargs) convolution case, forward and gradients."""
    xs, ws, kw = case
    torch.manual_seed(seed)
    x, w, b = torch.randn(xs), torch.randn(ws) * 0.3, torch.randn(ws[0])
    conv = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}[len(xs)]
    tol = dict(atol=0.1, rtol=0.05) if dtype == torch.bfloat16 else dict(atol=1e-4, rtol=1e-4)
    check(lambda x, w, b: conv(x, w, b, **kw), x, w, b, dtype=dtype, **tol)


def case_id(case):
    return f'{list(case[0])}-{list(case[1])}-{case[2]}'


DTYPES = [torch.float32, torch.float64, torch.bfloat16]


@pytest.mark.parametrize('case', SINGLE_CHANNEL_CASES, ids=case_id)
@pytest.mark.parametrize('dtype', DTYPES, ids=str)
def test_single_input_channel(case, dtype):
    check_case(case, dtype, seed=2)


@cpu_lowering('a one-channel convolution as taps')
def test_single_input_channel_runs_as_taps():
    x = torch.randn(2, 1, 10, 10, device=dev)
    w = torch.randn(4, 1, 3, 3, device=dev)
    hlo = torch_xla._get_stablehlo([F.conv2d(x, w)])
    assert 'stablehlo.convolution' not in hlo
    hlo = torch_xla._get_stablehlo([F.conv2d(torch.randn(2, 2, 10, 10, device=dev), torch.randn(4, 2, 3, 3, device=dev))])
    assert 'stablehlo.convolution' in hlo


# Input gradients of stride-1 convolutions whose input is at least 1.5 times their output
# run on the CPU device as a matrix product and an overlap-add (ops_conv.cpp).
OVERLAP_ADD_CASES = [
    # (input shape, weight shape, kwargs)
    ((4, 10, 12, 12), (20, 10, 5, 5), dict()),  # MNIST's second layer, smaller batch
    ((2, 3, 11, 11), (4, 3, 3, 3), dict(dilation=2)),
    ((2, 3, 9, 10), (5, 3, 5, 4), dict(padding=(1, 0))),
    ((3, 4, 12), (6, 4, 5), dict()),  # 1-D
    ((2, 2, 6, 6, 5), (3, 2, 3, 3, 3), dict()),  # 3-D
]


@pytest.mark.parametrize('case', OVERLAP_ADD_CASES, ids=case_id)
@pytest.mark.parametrize('dtype', DTYPES, ids=str)
def test_input_grad_by_overlap_add(case, dtype):
    check_case(case, dtype, seed=3)


@cpu_lowering('the input gradient by overlap-add')
def test_input_grad_by_overlap_add_has_no_convolution():
    def input_grad_hlo(xs, ws, padding):
        x, w = torch.randn(xs), torch.randn(ws)
        dy = F.conv2d(x, w, padding=padding).to(dev)
        x, w = x.to(dev), w.to(dev)
        gi = torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [padding] * 2, [1, 1], False, [0, 0], 1,
                                                 [True, False, False])[0]
        return torch_xla._get_stablehlo([gi])
    assert 'stablehlo.convolution' not in input_grad_hlo((2, 4, 12, 12), (6, 4, 5, 5), 0)
    # "same" padding: the input is the output's size, XLA's convolution computes it.
    assert 'stablehlo.convolution' in input_grad_hlo((2, 4, 12, 12), (6, 4, 3, 3), 1)
