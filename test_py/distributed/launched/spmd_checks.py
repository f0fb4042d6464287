"""Launched by test_spmd.py as one process with 4 CPU devices: turns SPMD mode on (a
setting of the whole process, so never inside the test process) and runs every
scenario, reporting one RESULT line {scenario: values}. The values are plain lists
(tensors as nested lists, shard indices as [start, stop] pairs) that the test compares
against eager PyTorch; a scenario that raises reports its error and traceback instead,
and the others still run."""
import numpy as np
import torch

import torch_xla
import torch_xla.runtime as xr
import torch_xla.distributed.spmd as xs
from testing.process_testing import report
from testing.scenario_testing import Scenarios, error_of, values

scenario = Scenarios()


def spec_of(t):
  return torch_xla._XLAC._get_xla_sharding_spec(xs.unwrap_sharded_tensor(t))


def mesh_2x2():
  return xs.Mesh(np.arange(4), (2, 2), ('x', 'y'))


def shards(xt):
  """local_shards as plain values."""
  out = []
  for s in xt.local_shards:
    indices = 'ellipsis' if s.indices is Ellipsis else [[i.start, i.stop] for i in s.indices]
    out.append(dict(data=values(s.data), shape=list(s.data.shape), unpadded=values(s.unpadded_data),
                    unpadded_shape=list(s.unpadded_data.shape), indices=indices, device=s.shard_device,
                    replica=s.replica_id, cpu=s.data.device.type == 'cpu', indices_type=type(s.indices).__name__,
                    steps=None if s.indices is Ellipsis else [i.step for i in s.indices]))
  return out


@scenario
def mode():
  xr.use_spmd()  # a second call changes nothing
  return dict(is_spmd=xr.is_spmd(), devices=xr.global_runtime_device_count(), device=str(torch_xla.device()),
              tensor_device=str(torch.zeros(2, device='xla').device))


@scenario
def matmul_2x2():
  mesh = mesh_2x2()
  a, b = torch.randn(4, 6), torch.randn(6, 8)
  xa = xs.mark_sharding(a.to('xla'), mesh, ('x', 'y'))
  xb = xs.mark_sharding(b.to('xla'), mesh, (0, 1))
  out = xa @ xb
  return dict(out=values(out), eager=values(a @ b), spec_a=xa.sharding_spec, spec_b=spec_of(xb),
              expected_spec=mesh.get_op_sharding((0, 1)), wrapped=type(out).__name__)


@scenario
def uneven_1d():
  mesh = xs.get_1d_mesh('data')
  x, w = torch.randn(5, 3), torch.randn(5, 3)
  xx = xs.mark_sharding(x.to('xla'), mesh, ('data', None)).global_tensor
  xw = xs.mark_sharding(w.to('xla'), mesh, (0, None)).global_tensor
  computed = {
      'affine_sin': lambda t, u: (t * 2 + 1).sin(),
      'product': lambda t, u: t * u - u,
      'sum': lambda t, u: t.sum(),
      'sum0': lambda t, u: t.sum(0),
      'sum1': lambda t, u: t.sum(1),
      'max': lambda t, u: t.max(),
  }
  return {
      name: dict(out=values(f(xx, xw)), eager=values(f(x, w))) for name, f in computed.items()
  } | dict(spec=spec_of(xx), expected_spec=mesh.get_op_sharding(('data', None)))


@scenario
def local_shards_even():
  t = torch.arange(16, dtype=torch.float32).reshape(4, 4)
  xt = xs.mark_sharding(t.to('xla'), mesh_2x2(), (0, 1))
  return dict(shards=shards(xt), type=xt.sharding_type.name)


@scenario
def local_shards_uneven():
  t = torch.arange(10, dtype=torch.float32).reshape(5, 2)
  xt = xs.mark_sharding(t.to('xla'), xs.get_1d_mesh(), (0, None))
  return dict(shards=shards(xt), type=xt.sharding_type.name)


