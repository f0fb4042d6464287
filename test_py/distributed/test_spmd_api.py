"""The pure-Python parts of torch_xla.distributed.spmd, in a process without SPMD mode:
meshes, partition spec -> XLA sharding text (checked against texts derived by hand),
every refusal of a spec, reading sharding text (kinds, each device's tile and replica
id), the checks on shards to load, the XLAShardedTensor wrapper on an XLA tensor, and
the functions that say what is not supported. The same API end to end, in SPMD mode:
test_spmd.py."""
import numpy as np
import pytest
import torch

import torch_xla.runtime as xr
import torch_xla.distributed.spmd as xs
from torch_xla import _XLAC
from torch_xla.distributed.spmd import debugging, hlo_sharding, sharding
from torch_xla.distributed.spmd.xla_sharded_tensor import check_shards_to_load, device_ordinal
from testing.device_marks import needs_devices

pytestmark = needs_devices(4)

ShardingType = xs.ShardingType


@pytest.fixture(scope='module')
def mesh_2x2():
  # Logical mesh [[0, 1],
  #               [2, 3]]: axis 'x' (rows) and axis 'y' (columns).
  return xs.Mesh(np.arange(4), (2, 2), ('x', 'y'))


# ---- meshes


def test_mesh_describes_its_devices(mesh_2x2):
  assert mesh_2x2.size() == 4 and mesh_2x2.shape() == {'x': 2, 'y': 2}
  np.testing.assert_array_equal(mesh_2x2.get_logical_mesh(), [[0, 1], [2, 3]])
  assert mesh_2x2.get_axis_name_idx('y') == 1 and mesh_2x2.get_axis_name_idx('z') is None
  again = xs.Mesh.from_str(str(mesh_2x2))
  assert (again.device_ids.tolist(), again.mesh_shape, again.axis_names) == ([0, 1, 2, 3], (2, 2), ('x', 'y'))
  assert xs.Mesh.from_str('not a mesh') is None
  one = xs.get_1d_mesh('data')
  assert (one.mesh_shape, one.axis_names, one.device_ids.tolist()) == ((4,), ('data',), [0, 1, 2, 3])


@pytest.mark.parametrize('args, words', [
    ((np.arange(2), (2,)), 'Number of device IDs (2) must match the global number of devices (4)'),
    ((np.arange(4), (2, 3)), 'Number of device IDs (4) must match mesh size (6'),
    (([0, 1, 2, 2], (4,)), 'Device IDs must be unique'),
    (([0, 1, 2, 4], (4,)), 'Device IDs must be less than mesh size (4)'),
    ((np.arange(4), (2, 2), ('x',)), 'Number of axis names (1'),
    ((np.arange(4), (2, 2), ('x', 'x')), 'Axis names must be unique'),
])
def test_mesh_refuses_what_does_not_fit_the_run(args, words):
  # A ValueError, and the AssertionError torch_xla raises for these checks.
  with pytest.raises(ValueError, match=None) as raised:
    xs.Mesh(*args)
  assert words in str(raised.value) and isinstance(raised.value, AssertionError)


def test_hybrid_mesh_is_the_host_devices_in_order():
  mesh = xs.HybridMesh(ici_mesh_shape=(2, 2), axis_names=('data', 'model'))
  assert (mesh.mesh_shape, mesh.axis_names, mesh.device_ids.tolist()) == ((2, 2), ('data', 'model'), [0, 1, 2, 3])
  assert xs.HybridMesh((1, 4), (1, 1)).mesh_shape == (1, 4)
  with pytest.raises(ValueError, match=r'dcn_mesh_shape \(2, 1\) spans several slices'):
    xs.HybridMesh(ici_mesh_shape=(1, 2), dcn_mesh_shape=(2, 1))
  with pytest.raises(ValueError, match='same number of axes'):
    xs.HybridMesh(ici_mesh_shape=(2, 2), dcn_mesh_shape=(1,))
  with pytest.raises(ValueError, match=r'holds 2 devices; the run has 4'):
    xs.HybridMesh(ici_mesh_shape=(2, 1))


