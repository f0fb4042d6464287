"""The device API (torch_xla, xla_model, metrics) on a real XLA device."""

import copy
import json
import io
import os

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from testing.closure_testing import ClosureInBackward
from testing.device_marks import cpu_device, needs_devices

DEV = xm.xla_device()


def counter(name):
  return met.counter_value(name) or 0


# ------------------------------------------------------------------ devices


@needs_devices(2)
def test_xla_device():
  assert DEV == torch.device('xla', 0)
  assert str(DEV) == 'xla:0'
  assert xm.xla_device(1) == torch.device('xla', 1)
  assert str(xm.xla_device(1)) == 'xla:1'
  assert torch_xla.device() == DEV
  assert torch_xla.device_count() >= 2
  assert len(torch_xla.devices()) == torch_xla.device_count()


@cpu_device('the default number of CPU devices')
def test_default_cpu_device_count_is_one():
  # Without CPU_NUM_DEVICES there is one CPU device, as in torch_xla: libraries take
  # every listed device as a replica to run. CPU_NUM_DEVICES asks for more.
  import subprocess
  import sys
  env = {k: v for k, v in os.environ.items() if k != 'CPU_NUM_DEVICES'}
  code = 'import torch_xla; print(torch_xla.device_count())'
  out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True)
  assert int(out.stdout.strip().splitlines()[-1]) == 1
  env['CPU_NUM_DEVICES'] = '3'
  out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True)
  assert int(out.stdout.strip().splitlines()[-1]) == 3


def test_xla_device_out_of_range_raises():
  with pytest.raises(RuntimeError):
    xm.xla_device(torch_xla.device_count())


def test_supported_devices_and_hw():
  devices = xm.get_xla_supported_devices()
  assert devices[0] == 'xla:0'
  assert devices == [f'xla:{i}' for i in range(torch_xla.device_count())]
  assert xm.get_xla_supported_devices(max_devices=1) == ['xla:0']
  hw = xm.xla_device_hw(DEV)
  assert hw in ('CPU', 'GPU', 'TPU')
  assert xm.xla_device_hw('xla:1') == hw
  assert xm.get_xla_supported_devices(devkind=hw) == devices
  other = {'CPU': 'TPU', 'GPU': 'TPU', 'TPU': 'CPU'}[hw]
  assert xm.get_xla_supported_devices(devkind=other) == []
  with pytest.raises(RuntimeError):
    xm.xla_device(devkind=other)
  with pytest.raises(ValueError):
    xm.xla_device_hw('cpu')


def test_replication_defaults():
  assert xm.xrt_world_size() == 1
  assert xm.world_size() == 1
  assert xm.get_ordinal() == 0
  assert xm.get_local_ordinal() == 0
  assert xm.is_master_ordinal()
  assert xm.is_master_ordinal(local=False)


def test_master_print():
  called = []
  buf = io.StringIO()
  xm.master_print('hello', 3, fd=buf, finalizer=lambda: called.append(1))
  assert buf.getvalue() == 'hello 3\n'
  assert called == [1]



@needs_devices(2)
def test_is_xla_tensor():
  assert xm.is_xla_tensor(torch.ones(2, device=DEV))
  assert xm.is_xla_tensor(torch.ones(2, device='xla:1'))
  assert not xm.is_xla_tensor(torch.ones(2))
  assert not xm.is_xla_tensor([1, 2])


# ------------------------------------------------------------------- steps


def _step(x, lr):
  y = (x * lr + 1.0).sum(0)
  xm.mark_step()
  return y


def test_mark_step_runs_and_second_step_hits_cache():
  x = torch.arange(12.0).view(3, 4).to(DEV)  # device data, not a pending view
  xm.mark_step()
  met.clear_counters()
  y = _step(x, 0.5)
  uncached = counter('UncachedCompile')
  cached = counter('CachedCompile')
  assert torch.allclose(y.cpu(), (torch.arange(12.0).view(3, 4) * 0.5 + 1).sum(0))
  met.clear_counters()
  y2 = _step(x, 0.5)
  assert counter('CachedCompile') >= 1
  assert counter('UncachedCompile') == 0
  assert torch.equal(y2.cpu(), y.cpu())
  # A different Python scalar is a parameter, not a constant: no recompilation.
  met.clear_counters()
  y3 = _step(x, 0.25)
  assert counter('UncachedCompile') == 0, met.short_metrics_report()
  assert counter('CachedCompile') >= 1
  assert torch.allclose(y3.cpu(), (torch.arange(12.0).view(3, 4) * 0.25 + 1).sum(0))
  del uncached, cached