@scenario
def local_shards_partial():
  t = torch.arange(16, dtype=torch.float32).reshape(4, 4)
  xt = xs.mark_sharding(t.to('xla'), mesh_2x2(), (None, 1))
  return dict(shards=shards(xt), spec=xt.sharding_spec, type=xt.sharding_type.name)


@scenario
def local_shards_replicated():
  t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
  xt = xs.mark_sharding(t.to('xla'), mesh_2x2(), (None, None))
  return dict(shards=shards(xt), spec=xt.sharding_spec, type=xt.sharding_type.name)


@scenario
def load_local_shards():
  t = torch.arange(16, dtype=torch.float32).reshape(4, 4) + 1
  mesh = mesh_2x2()
  xt = xs.mark_sharding(t.to('xla'), mesh, (0, 1))
  pieces = xt.local_shards
  for s in pieces:
    s.data = -s.data
  xt.load_local_shards_(pieces)
  loaded = dict(value=values(xt), spec=xt.sharding_spec)
  wrong_shape = [xs.XLAShard(torch.zeros(3, 3), s.indices, s.shard_device, s.replica_id) for s in pieces]
  replicated = xs.mark_sharding(t.to('xla'), mesh, (None, None))
  loaded.update(
      incomplete=error_of(lambda: xt.load_local_shards_(pieces[:-1])),
      wrong_shape=error_of(lambda: xt.load_local_shards_(wrong_shape)),
      replicated=error_of(lambda: replicated.load_local_shards_(replicated.local_shards)),
      after_errors=values(xt))
  return loaded


@scenario
def sharding_types():
  mesh = mesh_2x2()
  tiled = torch.zeros(4, 4, device='xla')
  xs.mark_sharding(tiled, mesh, ('x', 'y'))
  partial = torch.zeros(4, 4, device='xla')
  xs.mark_sharding(partial, mesh, ('x', None))
  return dict(tiled=torch_xla._XLAC._get_xla_sharding_type(tiled),
              partial=torch_xla._XLAC._get_xla_sharding_type(partial),
              none=torch_xla._XLAC._get_xla_sharding_type(torch.zeros(2, device='xla')))


@scenario
def clear_sharding():
  t = torch.randn(4, 4)
  xt = xs.mark_sharding(t.to('xla'), mesh_2x2(), (0, 1))
  before = xt.sharding_spec
  cleared = xs.clear_sharding(xt)
  return dict(before=before, after=spec_of(cleared), type=xs.get_sharding_type(cleared), value=values(cleared),
              eager=values(t), unwrapped=type(cleared) is torch.Tensor)


@scenario
def inplace_keeps_sharding():
  t = torch.randn(4, 4)
  x = t.to('xla')
  xs.mark_sharding(x, mesh_2x2(), (0, 1))
  before = spec_of(x)
  x.add_(1)
  pending = spec_of(x)
  torch_xla.sync()
  return dict(before=before, pending=pending, synced=spec_of(x), value=values(x), eager=values(t + 1))


@scenario
def pending_value():
  t = torch.randn(4, 4)
  a = t.to('xla') + 1  # not computed yet: the sharding goes into its graph
  xa = xs.mark_sharding(a, mesh_2x2(), (None, 'y'))
  out = xa * 2
  return dict(spec=xa.sharding_spec, expected_spec=mesh_2x2().get_op_sharding((None, 'y')), out=values(out),
              eager=values((t + 1) * 2))


@scenario
def with_gradients():
  mesh = mesh_2x2()
  w = torch.randn(4, 4)
  xw = w.to('xla').requires_grad_()
  y = xs.mark_sharding_with_gradients(xw * 2, mesh, ('x', 'y'))
  (y * y).sum().backward()
  ew = w.clone().requires_grad_()
  ey = ew * 2
  (ey * ey).sum().backward()
  return dict(spec=spec_of(y), expected_spec=mesh.get_op_sharding(('x', 'y')), value=values(y), eager=values(ey),
              grad=values(xw.grad), eager_grad=values(ew.grad))


