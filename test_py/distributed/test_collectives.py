"""Collectives across 4 replicas (xm.all_reduce, all_gather, reduce_scatter,
all_to_all, collective_permute and the differentiable ones of
torch_xla.core.functions) against the same collectives computed on the CPU from
every replica's input, for float32, bfloat16, integer and bool tensors and for
every replica-group form."""

import pytest
import torch

import torch_xla.core.functions as xf
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
from testing import replica_testing as rt
from testing.replica_testing import REPLICAS, run_replicas
from testing.device_marks import needs_devices

pytestmark = needs_devices(4)

GROUPS = [None, [[0, 1], [2, 3]], [[0, 2], [1, 3]], [[3, 2, 1, 0]]]
RING = [(0, 1), (1, 2), (2, 3), (3, 0)]
PARTIAL = [(2, 0), (0, 3)]


def replica_inputs(dtype, shape=(4, 8), seed=0):
  """One input per replica; float values are small integers, so every sum, product,
  max and min of four of them is exact in bfloat16 too."""
  g = torch.Generator().manual_seed(seed)
  if dtype == torch.bool:
    return [torch.randint(0, 2, shape, generator=g).bool() for _ in range(REPLICAS)]
  return [torch.randint(-3, 4, shape, generator=g).to(dtype) for _ in range(REPLICAS)]


def assert_equal(actual, expected):
  assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
  assert torch.equal(actual, expected), (actual, expected)


@pytest.mark.parametrize('groups', GROUPS, ids=['all', 'pairs', 'strided', 'reversed'])
@pytest.mark.parametrize('dtype', [torch.float32, torch.bfloat16, torch.int32])
def test_collectives_match_cpu(dtype, groups):
  inputs = replica_inputs(dtype)
  reduce_types = ['sum', 'mul', 'max', 'min'] + ([] if dtype.is_floating_point else ['and', 'or'])
  group_size = len(rt.group_of(0, groups))

  def replica(index):
    device = xm.xla_device()
    x = inputs[index].to(device)
    out = {r: xm.all_reduce(r, x, groups=groups) for r in reduce_types}
    listed = [x.clone(), (x * 2).clone()]
    returned = xm.all_reduce(xm.REDUCE_SUM, listed, scale=2 if not dtype.is_floating_point else 0.5,
                             groups=groups)
    out['list_is_returned'] = returned is listed
    out['list'] = listed
    out['gather0'] = xm.all_gather(x, 0, groups=groups)
    out['gather1'] = xm.all_gather(x, dim=-1, groups=groups)
    out['scatter0'] = xm.reduce_scatter(xm.REDUCE_SUM, x, 1.0, 0, group_size, groups=groups)
    out['scatter_max1'] = xm.reduce_scatter(xm.REDUCE_MAX, x, 1.0, 1, group_size, groups=groups)
    out['a2a'] = xm.all_to_all(x, 0, 1, group_size, groups=groups)
    out['a2a_10'] = xm.all_to_all(x, 1, 0, group_size, groups=groups)
    out['ring'] = xm.collective_permute(x, RING)
    out['partial'] = xm.collective_permute(x, PARTIAL)
    xm.mark_step()
    return {k: [t.cpu() for t in v] if isinstance(v, list) else (v.cpu() if torch.is_tensor(v) else v)
            for k, v in out.items()}

  results = run_replicas(replica)
  scale = 2 if not dtype.is_floating_point else 0.5
  for index, got in enumerate(results):
    for r in reduce_types:
      assert_equal(got[r], rt.all_reduce(inputs, index, r, groups))
    assert got['list_is_returned']
    assert_equal(got['list'][0], rt.all_reduce(inputs, index, 'sum', groups) * scale)
    doubled = [t * 2 for t in inputs]
    assert_equal(got['list'][1], rt.all_reduce(doubled, index, 'sum', groups) * scale)
    assert_equal(got['gather0'], rt.all_gather(inputs, index, 0, groups))
    assert_equal(got['gather1'], rt.all_gather(inputs, index, 1, groups))
    assert_equal(got['scatter0'], rt.reduce_scatter(inputs, index, 'sum', 0, groups))
    assert_equal(got['scatter_max1'], rt.reduce_scatter(inputs, index, 'max', 1, groups))
    assert_equal(got['a2a'], rt.all_to_all(inputs, index, 0, 1, groups))
    assert_equal(got['a2a_10'], rt.all_to_all(inputs, index, 1, 0, groups))
    assert_equal(got['ring'], rt.collective_permute(inputs, index, RING))
    assert_equal(got['partial'], rt.collective_permute(inputs, index, PARTIAL))


