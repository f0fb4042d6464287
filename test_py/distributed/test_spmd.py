"""SPMD sharding end to end, on 4 CPU devices: sharded tensors compute the values of
eager PyTorch, each device holds its tile, shardings survive updates and can be
cleared, and every misuse of mark_sharding is refused with a clear error.

SPMD mode is a setting of the whole process, so the scenarios run in a process of
their own (launched/spmd_checks.py, once for the module) and report their values; the
tests here compare them. The SPMD switch at import (XLA_USE_SPMD=1) and its refusal
inside a replication run in small processes of their own.
"""
import os

import pytest
import torch

from torch_xla.distributed.spmd import hlo_sharding
from testing.scenario_testing import launch_python, scenario

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'launched', 'spmd_checks.py')
RTOL = 1e-5


@pytest.fixture(scope='module')
def results():
  run = launch_python([SCRIPT])
  assert run.returncodes == [0] and len(run.results) == 1, run.show()
  return run.results[0]


def close(actual, expected):
  torch.testing.assert_close(torch.tensor(actual), torch.tensor(expected), rtol=RTOL, atol=1e-6)


def same_sharding(actual, expected):
  """The same sharding, however the core writes it (an explicit device list or XLA's
  iota form)."""
  assert hlo_sharding.parse_sharding(actual) == hlo_sharding.parse_sharding(expected), (actual, expected)


def test_spmd_mode_is_on_and_the_device_stands_for_all(results):
  r = scenario(results, 'mode')
  assert r == dict(is_spmd=True, devices=4, device='xla:0', tensor_device='xla:0')


def test_matmul_sharded_2x2_equals_eager(results):
  r = scenario(results, 'matmul_2x2')
  assert r['expected_spec'] == '{devices=[2,2]0,1,2,3}'
  same_sharding(r['spec_a'], r['expected_spec'])
  same_sharding(r['spec_b'], r['expected_spec'])
  assert r['wrapped'] == 'XLAShardedTensor'
  close(r['out'], r['eager'])


@pytest.mark.parametrize('op', ['affine_sin', 'product', 'sum', 'sum0', 'sum1', 'max'])
def test_uneven_rows_over_a_1d_mesh_equal_eager(results, op):
  # 5 rows over 4 devices: tiles of 2, 2, 1 and 0 rows.
  r = scenario(results, 'uneven_1d')
  assert r['expected_spec'] == '{devices=[4,1]0,1,2,3}'
  same_sharding(r['spec'], r['expected_spec'])
  close(r[op]['out'], r[op]['eager'])


def check_shards(shards, full, expected, padded_shape=None):
  """`expected`: per device (in order), its [start, stop] pairs (or 'ellipsis') and
  replica id; each shard's data without padding is that part of `full`, on the CPU, and
  its data is padded with zeros to `padded_shape` (torch_xla's shards: the device's
  buffer); tiles' indices are a list of slices of step 1, as torch_xla gives them."""
  assert len(shards) == len(expected) == 4
  for ordinal, (shard, (indices, replica)) in enumerate(zip(shards, expected)):
    assert shard['device'] == f'CPU:{ordinal}'
    assert shard['cpu']
    assert shard['indices'] == indices, (ordinal, shard)
    assert shard['replica'] == replica, (ordinal, shard)
    if indices == 'ellipsis':
      assert shard['indices_type'] == 'ellipsis'
    else:
      assert shard['indices_type'] == 'list' and shard['steps'] == [1] * len(indices)
    part = full if indices == 'ellipsis' else full[tuple(slice(a, b) for a, b in indices)]
    assert shard['unpadded_shape'] == list(part.shape)
    close(shard['unpadded'], part.tolist())
    padded = torch.zeros(padded_shape or part.shape)
    padded[tuple(slice(0, n) for n in part.shape)] = part
    assert shard['shape'] == list(padded.shape)
    close(shard['data'], padded.tolist())


