"""Checkpoints of SPMD-sharded state through torch.distributed.checkpoint, on 4 CPU
devices: SPMDSavePlanner writes each sharded tensor as its distinct tiles,
SPMDLoadPlanner loads them into other shardings in place, and a run saved on a 2x2
mesh resumes on a 4x1 mesh and unsharded with the same parameters, optimizer state and
losses; CheckpointManager saves by step, in the background, keeps the newest and
restores the latest; restores that cannot be done say why.

SPMD mode is a setting of the whole process, so the scenarios run in a process of
their own (launched/spmd_checkpoint_checks.py, once for the module) and report their
values; the tests here check them. Without SPMD mode the planners and the manager work
on plain XLA tensors, in this process.
"""
import os

import pytest
import torch

from testing.scenario_testing import launch_python, scenario

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'launched', 'spmd_checkpoint_checks.py')


@pytest.fixture(scope='module')
def results():
  run = launch_python([SCRIPT])
  assert run.returncodes == [0] and len(run.results) == 1, run.show()
  return run.results[0]


def test_sharded_tensors_are_written_as_their_distinct_tiles(results):
  chunks = scenario(results, 'resume')['chunks']
  # The 16x8 weight over the 2x2 mesh ('x', 'y'): four 8x4 tiles.
  assert chunks['model.0.weight'] == [[[0, 0], [8, 4]], [[0, 4], [8, 4]], [[8, 0], [8, 4]], [[8, 4], [8, 4]]]
  # ('y', 'x'): the same four tiles of the 4x16 weight, in device order.
  assert sorted(chunks['model.2.weight']) == [[[0, 0], [2, 8]], [[0, 8], [2, 8]], [[2, 0], [2, 8]],
                                              [[2, 8], [2, 8]]]
  # ('x',) leaves 'y' replicated: each half of the bias is held by two devices and
  # written once.
  assert chunks['model.0.bias'] == [[[0], [8]], [[8], [8]]]
  # A replicated tensor is one chunk; Adam's moments are laid out as their weight; the
  # step count (a CPU tensor) is DCP's own.
  assert chunks['model.2.bias'] == [[[0], [4]]]
  assert chunks['optim.state.0.exp_avg'] == chunks['model.0.weight']
  assert chunks['optim.state.0.step'] == [[[], []]]


@pytest.mark.parametrize('target', ['mesh_4x1', 'unsharded'])
def test_a_run_saved_on_a_2x2_mesh_resumes_elsewhere(results, target):
  r = scenario(results, 'resume')
  t = r[target]
  # The fresh model and its primed optimizer differ everywhere before the load and
  # equal the saved parameters and AdamW state (moments and step counts) exactly after.
  assert t['differing_before'] == r['saved_keys']
  assert t['differing_after'] == []
  assert t['differing_after_load_state_dict'] == []
  # Loaded in place: the same parameter and state tensors, sharded as before the load
  # (a replicated parameter comes back without the annotation, whole on every device).
  assert t['same_objects']
  assert t['specs_after'] == [s if s != '{replicated}' else '' for s in t['specs_before']]
  if target == 'mesh_4x1':
    assert t['specs_before'] == ['{devices=[4,1]0,1,2,3}', '{replicated}', '{devices=[1,4]0,1,2,3}',
                                 '{devices=[4]0,1,2,3}']
    assert t['state_specs'][0] == '{devices=[4,1]0,1,2,3}'
  else:
    assert t['specs_after'] == ['', '', '', '']
  assert t['lr'] == 0.01 and t['weight_decay'] == 0.1
  # Two more steps give the losses of the original run's next two steps.
  torch.testing.assert_close(torch.tensor(t['losses']), torch.tensor(r['continued']), rtol=1e-5, atol=1e-6)
  assert r['losses'][1] > r['continued'][0] > r['continued'][1]


def test_manager_saves_by_interval_and_keeps_the_newest(results):
  r = scenario(results, 'manager')
  # save_interval=2 over steps 1..6 (5 and 6 in the background), max_to_keep=2.
  assert r['taken'] == [False, True, False, True, False, True]
  assert r['steps_after_join'] == [4, 6]
  assert r['folders'] == ['4', '6']
  assert r['should_save'] == [True, False, True, False, True]
  # A forced save is the newest; the oldest goes by the time it was taken, so saving
  # step 4 again drops 6, not 7.
  assert r['forced'] and r['after_forced'] == [6, 7]
  assert r['again'] and r['after_again'] == [4, 7] and r['folders_after'] == ['4', '7']


def test_manager_restores_the_latest_step_into_another_mesh(results):
  r = scenario(results, 'manager')
  # A new manager on the same path finds the checkpoints.
  assert r['found_steps'] == [4, 6]
  # The background save of step 6 wrote the state of step 6, though step 7 changed it
  # in place right after save_async returned.
  assert r['restored_differing'] == []
  assert r['restored_step'] == 6.0
  assert r['untracked'][0] == 'ValueError' and 'step 5' in r['untracked'][1] and '[4, 8]' in r['untracked'][1]