@pytest.mark.parametrize('groups', [None, [[0, 3], [1, 2]]], ids=['all', 'pairs'])
def test_bool_reductions(groups):
  inputs = replica_inputs(torch.bool, shape=(16,))

  def replica(index):
    x = inputs[index].to(xm.xla_device())
    out = {r: xm.all_reduce(r, x, groups=groups) for r in ('and', 'or', 'max', 'min')}
    xm.mark_step()
    return {k: v.cpu() for k, v in out.items()}

  for index, got in enumerate(run_replicas(replica)):
    assert_equal(got['and'], rt.all_reduce(inputs, index, 'and', groups))
    assert_equal(got['or'], rt.all_reduce(inputs, index, 'or', groups))
    assert_equal(got['max'], rt.all_reduce(inputs, index, 'or', groups))
    assert_equal(got['min'], rt.all_reduce(inputs, index, 'and', groups))


def test_many_tensors_reduce_in_one_collective():
  """A list of tensors of one dtype is one all_reduce; small ones share one buffer,
  and tensors of another dtype get a collective of their own."""
  shapes = [(3,), (2, 5), (), (300, 1000), (7, 1, 2)]
  per_replica = [[torch.randn(s, generator=torch.Generator().manual_seed(10 * r + i))
                  for i, s in enumerate(shapes)] for r in range(REPLICAS)]
  counts = [torch.tensor([r, 2 * r], dtype=torch.int64) for r in range(REPLICAS)]

  def replica(index):
    device = xm.xla_device()
    tensors = [t.to(device) for t in per_replica[index]] + [counts[index].to(device)]
    xm.all_reduce(xm.REDUCE_SUM, tensors, scale=1.0)
    hlo = torch_xla_stablehlo(tensors)
    xm.mark_step()
    return [t.cpu() for t in tensors], hlo

  results = run_replicas(replica)
  for index, (tensors, hlo) in enumerate(results):
    for i in range(len(shapes)):
      expected = sum(per_replica[r][i] for r in range(REPLICAS))
      torch.testing.assert_close(tensors[i], expected, rtol=1e-6, atol=1e-5)
    assert_equal(tensors[-1], sum(counts))
    # One collective for the f32 tensors (the small ones concatenated, the 1.2 MB one
    # as a second operand) and one for the int64 tensor.
    assert hlo.count('"stablehlo.all_reduce"') == 2, hlo
    assert hlo.count('"stablehlo.concatenate"') == 1


def torch_xla_stablehlo(tensors):
  import torch_xla
  return torch_xla._get_stablehlo(tensors)


def test_scale_is_a_graph_parameter():
  """Another scale reuses the compiled graph."""

  def replica(index, scales):
    x = torch.ones(3, device=xm.xla_device())
    xm.mark_step()
    values = []
    for scale in scales:
      values.append(xm.all_reduce(xm.REDUCE_SUM, x, scale=scale))
      xm.mark_step()
    return [v.cpu() for v in values]

  run_replicas(replica, args=([0.25],))
  before = met.counter_value('UncachedCompile') or 0
  results = run_replicas(replica, args=([0.5, 3.0],))
  assert (met.counter_value('UncachedCompile') or 0) == before
  for values in results:
    assert values[0].tolist() == [2.0] * 3 and values[1].tolist() == [12.0] * 3