@scenario
def convolution_batch_sharded():
  # Data parallel: the batch split over 4 devices, the weights replicated.
  conv = torch.nn.Conv2d(3, 4, 3, padding=1)
  x = torch.randn(8, 3, 6, 6)
  xconv = torch.nn.Conv2d(3, 4, 3, padding=1).to('xla')
  xconv.load_state_dict(conv.state_dict())
  xx = x.to('xla')
  xs.mark_sharding(xx, xs.get_1d_mesh('data'), ('data', None, None, None))
  out = xconv(xx)
  loss = out.square().mean()
  loss.backward()
  eout = conv(x)
  eout.square().mean().backward()
  torch_xla.sync()  # the step's results, laid out as XLA chose
  return dict(out=values(out), eager=values(eout), grad=values(xconv.weight.grad), eager_grad=values(conv.weight.grad),
              spec=spec_of(out))


@scenario
def transformer_block_2d():
  # A transformer encoder layer with its batch on 'data' and its weights on 'model'.
  torch.manual_seed(1)
  layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
  xlayer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True).to('xla')
  xlayer.load_state_dict(layer.state_dict())
  mesh = xs.Mesh(np.arange(4), (2, 2), ('data', 'model'))
  xs.mark_sharding(xlayer.linear1.weight, mesh, ('model', None))
  xs.mark_sharding(xlayer.linear2.weight, mesh, (None, 'model'))
  x = torch.randn(4, 5, 8)
  xx = x.to('xla')
  xs.mark_sharding(xx, mesh, ('data', None, None))
  out = xlayer(xx)
  out.sum().backward()
  eout = layer(x)
  eout.sum().backward()
  return dict(out=values(out), eager=values(eout), grad=values(xlayer.linear1.weight.grad),
              eager_grad=values(layer.linear1.weight.grad))


@scenario
def fsdp_v2_training():
  # Five SGD steps of an MLP under FSDPv2 against the same steps in eager PyTorch.
  from torch_xla.experimental.spmd_fully_sharded_data_parallel import SpmdFullyShardedDataParallel as FSDPv2
  torch.manual_seed(2)
  model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
  xmodel = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
  xmodel.load_state_dict(model.state_dict())
  mesh = xs.Mesh(np.arange(4), (4, 1), ('fsdp', 'tensor'))
  wrapped = FSDPv2(xmodel, mesh=mesh)
  opt = torch.optim.AdamW(model.parameters(), lr=0.01)
  xopt = torch.optim.AdamW(wrapped.parameters(), lr=0.01)
  data = [(torch.randn(8, 8), torch.randn(8, 4)) for _ in range(5)]
  losses, elosses = [], []
  for x, y in data:
    xopt.zero_grad()
    loss = torch.nn.functional.mse_loss(wrapped(x.to('xla')), y.to('xla'))
    loss.backward()
    xopt.step()
    torch_xla.sync()
    losses.append(loss.item())
    opt.zero_grad()
    eloss = torch.nn.functional.mse_loss(model(x), y)
    eloss.backward()
    opt.step()
    elosses.append(eloss.item())
  first = wrapped.module[0].weight
  state = xopt.state[first]
  return dict(losses=losses, eager=elosses, weight_spec=spec_of(first), grad_spec=spec_of(first.grad),
              exp_avg_spec=spec_of(state['exp_avg']), weight=values(first), eager_weight=values(model[0].weight),
              shard_rows=[list(s.data.shape) for s in xs.wrap_if_sharded(first).local_shards])


@scenario
def loader_input_sharding():
  import torch_xla.distributed.parallel_loader as pl
  mesh = xs.get_1d_mesh('data')
  batches = [torch.arange(32.).reshape(8, 4) + i for i in range(2)]
  loader = pl.MpDeviceLoader(batches, torch_xla.device(), input_sharding=xs.ShardingSpec(mesh, ('data', None)))
  seen = [(spec_of(b), values(b * 1)) for b in loader]
  dict_loader = pl.MpDeviceLoader([{'x': b} for b in batches], torch_xla.device(),
                                  input_sharding={'x': xs.ShardingSpec(mesh, ('data', None))})
  dict_seen = [spec_of(b['x']) for b in dict_loader]
  return dict(specs=[s for s, _ in seen], values=[v for _, v in seen], eager=[values(b) for b in batches],
              dict_specs=dict_seen, expected_spec=mesh.get_op_sharding(('data', None)))


