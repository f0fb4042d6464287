"""Convolutions run by PyTorch's CPU kernel inside the compiled graph (a host kernel
called through XLA's FFI, split by batch or by output channels over XLA's compute threads;
aten/host_convolution.h), against eager CPU: the default `auto` mode, the `1` mode that
runs every convolution this way, the choices `auto` makes, and the mode's errors."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from test_convolution import CONV2D_CASES, TRANSPOSED_CASES, run_both

dev = xm.xla_device()
HOST_TARGET = 'torch_xla_host_convolution'


@pytest.fixture
def mode(request):
    """Sets the host convolution mode named by the test's parameter, restores it after."""
    before = torch_xla._XLAC._xla_host_convolution()
    torch_xla._XLAC._xla_set_host_convolution(request.param)
    yield request.param
    torch_xla._XLAC._xla_set_host_convolution(before)


def host_runs():
    return met.counter_value('HostConvolutionRun') or 0


def check_against_eager(conv, x, w, b, dtype, tol):
    """conv(x, w, b) forward and its three gradients on the device against eager CPU;
    returns how many host convolutions ran."""
    before = host_runs()
    out_c, out_x, grads_c, grads_x = run_both(conv, x, w, b, dtype)
    for name, a, e in zip(('output', 'grad_input', 'grad_weight', 'grad_bias'), [out_x] + grads_x, [out_c] + grads_c):
        e = e.detach()
        assert a.dtype == e.dtype and a.shape == e.shape, name
        torch.testing.assert_close(a, e, rtol=tol, atol=tol * max(1.0, e.abs().max().item()),
                                   msg=lambda m: f'{name}: {m}')
    return host_runs() - before


def conv2d_case(case):
    n, cin, h, w_, cout, k, kw, bias = case
    groups = kw.get('groups', 1)
    ks = k if isinstance(k, tuple) else (k, k)
    torch.manual_seed(0)
    x, w = torch.randn(n, cin, h, w_), torch.randn(cout, cin // groups, *ks)
    return (lambda x, w, b: F.conv2d(x, w, b, **kw)), x, w, (torch.randn(cout) if bias else None)


def transposed_case(case):
    n, cin, h, w_, cout, k, kw, bias = case
    groups = kw.get('groups', 1)
    torch.manual_seed(1)
    x, w = torch.randn(n, cin, h, w_), torch.randn(cin, cout // groups, k, k)
    return (lambda x, w, b: F.conv_transpose2d(x, w, b, **kw)), x, w, (torch.randn(cout) if bias else None)


OTHER_RANKS = [
    ('conv1d', lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), (3, 4, 20), (6, 4, 3)),
    ('conv1d_groups', lambda x, w, b: F.conv1d(x, w, b, dilation=3, padding=2, groups=2), (3, 4, 20), (6, 2, 3)),
    ('conv3d', lambda x, w, b: F.conv3d(x, w, b, padding=1), (2, 4, 6, 7, 5), (4, 4, 3, 3, 3)),
    ('conv_transpose3d', lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2, padding=1, groups=2),
     (1, 4, 3, 4, 3), (4, 2, 3, 3, 3)),
    # odd batch: the parts have different sizes
    ('conv2d_batch5', lambda x, w, b: F.conv2d(x, w, b, padding=1), (5, 16, 9, 9), (32, 16, 3, 3)),
]


@pytest.mark.parametrize('mode', ['auto'], indirect=True)
@pytest.mark.parametrize('case', CONV2D_CASES, ids=lambda c: f'{c[:6]}-{c[6]}-bias{c[7]}')
def test_auto_mode_conv2d_matches_eager(mode, case):
    assert check_against_eager(*conv2d_case(case), torch.float32, 1e-4) >= 2


@pytest.mark.parametrize('mode', ['auto'], indirect=True)
@pytest.mark.parametrize('case', TRANSPOSED_CASES, ids=lambda c: f'{c[:6]}-{c[6]}-bias{c[7]}')
def test_auto_mode_conv_transpose2d_matches_eager(mode, case):
    assert check_against_eager(*transposed_case(case), torch.float32, 1e-4) >= 2


