"""Classic FSDP (torch_xla.distributed.fsdp.XlaFullyShardedDataParallel) on 4 replicas
against eager PyTorch on the CPU: SGD steps of a small MLP, each replica on its quarter
of the global batch, give the eager losses, gradient norms (clip_grad_norm_) and, once
the per-replica checkpoints are consolidated, the eager parameters; each replica keeps
1/4 of the padded parameters; gradient accumulation under no_sync() and sharding within
replica groups; one replica outside replication, tied parameters, a submodule used in the
forward only, and the options' errors."""

import contextlib
import copy
import glob
import os

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.runtime as xr
from torch_xla.distributed.fsdp import (XlaFullyShardedDataParallel as FSDP, checkpoint_module,
                                        consolidate_sharded_model_checkpoints,
                                        consolidate_sharded_state_dicts)
from torch_xla.distributed.fsdp import consolidate_sharded_ckpts
from torch_xla.distributed.fsdp.wrap import always_wrap_policy, lambda_auto_wrap_policy
from testing.replica_testing import REPLICAS, run_replicas
from testing.device_marks import needs_devices

STEPS = 5
LOCAL_BATCH = 4
TOL = dict(rtol=1e-4, atol=1e-6)
SHARD_MULTIPLE = 128  # torch_xla's default _shard_size_multiple


class MLP(nn.Module):
  """Two linear layers, a parameter of the model itself and a buffer."""

  def __init__(self):
    super().__init__()
    self.fc1 = nn.Linear(8, 16)
    self.fc2 = nn.Linear(16, 4)
    self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 4))
    self.register_buffer('shift', torch.arange(4.) / 10)

  def forward(self, x):
    return self.fc2(F.relu(self.fc1(x))) * self.scale + self.shift


def initial_model():
  torch.manual_seed(0)
  return MLP()


def global_batches(steps=STEPS):
  g = torch.Generator().manual_seed(1)
  return [(torch.randn(LOCAL_BATCH * REPLICAS, 8, generator=g),
           torch.randint(0, 4, (LOCAL_BATCH * REPLICAS,), generator=g)) for _ in range(steps)]


def sgd(params):
  return torch.optim.SGD(params, lr=0.5, momentum=0.9)


def train_eagerly(model, batches, clip=None):
  """The steps on the CPU on the whole batches: (losses, gradient norms, state_dict)."""
  model = copy.deepcopy(model)
  optimizer = sgd(model.parameters())
  losses, norms = [], []
  for data, target in batches:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(data), target)
    loss.backward()
    if clip is not None:
      norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), *clip))
    optimizer.step()
    losses.append(loss.detach())
  return losses, norms, model.state_dict()


def linear_layers(module, recurse, unwrapped_params):
  return lambda_auto_wrap_policy(module, recurse, unwrapped_params,
                                 lambda_fn=lambda m: isinstance(m, nn.Linear))


def checkpointed_fsdp(module, *args, **kwargs):
  return FSDP(checkpoint_module(module), *args, **kwargs)


# name: (options, clip_grad_norm_ arguments, all_gathers per replica and step)
CONFIGS = {
    # One shard per parameter (5), gathered once: the outermost wrapper keeps the full
    # parameters for its backward; a step is marked when the backward is done.
    'unflattened': (dict(flatten_parameters=False, sync_on_finalization=True), None, 5),
    'flattened': (dict(flatten_parameters=True), (0.3, 2.0), 1),
    # Each linear layer sharded by a wrapper of its own, the outer one holding `scale`;
    # all of them reshard after the forward (5 gathers, 5 more in the backward), and the
    # parameters are sharded along their first dimension.
    'nested_dim0': (dict(auto_wrap_policy=linear_layers, disable_reshard_on_root=False,
                         shard_param_on_dim_0=True), (0.3, float('inf')), 10),
    # Inner wrappers, flattened, around activation-checkpointed layers: the recomputation
    # reads the parameters gathered again for the backward.
    'nested_checkpointed': (dict(auto_wrap_policy=linear_layers, auto_wrapper_callable=checkpointed_fsdp,
                                 flatten_parameters=True), (0.3, 2.0), 1 + 2 * 2),
}