def test_local_shards_of_a_2x2_tiling(results):
  r = scenario(results, 'local_shards_even')
  full = torch.arange(16, dtype=torch.float32).reshape(4, 4)
  # Device d holds tile (d // 2, d % 2) of 2x2 elements; a tiling has no replicas.
  check_shards(r['shards'], full, [([[0, 2], [0, 2]], 0), ([[0, 2], [2, 4]], 0), ([[2, 4], [0, 2]], 0),
                                   ([[2, 4], [2, 4]], 0)])
  assert r['type'] == 'TILED'


def test_local_shards_of_uneven_rows_are_padded_with_zeros(results):
  r = scenario(results, 'local_shards_uneven')
  full = torch.arange(10, dtype=torch.float32).reshape(5, 2)
  # ceil(5 / 4) = 2 rows per tile: [0, 2), [2, 4), [4, 5) and the empty [5, 5); each
  # device holds 2 rows, the short tiles padded with zeros.
  check_shards(r['shards'], full, [([[0, 2], [0, 2]], 0), ([[2, 4], [0, 2]], 0), ([[4, 5], [0, 2]], 0),
                                   ([[5, 5], [0, 2]], 0)], padded_shape=(2, 2))


def test_local_shards_of_a_partial_replication(results):
  r = scenario(results, 'local_shards_partial')
  full = torch.arange(16, dtype=torch.float32).reshape(4, 4)
  # Columns split over mesh axis 'y', replicated over 'x': devices 0 and 2 (mesh column
  # 0) hold columns [0, 2), devices 1 and 3 columns [2, 4); the replica id is the mesh
  # row, d // 2.
  same_sharding(r['spec'], '{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}')
  assert r['type'] == 'PARTIAL'
  check_shards(r['shards'], full, [([[0, 4], [0, 2]], 0), ([[0, 4], [2, 4]], 0), ([[0, 4], [0, 2]], 1),
                                   ([[0, 4], [2, 4]], 1)])


def test_local_shards_of_a_replicated_tensor(results):
  r = scenario(results, 'local_shards_replicated')
  full = torch.arange(6, dtype=torch.float32).reshape(2, 3)
  assert r['spec'] == '{replicated}' and r['type'] == 'REPLICATED'
  # Every device holds the whole tensor; the replica id is the device's ordinal.
  check_shards(r['shards'], full, [('ellipsis', d) for d in range(4)])


def test_load_local_shards_writes_the_devices(results):
  r = scenario(results, 'load_local_shards')
  t = torch.arange(16, dtype=torch.float32).reshape(4, 4) + 1
  close(r['value'], (-t).tolist())
  same_sharding(r['spec'], '{devices=[2,2]0,1,2,3}')
  for refused in ('incomplete', 'wrong_shape', 'replicated'):
    assert r[refused] is not None and r[refused][0] == 'RuntimeError', (refused, r[refused])
  assert 'devices' in r['incomplete'][1]
  assert '(3, 3)' in r['wrong_shape'][1] and '(2, 2)' in r['wrong_shape'][1]
  assert 'REPLICATED' in r['replicated'][1]
  close(r['after_errors'], (-t).tolist())


def test_clear_sharding(results):
  r = scenario(results, 'clear_sharding')
  same_sharding(r['before'], '{devices=[2,2]0,1,2,3}')
  assert r['after'] == '' and r['type'] is None and r['unwrapped']
  close(r['value'], r['eager'])


def test_sharding_survives_an_in_place_update(results):
  r = scenario(results, 'inplace_keeps_sharding')
  for when in ('before', 'pending', 'synced'):
    same_sharding(r[when], '{devices=[2,2]0,1,2,3}')
  close(r['value'], r['eager'])


def test_pending_value_takes_the_sharding(results):
  r = scenario(results, 'pending_value')
  same_sharding(r['spec'], r['expected_spec'])
  close(r['out'], r['eager'])


def test_mark_sharding_with_gradients(results):
  r = scenario(results, 'with_gradients')
  same_sharding(r['spec'], r['expected_spec'])
  close(r['value'], r['eager'])
  close(r['grad'], r['eager_grad'])