def tpu_attributes(coords_by_slice):
  """Device attributes as a TPU runtime gives them: per slice, the coordinates of its
  devices in ordinal order (listed here out of order, as the runtime may)."""
  out, ordinal = [], 0
  for slice_index, coords in enumerate(coords_by_slice):
    for c in coords:
      out.append({'name': f'TPU:{ordinal}', 'coords': list(c), 'core_on_chip': 0, 'slice_index': slice_index})
      ordinal += 1
  return out[::-1]


def test_hybrid_mesh_follows_the_tpu_torus_of_each_slice(monkeypatch):
  import torch_xla.core.xla_model as xm
  # Two slices of 2x2 chips; the ordinals do not follow the coordinates.
  slice_coords = [(0, 1, 0), (1, 0, 0), (0, 0, 0), (1, 1, 0)]
  monkeypatch.setattr(xr, 'global_runtime_device_count', lambda: 8)
  monkeypatch.setattr(xm, 'xla_device_hw', lambda device: 'TPU')
  monkeypatch.setattr(xr, 'global_runtime_device_attributes', lambda: tpu_attributes([slice_coords] * 2))
  mesh = xs.HybridMesh(ici_mesh_shape=(2, 2), dcn_mesh_shape=(2, 1), axis_names=('dcn', 'ici'))
  # Within a slice the last mesh axis runs along the torus's first physical axis: device
  # 2 at (0, 0), then 1 at (1, 0); the second slice's block below the first.
  assert mesh.get_logical_mesh().tolist() == [[2, 1], [0, 3], [6, 5], [4, 7]]
  assert mesh.mesh_shape == (4, 2)
  with pytest.raises(ValueError, match='give dcn_mesh_shape'):
    xs.HybridMesh(ici_mesh_shape=(4, 2))
  with pytest.raises(ValueError, match=r'in 2 slices; dcn_mesh_shape \(4, 1\) asks for 4'):
    xs.HybridMesh(ici_mesh_shape=(1, 2), dcn_mesh_shape=(4, 1))
  # One slice of 4 chips: laid out along its torus too.
  monkeypatch.setattr(xr, 'global_runtime_device_count', lambda: 4)
  monkeypatch.setattr(xr, 'global_runtime_device_attributes',
                      lambda: [{k: v for k, v in a.items() if k != 'slice_index'} for a in tpu_attributes([slice_coords])])
  assert xs.HybridMesh(ici_mesh_shape=(2, 2)).get_logical_mesh().tolist() == [[2, 1], [0, 3]]
  assert xs.HybridMesh(ici_mesh_shape=(1, 4)).get_logical_mesh().tolist() == [[2, 0, 1, 3]]


def test_global_mesh(mesh_2x2):
  previous = xs.get_global_mesh()
  try:
    xs.set_global_mesh(mesh_2x2)
    assert xs.get_global_mesh() is mesh_2x2
  finally:
    xs.set_global_mesh(previous)


# ---- partition spec -> sharding text


@pytest.mark.parametrize('spec, text', [
    # One axis of 4 devices [0, 1, 2, 3]: the split dimension has 4 tiles, in device order.
    ((0,), '{devices=[4]0,1,2,3}'),
    (('data',), '{devices=[4]0,1,2,3}'),
    ((0, None), '{devices=[4,1]0,1,2,3}'),
    ((None, 'data'), '{devices=[1,4]0,1,2,3}'),
    # Nothing split: every device holds the whole tensor.
    ((None,), '{replicated}'),
    ((None, None), '{replicated}'),
    ((), '{replicated}'),
])
def test_spec_over_a_1d_mesh(spec, text):
  assert xs.get_1d_mesh('data').get_op_sharding(spec) == text


def test_spec_follows_the_mesh_device_order():
  # The mesh lists the devices backwards: tile i is on device 3 - i.
  assert xs.Mesh([3, 2, 1, 0], (4,)).get_op_sharding((None, 0)) == '{devices=[1,4]3,2,1,0}'