@pytest.mark.parametrize('mode', ['auto'], indirect=True)
@pytest.mark.parametrize('case', OTHER_RANKS, ids=lambda c: c[0])
def test_auto_mode_other_ranks_match_eager(mode, case):
    _, conv, xs, ws = case
    torch.manual_seed(2)
    x, w = torch.randn(xs), torch.randn(ws)
    b = torch.randn(ws[1] * 2 if 'transpose' in case[0] else ws[0])
    assert check_against_eager(conv, x, w, b, torch.float32, 1e-4) == 3


@pytest.mark.parametrize('mode', ['1'], indirect=True)
@pytest.mark.parametrize('dtype,tol', [(torch.float32, 1e-5), (torch.float64, 1e-12), (torch.bfloat16, 2e-2)],
                         ids=['float32', 'float64', 'bfloat16'])
@pytest.mark.parametrize('case', OTHER_RANKS + [
    ('conv2d_single_channel', lambda x, w, b: F.conv2d(x, w, b), (4, 1, 12, 12), (6, 1, 5, 5)),
    ('conv2d_strided_groups', lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
     (2, 4, 11, 11), (6, 2, 3, 2)),
    # A weight gradient of 36864 elements: the parts' gradients are summed in two ranges.
    ('conv2d_wide', lambda x, w, b: F.conv2d(x, w, b, padding=1), (4, 64, 5, 5), (64, 64, 3, 3)),
], ids=lambda c: c[0])
def test_mode_1_runs_every_convolution_on_the_host(mode, dtype, tol, case):
    _, conv, xs, ws = case
    torch.manual_seed(3)
    x, w = torch.randn(xs), torch.randn(ws)
    b = torch.randn(ws[1] * 2 if 'transpose' in case[0] else ws[0])
    assert check_against_eager(conv, x, w, b, dtype, tol) == 3


def channel_splits():
    return met.counter_value('HostConvolutionSplitByChannels') or 0


# Weights with at least as many elements as the input: the calls split by output
# channels (each part's channels of the output and of the weight gradient, the input
# gradient summed over the parts), ResNet's later layers.
CHANNEL_SPLIT_CASES = [
    ('3x3', lambda x, w, b: F.conv2d(x, w, b, padding=1), (4, 64, 4, 4), (64, 64, 3, 3)),
    ('3x3_stride2_uneven', lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), (3, 32, 5, 6), (33, 32, 3, 3)),
    ('1x1_stride2', lambda x, w, b: F.conv2d(x, w, b, stride=2), (4, 64, 4, 4), (96, 64, 1, 1)),
    ('dilated_rect', lambda x, w, b: F.conv2d(x, w, b, padding=(2, 1), dilation=2), (2, 48, 6, 5), (40, 48, 3, 2)),
    ('conv1d', lambda x, w, b: F.conv1d(x, w, b, padding=1), (2, 32, 8), (64, 32, 5)),
]


@pytest.mark.parametrize('mode', ['auto'], indirect=True)
@pytest.mark.parametrize('case', CHANNEL_SPLIT_CASES, ids=lambda c: c[0])
def test_weight_dominated_convolutions_split_by_channels(mode, case):
    _, conv, xs, ws = case
    torch.manual_seed(4)
    x, w, b = torch.randn(xs), torch.randn(ws), torch.randn(ws[0])
    before = channel_splits()
    assert check_against_eager(conv, x, w, b, torch.float32, 1e-4) == 3
    assert channel_splits() - before == 3