def test_changed_scalar_in_inplace_update_does_not_recompile():
  w = torch.ones(4, 4, device=DEV)
  g = torch.full((4, 4), 2.0, device=DEV)
  xm.mark_step()
  lrs = [0.1, 0.05, 0.025, 0.0125]
  expected = torch.ones(4, 4)
  uncached = []
  for lr in lrs:
    met.clear_counters()
    w.sub_(g * lr)
    xm.mark_step()
    uncached.append(counter('UncachedCompile'))
    expected -= 2.0 * lr
  assert uncached[1:] == [0, 0, 0], uncached
  assert torch.allclose(w.cpu(), expected)


def test_pending_work_runs_on_mark_step():
  x = torch.zeros(3, device=DEV)
  x.add_(5)
  met.clear_metrics()
  xm.mark_step(wait=True)
  assert met.metric_data('ExecuteTime') is not None
  assert torch.equal(x.cpu(), torch.full((3,), 5.0))
  torch_xla.sync()
  xm.wait_device_ops()


def test_get_stablehlo():
  x = torch.ones(2, 3, device=DEV)
  y = (x * 2 + 1).sum()
  text = torch_xla._get_stablehlo([y])
  assert isinstance(text, str)
  assert 'stablehlo' in text
  assert 'func' in text
  assert float(y.cpu()) == 18.0


def test_add_step_closure_order():
  calls = []
  x = torch.ones(2, device=DEV) * 3
  xm.add_step_closure(lambda: calls.append('first'))
  xm.add_step_closure(lambda t: calls.append(('second', t.cpu().tolist())), args=(x,))
  xm.add_step_closure(lambda a, b: calls.append(('third', a, b)), args=(1, 2))
  assert calls == []
  xm.mark_step()
  assert calls == ['first', ('second', [3.0, 3.0]), ('third', 1, 2)]
  xm.mark_step()
  assert len(calls) == 3  # each closure runs once


def test_add_step_closure_async():
  calls = []
  for i in range(5):
    xm.add_step_closure(lambda i: calls.append(i), args=(i,), run_async=True)
  xm.mark_step()
  xm.mark_step()  # waits for the previous step's async closures
  assert calls == list(range(5))


def _train(device, steps, barrier):
  torch.manual_seed(0)
  model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).to(device)
  opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
  g = torch.Generator().manual_seed(1)
  data = [(torch.randn(5, 4, generator=g), torch.randn(5, 2, generator=g)) for _ in range(steps)]
  for x, y in data:
    opt.zero_grad()
    loss = ((model(x.to(device)) - y.to(device))**2).mean()
    loss.backward()
    if device == 'cpu':
      opt.step()
    else:
      xm.optimizer_step(opt, barrier=barrier)
  return [p.detach().cpu() for p in model.parameters()]


def test_optimizer_step_matches_eager():
  expected = _train('cpu', 3, False)
  met.clear_counters()
  actual = _train(DEV, 3, True)
  for a, e in zip(actual, expected):
    torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-6)
  assert counter('UncachedCompile') + counter('CachedCompile') >= 3  # barrier marks each step


def test_get_memory_info():
  info = xm.get_memory_info(DEV)
  assert info['kb_total'] > 0
  assert info['kb_free'] > 0
  assert info['kb_free'] <= info['kb_total']
  assert set(info) >= {'kb_free', 'kb_total', 'bytes_used', 'bytes_limit'}


# -------------------------------------------------------------- save, copy


def test_save_and_load(tmp_path):
  data = {
      'w': torch.arange(6.0, device=DEV).view(2, 3),
      'nested': [torch.ones(2, dtype=torch.int64, device=DEV), {'b': torch.tensor(True, device=DEV)}],
      'cpu': torch.zeros(2),
      'n': 5,
  }
  path = tmp_path / 'ckpt.pt'
  xm.save(data, str(path))
  loaded = torch.load(str(path))
  assert loaded['w'].device.type == 'cpu'
  assert torch.equal(loaded['w'], torch.arange(6.0).view(2, 3))
  assert loaded['nested'][0].device.type == 'cpu' and torch.equal(loaded['nested'][0], torch.ones(2, dtype=torch.int64))
  assert loaded['nested'][1]['b'].item() is True
  assert torch.equal(loaded['cpu'], torch.zeros(2))
  assert loaded['n'] == 5
  # The originals are still on the device.
  assert data['w'].device == DEV


def test_save_to_buffer():
  buf = io.BytesIO()
  xm.save({'t': torch.full((3,), 2.0, device=DEV)}, buf)
  buf.seek(0)
  assert torch.equal(torch.load(buf)['t'], torch.full((3,), 2.0))


