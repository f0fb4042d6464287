"""The collectives as operators (torch.ops.xla.*): inside torch.compile(backend='openxla')
on 4 replicas (xmp.spawn and torch_xla.launch) they give the values computed on the CPU
from every replica's input; their fake implementations give the output shapes; lists of
tensors in and out of all_gather and reduce_scatter; xf.distributed_mm's values and
gradients against the product of the whole weight."""

import pytest
import torch

import torch_xla
import torch_xla.core.functions as xf
import torch_xla.core.xla_model as xm
from testing import replica_testing as rt
from testing.replica_testing import REPLICAS, run_replicas
from testing.device_marks import needs_devices

pytestmark = needs_devices(4)

PAIRS = [[0, 1], [2, 3]]
RING = [(0, 1), (1, 2), (2, 3), (3, 0)]


def replica_inputs(shape=(4, 8), seed=0):
  g = torch.Generator().manual_seed(seed)
  return [torch.randint(-3, 4, shape, generator=g).float() for _ in range(REPLICAS)]


def every_collective(x):
  """Each collective of xm once, and arithmetic around them, for torch.compile."""
  return {
      'sum': xm.all_reduce(xm.REDUCE_SUM, x * 2, scale=0.5),
      'max_pairs': xm.all_reduce(xm.REDUCE_MAX, x, groups=PAIRS),
      'gather': xm.all_gather(x, dim=1) + 1,
      'gather_pairs': xm.all_gather(x, dim=0, groups=PAIRS),
      'scatter': xm.reduce_scatter(xm.REDUCE_SUM, x, 1.0, 0, REPLICAS),
      'a2a': xm.all_to_all(x, 1, 0, REPLICAS),
      'ring': xm.collective_permute(x, RING),
  }


def expected_collectives(inputs, index):
  return {
      'sum': rt.all_reduce([t * 2 for t in inputs], index, 'sum') * 0.5,
      'max_pairs': rt.all_reduce(inputs, index, 'max', PAIRS),
      'gather': rt.all_gather(inputs, index, 1) + 1,
      'gather_pairs': rt.all_gather(inputs, index, 0, PAIRS),
      'scatter': rt.reduce_scatter(inputs, index, 'sum', 0),
      'a2a': rt.all_to_all(inputs, index, 1, 0),
      'ring': rt.collective_permute(inputs, index, RING),
  }


@pytest.mark.parametrize('launcher', ['spawn', 'launch'])
def test_collectives_inside_torch_compile(launcher):
  inputs = replica_inputs()
  torch._dynamo.reset()

  def replica(index):
    compiled = torch.compile(every_collective, backend='openxla', fullgraph=True)
    x = inputs[index].to(xm.xla_device())
    first = {k: v.cpu() for k, v in compiled(x).items()}
    again = {k: v.cpu() for k, v in compiled(x + 1).items()}
    return first, again

  if launcher == 'spawn':
    results = run_replicas(replica)
  else:
    results = {}
    torch_xla.launch(lambda index: results.__setitem__(index, replica(index)))
    results = [results[i] for i in range(REPLICAS)]
  shifted = [t + 1 for t in inputs]
  for index, (first, again) in enumerate(results):
    for name, value in expected_collectives(inputs, index).items():
      torch.testing.assert_close(first[name], value, msg=lambda m: f'replica {index} {name}: {m}')
    for name, value in expected_collectives(shifted, index).items():
      torch.testing.assert_close(again[name], value, msg=lambda m: f'replica {index} {name}: {m}')


def test_in_place_list_all_reduce_inside_torch_compile():
  inputs = replica_inputs(seed=1)

  def reduce_in_place(a, b):
    xm.all_reduce(xm.REDUCE_SUM, [a, b])
    return a + b

  def replica(index):
    compiled = torch.compile(reduce_in_place, backend='openxla', fullgraph=True)
    a = inputs[index].to(xm.xla_device())
    b = (inputs[index] * 3).to(xm.xla_device())
    total = compiled(a, b)
    return a.cpu(), b.cpu(), total.cpu()

  for index, (a, b, total) in enumerate(run_replicas(replica)):
    summed = rt.all_reduce(inputs, index, 'sum')
    torch.testing.assert_close(a, summed)
    torch.testing.assert_close(b, summed * 3)
    torch.testing.assert_close(total, summed * 4)


def test_fake_implementations_give_the_output_shapes():
  from torch._subclasses.fake_tensor import FakeTensorMode
  with FakeTensorMode():
    x = torch.empty(4, 8, device='xla')
    assert torch.ops.xla.all_reduce([x, x[:2]], 'sum', 1.0, [], 0)[1].shape == (2, 8)
    assert torch.ops.xla.all_gather(x, -1, [0, 1, 2, 3], 2).shape == (4, 16)
    assert torch.ops.xla.reduce_scatter(x, 'sum', 1.0, 1, 4, [], 0).shape == (4, 2)
    assert torch.ops.xla.all_to_all(x, 1, 0, 4, [], 0).shape == (16, 2)
    assert torch.ops.xla.collective_permute(x, [0], [1]).shape == (4, 8)
    with pytest.raises(ValueError, match='xm.reduce_scatter: dimension 0 of size 4 does not split into 3'):
      torch.ops.xla.reduce_scatter(x, 'sum', 1.0, 0, 3, [], 0)