@pytest.mark.parametrize('mode', ['auto'], indirect=True)
def test_large_weight_gradients_split_into_parts_of_at_most_1_25_mb(mode):
    # A 301 x 512 x 3 x 3 float32 weight is 5.5 MB: its gradient takes 5 parts by size,
    # rounded up to a multiple of the compute threads, the 301 rows unevenly among them;
    # a forward takes one part per thread.
    torch.manual_seed(6)
    x, w, b = torch.randn(2, 512, 2, 2), torch.randn(301, 512, 3, 3), torch.randn(301)
    conv = lambda x, w, b: F.conv2d(x, w, b, padding=1)
    assert check_against_eager(conv, x, w, b, torch.float32, 1e-4) == 3

    def parts_of(fn):
        before = met.counter_value('HostConvolutionChannelParts') or 0
        result = fn()
        xm.mark_step()
        return (met.counter_value('HostConvolutionChannelParts') or 0) - before, result

    xd, wd = x.to(dev), w.to(dev)
    threads, _ = parts_of(lambda: F.conv2d(xd, wd, padding=1))
    dy = torch.randn(2, 301, 2, 2)
    grad_parts, grad = parts_of(lambda: torch.ops.aten.convolution_backward(
        dy.to(dev), xd, wd, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [False, True, False])[1])
    assert threads >= 2
    assert grad_parts == -(-5 // threads) * threads
    expected = torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                                   [False, True, False])[1]
    torch.testing.assert_close(grad.cpu(), expected, rtol=1e-4, atol=1e-4 * expected.abs().max().item())


@pytest.mark.parametrize('mode', ['auto'], indirect=True)
def test_activation_dominated_and_grouped_convolutions_split_by_batch(mode):
    torch.manual_seed(5)
    before = channel_splits()
    x, w, b = torch.randn(4, 32, 12, 12), torch.randn(32, 32, 3, 3), torch.randn(32)
    assert check_against_eager(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, w, b, torch.float32, 1e-4) == 3
    x, w = torch.randn(4, 64, 4, 4), torch.randn(64, 32, 3, 3)
    assert check_against_eager(lambda x, w, b: F.conv2d(x, w, b, groups=2), x, w, b[:0].new_zeros(64),
                               torch.float32, 1e-4) == 3
    assert channel_splits() == before


@pytest.mark.parametrize('mode,dtype,tol', [('auto', torch.float32, 1e-4), ('1', torch.bfloat16, 2e-2)],
                         ids=['float32', 'bfloat16'], indirect=['mode'])
@pytest.mark.parametrize('shapes', [((4, 16, 10, 10), (16, 16, 3, 3)), ((4, 64, 4, 4), (64, 64, 3, 3))],
                         ids=['by_batch', 'by_channels'])
def test_results_computed_in_place_from_the_second_call_on(mode, dtype, tol, shapes):
    # The first call of each kind learns which of PyTorch's allocations is its result
    # (each part's result is copied into the graph's buffer); later calls offer that
    # allocation the part's piece of the buffer, and the values stay eager's.
    conv = lambda x, w, b: F.conv2d(x, w, b, padding=1)
    in_place = []
    for seed in (7, 8, 9):
        torch.manual_seed(seed)
        x, w, b = torch.randn(shapes[0]), torch.randn(shapes[1]), torch.randn(shapes[1][0])
        before = met.counter_value('HostConvolutionResultInPlace') or 0
        assert check_against_eager(conv, x, w, b, dtype, tol) == 3
        in_place.append((met.counter_value('HostConvolutionResultInPlace') or 0) - before)
    # Batch split: the forward's and the input gradient's parts; channel split: the
    # forward's parts are strided views (copied), the weight gradient's rows are not.
    assert in_place[1] >= 2 and in_place[2] == in_place[1]


def pending_hlo(fn, *shapes, dtype=torch.float32):
    tensors = [torch.randn(s, dtype=dtype, device=dev) for s in shapes]
    return torch_xla._get_stablehlo([fn(*tensors)])


def forward(x, w):
    return F.conv2d(x, w)


def weight_grad(x, w):
    dy = torch.ones(F.conv2d(x.cpu(), w.cpu()).shape, dtype=x.dtype, device=dev)
    return torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                               [False, True, False])[1]


def input_grad(x, w):
    dy = torch.ones(F.conv2d(x.cpu(), w.cpu()).shape, dtype=x.dtype, device=dev)
    return torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                               [True, False, False])[0]


