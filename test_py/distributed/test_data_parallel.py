"""Data-parallel training on 4 replicas: N replicas on batches of b train to the same
weights as one device on the concatenated batches (xm.optimizer_step averaging the
gradients inside the step graph, through xmp.spawn + MpDeviceLoader and through the
old guide's DataParallel), SyncBatchNorm equals BatchNorm on the whole batch, and the
loaders deal batches over several devices."""

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.functions as xf
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.distributed.data_parallel as dp
import torch_xla.distributed.parallel_loader as pl
from testing.data_parallel_testing import (LOCAL_BATCH, STEPS, SmallNet, assert_same_weights, global_batches,
                                           initial_model, sgd, train_on_one_device)
from testing.replica_testing import REPLICAS, RUN_TIMEOUT, run_replicas
from testing.device_marks import needs_devices
from testing.op_testing import is_op_fallback  # noqa: E402

pytestmark = needs_devices(4)


def test_spawn_replicas_train_like_one_device_on_the_whole_batch():
  host = initial_model()
  batches = global_batches()
  # Replica r's shard of every global batch.
  shards = [[(d[r * LOCAL_BATCH:(r + 1) * LOCAL_BATCH], t[r * LOCAL_BATCH:(r + 1) * LOCAL_BATCH])
             for d, t in batches] for r in range(REPLICAS)]

  def replica(index):
    device = xm.xla_device()
    model = copy.deepcopy(host).to(device)
    optimizer = sgd(model.parameters())
    loader = pl.MpDeviceLoader(shards[index], device)
    for data, target in loader:
      optimizer.zero_grad()
      F.nll_loss(model(data), target).backward()
      xm.optimizer_step(optimizer)
    return {k: v.cpu() for k, v in model.state_dict().items()}

  met.clear_counters()
  results = run_replicas(replica)
  expected = train_on_one_device(host, batches, sgd)
  for weights in results:
    assert_same_weights(weights, expected)
  # One all_reduce of the coalesced gradients per step, no CPU fallback.
  assert met.counter_value('xla::all_reduce') == REPLICAS * STEPS
  assert not [n for n in met.counter_names() if is_op_fallback(n)]


def test_optimizer_step_with_groups_averages_within_each_group():
  host = initial_model()
  batches = global_batches(steps=2)
  groups = [[0, 1], [2, 3]]

  def replica(index):
    device = xm.xla_device()
    model = copy.deepcopy(host).to(device)
    optimizer = sgd(model.parameters())
    for data, target in batches:
      part = slice(index * LOCAL_BATCH, (index + 1) * LOCAL_BATCH)
      optimizer.zero_grad()
      F.nll_loss(model(data[part].to(device)), target[part].to(device)).backward()
      xm.optimizer_step(optimizer, groups=groups)
      xm.mark_step()
    return {k: v.cpu() for k, v in model.state_dict().items()}

  results = run_replicas(replica)
  for group in groups:
    part = slice(group[0] * LOCAL_BATCH, (group[1] + 1) * LOCAL_BATCH)
    expected = train_on_one_device(host, [(d[part], t[part]) for d, t in batches], sgd)
    for r in group:
      assert_same_weights(results[r], expected)


def test_data_parallel_of_the_old_guide_trains_like_one_device():
  """The guide's DataParallel loop over every device: batch i goes to device i % N, so
  each round of N batches is one global batch."""
  host = initial_model()
  batches = global_batches(steps=STEPS * REPLICAS, batch=LOCAL_BATCH, seed=1)
  devices = xm.get_xla_supported_devices()
  assert len(devices) == REPLICAS
  model_parallel = dp.DataParallel(copy.deepcopy(host), device_ids=devices)
  initial = [{k: v.cpu() for k, v in m.state_dict().items()} for m in model_parallel.models]
  for weights in initial:
    assert_same_weights(weights, {k: v for k, v in host.state_dict().items()})

  def train_loop_fn(model, loader, device, context):
    optimizer = context.getattr_or('optimizer', lambda: sgd(model.parameters()))
    steps = 0
    for data, target in loader:
      optimizer.zero_grad()
      F.nll_loss(model(data), target).backward()
      xm.optimizer_step(optimizer)
      steps += 1
    return device, steps, xm.get_ordinal()

  results = model_parallel(train_loop_fn, batches + batches[:2])  # 2 batches of an incomplete round
  assert results == [(torch.device('xla', i), STEPS, i) for i in range(REPLICAS)]
  rounds = [(torch.cat([d for d, _ in batches[k:k + REPLICAS]]), torch.cat([t for _, t in batches[k:k + REPLICAS]]))
            for k in range(0, len(batches), REPLICAS)]
  expected = train_on_one_device(host, rounds, sgd)
  for model in model_parallel.models:
    assert_same_weights({k: v.cpu() for k, v in model.state_dict().items()}, expected)