def padded_numel(numel):
  multiple = REPLICAS * SHARD_MULTIPLE
  return -(-numel // multiple) * multiple


@needs_devices(4)
@pytest.mark.parametrize('config', list(CONFIGS))
def test_training_matches_eager_on_the_whole_batch(config, tmp_path):
  options, clip, gathers = CONFIGS[config]
  host = initial_model()
  batches = global_batches()

  def replica(index):
    device = xm.xla_device()
    model = FSDP(copy.deepcopy(host), **options)
    shards = [(p.numel(), tuple(p.shape), tuple(p._orig_size)) for p in model.parameters()]
    optimizer = sgd(model.parameters())
    part = slice(index * LOCAL_BATCH, (index + 1) * LOCAL_BATCH)
    losses, norms = [], []
    for data, target in batches:
      optimizer.zero_grad()
      loss = F.cross_entropy(model(data[part].to(device)), target[part].to(device))
      loss.backward()
      norm = model.clip_grad_norm_(*clip) if clip is not None else None
      optimizer.step()
      xm.mark_step()
      losses.append(loss.cpu())
      if norm is not None:
        norms.append(norm.cpu())
    checkpoint = {'model': model.state_dict(), 'shard_metadata': model.get_shard_metadata()}
    path = tmp_path / f'rank-{xr.global_ordinal()}-of-{xr.world_size()}.pth'
    xm.save(checkpoint, str(path), master_only=False)
    # Between the steps the module holds no full parameter.
    empty = all(t.numel() == 0 for m in model.modules() if not isinstance(m, FSDP)
                for t in m.__dict__.values() if isinstance(t, torch.Tensor))
    return losses, norms, shards, list(checkpoint['model']), empty

  met.clear_counters()
  results = run_replicas(replica)
  losses, norms, expected = train_eagerly(host, batches, clip)
  assert met.counter_value('xla::all_gather') == REPLICAS * STEPS * gathers

  for step in range(STEPS):
    mean_loss = sum(r[0][step] for r in results) / REPLICAS
    torch.testing.assert_close(mean_loss, losses[step], **TOL)
    for r in results:
      if clip is not None:
        torch.testing.assert_close(r[1][step], norms[step], **TOL)
  # Each replica keeps a quarter of every (padded) parameter.
  for _, _, shards, _, empty in results:
    assert empty
    assert shards == results[0][2]
    for numel, shape, orig in shards:
      if options.get('shard_param_on_dim_0') and len(orig) > 0:
        rows = -(-orig[0] // REPLICAS) * REPLICAS
        assert shape == (rows // REPLICAS,) + orig[1:]
      else:
        assert numel * REPLICAS == padded_numel(torch.Size(orig).numel())
  total = sum(p.numel() for p in host.parameters())
  assert sum(torch.Size(orig).numel() for _, _, orig in results[0][2]) == total
  if options.get('flatten_parameters') and 'auto_wrap_policy' not in options:
    assert len(results[0][2]) == 1
    assert results[0][3] == ['_fsdp_shard_FSDP_SHARD_SEPARATOR__fsdp_wrapped_module_FSDP_SHARD_SEPARATOR_'
                             'flat_param_0', '_fsdp_wrapped_module.shift']

  # The per-replica files consolidate into the unwrapped module's state_dict.
  assert len(glob.glob(str(tmp_path / 'rank-*.pth'))) == REPLICAS
  save_path = str(tmp_path / 'consolidated.pth')
  full, written = consolidate_sharded_model_checkpoints(str(tmp_path / 'rank-'), '*-of-4.pth',
                                                        save_path=save_path)
  assert written == save_path and os.path.exists(save_path)
  assert sorted(full) == sorted(expected)
  for name, value in expected.items():
    assert full[name].shape == value.shape, name
    torch.testing.assert_close(full[name], value, **TOL, msg=name)
  model = MLP()
  model.load_state_dict(torch.load(save_path, weights_only=False)['model'])
  # The command line writes the same, beside the files by default.
  consolidate_sharded_ckpts.main(['--ckpt_prefix', str(tmp_path / 'rank-'), '--ckpt_suffix', '*-of-4.pth'])
  written = torch.load(str(tmp_path / 'rank-_consolidated.pth'), weights_only=False)['model']
  assert all(torch.equal(written[k], v) for k, v in full.items())


@needs_devices(4)
def test_no_sync_accumulates_and_sharding_groups_train_each_group():
  """Two micro-batches, the first under no_sync(), give the eager step on both; with
  sharding groups [[0, 1], [2, 3]] each pair is one sharded copy of the model trained on
  its half of the batch."""
  host = initial_model()
  batches = global_batches(steps=2)
  groups = [[0, 1], [2, 3]]

  def replica(index):
    device = xm.xla_device()
    model = FSDP(copy.deepcopy(host), flatten_parameters=True, sharding_groups=groups,
                 sharding_rank=index % 2, sharding_world_size=2)
    optimizer = sgd(model.parameters())
    for data, target in batches:
      optimizer.zero_grad()
      # This replica's quarter of the batch, in two halves.
      for half in range(2):
        start = index * LOCAL_BATCH + half * LOCAL_BATCH // 2
        part = slice(start, start + LOCAL_BATCH // 2)
        context = model.no_sync() if half == 0 else contextlib.nullcontext()
        with context:
          loss = F.cross_entropy(model(data[part].to(device)), target[part].to(device)) / 2
          loss.backward()
      optimizer.step()
      xm.mark_step()
    return {'model': {k: v.cpu() for k, v in model.state_dict().items()},
            'shard_metadata': model.get_shard_metadata()}

  results = run_replicas(replica)
  for group in groups:
    part = slice(group[0] * LOCAL_BATCH, (group[-1] + 1) * LOCAL_BATCH)
    _, _, expected = train_eagerly(host, [(d[part], t[part]) for d, t in batches])
    shards = [results[r] for r in group]
    assert [s['shard_metadata']['rank'] for s in shards] == [0, 1]
    full = consolidate_sharded_state_dicts([s['model'] for s in shards], shards[0]['shard_metadata'])
    assert sorted(full) == sorted(expected)
    for name, value in expected.items():
      torch.testing.assert_close(full[name], value, **TOL, msg=name)


def test_one_replica_wrapper_and_errors():
  """Outside replication the wrapper shards over one replica: the forward and the
  gradients are the module's; the module and its attributes are reachable; the options'
  errors."""
  host = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
  model = FSDP(copy.deepcopy(host), flatten_parameters=True)
  assert isinstance(model.module, nn.Sequential) and isinstance(model[0], nn.Linear)
  assert model.world_size == 1 and model.rank == 0
  assert [tuple(p.shape) for p in model.parameters()] == [(SHARD_MULTIPLE,)]
  x = torch.randn(4, 3)
  out = model(x.to(xm.xla_device()))
  out.sum().backward()
  host(x).sum().backward()
  torch.testing.assert_close(out.cpu(), host(x), **TOL)
  grads = torch.cat([p.grad.flatten() for p in host.parameters()])
  shard = next(model.parameters())
  torch.testing.assert_close(shard.grad.cpu()[:grads.numel()], grads, **TOL)
  assert model.module[0].weight.numel() == 0  # freed after the backward
  assert model.get_shard_metadata()['flatten_info']['_fsdp_wrapped_module.flat_param_0'][0] == [
      '0.weight', '0.bias', '2.weight', '2.bias'
  ]

  with pytest.raises(TypeError, match='unexpected keyword'):
    FSDP(nn.Linear(2, 2), no_such_option=True)
  with pytest.raises(TypeError, match='torch.nn.Module'):
    FSDP(lambda x: x)
  with pytest.raises(RuntimeError, match='already wrapped'):
    FSDP(model)
  with pytest.raises(RuntimeError, match='no forward'):
    FSDP(nn.ModuleList([nn.Linear(2, 2)]))
  with pytest.raises(ValueError, match='compute_dtype'):
    FSDP(nn.Linear(2, 2), compute_dtype=torch.int32)
  with pytest.raises(ValueError, match='sharding_rank and sharding_world_size'):
    FSDP(nn.Linear(2, 2), sharding_groups=[[0]])
  with pytest.raises(ValueError, match='sharding_world_size=2'):
    FSDP(nn.Linear(2, 2), sharding_groups=[[0]], sharding_rank=0, sharding_world_size=2)
  with pytest.raises(ValueError, match='without sharding_groups'):
    FSDP(nn.Linear(2, 2), sharding_rank=1)
  with pytest.raises(NotImplementedError, match='_debug_dummy_forward_pass'):
    FSDP(nn.Linear(2, 2), _debug_dummy_forward_pass=True)
  with pytest.raises(ValueError, match='already wrapped'):
    FSDP(nn.Sequential(FSDP(nn.Linear(2, 2))), auto_wrap_policy=linear_layers)
  with pytest.raises(TypeError, match='one dtype'):
    FSDP(nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2).double()), flatten_parameters=True)
  # Options that only tune performance are accepted.
  FSDP(nn.Linear(2, 2), reduce_scatter_bucket_size_mb=25, coalesce_all_gather_ops=True)

  # A module on the meta device is initialized (reset_parameters(), or param_init_fn).
  meta = FSDP(nn.Linear(3, 5, device='meta'), param_init_fn=lambda m: m.to_empty(device='cpu').weight.data.fill_(1))
  assert meta.module.weight.numel() == 0 and next(meta.parameters()).device.type == 'xla'
  # compute_dtype: the gathered parameters and the inputs in bfloat16, the shards and
  # their gradients in float32.
  half = FSDP(copy.deepcopy(host), compute_dtype=torch.bfloat16, fp32_reduce_scatter=True)
  out = half(x.to(xm.xla_device()))
  assert out.dtype == torch.bfloat16
  out.float().sum().backward()
  assert all(p.dtype == p.grad.dtype == torch.float32 for p in half.parameters())
  torch.testing.assert_close(out.float().cpu(), host(x), rtol=0.05, atol=0.05)

  metadata = model.get_shard_metadata()
  state = {k: v.cpu() for k, v in model.state_dict().items()}
  with pytest.raises(ValueError, match='world size of 1'):
    consolidate_sharded_state_dicts([state, state], metadata)
  with pytest.raises(FileNotFoundError, match='no file matches'):
    consolidate_sharded_model_checkpoints('/nonexistent/rank-', save_model=False)
  full = consolidate_sharded_state_dicts([state], metadata)
  assert sorted(full) == sorted(host.state_dict())


def test_tied_parameters_and_loading_shards():
  """A parameter used by two submodules is sharded once; the consolidated state_dict has
  it under both names, as the unwrapped module's does; a wrapper loads another's
  state_dict (its shards)."""
  host = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
  host[2].weight = host[0].weight
  model = FSDP(copy.deepcopy(host))
  assert len(list(model.parameters())) == 3
  x = torch.randn(2, 4)
  torch.testing.assert_close(model(x.to(xm.xla_device())).detach().cpu(), host(x), **TOL)
  full = consolidate_sharded_state_dicts([{k: v.cpu() for k, v in model.state_dict().items()}],
                                         model.get_shard_metadata())
  assert sorted(full) == sorted(host.state_dict())
  for name, value in host.state_dict().items():
    torch.testing.assert_close(full[name], value, **TOL)
  other = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
  other[2].weight = other[0].weight
  loaded = FSDP(other)
  loaded.load_state_dict(model.state_dict())
  torch.testing.assert_close(loaded(x.to(xm.xla_device())).detach().cpu(), host(x), **TOL)


def test_module_used_in_the_forward_only():
  """Every submodule wrapped, one of them used in the forward only (its output gets no
  gradient), and the wrapper moved after wrapping."""

  class TwoHeads(nn.Module):

    def __init__(self):
      super().__init__()
      self.fc1 = nn.Linear(16, 4)
      self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
      return self.fc1(x), self.fc2(x)

  device = xm.xla_device()
  model = FSDP(TwoHeads(), auto_wrap_policy=always_wrap_policy).to(device)
  assert isinstance(model.fc1, FSDP) and isinstance(model.module.fc2, FSDP)
  first, _ = model(torch.ones(2, 16, device=device))
  first.sum().backward()
  xm.mark_step()
  grads = {n: p.grad for n, p in model.named_parameters()}
  assert all(g is not None for n, g in grads.items() if '.fc1.' in n)
  assert all(g is None for n, g in grads.items() if '.fc2.' in n)
