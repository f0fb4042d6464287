"""torch_xla.amp: autocast against CPU autocast and a float64 reference, GradScaler
against torch.amp.GradScaler on the CPU, the sync-free optimizers against torch.optim
with an overflowing step skipped, and the step's lack of transfers to the host."""
import pytest
import torch
import torch.nn.functional as F

import torch_xla
import torch_xla.debug.metrics as met
from torch_xla.amp import GradScaler, autocast, syncfree
from testing.op_testing import is_op_fallback  # noqa: E402

DEV = torch_xla.device()


class SmallNet(torch.nn.Module):

  def __init__(self):
    super().__init__()
    self.conv = torch.nn.Conv2d(2, 4, 3)
    self.fc1 = torch.nn.Linear(4 * 4 * 4, 16)
    self.fc2 = torch.nn.Linear(16, 5)

  def forward(self, x):
    x = F.relu(self.conv(x))
    x = x.flatten(1)
    x = F.relu(self.fc1(x))
    return F.log_softmax(self.fc2(x), dim=1)


def _batch():
  g = torch.Generator().manual_seed(3)
  return torch.randn(8, 2, 6, 6, generator=g), torch.randint(0, 5, (8,), generator=g)


def _loss_and_grads(model, x, y, region):
  with region:
    loss = F.nll_loss(model(x), y)
  loss.backward()
  return loss.detach().cpu().double(), [p.grad.cpu().double() for p in model.parameters()]


def test_autocast_training_step_is_as_accurate_as_cpu_autocast():
  torch.manual_seed(0)
  reference = SmallNet()
  x, y = _batch()
  exact = SmallNet().double()
  exact.load_state_dict(reference.state_dict())
  want_loss, want_grads = _loss_and_grads(exact, x.double(), y, torch.autocast('cpu', enabled=False))

  cpu = SmallNet()
  cpu.load_state_dict(reference.state_dict())
  cpu_loss, cpu_grads = _loss_and_grads(cpu, x, y, torch.autocast('cpu', dtype=torch.bfloat16))

  model = SmallNet().to(DEV)
  model.load_state_dict(reference.state_dict())
  with autocast(DEV):
    hidden = model.fc1(torch.randn(2, 64).to(DEV))
    out = model(x.to(DEV))
  assert hidden.dtype == torch.bfloat16  # linear: the lower-precision list
  assert out.dtype == torch.float32  # log_softmax: the float32 list
  loss, grads = _loss_and_grads(model, x.to(DEV), y.to(DEV), autocast(DEV))
  assert all(p.grad.dtype == torch.float32 for p in model.parameters())

  # bfloat16 keeps 8 bits: the device's error against float64 is that of CPU autocast,
  # within a factor of 2 (the two round at different places), and small in itself.
  def error(a, b):
    return (a - b).abs().max().item()

  assert error(loss, want_loss) <= 2 * error(cpu_loss, want_loss) + 1e-3
  assert error(loss, want_loss) < 2e-2
  for got, cpu_got, want in zip(grads, cpu_grads, want_grads):
    scale = want.abs().max().item() + 1e-6
    assert error(got, want) <= 2 * error(cpu_got, want) + 1e-3 * scale
    assert error(got, want) < 5e-2 * scale


def test_autocast_enables_torch_autocast_for_xla():
  assert not torch.is_autocast_enabled('xla')
  with autocast(DEV):
    assert torch.is_autocast_enabled('xla')
    assert torch.get_autocast_dtype('xla') == torch.bfloat16
  assert not torch.is_autocast_enabled('xla')
  with autocast(DEV, enabled=False):
    assert not torch.is_autocast_enabled('xla')

  @autocast(DEV)
  def product(a, b):
    return a @ b

  a = torch.randn(3, 3, device=DEV)
  assert product(a, a).dtype == torch.bfloat16
  assert (a @ a).dtype == torch.float32