def test_sharding_types_as_torch_xla_numbers_them(results):
  r = scenario(results, 'sharding_types')
  assert r == dict(tiled=3, partial=5, none=None)


def test_batch_sharded_convolution_equals_eager(results):
  r = scenario(results, 'convolution_batch_sharded')
  close(r['out'], r['eager'])
  close(r['grad'], r['eager_grad'])
  assert r['spec'] != ''  # the output stays split over the batch


def test_linear_layers_contract_unflattened_inputs_and_equal_eager(results):
  r = scenario(results, 'linear_layers_keep_the_batch_sharded')
  for got, want in (('out', 'eager'), ('grad', 'eager_grad'), ('weight_grad', 'eager_weight_grad'),
                    ('linear_grad', 'eager_linear_grad'), ('bias_grad', 'eager_bias_grad')):
    torch.testing.assert_close(torch.tensor(r[got]), torch.tensor(r[want]), rtol=1e-4, atol=1e-4)
  # No product of the flattened [seq * batch, embed] activations.
  assert r['flattened'] == 0


def test_an_spmd_execution_is_timed_as_replicated(results):
  # torch_xla's name for an SPMD program's executions (one per launch on every device).
  r = scenario(results, 'execution_metrics')
  assert r['replicated'] == 1 and r['single'] is None and r['value'] == [[3.0] * 4] * 2


def test_transformer_block_on_a_2d_mesh_equals_eager(results):
  r = scenario(results, 'transformer_block_2d')
  torch.testing.assert_close(torch.tensor(r['out']), torch.tensor(r['eager']), rtol=1e-4, atol=1e-5)
  torch.testing.assert_close(torch.tensor(r['grad']), torch.tensor(r['eager_grad']), rtol=1e-4, atol=1e-5)


def test_fsdp_v2_trains_as_eager_with_sharded_state(results):
  r = scenario(results, 'fsdp_v2_training')
  torch.testing.assert_close(torch.tensor(r['losses']), torch.tensor(r['eager']), rtol=1e-4, atol=1e-6)
  torch.testing.assert_close(torch.tensor(r['weight']), torch.tensor(r['eager_weight']), rtol=1e-4, atol=1e-5)
  # The 16x8 weight is split in rows over the 4 devices, and so are its gradient and
  # Adam's state (XLA's propagation lays them out as the weight).
  same_sharding(r['weight_spec'], '{devices=[4,1]0,1,2,3}')
  same_sharding(r['grad_spec'], '{devices=[4,1]0,1,2,3}')
  same_sharding(r['exp_avg_spec'], '{devices=[4,1]0,1,2,3}')
  assert r['shard_rows'] == [[4, 8]] * 4


def test_loader_lays_batches_out_by_input_sharding(results):
  r = scenario(results, 'loader_input_sharding')
  for spec in r['specs'] + r['dict_specs']:
    same_sharding(spec, r['expected_spec'])
  assert r['values'] == r['eager']


def test_data_made_before_spmd_is_copied_to_the_devices_once(results):
  """Three graphs read a tensor made on the device before use_spmd(): each device but
  its own gets one copy, at the first graph."""
  r = scenario(results, 'data_made_before_spmd')
  for actual, expected in zip(r['values'], r['expected']):
    close(actual, expected)
  assert r['copies'] == 3, r


def test_replication_is_refused_in_spmd_mode(results):
  r = scenario(results, 'replication_refused')
  assert r['refusal'] is not None and 'SPMD mode' in r['refusal'][1], r


