"""The graph executor: buffer donation at mark_step (a tensor's old buffer is reused
for a result when nothing can read it again), and correctness around it; an error
instead of a death: a computation larger than the device's memory raises and the process
lives on."""
import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from testing.device_marks import cpu_device

DEV = xm.xla_device()


def donated():
  return met.counter_value('DonatedBuffers') or 0


def test_in_place_updates_donate_their_old_buffers():
  w = torch.ones(4, 4, device=DEV)
  m = torch.zeros(4, 4, device=DEV)
  w_cpu, m_cpu = torch.ones(4, 4), torch.zeros(4, 4)
  xm.mark_step()
  before = donated()
  for _ in range(3):
    for ww, mm in ((w, m), (w_cpu, m_cpu)):
      mm.mul_(0.9).add_(ww * 0.1)
      ww.sub_(mm)
    xm.mark_step()
  # Each step replaces both buffers; nothing else holds the old ones.
  assert donated() - before == 6
  torch.testing.assert_close(w.cpu(), w_cpu)
  torch.testing.assert_close(m.cpu(), m_cpu)


def _linear_on_device_and_cpu(features, outputs):
  """A Linear layer on the device and an equal one on the CPU, each with SGD and momentum."""
  torch.manual_seed(0)
  model = torch.nn.Linear(features, outputs)
  ref = torch.nn.Linear(features, outputs)
  ref.load_state_dict(model.state_dict())
  model.to(DEV)
  return ((model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)),
          (ref, torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)))


def _train_step(device_and_cpu, x):
  for (model, opt), inp in zip(device_and_cpu, (x.to(DEV), x)):
    opt.zero_grad()
    model(inp).pow(2).sum().backward()
    opt.step()
  xm.mark_step()


def test_updates_take_the_buffers_they_update_not_a_gradient_of_the_same_shape():
  # The step's results include each weight's gradient (same shape as the weight, and
  # traced before the update): the weight's old buffer must go to the weight's update
  # and the momentum's to the momentum's, else XLA copies around the mismatch.
  pair = _linear_on_device_and_cpu(6, 4)
  (model, opt), (ref, ref_opt) = pair
  x = torch.randn(5, 6)
  for step in range(3):
    before = donated(), met.counter_value('DonatedToUpdates') or 0
    _train_step(pair, x)
    after = donated(), met.counter_value('DonatedToUpdates') or 0
    # The first step creates the momentum buffers (from the gradients): only the weight
    # and bias are updated in place; later steps update the momentum buffers too.
    expected = 2 if step == 0 else 4
    assert after[1] - before[1] == expected
    assert after[0] - before[0] >= expected
  torch.testing.assert_close(model.weight.cpu(), ref.weight, rtol=1e-5, atol=1e-6)
  torch.testing.assert_close(model.bias.cpu(), ref.bias, rtol=1e-5, atol=1e-6)
  for p, q in zip(model.parameters(), ref.parameters()):
    torch.testing.assert_close(opt.state[p]['momentum_buffer'].cpu(), ref_opt.state[q]['momentum_buffer'],
                               rtol=1e-5, atol=1e-6)


def test_buffer_still_held_by_a_tensor_is_not_donated():
  a = torch.full((8,), 2.0, device=DEV)
  xm.mark_step()
  before = donated()
  b = a * 3
  xm.mark_step()
  assert donated() == before
  assert a.cpu().tolist() == [2.0] * 8
  assert b.cpu().tolist() == [6.0] * 8


def test_dropped_tensor_buffer_is_donated_to_a_result():
  a = torch.full((8,), 2.0, device=DEV)
  xm.mark_step()
  before = donated()
  b = a * 3
  del a
  xm.mark_step()
  assert donated() == before + 1
  assert b.cpu().tolist() == [6.0] * 8


def test_partial_sync_does_not_donate():
  w = torch.ones(3, device=DEV)
  xm.mark_step()
  before = donated()
  w.add_(1)
  other = w * 2  # pending too, and reads the old buffer's successor
  assert w.cpu().tolist() == [2.0] * 3  # syncs only w (and what it needs)
  assert donated() == before
  xm.mark_step()
  assert other.cpu().tolist() == [4.0] * 3