def test_autocast_refuses_float16_where_the_device_lacks_it_and_other_devices():
  if torch_xla._XLAC._xla_device_kind() == 'CUDA':
    pytest.skip('GPUs compute in float16')
  with pytest.warns(UserWarning, match='supports torch.bfloat16, not torch.float16'):
    region = autocast(DEV, dtype=torch.float16)
  with region:
    assert not torch.is_autocast_enabled('xla')
  with pytest.raises(ValueError, match='expected an XLA device'):
    autocast('cpu')


def test_autocast_follows_torch_xla_lists_for_relu_max_pool_and_batch_norm():
  x = torch.randn(2, 3, 4, 4, device=DEV)
  norm = torch.nn.BatchNorm2d(3).to(DEV)
  with autocast(DEV):
    assert torch.relu(x).dtype == torch.bfloat16
    assert F.max_pool2d(x, 2).dtype == torch.bfloat16
    assert norm(x.bfloat16()).dtype == torch.float32
    assert torch.cat([x.bfloat16(), x]).dtype == torch.float32  # promote list


# ---- the loss scaler's kernels


@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16])
@pytest.mark.parametrize('bad', [None, float('inf'), float('nan'), -float('inf')])
def test_non_finite_check_and_unscale_matches_cpu(dtype, bad):
  grads = [torch.randn(5, 3).to(dtype), torch.randn(4).to(dtype), torch.randn(()).to(dtype)]
  if bad is not None:
    grads[1][2] = bad
  cpu = [g.clone() for g in grads]
  cpu_found = torch.zeros(())
  torch._amp_foreach_non_finite_check_and_unscale_(cpu, cpu_found, torch.tensor(0.25))
  dev = [g.to(DEV) for g in grads]
  found = torch.zeros((), device=DEV)
  met.clear_counters()
  torch._amp_foreach_non_finite_check_and_unscale_(dev, found, torch.tensor(0.25, device=DEV))
  assert met.counter_value('xla::_amp_foreach_non_finite_check_and_unscale') == 1
  assert not [n for n in met.counter_names() if n.startswith('aten::')]
  assert found.item() == cpu_found.item() == (0.0 if bad is None else 1.0)
  for got, want in zip(dev, cpu):
    torch.testing.assert_close(got.cpu(), want, equal_nan=True)


def test_non_finite_check_keeps_a_found_inf_set_earlier():
  found = torch.ones((), device=DEV)
  grads = [torch.ones(3, device=DEV)]
  torch._amp_foreach_non_finite_check_and_unscale_(grads, found, torch.ones((), device=DEV))
  assert found.item() == 1.0


@pytest.mark.parametrize('found_inf,tracker,scale', [(0.0, 0, 8.0), (0.0, 2, 8.0), (1.0, 2, 8.0), (0.0, 2, 3e38)])
def test_update_scale_matches_cpu(found_inf, tracker, scale):
  args = dict(growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
  cpu_scale, cpu_tracker = torch.tensor(scale), torch.tensor(tracker, dtype=torch.int32)
  torch._amp_update_scale_(cpu_scale, cpu_tracker, torch.tensor(found_inf), *args.values())
  dev_scale = torch.tensor(scale).to(DEV)
  dev_tracker = torch.tensor(tracker, dtype=torch.int32).to(DEV)
  torch._amp_update_scale_(dev_scale, dev_tracker, torch.tensor(found_inf).to(DEV), *args.values())
  assert dev_scale.item() == cpu_scale.item()
  assert dev_tracker.item() == cpu_tracker.item()


def test_amp_kernels_name_bad_arguments():
  with pytest.raises(RuntimeError, match='found_inf must be a 1-element tensor'):
    torch._amp_foreach_non_finite_check_and_unscale_([torch.ones(2, device=DEV)], torch.zeros(2, device=DEV),
                                                     torch.ones((), device=DEV))
  with pytest.raises(RuntimeError, match='_amp_update_scale_: growth_tracker must have dtype Int'):
    torch._amp_update_scale_(
        torch.ones((), device=DEV), torch.zeros((), device=DEV), torch.zeros((), device=DEV), 2.0, 0.5, 10)


# ---- GradScaler and the sync-free optimizers


def _scaled_training(device, make_optimizer, scaler, steps=5, inf_at=(2,)):
  """Runs `steps` scaled steps of a small model, the gradients of the steps in inf_at
  made infinite; the parameters, the scale after each step and the optimizer state."""
  torch.manual_seed(0)
  model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2)).to(device)
  opt = make_optimizer(model.parameters())
  g = torch.Generator().manual_seed(5)
  scales = []
  for step in range(steps):
    x = torch.randn(8, 4, generator=g).to(device)
    opt.zero_grad()
    loss = model(x).square().mean()
    scaler.scale(loss).backward()
    if step in inf_at:
      model[0].weight.grad[0, 0] = float('inf')
    scaler.step(opt)
    scaler.update()
    if device != 'cpu':
      torch_xla.sync()
    scales.append(scaler.get_scale())
  state = [{k: v.cpu() for k, v in opt.state[p].items() if torch.is_tensor(v) and k != 'step'}
           for p in model.parameters()]
  return [p.detach().cpu() for p in model.parameters()], scales, state