@pytest.mark.parametrize('spec, text', [
    # Rows over 'x', columns over 'y': tile (i, j) is mesh[i][j], row-major 0,1,2,3.
    ((0, 1), '{devices=[2,2]0,1,2,3}'),
    (('x', 'y'), '{devices=[2,2]0,1,2,3}'),
    # Rows over 'y', columns over 'x': tile (i, j) is mesh[j][i], the transposed mesh.
    ((1, 0), '{devices=[2,2]0,2,1,3}'),
    (('y', 'x'), '{devices=[2,2]0,2,1,3}'),
    # Rows over 'x' only: 'y' is unused, so the devices of a mesh row hold the same tile;
    # they form the trailing replication dimension: row 0 on devices 0,1, row 1 on 2,3.
    ((0, None), '{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}'),
    (('x', None), '{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}'),
    # Columns over 'y' only: column tile j on mesh column j, devices j and 2 + j, which
    # is the transposed mesh [[0, 2], [1, 3]] flattened.
    ((None, 1), '{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}'),
    # Rows over 'x' only, for a 1-D tensor.
    (('x',), '{devices=[2,2]0,1,2,3 last_tile_dim_replicate}'),
    # Rows over ('x', 'y'): 4 row tiles, 'x' outermost: the mesh flattened, 0,1,2,3.
    ((('x', 'y'), None), '{devices=[4,1]0,1,2,3}'),
    # Rows over ('y', 'x'): 'y' outermost: the transposed mesh flattened, 0,2,1,3.
    (((1, 0), None), '{devices=[4,1]0,2,1,3}'),
    ((None, ('x', 'y')), '{devices=[1,4]0,1,2,3}'),
    # A tuple of one axis is that axis.
    ((('x',), ('y',)), '{devices=[2,2]0,1,2,3}'),
    ((None, None), '{replicated}'),
])
def test_spec_over_a_2d_mesh(mesh_2x2, spec, text):
  assert mesh_2x2.get_op_sharding(spec) == text


MESH_2x2x2 = np.arange(8).reshape(2, 2, 2)  # device id = 4a + 2b + c for mesh index (a, b, c)


@pytest.mark.parametrize('spec, text', [
    # Rows over a, columns over c, b unused: order (a, c, b); tile (a, c) holds devices
    # 4a + c and 4a + 2 + c: 0,2 | 1,3 | 4,6 | 5,7.
    ((0, 2), '{devices=[2,2,2]0,2,1,3,4,6,5,7 last_tile_dim_replicate}'),
    (('a', 'c'), '{devices=[2,2,2]0,2,1,3,4,6,5,7 last_tile_dim_replicate}'),
    # Rows over (c, a), b unused: order (c, a, b): 0,2 | 4,6 | 1,3 | 5,7.
    (((2, 0), None), '{devices=[4,1,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}'),
    # Rows over b, columns over (a, c): order (b, a, c), fully tiled.
    ((1, (0, 2)), '{devices=[2,4]0,1,4,5,2,3,6,7}'),
    # Only c used, on the last of three dimensions: a and b (4 devices) replicate.
    ((None, None, 'c'), '{devices=[1,1,2,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}'),
    # Every axis, in mesh order: the identity.
    ((0, 1, 2), '{devices=[2,2,2]0,1,2,3,4,5,6,7}'),
])
def test_spec_over_a_3d_mesh(spec, text):
  assert sharding.sharding_text(MESH_2x2x2, ('a', 'b', 'c'), spec) == text


def test_size_one_axes_split_nothing():
  # A split over an axis of 1 device is no split: the tensor is whole everywhere.
  assert sharding.sharding_text(np.arange(4).reshape(1, 4), None, (0, None)) == '{replicated}'
  # An unused axis of 1 device adds no replication dimension.
  assert sharding.sharding_text(np.arange(4).reshape(4, 1), None, (0, None)) == '{devices=[4,1]0,1,2,3}'


def test_spec_entries_of_other_integer_and_sequence_types(mesh_2x2):
  assert mesh_2x2.get_op_sharding([np.int64(0), None]) == '{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}'
  assert mesh_2x2.get_op_sharding((['x', 'y'], None)) == '{devices=[4,1]0,1,2,3}'