def test_copy_copy_is_deep():
  x = torch.arange(4.0, device=DEV)
  c = copy.copy(x)
  assert c.device == DEV
  c.add_(10)
  assert torch.equal(x.cpu(), torch.arange(4.0))
  assert torch.equal(c.cpu(), torch.arange(4.0) + 10)
  d = copy.deepcopy(x)
  d.mul_(0)
  assert torch.equal(x.cpu(), torch.arange(4.0))
  assert torch.equal(d.cpu(), torch.zeros(4))


def test_deepcopy_module():
  m = torch.nn.Linear(3, 2).to(DEV)
  m2 = copy.deepcopy(m)
  with torch.no_grad():
    m2.weight.zero_()
  assert m.weight.abs().sum().item() > 0
  assert m2.weight.device == DEV


@needs_devices(2)
def test_print_and_item():
  x = torch.tensor([1.5, -2.0], device=DEV)
  r = repr(x)
  assert "device='xla:0'" in r
  assert '1.5000' in r and '-2.0000' in r
  assert "device='xla:1'" in repr(x.to('xla:1'))
  assert str(torch.ones(2, 2, dtype=torch.int32, device=DEV)).count('1') >= 4
  assert x.sum().item() == -0.5
  assert torch.tensor(7, device=DEV).item() == 7
  assert torch.tensor(True, device=DEV).item() is True
  assert x.tolist() == [1.5, -2.0]
  assert bool((x > 0).sum() == 1)


def test_item_on_pending_graph():
  x = torch.ones(3, device=DEV)
  y = (x * 4).sum()
  assert y.item() == 12.0
  assert int(y) == 12
  assert float(y) == 12.0


# ---------------------------------------------------------- other devices


@needs_devices(2)
def test_second_device_computes():
  d1 = xm.xla_device(1)
  a = torch.arange(6.0).view(2, 3)
  b = torch.full((3,), 2.0)
  x = a.to(d1)
  y = (x * b.to(d1) + 1).sum(1)
  assert y.device == d1
  assert torch.equal(y.cpu(), (a * b + 1).sum(1))
  z = torch.zeros(2, device=d1)
  z.add_(y)
  xm.mark_step()
  assert torch.equal(z.cpu(), (a * b + 1).sum(1))
  assert torch.equal((x @ x.t()).cpu(), a @ a.t())


@needs_devices(2)
def test_mixing_devices_raises():
  a = torch.ones(2, 3, device=DEV)
  b = torch.ones(2, 3, device='xla:1')
  with pytest.raises(RuntimeError, match='xla:0|xla:1|device'):
    a + b
  with pytest.raises(RuntimeError):
    torch.mm(a, b.t())
  with pytest.raises(RuntimeError):
    torch.where(a > 0, a, b)
  assert torch.equal((a + b.to(DEV)).cpu(), torch.full((2, 3), 2.0))


def test_cpu_module_on_xla_tensor_raises():
  m = torch.nn.Linear(3, 2)
  with pytest.raises(RuntimeError, match='XLA'):
    m(torch.ones(4, 3, device=DEV))


def test_shape_mismatch_raises_naming_shapes():
  with pytest.raises(RuntimeError) as info:
    torch.ones(2, 3, device=DEV) + torch.ones(4, 5, device=DEV)
  msg = str(info.value)
  assert '2, 3' in msg and '4, 5' in msg, msg


def test_bad_mm_raises_and_process_continues():
  a = torch.ones(2, 3, device=DEV)
  with pytest.raises(RuntimeError):
    torch.mm(a, torch.ones(4, 5, device=DEV))
  with pytest.raises(RuntimeError):
    a @ torch.ones(2, 3, device=DEV)
  xm.mark_step()
  r = a @ torch.ones(3, 4, device=DEV)
  xm.mark_step()
  assert torch.equal(r.cpu(), torch.full((2, 4), 3.0))


# ------------------------------------------------------------------ metrics


def test_metrics_report_and_data():
  x = torch.rand(8, 8, device=DEV)
  y = (x @ x + 3.0).sum()
  xm.mark_step()
  y.cpu()
  report = met.metrics_report()
  assert 'CompileTime' in report
  assert 'ExecuteTime' in report
  names = met.counter_names()
  assert isinstance(names, list) and names
  assert any(n.startswith('xla::') for n in names)
  data = met.metric_data('CompileTime')
  assert data is not None
  count, total, samples = data
  assert count >= 1 and total > 0
  assert met.metric_data('NoSuchMetric') is None
  assert met.counter_value('NoSuchCounter') is None
  assert 'CompileTime' in met.metric_names()
  short = met.short_metrics_report()
  assert 'CompileTime' in short


