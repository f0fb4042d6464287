"""Launched by test_spmd_checkpoint.py as one process with 4 CPU devices: turns SPMD
mode on (a setting of the whole process, so never inside the test process), runs the
checkpoint scenarios and reports one RESULT line {scenario: values}. Tensors come back
as nested lists, comparisons made here as booleans or as the keys that differ; a
scenario that raises reports its error and traceback instead, and the others still
run."""
import os
import shutil
import signal
import tempfile
import threading
import time

import numpy as np
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.api import CheckpointException

import torch_xla
import torch_xla.runtime as xr
import torch_xla.distributed.spmd as xs
from torch_xla.experimental.distributed_checkpoint import (CheckpointManager, SPMDLoadPlanner, SPMDSavePlanner,
                                                           prime_optimizer)
from torch_xla.experimental.distributed_checkpoint import manager as manager_module
from testing.process_testing import report
from testing.scenario_testing import Scenarios, error_of, values

scenario = Scenarios()
ROOT = tempfile.mkdtemp(prefix='spmd_ckpt_')


def folder(name):
  path = os.path.join(ROOT, name)
  os.makedirs(path, exist_ok=True)
  return path


def spec_of(t):
  return torch_xla._XLAC._get_xla_sharding_spec(xs.unwrap_sharded_tensor(t))


def mesh(shape):
  return xs.Mesh(np.arange(4), shape, ('x', 'y'))


# Partition specs of the MLP's parameters (weight 0, bias 0, weight 2, bias 2) by mesh.
SPECS = {
    (2, 2): [('x', 'y'), ('x',), ('y', 'x'), (None,)],
    (4, 1): [('x', None), (None,), (None, 'x'), ('x',)],
}


def mlp(mesh_shape, seed):
  """An MLP on the XLA device, its parameters sharded as SPECS says (unsharded for
  mesh_shape None), and its AdamW."""
  torch.manual_seed(seed)
  model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).to('xla')
  if mesh_shape is not None:
    m = mesh(mesh_shape)
    for p, spec in zip(model.parameters(), SPECS[mesh_shape]):
      xs.mark_sharding(p, m, spec)
  return model, torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)


torch.manual_seed(1234)
X, Y = torch.randn(16, 8), torch.randn(16, 4)


def train_step(model, optimizer):
  optimizer.zero_grad()
  loss = ((model(X.to('xla')) - Y.to('xla'))**2).mean()
  loss.backward()
  optimizer.step()
  torch_xla.sync()
  return loss.item()


def state_of(model, optimizer):
  return {'model': model.state_dict(), 'optim': optimizer.state_dict()}


def cpu_copy(model, optimizer):
  """The parameters and optimizer state on the CPU, by flat key."""
  out = {f'model.{k}': v.detach().cpu().clone() for k, v in model.state_dict().items()}
  for i, p in enumerate(model.parameters()):
    for k, v in optimizer.state[p].items():
      out[f'optim.state.{i}.{k}'] = v.detach().cpu().clone()
  return out


def differing(expected, model, optimizer):
  """The keys whose values differ (exactly) from `expected`, and those missing."""
  now = cpu_copy(model, optimizer)
  return sorted(k for k in expected if k not in now or not torch.equal(expected[k], now[k]) or
                expected[k].dtype != now[k].dtype)


def chunks_of(path, keys):
  md = dcp.FileSystemReader(path).read_metadata().state_dict_metadata
  return {k: [[list(c.offsets), list(c.sizes)] for c in md[k].chunks] for k in keys}


@scenario
def resume():
  """2 steps on a 2x2 mesh, saved with dcp.save and SPMDSavePlanner; restored into a
  4x1 mesh and into an unsharded model; 2 more steps each, and 2 more of the original."""
  path = folder('resume')
  model, optimizer = mlp((2, 2), seed=0)
  losses = [train_step(model, optimizer) for _ in range(2)]
  dcp.save(state_of(model, optimizer), storage_writer=dcp.FileSystemWriter(path), planner=SPMDSavePlanner())
  saved = cpu_copy(model, optimizer)
  continued = [train_step(model, optimizer) for _ in range(2)]
  out = dict(losses=losses, continued=continued,
             chunks=chunks_of(path, ['model.0.weight', 'model.0.bias', 'model.2.weight', 'model.2.bias',
                                     'optim.state.0.exp_avg', 'optim.state.0.step']),
             saved_keys=sorted(saved))
  for name, shape in [('mesh_4x1', (4, 1)), ('unsharded', None)]:
    fresh, fresh_opt = mlp(shape, seed=1)
    prime_optimizer(fresh_opt)
    params = list(fresh.parameters())
    states = [fresh_opt.state[p] for p in params]
    exp_avgs = [s['exp_avg'] for s in states]
    specs = [spec_of(p) for p in params]
    before = differing(saved, fresh, fresh_opt)
    state_dict = state_of(fresh, fresh_opt)
    dcp.load(state_dict, storage_reader=dcp.FileSystemReader(path), planner=SPMDLoadPlanner())
    same_objects = (all(a is b for a, b in zip(params, fresh.parameters())) and
                    all(a is fresh_opt.state[p]['exp_avg'] for a, p in zip(exp_avgs, params)))
    after = differing(saved, fresh, fresh_opt)
    specs_after = [spec_of(p) for p in params]
    state_specs = [spec_of(fresh_opt.state[p]['exp_avg']) for p in params]
    fresh_opt.load_state_dict(state_dict['optim'])
    after_load_state_dict = differing(saved, fresh, fresh_opt)
    steps = [train_step(fresh, fresh_opt) for _ in range(2)]
    out[name] = dict(differing_before=before, differing_after=after,
                     differing_after_load_state_dict=after_load_state_dict, same_objects=same_objects,
                     specs_before=specs, specs_after=specs_after, state_specs=state_specs, losses=steps,
                     lr=fresh_opt.param_groups[0]['lr'], weight_decay=fresh_opt.param_groups[0]['weight_decay'])
  return out


