"""The guide's precision modes, each in a process of its own (read from the environment
at the first tensor): a training step of the MNIST network against eager PyTorch in the
matching precision, the dtypes tensors report, and a checkpoint's save/load round trip.
And torch.autocast('xla') in this process, with PyTorch's op lists."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F
import torch_xla  # noqa: F401  (the xla device)

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'examples')
sys.path.insert(1, EXAMPLES)
from mnist_model import MNIST  # noqa: E402

MODES = ('XLA_USE_BF16', 'XLA_DOWNCAST_BF16', 'XLA_USE_32BIT_LONG')

# One SGD step on the device; the step's loss, the gradients and the updated parameters go
# to `out` through xm.save, and the saved parameters are loaded back onto the device.
STEP = textwrap.dedent('''
    import json, sys, torch
    import torch.nn.functional as F
    import torch_xla.core.xla_model as xm
    sys.path.insert(1, sys.argv[2])
    from mnist_model import MNIST

    out = sys.argv[1]
    torch.manual_seed(0)
    model = MNIST()
    images, labels = torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))
    d = xm.xla_device()
    model = model.to(d)
    x, y = images.to(d), labels.to(d)
    loss = F.nll_loss(model(x), y)
    loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    with torch.no_grad():
      for p in model.parameters():
        p -= 0.1 * p.grad
    xm.save({'loss': loss, 'grads': grads, 'state': model.state_dict()}, out)

    saved = torch.load(out)
    again = MNIST().to(d)
    again.load_state_dict(saved['state'])
    double = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, device=d) / 3
    print(json.dumps({
        'reported': {'param': str(model.fc1.weight.dtype), 'grad': str(model.fc1.weight.grad.dtype),
                     'loss': str(loss.dtype), 'labels': str(y.dtype), 'argmax': str(x.flatten(1).argmax(1).dtype),
                     'bf16': str(torch.ones(2, dtype=torch.bfloat16, device=d).dtype),
                     'double': str(double.dtype), 'int32': str(torch.ones(2, dtype=torch.int32, device=d).dtype)},
        'on_cpu': {'param': str(model.fc1.weight.cpu().dtype), 'labels': str(y.cpu().dtype),
                   'double': str(double.cpu().dtype)},
        'double': double.cpu().tolist(),
        'reloaded_equal': all(torch.equal(a.cpu(), saved['state'][n]) for n, a in again.state_dict().items()),
        'device_types': sorted(set(t.split('[')[0] for t in
                                   __import__('torch_xla')._XLAC._get_xla_tensors_text([x * 1, y + 0]).split()
                                   if t[:2] in ('f3', 'f6', 'bf', 'i3', 'i6') and '[' in t and '[]' not in t)),
    }))
''')


def run_step(tmp_path, mode):
  script = tmp_path / 'step.py'
  script.write_text(STEP)
  out = tmp_path / 'step.pt'
  environ = {k: v for k, v in os.environ.items() if k not in MODES}
  if mode:
    environ[mode] = '1'
  done = subprocess.run([sys.executable, str(script), str(out), EXAMPLES], env=environ, capture_output=True,
                        text=True, timeout=180)
  assert done.returncode == 0, done.stderr[-3000:]
  return json.loads(done.stdout.strip().splitlines()[-1]), torch.load(out)


def eager_step(dtype):
  """The same step in eager PyTorch with parameters and inputs in `dtype`."""
  torch.manual_seed(0)
  model = MNIST()
  images, labels = torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))
  model = model.to(dtype)
  loss = F.nll_loss(model(images.to(dtype)), labels)
  loss.backward()
  grads = {n: p.grad.clone() for n, p in model.named_parameters()}
  with torch.no_grad():
    for p in model.parameters():
      p -= 0.1 * p.grad
  return loss.detach(), grads, model.state_dict()


def assert_close_to_eager(result, eager, rtol, atol):
  loss, grads, state = eager
  torch.testing.assert_close(result['loss'], loss.float(), rtol=rtol, atol=atol)
  for name, grad in grads.items():
    scale = grad.float().abs().max().item()
    torch.testing.assert_close(result['grads'][name], grad.float(), rtol=rtol, atol=atol * max(scale, 1.0),
                               msg=lambda m: f'grad of {name}: {m}')
  for name, value in state.items():
    if value.is_floating_point():
      torch.testing.assert_close(result['state'][name], value.float(), rtol=rtol, atol=atol,
                                 msg=lambda m: f'{name}: {m}')


def assert_as_accurate_as(result, lower, truth):
  loss, grads, state = truth
  assert abs(result['loss'].item() - loss.item()) <= 2 * abs(lower[0].float().item() - loss.item()) + 1e-3
  for kind, values in (('grads', grads), ('state', state)):
    low = lower[1] if kind == 'grads' else lower[2]
    for name, exact in values.items():
      if not exact.is_floating_point():
        continue
      error = (result[kind][name] - exact).abs().max().item()
      reference_error = (low[name].float() - exact).abs().max().item()
      assert error <= 2 * reference_error + 1e-3, f'{kind} {name}: error {error}, eager bf16 {reference_error}'


def test_default_precision_step_matches_float32_eager(tmp_path):
  report, result = run_step(tmp_path, None)
  assert report['reported'] == {'param': 'torch.float32', 'grad': 'torch.float32', 'loss': 'torch.float32',
                                'labels': 'torch.int64', 'argmax': 'torch.int64', 'bf16': 'torch.bfloat16',
                                'double': 'torch.float64', 'int32': 'torch.int32'}
  assert report['device_types'] == ['f32', 'i64']
  assert report['double'] == [1 / 3, 2 / 3, 1.0]
  assert report['reloaded_equal']
  assert_close_to_eager(result, eager_step(torch.float32), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('mode', ['XLA_USE_BF16', 'XLA_DOWNCAST_BF16'])
def test_bf16_modes_compute_in_bf16_and_report_pytorch_dtypes(tmp_path, mode):
  report, result = run_step(tmp_path, mode)
  reported = report['reported']
  # float32 tensors are bf16 on the device and still say float32, on the device and back.
  assert report['device_types'] == ['bf16', 'i64']
  assert (reported['param'], reported['grad'], reported['loss']) == ('torch.float32',) * 3
  assert report['on_cpu']['param'] == 'torch.float32'
  assert all(t.dtype == torch.float32 for t in result['state'].values() if t.is_floating_point())
  # A bf16 tensor shares the device type of float32 and still reports bf16.
  assert reported['bf16'] == 'torch.bfloat16'
  # float64 is float32 (XLA_DOWNCAST_BF16) or bf16 (XLA_USE_BF16) on the device, and
  # reports float64 through the division, on the device and back.
  assert reported['double'] == report['on_cpu']['double'] == 'torch.float64'
  device_dtype = torch.float32 if mode == 'XLA_DOWNCAST_BF16' else torch.bfloat16
  expected = (torch.tensor([1.0, 2.0, 3.0], dtype=device_dtype) / 3).double().tolist()
  assert report['double'] == expected and report['double'] != [1 / 3, 2 / 3, 1.0]
  assert report['reloaded_equal']
  # The values are bf16's: each parameter is exactly representable in bf16 ...
  for value in result['state'].values():
    if value.is_floating_point():
      assert torch.equal(value, value.bfloat16().float())
  # ... and the step is as accurate as eager PyTorch's in bf16: against the float32 step,
  # each gradient and parameter is off by at most twice eager bf16's error.
  assert_as_accurate_as(result, eager_step(torch.bfloat16), eager_step(torch.float32))


def test_32bit_long_keeps_int64_reported_and_float32_values(tmp_path):
  report, result = run_step(tmp_path, 'XLA_USE_32BIT_LONG')
  reported = report['reported']
  assert report['device_types'] == ['f32', 'i32']
  assert (reported['labels'], reported['argmax'], report['on_cpu']['labels']) == ('torch.int64',) * 3
  assert reported['int32'] == 'torch.int32'  # int32 is also the device type of int64 in this mode
  assert reported['param'] == 'torch.float32'
  assert report['reloaded_equal']
  assert_close_to_eager(result, eager_step(torch.float32), rtol=1e-4, atol=1e-5)


def test_autocast_runs_matmuls_in_bf16_and_reductions_in_float32():
  d = torch.device('xla')
  torch.manual_seed(0)
  model = MNIST()
  images, labels = torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))
  reference = MNIST()
  reference.load_state_dict(model.state_dict())
  model = model.to(d)

  with torch.autocast('xla', dtype=torch.bfloat16):
    out = model(images.to(d))
    hidden = model.fc1(torch.randn(2, 320).to(d))
    loss = F.nll_loss(out, labels.to(d))
  assert hidden.dtype == torch.bfloat16  # linear is on the lower-precision list
  assert out.dtype == torch.float32  # log_softmax is on the float32 list
  assert loss.dtype == torch.float32
  loss.backward()
  assert model.fc1.weight.grad.dtype == torch.float32  # parameters stay float32

  with torch.autocast('cpu', dtype=torch.bfloat16):
    eager_loss = F.nll_loss(reference(images), labels)
  eager_loss.backward()
  torch.testing.assert_close(loss.cpu(), eager_loss, rtol=2e-2, atol=2e-2)
  torch.testing.assert_close(model.fc2.weight.grad.cpu(), reference.fc2.weight.grad, rtol=5e-2, atol=5e-2)

  # Outside the region ops run in the tensors' own dtype; promote-listed ops promote.
  a = torch.randn(3, 4, device=d)
  assert torch.mm(a, a.t()).dtype == torch.float32
  with torch.autocast('xla'):
    assert torch.get_autocast_dtype('xla') == torch.bfloat16
    assert torch.mm(a, a.t()).dtype == torch.bfloat16
    assert torch.addcmul(a, a.bfloat16(), a).dtype == torch.float32