def test_clear_all():
  (torch.ones(3, device=DEV) * 2).cpu()
  assert met.counter_names()
  met.clear_all()
  assert all(met.counter_value(n) in (0, None) for n in met.counter_names())
  assert met.metric_data('CompileTime') is None or met.metric_data('CompileTime')[0] == 0
  (torch.ones(3, device=DEV) * 3).cpu()
  assert counter('xla::mul') == 1


def test_fallback_counter():
  met.clear_counters()
  x = torch.tensor([3.0, 0.0, 2.0], device=DEV)
  v = torch.nonzero(x)  # a data-dependent shape, not lowered: runs on the CPU
  assert torch.equal(v.cpu(), torch.tensor([[0], [2]]))
  assert counter('aten::nonzero') >= 1
  assert 'aten::nonzero' in met.short_metrics_report()


def test_a_tensor_built_on_the_device_is_wrapped_like_any_other():
  # torch.tensor(data, device=...) lifts its new tensor; an in-place op that mixes it
  # with tensors moved by .to() must work alike.
  a = torch.tensor([1.0, 2.0], device=DEV)
  b = torch.ones(2).to(DEV)
  assert torch._is_functional_tensor(a) and torch._is_functional_tensor(b)
  found = torch.zeros((), device=DEV)
  torch._amp_foreach_non_finite_check_and_unscale_([a, b], found, torch.tensor(0.5, device=DEV))
  a.add_(b)
  assert a.cpu().tolist() == [1.0, 1.5] and found.item() == 0.0


def test_replace_xla_tensor_makes_the_tensors_share_one_value():
  t1 = torch.zeros(50, device=DEV) + 1
  t2 = torch.arange(10.0, device=DEV)
  torch_xla._XLAC._replace_xla_tensor(t1, t2)
  assert t1.shape == (10,) and torch.equal(t1.cpu(), torch.arange(10.0))
  t1.mul_(2)  # one value: an update through either is seen by both
  assert torch.equal(t2.cpu(), torch.arange(10.0) * 2)
  with pytest.raises(RuntimeError, match='expected two XLA tensors'):
    torch_xla._XLAC._replace_xla_tensor(t1, torch.ones(3))


def test_init_xla_lazy_backend_counts_its_registration_once():
  met.clear_all()
  torch_xla._XLAC._init_xla_lazy_backend()
  torch_xla._XLAC._init_xla_lazy_backend()
  # Counted by the first call in the process (no other test calls it).
  assert met.counter_value('RegisterXLAFunctions') == 1


def test_a_step_closure_queued_by_the_backward_runs_at_the_next_step():
  seen = []
  x = torch.ones(2, device=DEV, requires_grad=True)
  ClosureInBackward.apply(x, seen).sum().backward()
  assert seen == [('queued', False)]  # on autograd's thread
  xm.mark_step()
  assert seen == [('queued', False), ('ran', [1.0, 1.0])]


def test_lowering_context_gives_the_program_and_its_parameters():
  a = torch.tensor([1.0, 2.0, 3.0], device=DEV)
  b = torch.tensor([4.0, 5.0, 6.0], device=DEV)
  result = a * b + 2.5
  ctx = torch_xla._XLAC.lowering.LoweringContext('MyCustomName')
  ctx.build([result])
  text = ctx.hlo_text()
  assert 'module @"MyCustomName"' in text and 'stablehlo.multiply' in text and ctx.hlo() == text.encode()
  # a, b and the scalar 2.5 feed the program (0 and 1 would be constants of it).
  met.clear_all()
  on_device = ctx.device_parameter_id_tensor_mapping()
  assert met.metric_data('TransferFromDeviceTime') is None  # nothing moved
  assert sorted(on_device) == [0, 1, 2] and all(t.device.type == 'xla' for t in on_device.values())
  on_host = ctx.parameter_id_tensor_mapping()
  values = sorted(tuple(t.reshape(-1).tolist()) for t in on_host.values())
  assert values == [(1.0, 2.0, 3.0), (2.5,), (4.0, 5.0, 6.0)]
  assert on_host[ctx.tensor_parameter_id(a)].tolist() == [1.0, 2.0, 3.0]
  assert on_host[ctx.tensor_parameter_id(b)].tolist() == [4.0, 5.0, 6.0]
  assert ctx.tensor_parameter_id(result) == -1  # computed by the program, not fed to it
  shape = json.loads(ctx.hlo_json())['hostProgramShape']
  assert len(shape['parameters']) == 3 and shape['result'] == {'elementType': 'F32', 'dimensions': ['3']}
  # The program is what computing the tensor runs.
  assert torch.equal(result.cpu(), torch.tensor([6.5, 12.5, 20.5]))
  with pytest.raises(RuntimeError, match='build'):
    torch_xla._XLAC.lowering.LoweringContext().hlo_text()