@scenario
def manager():
  """CheckpointManager: save every 2 steps, keep 2, the last saves in the background;
  a new manager finds them; the latest restores into a 4x1 mesh."""
  path = folder('manager')
  model, optimizer = mlp((2, 2), seed=0)
  mgr = CheckpointManager(path, save_interval=2, max_to_keep=2, chkpt_on_preemption=False)
  taken, snapshots = [], {}
  for step in range(1, 7):
    train_step(model, optimizer)
    save = mgr.save_async if step >= 5 else mgr.save
    taken.append(save(step, state_of(model, optimizer)))
    snapshots[step] = cpu_copy(model, optimizer)
  # The step after a background save changes the state in place while it may be written.
  train_step(model, optimizer)
  mgr.join()
  steps_after_join = mgr.all_steps()
  folders = sorted(os.listdir(path))
  found = CheckpointManager(path, save_interval=2, max_to_keep=2, chkpt_on_preemption=False)
  found_steps = found.all_steps()
  latest = max(found_steps)
  fresh, fresh_opt = mlp((4, 1), seed=1)
  prime_optimizer(fresh_opt)
  found.restore(latest, state_of(fresh, fresh_opt))
  restored_differing = differing(snapshots[latest], fresh, fresh_opt)
  restored_step = fresh_opt.state[next(iter(fresh.parameters()))]['step'].item()
  forced = found.save(7, state_of(model, optimizer), force=True)
  after_forced = found.all_steps()
  # The oldest is the one taken first: saving step 4 again drops 6.
  again = found.save(4, state_of(model, optimizer), force=True)
  after_again = found.all_steps()
  folders_after = sorted(os.listdir(path))

  # save_async returns before the checkpoint is written; it is tracked once written.
  release, writing = threading.Event(), threading.Event()
  write = found._save

  def held_save(*args, **kwargs):
    writing.set()
    release.wait(30)
    write(*args, **kwargs)

  found._save = held_save
  async_taken = found.save_async(8, state_of(model, optimizer))
  writing.wait(30)
  while_writing = found.all_steps()
  release.set()
  found.join()
  found._save = write
  after_async = found.all_steps()
  return dict(taken=taken, steps_after_join=steps_after_join, folders=folders, found_steps=found_steps,
              restored_differing=restored_differing, restored_step=restored_step, forced=forced,
              after_forced=after_forced, again=again, after_again=after_again, folders_after=folders_after,
              should_save=[found.should_save(s) for s in range(5)],
              untracked=error_of(lambda: found.restore(5, state_of(fresh, fresh_opt))), async_taken=async_taken,
              while_writing=while_writing, after_async=after_async)


@scenario
def preemption():
  """A SIGTERM makes the next step asked about a step to save, once."""
  quiet = CheckpointManager(folder('quiet'), save_interval=100, chkpt_on_preemption=False)
  mgr = CheckpointManager(folder('preemption'), save_interval=100)
  before = [mgr.should_save(s) for s in (1, 2)]
  os.kill(os.getpid(), signal.SIGTERM)
  deadline = time.monotonic() + 10
  at_signal = False
  while time.monotonic() < deadline:
    time.sleep(0.01)  # the handler runs between bytecodes of the main thread
    if manager_module._preemption_noticed.is_set():
      at_signal = True
      break
  return dict(before=before, noticed=at_signal, at=mgr.should_save(3), reached=mgr.reached_preemption(3),
              later=mgr.should_save(4), interval=mgr.should_save(100), quiet=quiet.should_save(3),
              quiet_reached=error_of(lambda: quiet.reached_preemption(3)))