@pytest.mark.parametrize('mode', ['auto'], indirect=True)
def test_auto_mode_choices(mode):
    def on_host(fn, *shapes, dtype=torch.float32):
        hlo = pending_hlo(fn, *shapes, dtype=dtype)
        assert (HOST_TARGET in hlo) != ('stablehlo.convolution' in hlo), hlo
        return HOST_TARGET in hlo

    assert on_host(forward, (2, 10, 12, 12), (20, 10, 5, 5))
    assert on_host(input_grad, (2, 10, 12, 12), (20, 10, 5, 5))
    # Channel blocks of 16 mostly padding (10 -> 20): XLA's weight gradient measured faster.
    assert not on_host(weight_grad, (2, 10, 12, 12), (20, 10, 5, 5))
    assert on_host(weight_grad, (2, 16, 12, 12), (32, 16, 5, 5))
    assert on_host(weight_grad, (2, 3, 12, 12), (20, 3, 5, 5))  # few input channels
    # float64 and bfloat16 keep XLA's convolution.
    assert not on_host(forward, (2, 10, 12, 12), (20, 10, 5, 5), dtype=torch.float64)
    assert not on_host(forward, (2, 10, 12, 12), (20, 10, 5, 5), dtype=torch.bfloat16)
    # One input channel and few taps: neither, the sum over taps.
    hlo = pending_hlo(forward, (2, 1, 12, 12), (4, 1, 5, 5))
    assert HOST_TARGET not in hlo and 'stablehlo.convolution' not in hlo
    # Grouped weight gradients run on the host whatever the blocks.
    x, w = torch.randn(2, 8, 9, 9, device=dev), torch.randn(8, 2, 3, 3, device=dev)
    dy = torch.ones(2, 8, 7, 7, device=dev)
    gw = torch.ops.aten.convolution_backward(dy, x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 4,
                                             [False, True, False])[1]
    assert HOST_TARGET in torch_xla._get_stablehlo([gw])


@pytest.mark.parametrize('mode', ['0'], indirect=True)
def test_mode_0_keeps_xla_convolution(mode):
    for fn in (forward, input_grad, weight_grad):
        hlo = pending_hlo(fn, (2, 16, 12, 12), (32, 16, 5, 5))
        assert HOST_TARGET not in hlo
        # (this input gradient is XLA's matrix product and overlap-add, test_convolution.py)
        assert ('stablehlo.convolution' in hlo) == (fn is not input_grad)


def test_default_mode_is_auto_and_names_are_checked():
    assert torch_xla._XLAC._xla_host_convolution() == 'auto'
    for name in ('1', '0', 'auto'):
        torch_xla._XLAC._xla_set_host_convolution(name)
        assert torch_xla._XLAC._xla_host_convolution() == name
    with pytest.raises(ValueError, match="auto, 1 or 0, got 'on'"):
        torch_xla._XLAC._xla_set_host_convolution('on')
    assert torch_xla._XLAC._xla_host_convolution() == 'auto'


@pytest.mark.parametrize('mode', ['auto'], indirect=True)
def test_main_thread_keeps_its_thread_count(mode):
    # The parts run single-threaded (per-thread settings); the calling thread, which can
    # run a part itself, gets its own count back.
    threads = torch.get_num_threads()
    x = torch.randn(8, 16, 10, 10, device=dev, requires_grad=True)
    w = torch.randn(16, 16, 3, 3, device=dev, requires_grad=True)
    F.conv2d(x, w).sum().backward()
    xm.mark_step()
    xm.wait_device_ops()
    assert torch.get_num_threads() == threads
    a = torch.randn(256, 256)
    torch.testing.assert_close(a @ a, (a.double() @ a.double()).float(), rtol=1e-4, atol=1e-3)


def test_bad_environment_value_fails_the_convolution_with_its_name():
    child = ('import torch, torch.nn.functional as F, torch_xla.core.xla_model as xm\n'
             'd = xm.xla_device()\n'
             'try:\n'
             '    F.conv2d(torch.randn(1, 2, 5, 5, device=d), torch.randn(3, 2, 3, 3, device=d))\n'
             'except RuntimeError as e:\n'
             '    print("raised:", e)\n'
             'print(F.linear(torch.ones(1, 2, device=d), torch.ones(3, 2, device=d)).sum().item())\n')
    env = dict(os.environ, XLA_HOST_CONVOLUTION='yes')
    result = subprocess.run([sys.executable, '-c', child], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "raised: convolution: XLA_HOST_CONVOLUTION must be auto, 1 or 0, got 'yes'" in result.stdout
    assert result.stdout.strip().endswith('6.0')