SCALER_ARGS = dict(init_scale=2.0**10, growth_interval=2)


@pytest.mark.parametrize('cpu_opt,xla_opt,kwargs', [
    (torch.optim.SGD, torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    (torch.optim.SGD, syncfree.SGD, dict(lr=0.1, momentum=0.9)),
    (torch.optim.Adam, syncfree.Adam, dict(lr=0.01)),
],
                         ids=['torch-sgd', 'syncfree-sgd', 'syncfree-adam'])
def test_grad_scaler_matches_cpu_grad_scaler(cpu_opt, xla_opt, kwargs):
  want_params, want_scales, want_state = _scaled_training(
      'cpu', lambda p: cpu_opt(p, **kwargs), torch.amp.GradScaler('cpu', **SCALER_ARGS))
  params, scales, state = _scaled_training(DEV, lambda p: xla_opt(p, **kwargs), GradScaler(**SCALER_ARGS))
  # Growth after two clean steps, backoff at the overflow of step 2, growth again.
  assert want_scales == [1024.0, 2048.0, 1024.0, 1024.0, 2048.0]
  assert scales == want_scales
  for got, want in zip(params, want_params):
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
  for got, want in zip(state, want_state):
    for key in want:
      torch.testing.assert_close(got[key], want[key], rtol=1e-5, atol=1e-6)


def test_grad_scaler_unscale_and_disabled():
  scaler = GradScaler(init_scale=4.0)
  w = torch.nn.Parameter(torch.ones(3, device=DEV))
  opt = torch.optim.SGD([w], lr=1.0)
  scaler.scale((w * torch.tensor([1., 2., 3.], device=DEV)).sum()).backward()
  torch.testing.assert_close(w.grad.cpu(), torch.tensor([4., 8., 12.]))
  scaler.unscale_(opt)
  torch.testing.assert_close(w.grad.cpu(), torch.tensor([1., 2., 3.]))
  off = GradScaler(enabled=False)
  loss = w.sum()
  assert off.scale(loss) is loss


def _inf_flag(params):
  """1.0 on the device where a gradient is not finite (computed in the step's graph)."""
  flags = [(~torch.isfinite(p.grad)).any() for p in params]
  return torch.stack(flags).any().float()


def _syncfree_run(device, make_optimizer, inf_step, steps=5):
  torch.manual_seed(0)
  model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2)).to(device)
  opt = make_optimizer(list(model.parameters()))
  g = torch.Generator().manual_seed(7)
  history = []
  for step in range(steps):
    x = torch.randn(6, 3, generator=g).to(device)
    opt.zero_grad()
    model(x).square().sum().backward()
    if step == inf_step:
      model[2].bias.grad[1] = float('inf')
    if device == 'cpu':
      if step != inf_step:  # torch.optim: the step is skipped on the host
        opt.step()
    else:
      opt.step(found_inf=_inf_flag(model.parameters()))
      torch_xla.sync()
    history.append([p.detach().cpu().clone() for p in model.parameters()])
  state = [{k: v.cpu() for k, v in opt.state[p].items() if torch.is_tensor(v) and k != 'step'}
           for p in model.parameters()]
  return history, state