def test_save_async_returns_before_the_checkpoint_is_written(results):
  r = scenario(results, 'manager')
  assert r['async_taken']
  assert r['while_writing'] == [4, 7]
  assert r['after_async'] == [4, 8]


def test_preemption_saves_the_next_step(results):
  r = scenario(results, 'preemption')
  assert r['before'] == [False, False] and r['noticed']
  # The first step asked about after SIGTERM is saved whatever the interval, once.
  assert r['at'] and r['reached'] and not r['later'] and r['interval']
  assert r['quiet'] is False
  assert r['quiet_reached'][0] == 'RuntimeError' and 'chkpt_on_preemption' in r['quiet_reached'][1]


def test_uneven_partial_and_unsharded_layouts(results):
  chunks = scenario(results, 'layouts')['chunks']
  # 5 rows over 4 devices: 2, 2, 1 and an empty tile, which is not written.
  assert chunks['rows'] == [[[0, 0], [2, 3]], [[2, 0], [2, 3]], [[4, 0], [1, 3]]]
  # Columns over 'y', replicated over 'x': two tiles.
  assert chunks['nested.grid'] == [[[0, 0], [4, 4]], [[0, 4], [4, 4]]]
  assert len(chunks['nested.half']) == 4
  assert chunks['scalar'] == [[[], []]] and chunks['cpu'] == [[[0], [4]]]


@pytest.mark.parametrize('target', ['transposed_mesh', 'columns', 'unsharded'])
def test_loads_into_other_shardings(results, target):
  r = scenario(results, 'layouts')['loaded'][target]
  assert r['rows'] and r['grid'] and r['half'] and r['half_dtype'] == 'torch.bfloat16'
  assert r['wrapped'] == ('Tensor' if target == 'unsharded' else 'XLAShardedTensor')
  assert r['specs_after'] == r['specs_before']
  assert r['scalar'] == 2.5
  assert r['cpu'] == [0, 1, 2, 3] and r['cpu_in_place']
  assert r['extra'] == [1, 'two', {'three': 3.0}]


def test_a_load_casts_to_the_targets_dtype(results):
  r = scenario(results, 'layouts')['cast']
  assert r == dict(equal=True, dtype='torch.float32', spec='{devices=[4,1]0,1,2,3}')


@pytest.mark.parametrize('case, kind, words', [
    ('unprimed', 'RuntimeError', ["'optim.state'", "'optim.state.0.exp_avg'", 'prime_optimizer']),
    ('extra_key', 'RuntimeError', ["'model.head.weight'", 'does not have', 'allow_partial_load']),
    ('shape', 'ValueError', ["'model.0.weight'", '(16, 9)', '(16, 8)']),
])
def test_restores_that_cannot_be_done_say_why(results, case, kind, words):
  r = scenario(results, 'errors')
  assert r[case] is not None, f'{case}: nothing raised'
  assert r[case][0] == kind, r[case]
  for word in words:
    assert word in r[case][1], r[case]


def test_partial_restores(results):
  r = scenario(results, 'errors')
  # The model alone from a checkpoint of model and optimizer.
  assert r['model_differs'] == []
  # allow_partial_load leaves a key the checkpoint lacks as it is.
  assert r['partial_differs'] == [] and r['head'] == [7.0, 7.0, 7.0]


def test_plain_xla_state_without_spmd(tmp_path):
  # Outside SPMD mode every XLA tensor is whole: one chunk, copied back in place.
  import torch_xla
  from torch_xla.experimental.distributed_checkpoint import CheckpointManager, prime_optimizer
  torch.manual_seed(0)
  model = torch.nn.Linear(4, 3).to('xla')
  optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
  model(torch.randn(2, 4).to('xla')).sum().backward()
  optimizer.step()
  torch_xla.sync()
  mgr = CheckpointManager(str(tmp_path), save_interval=5, max_to_keep=1, chkpt_on_preemption=False)
  assert not mgr.save(1, {'model': model.state_dict()})
  assert mgr.save(5, {'model': model.state_dict(), 'optim': optimizer.state_dict()})
  assert mgr.save_async(10, {'model': model.state_dict(), 'optim': optimizer.state_dict()})
  mgr.join()
  assert mgr.all_steps() == [10] and sorted(os.listdir(tmp_path)) == ['10']

  fresh = torch.nn.Linear(4, 3).to('xla')
  fresh_optimizer = prime_optimizer(torch.optim.SGD(fresh.parameters(), lr=0.5, momentum=0.9))
  weight = fresh.weight
  state_dict = {'model': fresh.state_dict(), 'optim': fresh_optimizer.state_dict()}
  CheckpointManager(str(tmp_path), save_interval=5, chkpt_on_preemption=False).restore(10, state_dict)
  fresh_optimizer.load_state_dict(state_dict['optim'])
  assert fresh.weight is weight
  assert torch.equal(fresh.weight.cpu(), model.weight.cpu()) and torch.equal(fresh.bias.cpu(), model.bias.cpu())
  assert torch.equal(fresh_optimizer.state[fresh.weight]['momentum_buffer'].cpu(),
                     optimizer.state[model.weight]['momentum_buffer'].cpu())
  assert fresh_optimizer.param_groups[0]['lr'] == 0.1
