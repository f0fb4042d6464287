"""Convolutions run by PyTorch's CPU kernel inside the compiled graph (a host kernel
called through XLA's FFI; $XLA_HOST_CONVOLUTION=1, aten/host_convolution.h). The test
suite's own process keeps XLA's convolution, so these run in a child process."""
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent('''
    import torch, torch.nn.functional as F
    import torch_xla, torch_xla.core.xla_model as xm, torch_xla.debug.metrics as met
    dev = xm.xla_device()
    cases = [
        # (input size, weight size, kwargs, transposed)
        ((4, 3, 10, 9), (5, 3, 3, 3), dict(), False),
        ((2, 4, 11, 11), (6, 2, 3, 2), dict(stride=2, padding=1, dilation=2, groups=2), False),
        ((3, 2, 17), (4, 2, 5), dict(stride=3, padding=2), False),
        ((2, 2, 5, 6, 4), (3, 2, 2, 3, 2), dict(padding=1), False),
        ((2, 6, 5, 5), (6, 2, 3, 3), dict(stride=2, padding=1, output_padding=1, groups=2), True),
    ]
    tolerances = {torch.float32: 1e-5, torch.float64: 1e-12, torch.bfloat16: 2e-2}
    checked = 0
    for dtype, tol in tolerances.items():
        for x_size, w_size, kw, transposed in cases:
            torch.manual_seed(0)
            x = torch.randn(x_size, dtype=dtype)
            w = torch.randn(w_size, dtype=dtype)
            b = torch.randn(w_size[1] * kw.get('groups', 1) if transposed else w_size[0], dtype=dtype)
            nd = len(x_size) - 2
            fn = {(1, False): F.conv1d, (2, False): F.conv2d, (3, False): F.conv3d,
                  (2, True): F.conv_transpose2d}[(nd, transposed)]
            def run(device):
                xs = x.detach().to(device).requires_grad_()
                ws = w.detach().to(device).requires_grad_()
                bs = b.detach().to(device).requires_grad_()
                y = fn(xs, ws, bs, **kw)
                g = torch.linspace(-1, 1, y.numel(), dtype=dtype).reshape(y.shape).to(device)
                (y * g).sum().backward()
                return [t.detach().cpu() for t in (y, xs.grad, ws.grad, bs.grad)]
            want = run('cpu')
            got = run(dev)
            for name, a, e in zip(('output', 'grad_input', 'grad_weight', 'grad_bias'), got, want):
                assert a.dtype == e.dtype, (name, a.dtype, e.dtype)
                torch.testing.assert_close(a, e, rtol=tol, atol=tol * max(1.0, e.abs().max().item()),
                                           msg=lambda m: f'{dtype} {x_size} {w_size} {kw} {name}: {m}')
                checked += 1
    y = F.conv2d(torch.randn(1, 1, 5, 5).to(dev), torch.randn(2, 1, 3, 3).to(dev))
    text = torch_xla._get_stablehlo([y])
    assert 'torch_xla_host_convolution' in text and 'stablehlo.convolution' not in text, text
    print(checked, met.counter_value('HostConvolutionRun'), met.counter_value('aten::convolution_backward') or 0)
''')


def test_host_convolution_matches_eager_forward_and_backward():
  env = dict(os.environ, XLA_HOST_CONVOLUTION='1')
  result = subprocess.run([sys.executable, '-c', CHILD], env=env, capture_output=True, text=True, timeout=600)
  assert result.returncode == 0, result.stdout + result.stderr
  checked, runs, fallbacks = result.stdout.split()
  assert int(checked) == 3 * 5 * 4
  # forward, grad_input and grad_weight of each case ran as host kernels
  assert int(runs) >= 3 * 5 * 3
  assert fallbacks == '0'


def test_xla_convolution_is_the_default():
  import torch
  import torch.nn.functional as F
  import torch_xla
  import torch_xla.core.xla_model as xm
  dev = xm.xla_device()
  y = F.conv2d(torch.randn(1, 2, 5, 5).to(dev), torch.randn(2, 2, 3, 3).to(dev))
  text = torch_xla._get_stablehlo([y])
  assert 'stablehlo.convolution' in text and 'torch_xla_host_convolution' not in text