@scenario
def replication_refused():
  import torch_xla.distributed.xla_multiprocessing as xmp
  return dict(refusal=error_of(lambda: xmp.spawn(lambda i: i, nprocs=4)))


@scenario
def errors():
  mesh = mesh_2x2()
  x = torch.zeros(4, 4, device='xla')
  stale = xs.get_1d_mesh()
  stale.device_ids, stale.mesh_shape = np.arange(2), (2,)
  previous = xs.get_global_mesh()
  xs.set_global_mesh(None)
  try:
    no_mesh = error_of(lambda: xs.mark_sharding(x, None, (0, 1)))
  finally:
    xs.set_global_mesh(previous)
  return dict(
      mesh_too_small=error_of(lambda: xs.Mesh(np.arange(2), (2,))),
      mesh_size=error_of(lambda: xs.mark_sharding(x, stale, (0, None))),
      unknown_name=error_of(lambda: xs.mark_sharding(x, mesh, ('x', 'z'))),
      index_out_of_range=error_of(lambda: xs.mark_sharding(x, mesh, (0, 2))),
      spec_length=error_of(lambda: xs.mark_sharding(x, mesh, (0,))),
      axis_twice=error_of(lambda: xs.mark_sharding(x, mesh, ('x', 0))),
      axis_twice_in_tuple=error_of(lambda: xs.mark_sharding(x, mesh, (('y', 'y'), None))),
      cpu_tensor=error_of(lambda: xs.mark_sharding(torch.zeros(4, 4), mesh, (0, 1))),
      no_mesh=no_mesh,
      with_gradients_spec_length=error_of(lambda: xs.mark_sharding_with_gradients(x, mesh, (0, 1, None))),
      spec_after_errors=spec_of(x))


def blockwise(x, rows, cols, fn):
  """Eager: `fn` applied to each block of `x` (blocks of rows x cols, as a 2-D tiling
  cuts it), the results put back in place."""
  out = torch.empty_like(x)
  for i in range(0, x.shape[0], rows):
    for j in range(0, x.shape[1], cols):
      out[i:i + rows, j:j + cols] = fn(x[i:i + rows, j:j + cols])
  return out


@scenario
def manual_round_trip():
  # A 2x2 tiling of 8x8: each device computes on its own 4x4 block, with a reduction
  # that stays inside the block (per device, as manual sharding means).
  mesh = mesh_2x2()
  x = torch.randn(8, 8)
  per_block = lambda b: b.sin() * 2 + b.sum(1, keepdim=True)
  xx = xs.enable_manual_sharding(x.to('xla'), ('x', 'y'), mesh=mesh)
  piece = dict(shape=list(xx.shape), spec=xx.sharding_spec, type=xx.sharding_type.name,
               wrapped=type(xx).__name__)
  full = xs.disable_manual_sharding(per_block(xx), ('x', 'y'), x.shape, mesh=mesh)
  return dict(piece=piece, shape=list(full.shape), spec=full.sharding_spec, out=values(full),
              eager=values(blockwise(x, 4, 4, per_block)))


@scenario
def manual_gradients():
  # Gradients through manual sharding: each 2x2-mesh device's 4x4 block, its row sums
  # (per device), squared and summed.
  mesh = mesh_2x2()
  x = torch.randn(8, 8)
  xx = x.to('xla').requires_grad_(True)
  # Autograd follows the XLA tensors (global_tensor), not their XLAShardedTensor wrappers.
  pieces = xs.enable_manual_sharding(xx, ('x', 'y'), mesh=mesh).global_tensor
  sums = xs.disable_manual_sharding(pieces.sin().sum(1, keepdim=True), ('x', 'y'), (8, 2), mesh=mesh).global_tensor
  sums.square().sum().backward()
  e = x.clone().requires_grad_(True)
  eager_sums = torch.cat([blk.sin().sum(1, keepdim=True) for blk in e.split(4, dim=1)], dim=1)
  eager_sums.square().sum().backward()
  return dict(sums=values(sums), eager=values(eager_sums), grad=values(xx.grad), eager_grad=values(e.grad),
              grad_shape=list(xx.grad.shape))