def test_data_parallel_guide_snippet_on_every_device():
  """The snippet of the guide, verbatim apart from the model and data."""
  devices = xm.get_xla_supported_devices()
  model_parallel = dp.DataParallel(SmallNet, device_ids=devices)
  loader = global_batches(steps=2 * len(devices), batch=2)

  def train_loop_fn(model, loader, device, context):
    loss_fn = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    for data, target in loader:
      output = model(data)
      loss = loss_fn(output, target)
      loss.backward()
      xm.optimizer_step(optimizer)
    return loss.item()

  for epoch in range(1, 3):
    losses = model_parallel(train_loop_fn, loader)
    assert len(losses) == len(devices) and all(loss > 0 for loss in losses)


def test_data_parallel_replica_error_names_the_device():

  def loop_fn(model, loader, device, context):
    for data, target in loader:
      if device.index == 1:
        raise RuntimeError('bad batch')
      model(data).sum().backward()
      xm.optimizer_step(torch.optim.SGD(model.parameters(), lr=0.1))

  model_parallel = dp.DataParallel(SmallNet, device_ids=xm.get_xla_supported_devices())
  with pytest.raises(RuntimeError, match=r'replica 1 \(xla:1\) raised RuntimeError: bad batch'):
    model_parallel(loop_fn, global_batches(steps=8, batch=2))


def test_parallel_loader_over_several_devices():
  batches = [(torch.full((2,), float(i)), torch.tensor(i)) for i in range(10)]
  devices = [f'xla:{i}' for i in range(REPLICAS)]
  para = pl.ParallelLoader(batches, devices)
  assert para.per_device_samples() == 2
  for i, device in enumerate(devices):
    got = list(para.per_device_loader(device))
    assert [int(t) for _, t in got] == [i, i + REPLICAS]
    assert all(x.device == torch.device(device) for x, _ in got)
  para.close()


@pytest.mark.parametrize('dims', [0, 1, 2, 3], ids=['features', '1d', '2d', '3d'])
@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16])
def test_sync_batch_norm_is_batch_norm_on_the_whole_batch(dims, dtype):
  """[N, C] and 1 to 3 spatial dimensions, against BatchNorm1d/2d/3d on every replica's
  batch at once: outputs, input and parameter gradients, running statistics."""
  channels = 3
  shape = (LOCAL_BATCH * REPLICAS, channels) + (5, 4, 3)[:dims]
  g = torch.Generator().manual_seed(dims)
  x = (torch.randn(shape, generator=g) * 2 + 1).to(dtype)
  grad_out = torch.randn(shape, generator=g).to(dtype)
  steps = 2

  reference = {0: nn.BatchNorm1d, 1: nn.BatchNorm1d, 2: nn.BatchNorm2d, 3: nn.BatchNorm3d}[dims](channels, momentum=0.3)
  with torch.no_grad():
    reference.weight.uniform_(0.5, 1.5, generator=g)
    reference.bias.uniform_(-0.5, 0.5, generator=g)
  sync = xf.SyncBatchNorm(channels, momentum=0.3)
  sync.load_state_dict(reference.state_dict())
  reference = reference.to(dtype)
  x_ref = x.clone().requires_grad_()
  for _ in range(steps):
    y_ref = reference(x_ref)
  (y_ref * grad_out).sum().backward()

  def replica(index):
    device = xm.xla_device()
    module = copy.deepcopy(sync).to(device).to(dtype)
    part = slice(index * LOCAL_BATCH, (index + 1) * LOCAL_BATCH)
    xs = x[part].to(device).requires_grad_()
    for _ in range(steps):
      y = module(xs)
    (y * grad_out[part].to(device)).sum().backward()
    xm.mark_step()
    module.eval()
    y_eval = module(xs.detach())
    xm.mark_step()
    return (y.detach().cpu(), xs.grad.cpu(), module.weight.grad.cpu(), module.bias.grad.cpu(),
            module.running_mean.cpu(), module.running_var.cpu(), y_eval.cpu())

  tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-2, atol=5e-2)
  reference.eval()
  y_eval_ref = reference(x)
  results = run_replicas(replica)
  # A replica's parameter gradient is that of its own loss; the whole batch's is their
  # sum (what optimizer_step's average scales).
  torch.testing.assert_close(sum(r[2].float() for r in results).to(dtype), reference.weight.grad, **tol)
  torch.testing.assert_close(sum(r[3].float() for r in results).to(dtype), reference.bias.grad, **tol)
  for index, (y, x_grad, w_grad, b_grad, mean, var, y_eval) in enumerate(results):
    part = slice(index * LOCAL_BATCH, (index + 1) * LOCAL_BATCH)
    torch.testing.assert_close(y, y_ref[part].detach(), **tol)
    torch.testing.assert_close(x_grad, x_ref.grad[part], **tol)
    torch.testing.assert_close(mean, reference.running_mean, **tol)
    torch.testing.assert_close(var, reference.running_var, **tol)
    torch.testing.assert_close(y_eval, y_eval_ref[part].detach(), **tol)


def test_sync_batch_norm_checks_its_input():
  with pytest.raises(ValueError, match=r'SyncBatchNorm\(3\): expected an input of shape \[N, 3, ...\]'):
    xf.SyncBatchNorm(3)(torch.ones(2, 4, device=xm.xla_device()))