def test_uneven_groups_are_refused_by_name():
  x = torch.ones(2, device=xm.xla_device())
  with pytest.raises(ValueError, match=r'xm.all_gather: replica groups \[\[0, 1, 2\], \[3\]\] must all have'):
    xm.all_gather(x, groups=[[0, 1, 2], [3]])


def test_lists_in_and_out_of_reduce_scatter_and_all_gather():
  inputs = [replica_inputs((8, 4), seed=s) for s in range(3)]

  def replica(index):
    device = xm.xla_device()
    xs = [t[index].to(device) for t in inputs]
    scattered = xm.reduce_scatter(xm.REDUCE_SUM, xs, 0.5, 0, REPLICAS)
    # Outputs of another shape take the result's (as torch_xla's out= collectives do).
    outputs = [torch.zeros(8, 4, device=device) for _ in xs]
    returned = xm.reduce_scatter(xm.REDUCE_SUM, xs, 0.5, 0, REPLICAS, output=outputs)
    bucketized = xm.reduce_scatter_bucketized(xm.REDUCE_MAX, xs, 1.0, 1, REPLICAS, groups=None)
    gathered = xm.all_gather(xs, dim=1)
    gather_out = [torch.zeros(8, 16, device=device) for _ in xs]
    gather_returned = xm.all_gather_bucketized(xs, dim=1, output=gather_out)
    with pytest.raises(ValueError, match='xm.reduce_scatter: 2 output tensors for 3 inputs'):
      xm.reduce_scatter(xm.REDUCE_SUM, xs, 1.0, 0, REPLICAS, output=outputs[:2])
    with pytest.raises(TypeError, match='xm.all_gather: `input` must be a tensor or a list of tensors'):
      xm.all_gather([xs[0], 3])
    cpu = lambda ts: [t.cpu() for t in ts]
    return (cpu(scattered), returned is outputs, cpu(outputs), cpu(bucketized), cpu(gathered),
            gather_returned is gather_out, cpu(gather_out))

  for index, got in enumerate(run_replicas(replica)):
    scattered, same, outputs, bucketized, gathered, gather_same, gather_out = got
    assert same and gather_same
    for i, per_replica in enumerate(inputs):
      expected = rt.reduce_scatter(per_replica, index, 'sum', 0) * 0.5
      torch.testing.assert_close(scattered[i], expected)
      torch.testing.assert_close(outputs[i], expected)
      torch.testing.assert_close(bucketized[i], rt.reduce_scatter(per_replica, index, 'max', 1))
      torch.testing.assert_close(gathered[i], rt.all_gather(per_replica, index, 1))
      torch.testing.assert_close(gather_out[i], rt.all_gather(per_replica, index, 1))


def test_distributed_mm_values_and_gradients():
  n, block, m = 3, 2, 8
  g = torch.Generator().manual_seed(3)
  weight = torch.randn(n, block * REPLICAS, generator=g)
  xs = [torch.randn(block * REPLICAS, m, generator=g) for _ in range(REPLICAS)]
  weights = [torch.randn(n, m, generator=g) for _ in range(REPLICAS)]  # of each output in the loss

  def replica(index, split):
    device = xm.xla_device()
    w = weight[:, index * block:(index + 1) * block].clone().to(device).requires_grad_()
    x = xs[index].to(device).requires_grad_()
    y = xf.distributed_mm(w, x, split=split)
    (y * weights[index].to(device)).sum().backward()
    # The block as a slice at the replica's own offset, still pending.
    sliced = xf.distributed_mm(torch.narrow(weight.to(device), 1, index * block, block), x.detach(), split=split)
    return y.detach().cpu(), w.grad.cpu(), x.grad.cpu(), sliced.cpu()

  # On the CPU: every replica's product with the whole weight, and the gradients of the
  # sum of the replicas' losses.
  weight_cpu = weight.clone().requires_grad_()
  xs_cpu = [x.clone().requires_grad_() for x in xs]
  sum((weight_cpu @ x * c).sum() for x, c in zip(xs_cpu, weights)).backward()
  for split in (1, 2):
    for index, (y, w_grad, x_grad, sliced) in enumerate(run_replicas(replica, args=(split,))):
      expected = weight @ xs[index]
      torch.testing.assert_close(y, expected, rtol=1e-4, atol=1e-4)
      torch.testing.assert_close(sliced, expected, rtol=1e-4, atol=1e-4)
      torch.testing.assert_close(w_grad, weight_cpu.grad[:, index * block:(index + 1) * block], rtol=1e-4, atol=1e-4)
      torch.testing.assert_close(x_grad, xs_cpu[index].grad, rtol=1e-4, atol=1e-4)


def test_distributed_mm_refuses_mismatched_shapes():

  def replica(index):
    device = xm.xla_device()
    with pytest.raises(ValueError, match=r'distributed_mm: expected w \[N, Ko\] and x \[Ko \* 4 replicas, M\]'):
      xf.distributed_mm(torch.ones(3, 2, device=device), torch.ones(6, 4, device=device))
    with pytest.raises(ValueError, match='distributed_mm: split 3 does not divide the 4 columns'):
      xf.distributed_mm(torch.ones(3, 2, device=device), torch.ones(8, 4, device=device), split=3)

  run_replicas(replica)