@scenario
def manual_uneven_and_replicated():
  # 5 rows over 4 devices: pieces of 2 rows (the last ones padding); the padding is
  # dropped on the way back. A replicated tensor's piece is the whole tensor.
  mesh = xs.get_1d_mesh('d')
  x = torch.randn(5, 3)
  xx = xs.enable_manual_sharding(x.to('xla'), ('d', None), mesh=mesh)
  uneven = xs.disable_manual_sharding(xx * 2 + 1, ('d', None), (5, 3), mesh=mesh)
  xr_ = xs.enable_manual_sharding(x.to('xla'), (None, None), mesh=mesh)
  replicated = xs.disable_manual_sharding(xr_.exp(), (None, None), (5, 3), mesh=mesh)
  # The _XLAC entry points underneath, given the global mesh.
  xs.set_global_mesh(mesh)
  t = xs.mark_sharding(x.to('xla'), None, ('d', None)).global_tensor
  piece = torch_xla._XLAC._spmd_full_to_shard_shape(t)
  piece = xs._mark_manual_sharding(piece - 1).global_tensor
  back = torch_xla._XLAC._spmd_shard_to_full_shape(piece, mesh.get_op_sharding(('d', None)), x.shape, x.dtype)
  return dict(uneven_piece=list(xx.shape), uneven=values(uneven), uneven_eager=values(x * 2 + 1),
              replicated_piece=list(xr_.shape), replicated=values(replicated), replicated_eager=values(x.exp()),
              xlac_piece=list(piece.shape), xlac=values(back), xlac_eager=values(x - 1), xlac_spec=spec_of(back))


@scenario
def manual_values_synced():
  # A step that ends with manual values alive: they come back as each device's piece
  # (XLA would end the process on an unannotated manual result), the pieces are readable
  # one by one, the whole is not, and they go back to a global tensor in a later graph.
  mesh = xs.get_1d_mesh('d')
  x = torch.arange(16, dtype=torch.float32).reshape(4, 4)
  xx = xs.enable_manual_sharding(x.to('xla'), (None, 'd'), mesh=mesh)
  doubled = xs.unwrap_sharded_tensor(xx) * 2
  torch_xla.sync()
  pieces = [dict(device=s.shard_device, data=values(s.data), indices=str(s.indices))
            for s in xs.wrap_if_sharded(doubled).local_shards]
  read = error_of(lambda: doubled.cpu())
  full = xs.disable_manual_sharding(doubled + 1, (None, 'd'), (4, 4), mesh=mesh)
  from_data = xs.disable_manual_sharding(doubled, (None, 'd'), (4, 4), mesh=mesh)
  return dict(spec=spec_of(doubled), pieces=pieces, read=read, full=values(full), eager=values(x * 2 + 1),
              from_data=values(from_data), from_data_eager=values(x * 2))