@pytest.mark.parametrize('case, kind, words', [
    ('mesh_too_small', 'MeshError', ['Number of device IDs (2)', 'global number of devices (4)']),
    ('mesh_size', 'ValueError', ['holds 2 devices', 'all 4 devices']),
    ('unknown_name', 'ValueError', ["'z'", "('x', 'y')"]),
    ('index_out_of_range', 'ValueError', ['axis index 2', '0 to 1']),
    ('spec_length', 'ValueError', ['1 entries', 'rank 2']),
    ('axis_twice', 'ValueError', ["0 ('x')", 'dimensions 0 and 1']),
    ('axis_twice_in_tuple', 'ValueError', ["1 ('y')", 'twice']),
    ('cpu_tensor', 'ValueError', ['cpu', 'XLA device']),
    ('no_mesh', 'ValueError', ['set_global_mesh']),
    ('with_gradients_spec_length', 'ValueError', ['3 entries', 'rank 2']),
])
def test_errors_in_spmd_mode(results, case, kind, words):
  r = scenario(results, 'errors')
  assert r[case] is not None, f'{case}: nothing raised'
  assert r[case][0] == kind, r[case]
  for word in words:
    assert word in r[case][1], r[case]
  # The refused calls left the tensor unannotated.
  assert r['spec_after_errors'] == ''


def test_manual_sharding_round_trip_computes_each_block_as_eager(results):
  r = scenario(results, 'manual_round_trip')
  # Each device holds its 4x4 block of the 8x8 tensor, as a manual value.
  assert r['piece'] == dict(shape=[4, 4], spec='{manual}', type='MANUAL', wrapped='XLAShardedTensor')
  assert r['shape'] == [8, 8]
  same_sharding(r['spec'], '{devices=[2,2]0,1,2,3}')
  close(r['out'], r['eager'])


def test_gradients_flow_through_manual_sharding(results):
  r = scenario(results, 'manual_gradients')
  close(r['sums'], r['eager'])
  assert r['grad_shape'] == [8, 8]
  close(r['grad'], r['eager_grad'])


def test_manual_sharding_of_uneven_and_replicated_tensors(results):
  r = scenario(results, 'manual_uneven_and_replicated')
  assert r['uneven_piece'] == [2, 3] and r['replicated_piece'] == [5, 3] and r['xlac_piece'] == [2, 3]
  close(r['uneven'], r['uneven_eager'])
  close(r['replicated'], r['replicated_eager'])
  close(r['xlac'], r['xlac_eager'])
  same_sharding(r['xlac_spec'], '{devices=[4,1]0,1,2,3}')


def test_manual_values_alive_at_a_sync_stay_pieces(results):
  r = scenario(results, 'manual_values_synced')
  assert r['spec'] == '{manual}'
  x = torch.arange(16, dtype=torch.float32).reshape(4, 4) * 2
  # Columns over 4 devices: device d's piece is column d, doubled.
  assert [p['device'] for p in r['pieces']] == [f'CPU:{d}' for d in range(4)]
  for d, p in enumerate(r['pieces']):
    assert p['indices'] == 'Ellipsis'
    close(p['data'], x[:, d:d + 1].tolist())
  assert r['read'][0] == 'RuntimeError' and 'manually sharded' in r['read'][1] and '[4,1]' in r['read'][1]
  close(r['full'], r['eager'])
  close(r['from_data'], r['from_data_eager'])