@pytest.mark.parametrize('spec, rank, words', [
    (('x', 'z'), 2, ["axis name 'z'", "('x', 'y')"]),
    ((0, 2), 2, ['axis index 2 is out of range', '0 to 1']),
    ((-1, None), 2, ['axis index -1 is out of range']),
    ((0,), 2, ['has 1 entries for a tensor of rank 2']),
    ((0, 1, None), 2, ['has 3 entries for a tensor of rank 2']),
    ((0, 'x'), 2, ["mesh axis 0 ('x') is used by dimensions 0 and 1"]),
    (((0, 1), 1), 2, ["mesh axis 1 ('y') is used by dimensions 0 and 1"]),
    ((('y', 'y'), None), 2, ["mesh axis 1 ('y') is used twice in the tuple ('y', 'y') of dimension 0"]),
    (((0, (1,)), None), 2, ['nested tuple']),
    ((1.0, None), 2, ['1.0 (float) is not a mesh axis']),
    ((True, None), 2, ['True (bool) is not a mesh axis']),
    (0, 1, ['expected a tuple']),
])
def test_spec_errors(mesh_2x2, spec, rank, words):
  with pytest.raises(ValueError) as raised:
    mesh_2x2.get_op_sharding(spec, tensor_rank=rank)
  for word in words:
    assert word in str(raised.value), str(raised.value)


def test_axis_name_on_a_mesh_without_names():
  with pytest.raises(ValueError, match="axis name 'x'.*the mesh has no axis names"):
    xs.get_1d_mesh().get_op_sharding(('x',))


# ---- reading sharding text


@pytest.mark.parametrize('text, kind', [
    ('', None),
    ('{replicated}', ShardingType.REPLICATED),
    ('{manual}', ShardingType.MANUAL),
    ('{maximal device=2}', ShardingType.MAXIMAL),
    ('{unknown}', ShardingType.UNKNOWN),
    ('{{replicated}, {devices=[2]0,1}}', ShardingType.TUPLE),
    ('{devices=[2,2]0,1,2,3}', ShardingType.TILED),
    ('{devices=[2,2]<=[4]}', ShardingType.TILED),
    ('{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}', ShardingType.PARTIAL),
    ('{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}', ShardingType.PARTIAL),
    ('{devices=[2,2]0,1,2,3 metadata={op_name="x"}}', ShardingType.TILED),
])
def test_sharding_type_from_text(text, kind):
  assert xs.sharding_type_from_text(text) == kind


def test_sharding_types_have_torch_xla_values():
  assert [(t.name, int(t)) for t in ShardingType] == [('REPLICATED', 0), ('MAXIMAL', 1), ('TUPLE', 2), ('TILED', 3),
                                                     ('MANUAL', 4), ('PARTIAL', 5), ('UNKNOWN', 6)]


def test_iota_text_reads_as_its_device_list():
  # <=[2,2]T(1,0): iota(4) reshaped to [[0, 1], [2, 3]], transposed: 0,2,1,3.
  assert hlo_sharding.parse_sharding('{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}') == \
      hlo_sharding.parse_sharding('{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}')
  assert hlo_sharding.parse_sharding('{devices=[4,1]<=[4]}').devices == (0, 1, 2, 3)


@pytest.mark.parametrize('text', ['replicated', '{devices=[2,2]0,1,2}', '{devices=[2,2]<=[3]}',
                                  '{devices=[2]0,1 sideways}', '{tiles}'])
def test_unreadable_text(text):
  with pytest.raises(ValueError, match='sharding text'):
    hlo_sharding.parse_sharding(text)


def placements(text, shape, devices=range(4)):
  """[(replica id, indices as (start, stop) pairs or Ellipsis)] per device."""
  return [(replica, indices if indices is Ellipsis else [(s.start, s.stop) for s in indices])
          for replica, indices in hlo_sharding.shard_replica_and_indices(text, shape, list(devices))]