@scenario
def manual_errors():
  mesh = mesh_2x2()
  plain = torch.ones(8, 8).to('xla')  # data
  sharded = xs.mark_sharding(torch.ones(8, 8).to('xla'), mesh, ('x', 'y')).global_tensor  # data
  piece = xs.unwrap_sharded_tensor(xs.enable_manual_sharding(torch.ones(8, 8, device='xla'), ('x', 'y'), mesh=mesh))
  computed = piece * 3
  quarter = xs.mark_sharding(torch.ones(4, 4).to('xla'), mesh, ('x', 'y')).global_tensor  # tiled data
  text = mesh.get_op_sharding(('x', 'y'))
  f2s, s2f = torch_xla._XLAC._spmd_full_to_shard_shape, torch_xla._XLAC._spmd_shard_to_full_shape
  out = dict(
      unsharded=error_of(lambda: f2s(plain)),
      already_manual=error_of(lambda: f2s(piece)),
      computed_from_manual=error_of(lambda: f2s(computed)),
      not_manual=error_of(lambda: s2f(sharded, text, (8, 8), torch.float32)),
      wrong_full_shape=error_of(lambda: xs.disable_manual_sharding(piece, ('x', 'y'), (16, 8), mesh=mesh)),
      wrong_dtype=error_of(lambda: s2f(piece, text, (8, 8), torch.float64)),
      manual_full_sharding=error_of(lambda: s2f(piece, '{manual}', (4, 4), torch.float32)),
      spec_rank=error_of(lambda: xs.disable_manual_sharding(piece, ('x', 'y'), (8, 8, 1), mesh=mesh)),
      mark_data_manual=error_of(lambda: xs._mark_manual_sharding(plain)),
      tile_a_manual_value=error_of(lambda: xs.mark_sharding(computed, mesh, ('x', 'y'))),
      from_shards_count=error_of(lambda: torch_xla._XLAC._global_tensor_from_cpu_shards([torch.zeros(2)] * 3, text)),
      from_shards_shape=error_of(
          lambda: torch_xla._XLAC._global_tensor_from_cpu_shards([torch.zeros(2, 2)] * 4, text, (5, 4))),
      from_shards_rank=error_of(
          lambda: torch_xla._XLAC._global_tensor_from_cpu_shards([torch.zeros(2, 2)] * 4, text, (4,))),
      retile_data=error_of(lambda: xs.mark_sharding(sharded, mesh, ('y', 'x'))),
      # Raised when the graph is lowered (at the read): XLA would compute wrong values.
      mixed_with_tiled=error_of(lambda: values(
          xs.disable_manual_sharding(piece + quarter, ('x', 'y'), (8, 8), mesh=mesh))),
  )
  # The process lives on, and the refused calls changed nothing.
  full = xs.disable_manual_sharding(computed, ('x', 'y'), (8, 8), mesh=mesh)
  out.update(after=values(full), sharded_spec=spec_of(sharded), plain_spec=spec_of(plain))
  return out


@scenario
def manual_collectives():
  # Collectives between the devices' pieces, inside manual sharding (torch_xla's
  # _xla_spmd_all_reduce / _xla_spmd_reduce_scatter).
  mesh = xs.Mesh(np.arange(4), (1, 4))
  all_devices = [[0, 1, 2, 3]]
  ones = lambda: xs.enable_manual_sharding(torch.ones(8, 8).to('xla'), (None, None), mesh=mesh).global_tensor
  whole = lambda t: values(xs.disable_manual_sharding(t, (None, None), tuple(t.shape), mesh=mesh))
  ar, rs = torch_xla._XLAC._xla_spmd_all_reduce, torch_xla._XLAC._xla_spmd_reduce_scatter
  # Each device's two columns of x, summed within the pairs of devices {0, 1} and {2, 3}.
  x = torch.arange(32, dtype=torch.float32).reshape(4, 8)
  pieces = xs.enable_manual_sharding(x.to('xla'), (None, 1), mesh=mesh).global_tensor
  paired = xs.disable_manual_sharding(ar('sum', pieces, 1.0, [[0, 1], [2, 3]]), (None, 1), (4, 8), mesh=mesh)
  blocks = x.reshape(4, 4, 2)
  pair_sums = torch.cat([blocks[:, 0] + blocks[:, 1]] * 2 + [blocks[:, 2] + blocks[:, 3]] * 2, dim=1)
  return dict(
      sum=whole(ar('sum', ones(), 1.0, all_devices)),
      scaled=whole(ar('sum', ones(), 0.25, [])),
      max=whole(ar('max', xs.enable_manual_sharding(x.to('xla'), (None, 1), mesh=mesh).global_tensor, 1.0, [])),
      max_eager=values(blocks.amax(1)),
      scatter0=whole(rs('sum', ones(), 1.0, 0, 4, all_devices)),
      scatter_last=whole(rs('sum', ones(), 1.0, -1, 4, all_devices)),
      paired=values(paired), paired_eager=values(pair_sums),
      errors=dict(
          not_manual=error_of(lambda: ar('sum', torch.ones(8, 8, device='xla'), 1.0, [])),
          reduce_type=error_of(lambda: ar('avg', ones(), 1.0, [])),
          device_twice=error_of(lambda: ar('sum', ones(), 1.0, [[0, 1], [1, 2]])),
          device_missing=error_of(lambda: ar('sum', ones(), 1.0, [[0, 1]])),
          shard_count=error_of(lambda: rs('sum', ones(), 1.0, 0, 2, all_devices)),
          indivisible=error_of(lambda: rs('sum', xs.enable_manual_sharding(
              torch.ones(6, 8).to('xla'), (None, None), mesh=mesh).global_tensor, 1.0, 0, 4, all_devices)),
          scatter_dim=error_of(lambda: rs('sum', ones(), 1.0, 2, 4, all_devices)),
      ))