def test_collective_argument_errors():
  """Bad arguments raise in the replica that traces them, naming the collective and
  the shapes; the replicas go on (no graph was changed)."""

  def replica(index):
    x = torch.ones(4, 6, device=xm.xla_device())
    messages = []
    bad_calls = [
        lambda: xm.all_reduce('avg', x),
        lambda: xm.all_reduce(xm.REDUCE_AND, x),
        lambda: xm.all_reduce(xm.REDUCE_SUM, x, groups=[[0, 1], [2]]),
        lambda: xm.all_reduce(xm.REDUCE_SUM, x, groups=[[0, 1], [1, 2]]),
        lambda: xm.all_reduce(xm.REDUCE_SUM, x, groups=[[0, 1, 2, 4]]),
        lambda: xm.all_reduce(xm.REDUCE_SUM, x.int(), scale=0.5),
        lambda: xm.all_reduce(xm.REDUCE_SUM, [x, torch.ones(2)]),
        lambda: xm.all_gather(x, dim=2),
        lambda: xm.reduce_scatter(xm.REDUCE_SUM, x, 1.0, 1, 3),
        lambda: xm.reduce_scatter(xm.REDUCE_SUM, x, 1.0, 1, 4),
        lambda: xm.all_to_all(x, 0, 1, 2),
        lambda: xm.all_to_all(x, 1, 0, 4),
        lambda: xm.collective_permute(x, [(0, 1), (2, 1)]),
        lambda: xm.collective_permute(x, [(0, 5)]),
        lambda: xm.all_reduce(xm.REDUCE_SUM, x.to(torch.complex64)),
    ]
    for call in bad_calls:
      try:
        call()
        messages.append(None)
      except (RuntimeError, ValueError, IndexError) as e:
        messages.append(str(e))
    y = xm.all_reduce(xm.REDUCE_SUM, x)
    xm.mark_step()
    return messages, y.cpu()

  expected = [
      'invalid reduce type',
      "all_reduce: the 'and' and 'or' reductions take integer or bool tensors, got f32[4, 6]",
      'must all have the same, non-zero size',
      'name replica 1 twice',
      'name replica 4, but there are 4 replicas',
      'scale 0.5 is not a whole number',
      'every tensor must be on',
      'all_gather',
      'shard_count 3 must equal the number of replicas in a group (4)',
      'dimension 1 of f32[4, 6] must be divisible by the 4 replicas',
      'split_count 2 must equal the number of replicas in a group (4)',
      'split dimension 1 of f32[4, 6] must be divisible by split_count 4',
      'replica 1 is the target of two pairs',
      'names replica 5, but there are 4 replicas',
      'complex tensors are not supported',
  ]
  for messages, y in run_replicas(replica):
    for message, fragment in zip(messages, expected):
      assert message is not None and fragment in message, (fragment, message)
    assert y.tolist() == [[4.0] * 6] * 4