# (optimizer, arguments, the step whose gradients overflow). An overflow at step 0 skips
# the step that would start the momentum buffer and the moments.
SYNCFREE_CASES = [
    ('SGD', dict(lr=0.1), 2),
    ('SGD', dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01), 2),
    ('SGD', dict(lr=0.05, momentum=0.5, dampening=0.1, maximize=True), 0),
    ('Adam', dict(lr=0.01), 0),
    ('Adam', dict(lr=0.01, amsgrad=True, weight_decay=0.05, maximize=True), 2),
    ('AdamW', dict(lr=0.01, weight_decay=0.1), 2),
    ('AdamW', dict(lr=0.02, amsgrad=True), 2),
]


@pytest.mark.parametrize('name,kwargs,inf_step', SYNCFREE_CASES,
                         ids=lambda v: v if isinstance(v, str) else str(v) if isinstance(v, int) else str(sorted(v)))
def test_syncfree_optimizer_matches_torch_optim_skipping_the_overflowing_step(name, kwargs, inf_step):
  want_history, want_state = _syncfree_run('cpu', lambda p: getattr(torch.optim, name)(p, **kwargs), inf_step)
  history, state = _syncfree_run(DEV, lambda p: getattr(syncfree, name)(p, **kwargs), inf_step)
  for step, (got, want) in enumerate(zip(history, want_history)):
    for a, b in zip(got, want):
      torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=lambda m: f'step {step}: {m}')
  if inf_step > 0:  # the skipped step left the parameters as the step before
    for a, b in zip(history[inf_step], history[inf_step - 1]):
      assert torch.equal(a, b)
  for got, want in zip(state, want_state):
    assert got.keys() >= want.keys()
    for key in want:
      torch.testing.assert_close(got[key], want[key], rtol=1e-5, atol=1e-6)


def test_syncfree_step_counts_only_the_steps_taken():
  w = torch.nn.Parameter(torch.ones(2, device=DEV))
  opt = syncfree.Adam([w], lr=0.1)
  for found in (0.0, 1.0, 0.0):
    w.grad = torch.ones(2, device=DEV)
    opt.step(found_inf=torch.tensor(found, device=DEV))
  assert opt.state[w]['step'].item() == 2
  assert isinstance(syncfree.AdamW([w]), torch.optim.AdamW)


def test_syncfree_found_inf_must_be_a_scalar():
  w = torch.nn.Parameter(torch.ones(2, device=DEV))
  w.grad = torch.ones(2, device=DEV)
  with pytest.raises(ValueError, match='found_inf must be a scalar tensor'):
    syncfree.SGD([w], lr=0.1).step(found_inf=torch.zeros(1, device=DEV))


def _transfers_from_device():
  data = met.metric_data('TransferFromDeviceTime')
  return 0 if data is None else data[0]


def _scaled_step(model, opt, scaler, x):
  opt.zero_grad()
  scaler.scale(model(x).square().mean()).backward()
  scaler.step(opt)
  scaler.update()
  torch_xla.sync()


@pytest.mark.parametrize('make_optimizer,transfers', [
    (lambda p: syncfree.SGD(p, lr=0.1, momentum=0.9), False),
    (lambda p: syncfree.AdamW(p, lr=0.01), False),
    (lambda p: torch.optim.SGD(p, lr=0.1), True),
],
                         ids=['syncfree-sgd', 'syncfree-adamw', 'torch-sgd'])
def test_scaled_step_transfers_to_the_host_only_for_other_optimizers(make_optimizer, transfers):
  torch.manual_seed(0)
  model = torch.nn.Linear(4, 3).to(DEV)
  opt = make_optimizer(model.parameters())
  scaler = GradScaler()
  x = torch.randn(5, 4).to(DEV)
  for _ in range(2):  # compiles the step's graphs
    _scaled_step(model, opt, scaler, x)
  met.clear_all()
  for _ in range(2):
    _scaled_step(model, opt, scaler, x)
  assert not [n for n in met.counter_names() if is_op_fallback(n)]
  # A plain optimizer needs the overflow flag on the host: one transfer per step.
  assert _transfers_from_device() == (2 if transfers else 0)