def test_indices_of_an_even_tiling():
  # 4x6 over 2x2 tiles of 2x3; device d holds tile (d // 2, d % 2).
  assert placements('{devices=[2,2]0,1,2,3}', (4, 6)) == [(0, [(0, 2), (0, 3)]), (0, [(0, 2), (3, 6)]),
                                                          (0, [(2, 4), (0, 3)]), (0, [(2, 4), (3, 6)])]
  # The transposed assignment: device 1 holds tile (1, 0), device 2 tile (0, 1).
  assert placements('{devices=[2,2]0,2,1,3}', (4, 6))[1:3] == [(0, [(2, 4), (0, 3)]), (0, [(0, 2), (3, 6)])]


def test_indices_of_uneven_tilings():
  # 5 rows over 4 tiles: ceil(5 / 4) = 2 rows each, the last tiles short and empty.
  assert placements('{devices=[4,1]0,1,2,3}', (5, 3)) == [(0, [(0, 2), (0, 3)]), (0, [(2, 4), (0, 3)]),
                                                          (0, [(4, 5), (0, 3)]), (0, [(5, 5), (0, 3)])]
  # 5x3 over 2x2: rows [0, 3) and [3, 5), columns [0, 2) and [2, 3).
  assert placements('{devices=[2,2]0,1,2,3}', (5, 3)) == [(0, [(0, 3), (0, 2)]), (0, [(0, 3), (2, 3)]),
                                                          (0, [(3, 5), (0, 2)]), (0, [(3, 5), (2, 3)])]
  assert hlo_sharding.shard_shape('{devices=[2,2]0,1,2,3}', (5, 3)) == (3, 2)


@pytest.mark.parametrize('text, shape', [('{devices=[4,1]0,1,2,3}', (5, 3)), ('{devices=[2,2]0,2,1,3}', (5, 3)),
                                         ('{devices=[1,4]3,1,0,2}', (2, 7)), ('{devices=[4]0,1,2,3}', (3,))])
def test_tiles_cover_the_tensor_once(text, shape):
  full = torch.arange(int(np.prod(shape))).reshape(shape)
  seen = torch.zeros(shape, dtype=torch.int64)
  for _, indices in hlo_sharding.shard_replica_and_indices(text, shape, range(4)):
    seen[indices] += 1
  assert torch.equal(seen, torch.ones(shape, dtype=torch.int64)), full


def test_indices_of_a_partial_replication():
  # Columns over 'y', replicated over 'x' (mesh [[0, 1], [2, 3]]): devices 0 and 2 hold
  # columns [0, 2), devices 1 and 3 columns [2, 4); the replica id is the position in
  # the replication dimension, the mesh row: d // 2.
  assert placements('{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}', (4, 4)) == [
      (0, [(0, 4), (0, 2)]), (0, [(0, 4), (2, 4)]), (1, [(0, 4), (0, 2)]), (1, [(0, 4), (2, 4)])]


def test_indices_of_replicated_and_unsharded_tensors():
  # The whole tensor on every device; the replica id is the device's ordinal.
  assert placements('{replicated}', (2, 3)) == [(d, Ellipsis) for d in range(4)]
  assert placements('', (2, 3)) == [(d, Ellipsis) for d in range(4)]


def test_indices_errors():
  with pytest.raises(ValueError, match=r'tiles 2 dimensions; the tensor of shape \(4,\) has 1'):
    hlo_sharding.shard_replica_and_indices('{devices=[2,2]0,1,2,3}', (4,), range(4))
  with pytest.raises(ValueError, match=r'places no tile on devices \[3\]'):
    hlo_sharding.shard_replica_and_indices('{devices=[3]0,1,2}', (4,), range(4))
  with pytest.raises(ValueError, match='MANUAL sharding has no tiles'):
    hlo_sharding.shard_replica_and_indices('{manual}', (4,), range(4))


# ---- shards to load