def test_training_with_and_without_donation_agree_over_steps():
  pair = _linear_on_device_and_cpu(5, 3)
  (model, _), (ref, _) = pair
  x = torch.randn(7, 5)
  before = donated()
  for _ in range(4):
    _train_step(pair, x)
  assert donated() > before
  torch.testing.assert_close(model.weight.cpu(), ref.weight, rtol=1e-5, atol=1e-6)
  torch.testing.assert_close(model.bias.cpu(), ref.bias, rtol=1e-5, atol=1e-6)


def test_repeated_scalar_parameters_are_uploaded_once():
  x = torch.ones(3, device=DEV)
  xm.mark_step()

  def transfers():
    data = met.metric_data('TransferToDeviceTime')
    return data[0] if data else 0

  (x * 0.37 + 1.25).cpu()
  before = transfers()
  results = [(x * 0.37 + 1.25).cpu() for _ in range(3)]
  assert transfers() == before
  for r in results:
    torch.testing.assert_close(r, torch.full((3,), 0.37) + 1.25)
  # A new value is uploaded and used.
  assert (x * 0.5 + 1.25).cpu().tolist() == [1.75] * 3


def test_graphs_that_differ_only_in_which_input_feeds_an_op_are_not_confused():
  # The gradients of exp(a * b) are g * b and g * a: two roots of one structure that
  # differ only in which device buffer each multiplies. A graph cache keyed without that
  # wiring handed both roots the same result.
  a_cpu = torch.tensor([1., 2., 3.])
  b_cpu = torch.tensor([0.5, 0.25, 0.1])
  w = torch.tensor([1., 10., 100.])
  grads = []
  for device in ('cpu', DEV):
    a = a_cpu.detach().clone().to(device).requires_grad_()
    b = b_cpu.detach().clone().to(device).requires_grad_()
    ((a * b).exp() * w.to(device)).sum().backward()
    grads.append((a.grad.cpu(), b.grad.cpu()))
  (ac, bc), (ax, bx) = grads
  torch.testing.assert_close(ax, ac)
  torch.testing.assert_close(bx, bc)
  # The same graph with the roots' inputs swapped, in one sync, again.
  a, b, g = a_cpu.to(DEV), b_cpu.to(DEV), w.to(DEV)
  first, second = g * a, g * b
  xm.mark_step()
  swapped_first, swapped_second = g * b, g * a
  xm.mark_step()
  torch.testing.assert_close(swapped_first.cpu(), w * b_cpu)
  torch.testing.assert_close(swapped_second.cpu(), w * a_cpu)
  torch.testing.assert_close(first.cpu(), w * a_cpu)


def _matmul_chain(t, length=20):
  y = t
  for _ in range(length):
    y = torch.tanh(y @ t)
  return y


def test_buffer_read_by_a_running_execution_is_donated_after_it():
  # y's graph reads w's buffer while it runs; the next step donates that buffer to w's
  # new value. The donation waits for the reader: y is computed from the old w.
  torch.manual_seed(0)
  for _ in range(3):
    w_cpu = torch.randn(256, 256) / 16
    w = w_cpu.to(DEV)
    xm.mark_step()
    y = _matmul_chain(w)
    xm.mark_step()  # launched, not awaited
    before = donated()
    w.mul_(0).add_(7)
    xm.mark_step()
    assert donated() - before == 1
    torch.testing.assert_close(y.cpu(), _matmul_chain(w_cpu), rtol=1e-4, atol=1e-5)
    assert w.cpu().eq(7).all()