@scenario
def sharding_under_aot_function():
  # AOTAutograd traces MarkShardingFunction into its forward and backward graphs (as the
  # op xla::aot_mark_sharding), so the output and the gradient come out sharded.
  from functorch.compile import aot_function, make_boxed_func
  mesh = xs.get_1d_mesh()
  graphs = []

  def compiler(gm, _):
    graphs.append(gm)
    return make_boxed_func(gm)

  def fn(t):
    return xs.MarkShardingFunction.apply(torch.sin(t), mesh, (0,)) + 42

  x = torch.randn(8)
  xx = x.to('xla').requires_grad_(True)
  y = aot_function(fn, compiler)(xx)
  y.sum().backward()
  torch_xla.sync()
  return dict(y=values(y), eager=values(x.sin() + 42), grad=values(xx.grad), eager_grad=values(x.cos()),
              y_spec=spec_of(y), grad_spec=spec_of(xx.grad),
              ops=['aot_mark_sharding' in g.code for g in graphs])


@scenario
def xlac_shard_entry_points():
  # torch_xla's _XLAC functions behind XLAShardedTensor, on 5 elements over 4 devices.
  X = torch_xla._XLAC
  t = xs.mark_sharding(torch.arange(5.).to('xla'), xs.get_1d_mesh(), (0,)).global_tensor
  plain = torch.zeros(2).to('xla')
  pieces = X._get_local_shards([t])[0]
  placements = X._get_local_shard_replica_and_indices([t])[0]
  X._load_local_shards(t, [-d for d, _ in pieces], [device for _, device in pieces])
  return dict(specs=X._get_xla_sharding_specs([t, plain]), op_sharding=X._get_xla_op_sharding(t),
              op_sharding_type=type(X._get_xla_op_sharding(t)).__name__, none=X._get_xla_op_sharding(plain),
              pieces=[(values(d), device) for d, device in pieces],
              placements=[(r, [[i.start, i.stop, i.step] for i in idx]) for r, idx in placements],
              loaded=values(t))


@scenario
def global_tensor_from_cpu_shards():
  mesh = mesh_2x2()
  from_shards = torch_xla._XLAC._global_tensor_from_cpu_shards
  full = torch.arange(16).reshape(4, 4)
  # Device d holds tile (d // 2, d % 2) of a 2x2 tiling.
  tiles = [full[r:r + 2, c:c + 2] for r in (0, 2) for c in (0, 2)]
  tiled = from_shards(tiles, mesh.get_op_sharding(('x', 'y')))
  trimmed = from_shards(tiles, mesh.get_op_sharding(('x', 'y')), (3, 4))  # the last row is padding
  replicated = from_shards([full] * 4, mesh.get_op_sharding((None, None)))
  partial = from_shards([full[:, :2], full[:, 2:]] * 2, mesh.get_op_sharding((None, 'y')))
  return dict(tiled=values(tiled), tiled_spec=spec_of(tiled), trimmed=values(trimmed),
              replicated=values(replicated), partial=values(partial), partial_spec=spec_of(partial),
              sum=values(tiled.sum()), dtype=str(tiled.dtype))