@pytest.mark.parametrize('case, kind, words', [
    ('unsharded', 'RuntimeError', ['_spmd_full_to_shard_shape', 'Float[8, 8]', 'no sharding']),
    ('already_manual', 'RuntimeError', ['_spmd_full_to_shard_shape', 'Float[4, 4]', 'manually sharded']),
    ('computed_from_manual', 'RuntimeError', ['_spmd_full_to_shard_shape', 'computed from a manually sharded']),
    ('not_manual', 'RuntimeError', ['_spmd_shard_to_full_shape', 'Float[8, 8]', 'not manually sharded']),
    ('wrong_full_shape', 'RuntimeError', ['_spmd_shard_to_full_shape', '(16, 8)', '(8, 4)', '(4, 4)']),
    ('wrong_dtype', 'RuntimeError', ['_spmd_shard_to_full_shape', 'Double', 'Float[4, 4]']),
    ('manual_full_sharding', 'RuntimeError', ['_spmd_shard_to_full_shape', 'tiled or replicated']),
    ('spec_rank', 'ValueError', ['2 entries', 'rank 3']),
    ('mark_data_manual', 'RuntimeError', ['_mark_manual_sharding', 'Float[8, 8]', 'device data']),
    ('tile_a_manual_value', 'RuntimeError', ['mark_sharding', 'Float[4, 4]', 'disable_manual_sharding']),
    ('from_shards_count', 'RuntimeError', ['_global_tensor_from_cpu_shards', 'one shard per device (4)', 'got 3']),
    ('from_shards_shape', 'RuntimeError', ['_global_tensor_from_cpu_shards', '(5, 4)', '(3, 2)', '(2, 2)']),
    ('from_shards_rank', 'RuntimeError', ['_global_tensor_from_cpu_shards', '(4,)', 'rank 1']),
    ('retile_data', 'RuntimeError', ['mark_sharding', 'already sharded', 'clear_sharding']),
    ('mixed_with_tiled', 'RuntimeError', ['stablehlo.add', 'manually sharded', 'f32[4, 4]', 'replicated']),
])
def test_manual_sharding_errors(results, case, kind, words):
  r = scenario(results, 'manual_errors')
  assert r[case] is not None, f'{case}: nothing raised'
  assert r[case][0] == kind, r[case]
  for word in words:
    assert word in r[case][1], (word, r[case])
  # The process lived on (no XLA abort), and the refused calls changed nothing.
  close(r['after'], (torch.ones(8, 8) * 3).tolist())
  same_sharding(r['sharded_spec'], '{devices=[2,2]0,1,2,3}')
  assert r['plain_spec'] == ''


def test_collectives_between_manual_pieces(results):
  r = scenario(results, 'manual_collectives')
  assert r['sum'] == (torch.ones(8, 8) * 4).tolist()
  assert r['scaled'] == torch.ones(8, 8).tolist()
  close(r['max'], r['max_eager'])
  assert r['scatter0'] == (torch.ones(2, 8) * 4).tolist()
  assert r['scatter_last'] == (torch.ones(8, 2) * 4).tolist()
  close(r['paired'], r['paired_eager'])
  expected = dict(not_manual=['_xla_spmd_all_reduce', 'Float[8, 8]', 'not a manually sharded piece'],
                  reduce_type=["unknown reduce type 'avg'"], device_twice=['device 1', 'two groups'],
                  device_missing=['2 of the 4 devices'], shard_count=['shard_count 2', 'group size 4'],
                  indivisible=['shape', 'does not split into 4 blocks'], scatter_dim=['scatter dimension 2'])
  for case, words in expected.items():
    error = r['errors'][case]
    assert error is not None and error[0] == 'RuntimeError', (case, error)
    for word in words:
      assert word in error[1], (case, word, error)


def test_mark_sharding_with_gradients_under_aot_function(results):
  r = scenario(results, 'sharding_under_aot_function')
  assert r['ops'] == [True, True]  # the forward and backward graphs keep the annotation
  close(r['y'], r['eager'])
  close(r['grad'], r['eager_grad'])
  same_sharding(r['y_spec'], '{devices=[4]0,1,2,3}')
  same_sharding(r['grad_spec'], '{devices=[4]0,1,2,3}')


def test_xlac_shard_entry_points(results):
  r = scenario(results, 'xlac_shard_entry_points')
  assert r['specs'] == ['{devices=[4]0,1,2,3}', '']
  assert r['op_sharding'] == '{devices=[4]0,1,2,3}' and r['op_sharding_type'] == 'OpSharding' and r['none'] is None
  # Padded pieces of 2, the last ones padding; indices of step 1 without the padding.
  assert r['pieces'] == [[[0., 1.], 'CPU:0'], [[2., 3.], 'CPU:1'], [[4., 0.], 'CPU:2'], [[0., 0.], 'CPU:3']]
  assert r['placements'] == [[0, [[0, 2, 1]]], [0, [[2, 4, 1]]], [0, [[4, 5, 1]]], [0, [[5, 5, 1]]]]
  assert r['loaded'] == [-0., -1., -2., -3., -4.]