@pytest.mark.parametrize('reduce_type', ['sum', 'max', 'min', 'mul'])
@pytest.mark.parametrize('groups', [None, [[0, 1], [2, 3]]], ids=['all', 'pairs'])
def test_differentiable_all_reduce(reduce_type, groups):
  """The gradient of every replica's input, backward run on PyTorch's device threads,
  equals the gradient of the sum of every replica's loss computed on the CPU."""
  g = torch.Generator().manual_seed(3)
  values = [torch.randn(5, generator=g) for _ in range(REPLICAS)]
  values[1][2] = values[3][2] = 9.0  # a tie for max
  weights = [torch.randn(5, generator=g) for _ in range(REPLICAS)]

  def replica(index):
    device = xm.xla_device()
    x = values[index].to(device).requires_grad_()
    y = xf.all_reduce(reduce_type, x, scale=0.5, groups=groups)
    (y * weights[index].to(device)).sum().backward()
    xm.mark_step()
    return y.detach().cpu(), x.grad.cpu()

  cpu = [v.clone().requires_grad_() for v in values]
  losses = []
  for index in range(REPLICAS):
    members = rt.group_of(index, groups)
    stacked = torch.stack([cpu[m] for m in members])
    reduced = {'sum': lambda t: t.sum(0), 'max': lambda t: t.amax(0), 'min': lambda t: t.amin(0),
               'mul': lambda t: t.prod(0)}[reduce_type](stacked) * 0.5
    losses.append((reduced, (reduced * weights[index]).sum()))
  sum(loss for _, loss in losses).backward()
  for index, (y, grad) in enumerate(run_replicas(replica)):
    torch.testing.assert_close(y, losses[index][0].detach(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(grad, cpu[index].grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('groups', [None, [[0, 2], [1, 3]]], ids=['all', 'strided'])
def test_differentiable_all_gather(groups):
  g = torch.Generator().manual_seed(4)
  values = [torch.randn(2, 3, generator=g) for _ in range(REPLICAS)]
  weights = [torch.randn(2, 6 if groups else 12, generator=g) for _ in range(REPLICAS)]

  def replica(index):
    device = xm.xla_device()
    x = values[index].to(device).requires_grad_()
    y = xf.all_gather(x, dim=1, groups=groups)
    (y * weights[index].to(device)).sum().backward()
    xm.mark_step()
    return y.detach().cpu(), x.grad.cpu()

  cpu = [v.clone().requires_grad_() for v in values]
  total = 0
  expected_y = []
  for index in range(REPLICAS):
    y = torch.cat([cpu[m] for m in rt.group_of(index, groups)], 1)
    expected_y.append(y.detach())
    total = total + (y * weights[index]).sum()
  total.backward()
  for index, (y, grad) in enumerate(run_replicas(replica)):
    torch.testing.assert_close(y, expected_y[index])
    torch.testing.assert_close(grad, cpu[index].grad, rtol=1e-5, atol=1e-5)


def test_outside_replication_collectives_act_on_one_replica():
  """On a device no replication owns, a collective is its value for one replica and
  adds no collective op to the graph."""
  device = xm.xla_device()
  x = torch.tensor([1.0, -2.0, 3.0], device=device)
  y = xm.all_reduce(xm.REDUCE_MAX, x, scale=2.0)
  g = xm.all_gather(x, 0)
  s = xm.reduce_scatter(xm.REDUCE_SUM, x, 0.5, 0, 1)
  a = xm.all_to_all(x, 0, 0, 1)
  p = xm.collective_permute(x, [(0, 0)])
  z = xm.collective_permute(x, [])
  hlo = torch_xla_stablehlo([y, g, s, a, p, z])
  assert 'all_reduce' not in hlo and 'all_gather' not in hlo
  assert y.cpu().tolist() == [2.0, -4.0, 6.0]
  assert g.cpu().tolist() == s.cpu().mul(2).tolist() == a.cpu().tolist() == p.cpu().tolist() == [1.0, -2.0, 3.0]
  assert z.cpu().tolist() == [0.0] * 3
  with pytest.raises(RuntimeError, match='name replica 1, but there are 1 replicas'):
    xm.all_reduce(xm.REDUCE_SUM, x, groups=[[0, 1]])
  with pytest.raises(RuntimeError, match='shard_count 2 must equal'):
    xm.reduce_scatter(xm.REDUCE_SUM, x, 1.0, 0, 2)


@pytest.mark.parametrize('root', [0, 2])
def test_library_collectives(root):
  """What Hugging Face Accelerate and FSDP call: collective_broadcast (in place, from
  the root replica) and the bucketized all_gather and reduce_scatter of a list."""
  inputs = replica_inputs(torch.float32, shape=(4, 4), seed=3)
  others = replica_inputs(torch.float32, shape=(8, 2), seed=4)

  def replica(index):
    device = xm.xla_device()
    x, y = inputs[index].to(device), others[index].to(device)
    broadcast = [x.clone(), y.clone()]
    xm.collective_broadcast(broadcast, root_ordinal=root)
    gathered = xm.all_gather_bucketized([x, y], dim=0)
    outputs = [torch.zeros(1, 4, device=device), torch.zeros(2, 2, device=device)]
    scattered = xm.reduce_scatter_bucketized(xm.REDUCE_SUM, [x, y], 0.5, 0, REPLICAS, output=outputs)
    xm.mark_step()
    return ([t.cpu() for t in broadcast], [t.cpu() for t in gathered], [t.cpu() for t in scattered],
            scattered is outputs)

  for index, (broadcast, gathered, scattered, same_list) in enumerate(run_replicas(replica)):
    assert_equal(broadcast[0], inputs[root])
    assert_equal(broadcast[1], others[root])
    assert_equal(gathered[0], rt.all_gather(inputs, index, 0))
    assert_equal(gathered[1], rt.all_gather(others, index, 0))
    assert_equal(scattered[0], rt.reduce_scatter(inputs, index, 'sum', 0) * 0.5)
    assert_equal(scattered[1], rt.reduce_scatter(others, index, 'sum', 0) * 0.5)
    assert same_list