def test_donation_does_not_depend_on_whether_earlier_executions_finished():
  # The same step, once right after a launch that reads the parameter and once after
  # waiting for it, donates alike and so runs the same compiled graph.
  w = torch.randn(128, 128, device=DEV) / 12
  xm.mark_step()
  compiles = []
  for wait in (False, True, False, True):
    y = _matmul_chain(w, 8)
    xm.mark_step()
    if wait:
      xm.wait_device_ops()
    before_compiles = met.metric_data('CompileTime')[0]
    before = donated()
    w.mul_(0.5)
    xm.mark_step()
    assert donated() - before == 1
    compiles.append(met.metric_data('CompileTime')[0] - before_compiles)
    del y
  assert compiles[1:] == [0, 0, 0], compiles


@cpu_device('the wait for host memory before a launch')
def test_a_graph_that_allocates_much_waits_for_the_device_before_it_is_enqueued():
  # XLA allocates an execution's temporaries when it is enqueued. A graph that needs 32
  # MB or more waits for the device's earlier executions first, so two such steps never
  # hold their temporaries at once; small graphs queue freely.
  def awaited():
    return met.counter_value('ExecuteAwaitedEarlier') or 0

  x = torch.randn(256, 256, device=DEV) / 16
  xm.mark_step()
  xm.wait_device_ops()
  # A 40 MB temporary, after about 150 ms of products: the next launch comes long before.
  big = lambda: (_matmul_chain(x, 150) @ torch.ones(256, 40000, device=DEV)).sin().sum()
  big()
  xm.mark_step()  # compiled once here, so the launches below are cache hits
  xm.wait_device_ops()
  first = big()
  xm.mark_step()  # launched, still running
  before = awaited()
  second = big()
  xm.mark_step()
  assert awaited() == before + 1
  torch.testing.assert_close(second.cpu(), first.cpu())
  before = awaited()
  for _ in range(3):
    small = _matmul_chain(x, 20).sum()
    xm.mark_step()
  xm.wait_device_ops()
  assert awaited() == before
  assert torch.isfinite(small.cpu())


def _xla_flags_seen_by_the_plugin(env_flags):
  """XLA_FLAGS as the process holds it once the CPU client exists (the C environment,
  which os.environ does not follow), in a child started with `env_flags`."""
  import os
  import subprocess
  import sys
  child = ('import ctypes, torch_xla.core.xla_model as xm\n'
           'xm.xla_device()\n'
           'getenv = ctypes.CDLL(None).getenv\n'
           'getenv.restype = ctypes.c_char_p\n'
           'print("flags:", (getenv(b"XLA_FLAGS") or b"").decode())\n')
  env = {k: v for k, v in os.environ.items() if k != 'XLA_FLAGS'}
  if env_flags is not None:
    env['XLA_FLAGS'] = env_flags
  out = subprocess.run([sys.executable, '-c', child], env=env, capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr
  return [line for line in out.stdout.splitlines() if line.startswith('flags:')][-1][len('flags: '):]


@cpu_device("the CPU plugin's default XLA flags")
def test_cpu_client_turns_on_region_analysis_for_copy_insertion_unless_the_user_chose():
  # Without it XLA copied every donated parameter before updating it in place.
  assert _xla_flags_seen_by_the_plugin(None) == '--xla_cpu_copy_insertion_use_region_analysis=true'
  assert (_xla_flags_seen_by_the_plugin('--xla_cpu_enable_fast_math=false') ==
          '--xla_cpu_enable_fast_math=false --xla_cpu_copy_insertion_use_region_analysis=true')
  chosen = '--xla_cpu_copy_insertion_use_region_analysis=false'
  assert _xla_flags_seen_by_the_plugin(chosen) == chosen


def test_a_computation_larger_than_memory_raises_and_the_process_lives_on():
  huge = torch.zeros(10**11, device=DEV) + 1  # 400 GB of float32
  with pytest.raises(RuntimeError, match=r'Out of memory: the computation needs 400000000000 bytes on the \w+ '
                     r'device \(its results and temporaries\), \d+ of its \d+ bytes are free'):
    xm.mark_step()
  del huge
  xm.mark_step()  # nothing of it is pending any more
  assert (torch.ones(3, device=DEV) * 2).cpu().tolist() == [2.0] * 3