def test_shards_to_load_must_match_the_tiles():
  text, shape = '{devices=[4,1]0,1,2,3}', (5, 3)
  good = [torch.zeros(n, 3) for n in (2, 2, 1, 0)]
  check_shards_to_load(text, shape, torch.float32, good, [0, 1, 2, 3])
  check_shards_to_load(text, shape, torch.float32, good[::-1], [3, 2, 1, 0])
  with pytest.raises(RuntimeError, match=r'shards for devices \[0, 1, 2\]; .* each of the devices \[0, 1, 2, 3\]'):
    check_shards_to_load(text, shape, torch.float32, good[:3], [0, 1, 2])
  # Shards padded to the tiles' common shape (as local_shards gives them) load too, their
  # padding cut off.
  padded = check_shards_to_load(text, shape, torch.float32, [torch.zeros(2, 3)] * 4, [0, 1, 2, 3])
  assert [tuple(p.shape) for p in padded] == [(2, 3), (2, 3), (1, 3), (0, 3)]
  with pytest.raises(RuntimeError, match=r'device 2 has shape \(3, 3\); its tile \[4:5, 0:3\] .* has shape \(1, 3\) '
                     r'\(\(2, 3\) padded\)'):
    check_shards_to_load(text, shape, torch.float32, [torch.zeros(2, 3)] * 2 + [torch.zeros(3, 3)] * 2, [0, 1, 2, 3])
  with pytest.raises(RuntimeError, match='device 0 is torch.float64; the tensor is torch.float32'):
    check_shards_to_load(text, shape, torch.float32, [g.double() for g in good], [0, 1, 2, 3])
  with pytest.raises(RuntimeError, match='REPLICATED'):
    check_shards_to_load('{replicated}', shape, torch.float32, [torch.zeros(5, 3)] * 4, [0, 1, 2, 3])
  with pytest.raises(RuntimeError, match='no sharding'):
    check_shards_to_load('', shape, torch.float32, [torch.zeros(5, 3)] * 4, [0, 1, 2, 3])


def test_shard_device_names():
  assert [device_ordinal(d) for d in (2, 'CPU:3', 'xla:1', 'CUDA:0', torch.device('xla', 2))] == [2, 3, 1, 0, 2]
  with pytest.raises(ValueError, match='CPU'):
    device_ordinal('CPU')


def test_xla_shard_unpadded_data():
  data = torch.arange(4.).reshape(2, 2)
  assert torch.equal(xs.XLAShard(data, (slice(2, 4), slice(0, 2)), 'CPU:1', 0).unpadded_data, data)
  assert torch.equal(xs.XLAShard(data, Ellipsis, 'CPU:1', 1).unpadded_data, data)


# ---- the wrapper, on an XLA tensor


def test_sharded_tensor_behaves_as_the_global_tensor():
  t = torch.arange(6.).reshape(2, 3)
  x = t.to('xla')
  w = xs.XLAShardedTensor(x)
  assert w.global_tensor is x and w.shape == t.shape and w.device == x.device and w.dtype == t.dtype
  out = (w * 2 + 1).sin()
  assert type(out) is xs.XLAShardedTensor
  torch.testing.assert_close(out.cpu(), (t * 2 + 1).sin())
  assert type(out.cpu()) is torch.Tensor  # results off the XLA device are not wrapped
  torch.testing.assert_close((w.t() @ w).cpu(), t.t() @ t)
  assert w.sum().item() == t.sum().item()
  assert repr(w).startswith('XLAShardedTensor(tensor(')


def test_sharded_tensor_in_place_ops_and_views_write_the_global_tensor():
  t = torch.arange(6.).reshape(2, 3)
  x = t.to('xla')
  w = xs.XLAShardedTensor(x, mesh_shape=(4,), partition_spec=(0, None))
  assert w.add_(1) is w
  row = w[1]
  row.mul_(10)
  expected = t + 1
  expected[1] *= 10
  torch.testing.assert_close(x.cpu(), expected)
  torch.testing.assert_close(w.cpu(), expected)
  again = xs.XLAShardedTensor(w)
  assert again.global_tensor is x and again.partition_spec == (0, None) and again.mesh_shape == (4,)


def test_sharded_tensor_gradients():
  w = xs.XLAShardedTensor(torch.ones(3, device='xla'), requires_grad=True)
  (w * torch.tensor([1., 2., 3.], device='xla')).sum().backward()
  torch.testing.assert_close(w.grad.cpu(), torch.tensor([1., 2., 3.]))