@scenario
def result_sharding_specs():
  # torch_xla's reports: data moved from the host has no sharding, a graph's result that
  # XLA laid out replicated is '{replicated}', and an update of it is XLA's to lay out
  # again (pending: no sharding until it runs).
  a, b = torch.randn(4, 4), torch.randn(4, 4)
  xa, xb = a.to('xla'), b.to('xla')
  product = xa @ xb
  torch_xla.sync()
  after_sync = spec_of(product)
  product.add_(1)
  pending = spec_of(product)
  torch_xla.sync()
  return dict(data=spec_of(xa), after_sync=after_sync, pending=pending, after_update=spec_of(product),
              value=values(product), eager=values(a @ b + 1))


@scenario
def linear_layers_keep_the_batch_sharded():
  # nn.MultiheadAttention (batch_first) on a batch-sharded input: its projections take
  # a [seq, batch, embed] value and a flattened [seq * batch, embed] view of one. The
  # program must keep the batch sharded (no all-gather); values and gradients as eager's.
  torch.manual_seed(3)
  attention = torch.nn.MultiheadAttention(16, 2, batch_first=True)
  linear = torch.nn.Linear(16, 8)
  x = torch.randn(8, 5, 16)
  mesh = xs.get_1d_mesh('data')
  xattention = torch.nn.MultiheadAttention(16, 2, batch_first=True).to('xla')
  xattention.load_state_dict(attention.state_dict())
  xlinear = torch.nn.Linear(16, 8).to('xla')
  xlinear.load_state_dict(linear.state_dict())
  xx = x.to('xla').requires_grad_()
  xs.mark_sharding(xx, mesh, ('data', None, None))

  def f(attention, linear, x):
    out, _ = attention(x, x, x, need_weights=False)
    return linear(out)  # a 3-D input

  out = f(xattention, xlinear, xx)
  program = torch_xla._XLAC._get_xla_tensors_hlo([out])
  (out * out).sum().backward()
  torch_xla.sync()
  xc = x.clone().requires_grad_()
  expected = f(attention, linear, xc)
  (expected * expected).sum().backward()
  return dict(out=values(out), eager=values(expected), grad=values(xx.grad), eager_grad=values(xc.grad),
              weight_grad=values(xattention.in_proj_weight.grad), eager_weight_grad=values(attention.in_proj_weight.grad),
              linear_grad=values(xlinear.weight.grad), eager_linear_grad=values(linear.weight.grad),
              bias_grad=values(xlinear.bias.grad), eager_bias_grad=values(linear.bias.grad),
              flattened=sum(line.count('tensor<40x16xf32>') for line in program.splitlines()
                            if 'stablehlo.dot_general' in line))


@scenario
def execution_metrics():
  import torch_xla.core.xla_model as xm
  import torch_xla.debug.metrics as met
  met.clear_all()
  xt = torch.ones(2, 4).to('xla')
  xs.mark_sharding(xt, xs.get_1d_mesh('data'), (None, 'data'))
  xt += 2
  torch_xla.sync()
  xm.wait_device_ops()
  replicated = met.metric_data('ExecuteReplicatedTime')
  return dict(replicated=replicated[0] if replicated else 0, single=met.metric_data('ExecuteTime'),
              value=values(xt))


# Plain data made on the device before SPMD mode was on (main() makes it).
MADE_BEFORE_SPMD = []


@scenario
def data_made_before_spmd():
  import torch_xla.debug.metrics as met
  (early,) = MADE_BEFORE_SPMD
  met.clear_counters()
  results = []
  for fn in (lambda t: t + t, lambda t: t.sum(0), lambda t: t.t().matmul(t)):
    result = fn(early)
    torch_xla.sync()
    results.append(values(result))
  expected = [values(fn(torch.arange(8, dtype=torch.float32).reshape(2, 4)))
              for fn in (lambda t: t + t, lambda t: t.sum(0), lambda t: t.t().matmul(t))]
  return dict(values=results, expected=expected, copies=met.counter_value('SpmdCopiesOfPlainData') or 0)


def main():
  torch.manual_seed(0)
  MADE_BEFORE_SPMD.append(torch.arange(8, dtype=torch.float32).reshape(2, 4).to('xla'))
  torch_xla.sync()
  xr.use_spmd()
  report(**scenario.run())


if __name__ == '__main__':
  main()