@scenario
def layouts():
  """Chunks of uneven, partial and unsharded tensors, and loads between shardings,
  with a wrapped tensor, a CPU tensor, bfloat16, a 0-d tensor and plain values."""
  path = folder('layouts')
  rows = torch.arange(15, dtype=torch.float32).reshape(5, 3)
  grid = torch.arange(32, dtype=torch.float32).reshape(4, 8)
  half = torch.randn(6, 4).to(torch.bfloat16)
  source = {
      'rows': xs.mark_sharding(rows.to('xla'), xs.get_1d_mesh('x'), ('x', None)),  # wrapped, 2+2+1+0 rows
      'nested': {'grid': xs.mark_sharding(grid.to('xla'), mesh((2, 2)), (None, 'y')).global_tensor,
                 'half': xs.mark_sharding(half.to('xla'), mesh((2, 2)), ('y', 'x')).global_tensor},
      'scalar': torch.tensor(2.5).to('xla'),
      'cpu': torch.arange(4),
      'extra': [1, 'two', {'three': 3.0}],
  }
  dcp.save(source, storage_writer=dcp.FileSystemWriter(path), planner=SPMDSavePlanner())
  chunks = chunks_of(path, ['rows', 'nested.grid', 'nested.half', 'scalar', 'cpu'])
  loaded = {}
  targets = {
      'transposed_mesh': lambda t: xs.mark_sharding(t, mesh((2, 2)), ('y', 'x')),
      'columns': lambda t: xs.mark_sharding(t, mesh((4, 1)), (None, 'x')),
      'unsharded': lambda t: t,
  }
  for name, shard in targets.items():
    target = {
        'rows': shard(torch.zeros(5, 3).to('xla')),  # wrapped when sharded
        'nested': {'grid': xs.unwrap_sharded_tensor(shard(torch.zeros(4, 8).to('xla'))),
                   'half': xs.unwrap_sharded_tensor(shard(torch.zeros(6, 4, dtype=torch.bfloat16).to('xla')))},
        'scalar': torch.tensor(0.).to('xla'),
        'cpu': torch.zeros(4, dtype=torch.int64),
        'extra': [0, '', {'three': 0.0}],
    }
    keep = target['cpu']
    specs = [spec_of(target['rows']), spec_of(target['nested']['grid'])]
    dcp.load(target, storage_reader=dcp.FileSystemReader(path), planner=SPMDLoadPlanner())
    loaded[name] = dict(
        rows=torch.equal(xs.unwrap_sharded_tensor(target['rows']).cpu(), rows), wrapped=type(target['rows']).__name__,
        grid=torch.equal(target['nested']['grid'].cpu(), grid),
        half=torch.equal(target['nested']['half'].cpu(), half), half_dtype=str(target['nested']['half'].dtype),
        scalar=target['scalar'].item(), cpu=values(target['cpu']), cpu_in_place=target['cpu'] is keep,
        extra=target['extra'], specs_before=specs,
        specs_after=[spec_of(target['rows']), spec_of(target['nested']['grid'])])
  # Only the bfloat16 tensor, into float32 on another mesh: the values are cast.
  wider = {'nested': {'half': xs.mark_sharding(torch.zeros(6, 4).to('xla'), mesh((4, 1)), ('x', None)).global_tensor}}
  dcp.load(wider, storage_reader=dcp.FileSystemReader(path), planner=SPMDLoadPlanner())
  cast = dict(equal=torch.equal(wider['nested']['half'].cpu(), half.float()), dtype=str(wider['nested']['half'].dtype),
              spec=spec_of(wider['nested']['half']))
  return dict(chunks=chunks, loaded=loaded, cast=cast)


@scenario
def errors():
  """Restores that cannot be done, and partial ones."""
  path = folder('errors')
  model, optimizer = mlp((2, 2), seed=0)
  train_step(model, optimizer)
  mgr = CheckpointManager(path, save_interval=1, chkpt_on_preemption=False)
  mgr.save(1, state_of(model, optimizer))
  expected = cpu_copy(model, optimizer)

  fresh, fresh_opt = mlp((4, 1), seed=1)
  extra = state_of(fresh, fresh_opt)
  extra['model']['head.weight'] = torch.zeros(3, device='xla')
  unprimed = error_of(lambda: mgr.restore(1, state_of(fresh, fresh_opt)))
  extra_key = error_of(lambda: mgr.restore(1, extra))

  other, other_opt = mlp(None, seed=2)
  prime_optimizer(other_opt)
  wrong = state_of(other, other_opt)
  wrong['model']['0.weight'] = torch.zeros(16, 9, device='xla')
  shape = error_of(lambda: mgr.restore(1, wrong))

  # The model alone from a checkpoint of model and optimizer; an unknown key left as it
  # is with allow_partial_load.
  only_model = {'model': fresh.state_dict()}
  mgr.restore(1, only_model)
  model_differs = [k for k in differing(expected, fresh, fresh_opt) if k.startswith('model.')]
  partial = {'model': other.state_dict(), 'head': torch.full((3,), 7.0, device='xla')}
  dcp.load(partial, storage_reader=dcp.FileSystemReader(os.path.join(path, '1')),
           planner=SPMDLoadPlanner(allow_partial_load=True))
  partial_differs = [k for k in differing(expected, other, other_opt) if k.startswith('model.')]
  return dict(unprimed=unprimed, extra_key=extra_key, shape=shape, model_differs=model_differs,
              partial_differs=partial_differs, head=values(partial['head']))


def main():
  xr.use_spmd()
  try:
    results = scenario.run(errors=(Exception, CheckpointException), timed=True)
  finally:
    shutil.rmtree(ROOT, ignore_errors=True)
  report(**results)


if __name__ == '__main__':
  main()