def test_global_tensor_from_cpu_shards(results):
  r = scenario(results, 'global_tensor_from_cpu_shards')
  full = torch.arange(16).reshape(4, 4)
  assert r['tiled'] == full.tolist() and r['dtype'] == 'torch.int64' and r['sum'] == 120
  same_sharding(r['tiled_spec'], '{devices=[2,2]0,1,2,3}')
  assert r['trimmed'] == full[:3].tolist()
  assert r['replicated'] == full.tolist()
  assert r['partial'] == full.tolist()
  same_sharding(r['partial_spec'], '{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}')


def test_a_replicated_result_reports_its_sharding(results):
  r = scenario(results, 'result_sharding_specs')
  assert r['data'] == '' and r['pending'] == ''
  assert r['after_sync'] == '{replicated}' and r['after_update'] == '{replicated}'
  close(r['value'], r['eager'])


def test_xla_use_spmd_at_import_turns_spmd_on_without_starting_the_runtime():
  code = ('import torch_xla, torch_xla.runtime as xr; from testing.process_testing import report; '
          'report(started=torch_xla._XLAC._xla_runtime_is_initialized(), spmd=xr.is_spmd())')
  on = launch_python(['-c', code], timeout=120, XLA_USE_SPMD='1')
  off = launch_python(['-c', code], timeout=120, XLA_USE_SPMD='0')
  assert on.results == [dict(started=False, spmd=True)], on.show()
  assert off.results == [dict(started=False, spmd=False)], off.show()


def test_use_spmd_is_refused_inside_a_replication():
  code = '\n'.join([
      'import torch_xla.runtime as xr, torch_xla.distributed.xla_multiprocessing as xmp',
      'from testing.process_testing import report',
      'def replica(i):',
      '  try:',
      '    xr.use_spmd()',
      '  except RuntimeError as e:',
      '    return str(e)',
      'report(errors=xmp.spawn(replica, nprocs=2, join=False).join(60), spmd=xr.is_spmd())',
  ])
  run = launch_python(['-c', code], timeout=120)
  assert len(run.results) == 1, run.show()
  errors = run.results[0]['errors']
  assert errors is not None and len(errors) == 2 and all(errors), run.show()
  assert run.results[0]['spmd'] is False


BACKWARD_OF_A_LAYER = """
import torch, torch_xla, torch_xla.runtime as xr, torch_xla.distributed.spmd as xs
from testing.process_testing import report
xr.use_spmd()
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0, batch_first=True)
x = torch.randn(32, 32, 128)
xlayer = torch.nn.TransformerEncoderLayer(128, 4, dim_feedforward=512, dropout=0.0, batch_first=True).to('xla')
xlayer.load_state_dict(layer.state_dict())
xx = x.to('xla')
xs.mark_sharding(xx, xs.get_1d_mesh('d'), ('d', None, None))
xlayer(xx).sum().backward()
torch_xla.sync()  # every gradient at once: their all-reduces run side by side
layer(x).sum().backward()
report(grad=xlayer.linear1.weight.grad.cpu().tolist(), eager=layer.linear1.weight.grad.tolist())
"""


def test_a_backward_with_large_products_and_gradient_all_reduces_completes():
  # Products large enough for the CPU plugin to split over its threads, followed by the
  # gradients' all-reduces: with fewer pool threads than devices + 1 the devices' parts
  # waited for each other until XLA ended the process (its timeout shortened here).
  run = launch_python(['-c', BACKWARD_OF_A_LAYER], timeout=180,
                   XLA_FLAGS='--xla_cpu_collective_call_terminate_timeout_seconds=10')
  assert run.returncodes == [0] and len(run.results) == 1, run.show()
  r = run.results[0]
  torch.testing.assert_close(torch.tensor(r['grad']), torch.tensor(r['eager']), rtol=1e-3, atol=1e-3)