def test_wrap_and_unwrap():
  x = torch.zeros(2, device='xla')
  w = xs.wrap_as_sharded_tensor(x, mesh_shape=(4,), partition_spec=(0,))
  assert xs.unwrap_sharded_tensor(w) is x and xs.unwrap_sharded_tensor(x) is x
  assert xs.wrap_as_sharded_tensor(w, partition_spec=(None,)) is w and w.partition_spec == (None,)
  assert xs.wrap_if_sharded(3) == 3 and xs.wrap_if_sharded(w) is w
  cpu = torch.zeros(2)
  assert xs.wrap_if_sharded(cpu) is cpu


def test_sharding_spec_can_apply():
  spec = xs.ShardingSpec(xs.get_1d_mesh(), (0, None))
  assert spec.can_apply(torch.zeros(4, 2)) and not spec.can_apply(torch.zeros(4))


# ---- the picture


def test_visualize_sharding_draws_the_tiles(capsys):
  picture = debugging.visualize_sharding('{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}')
  lines = picture.splitlines()
  assert lines[1:] == ['+---------+---------+', '| CPU 0,2 | CPU 1,3 |', '+---------+---------+']
  assert capsys.readouterr().out.strip() == picture
  grid = debugging.visualize_sharding('{devices=[2,2]0,1,2,3}').splitlines()
  assert [line.split('|')[1:3] for line in grid[2::2]] == [['  CPU 0  ', '  CPU 1  '], ['  CPU 2  ', '  CPU 3  ']]
  assert '| CPU 0,1,2,3 |' in debugging.visualize_sharding('{replicated}')


# ---- what needs SPMD mode, and what is not supported


def test_auto_sharding_is_not_supported():
  with pytest.raises(NotImplementedError, match=r'use_spmd\(auto=True\): auto-sharding is not supported'):
    xr.use_spmd(auto=True)


@pytest.mark.parametrize('name, args', [('enable_manual_sharding', (None, (0,))),
                                        ('disable_manual_sharding', (None, (0,), (4,))),
                                        ('_mark_manual_sharding', (None,))])
def test_manual_sharding_needs_spmd_mode(name, args):
  # The test process never turns SPMD mode on; launched/spmd_checks.py runs them in it.
  with pytest.raises(RuntimeError, match=f'{name}: SPMD mode is off'):
    getattr(xs, name)(*args)


@pytest.mark.parametrize('args, text', [
    (([], [], [], xs.ShardingType.REPLICATED), '{replicated}'),
    (([], [], [], xs.ShardingType.MANUAL), '{manual}'),
    (([[0, 1], [2, 3]], [], [], xs.ShardingType.TILED), '{devices=[2,2]0,1,2,3}'),
    (([[3, 2, 1, 0]], [], [], xs.ShardingType.TILED), '{devices=[1,4]3,2,1,0}'),
    # Two tiles of columns, each held by a group of two devices.
    (([], [[0, 1]], [[0, 2], [1, 3]], xs.ShardingType.PARTIAL), '{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}'),
])
def test_op_sharding_is_its_text(args, text):
  sharding = _XLAC.OpSharding(*args)
  assert sharding == text and isinstance(sharding, str)
  assert hlo_sharding.parse_sharding(sharding) is not None


def test_op_sharding_refuses_what_it_cannot_lay_out():
  with pytest.raises(ValueError, match='needs a tile assignment'):
    _XLAC.OpSharding([], [], [], xs.ShardingType.TILED)
  with pytest.raises(ValueError, match='one replication group'):
    _XLAC.OpSharding([], [[0, 1]], [[0, 1, 2, 3]], xs.ShardingType.PARTIAL)


@pytest.mark.parametrize('fn', [xs.mark_sharding, xs.mark_sharding_with_gradients])
def test_sharding_needs_spmd_mode(mesh_2x2, fn):
  # The test process never turns SPMD mode on (it is process-wide).
  assert not xr.is_spmd()
  with pytest.raises(RuntimeError, match=r'SPMD mode is off; call torch_xla.runtime.use_spmd\(\) first'):
    fn(torch.zeros(2, 2, device='xla'), mesh_2x2, (0, 1))
