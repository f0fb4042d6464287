"""Nested-data walking and the small helpers of torch_xla.utils.utils, ToXlaTensorArena,
DataWrapper entries that are None, and clip_grad_norm_ on XLA parameters without
gradients."""

import collections
import os

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm
from torch_xla.utils import utils as xu

Point = collections.namedtuple('Point', 'x y')


class Holder:

  def __init__(self, **attributes):
    self.__dict__.update(attributes)


def _is_number(x):
  return isinstance(x, (int, float)) and not isinstance(x, bool)


# ------------------------------------------------------------ for_each_instance


def test_for_each_instance_order_and_visits_each_object_once():
  shared = Holder(v=[7, 8])
  data = {'a': [1, shared, (2, {3: 4})], 'b': shared, 5.5: {6}}
  seen = []
  xu.for_each_instance(data, _is_number, seen.append)
  # Keys before values, containers in order, `shared` walked only once.
  assert seen == [1, 7, 8, 2, 3, 4, 5.5, 6]


def test_for_each_instance_selected_values_are_not_walked_into():
  inner = [1, 2]
  data = [inner, Holder(x=inner)]
  found = []
  xu.for_each_instance(data, lambda x: x is inner, found.append)
  assert len(found) == 1 and found[0] is inner


def test_for_each_instance_handles_cycles():
  a = Holder(n=1)
  b = Holder(n=2, back=a)
  a.forward = b
  loop = [3]
  loop.append(loop)
  seen = []
  xu.for_each_instance([a, loop], _is_number, seen.append)
  assert seen == [1, 2, 3]


def test_for_each_instance_walks_data_wrapper_tensors():

  class Wrapper(xu.DataWrapper):

    def __init__(self, tensors):
      self.tensors = tensors

    def get_tensors(self):
      return self.tensors

    def from_tensors(self, tensors):
      return Wrapper(tensors)

  t0, t1 = torch.zeros(1), torch.ones(2)
  found = []
  xu.for_each_instance({'w': Wrapper([t0, None, t1])}, lambda x: isinstance(x, torch.Tensor), found.append)
  assert found[0] is t0 and found[1] is t1 and len(found) == 2

  rewritten = xu.for_each_instance_rewrite(Wrapper([t0, None, t1]), lambda x: isinstance(x, torch.Tensor),
                                           lambda t: t + 1)
  assert rewritten.tensors[1] is None
  assert torch.equal(rewritten.tensors[0], t0 + 1) and torch.equal(rewritten.tensors[2], t1 + 1)


# ---------------------------------------------------- for_each_instance_rewrite


def test_rewrite_keeps_types_and_calls_fn_in_walk_order():
  data = collections.OrderedDict(a=(1, [2, {3}]), p=Point(4, 'keep'), f=frozenset({5}), h=Holder(z=6))
  order = []
  xu.for_each_instance(data, _is_number, order.append)
  calls = []

  def times_ten(x):
    calls.append(x)
    return x * 10

  out = xu.for_each_instance_rewrite(data, _is_number, times_ten)
  assert calls == order
  assert type(out) is collections.OrderedDict and list(out) == ['a', 'p', 'f', 'h']
  assert out['a'] == (10, [20, {30}]) and type(out['a']) is tuple
  assert type(out['p']) is Point and out['p'] == Point(40, 'keep')
  assert out['f'] == frozenset({50})
  assert type(out['h']) is Holder and out['h'].z == 60
  # The input is untouched: the rewrite builds new containers and object copies.
  assert data['a'] == (1, [2, {3}]) and data['h'].z == 6 and out['h'] is not data['h']


def test_rewrite_converts_dict_keys():
  out = xu.for_each_instance_rewrite({1: 'a', 'b': 2}, _is_number, lambda x: x + 100)
  assert out == {101: 'a', 'b': 102}


def test_rewrite_keeps_sharing():
  t = torch.arange(3.0)
  shared_list = [t]
  data = {'x': shared_list, 'y': shared_list, 'z': Holder(t=t)}
  out = xu.for_each_instance_rewrite(data, lambda x: isinstance(x, torch.Tensor), lambda x: x * 2)
  assert out['x'] is out['y']
  assert out['x'][0] is out['z'].t
  assert torch.equal(out['z'].t, t * 2)


def test_rewrite_rebuilds_cycles():
  a = Holder(n=1)
  a.me = a
  loop = [2]
  loop.append(loop)
  d = {'k': 3}
  d['self'] = d
  out_a, out_loop, out_d = xu.for_each_instance_rewrite([a, loop, d], _is_number, lambda x: -x)
  assert out_a.n == -1 and out_a.me is out_a and out_a is not a
  assert out_loop[0] == -2 and out_loop[1] is out_loop
  assert out_d['k'] == -3 and out_d['self'] is out_d


def test_rewrite_leaves_classes_functions_and_unselected_tensors():
  t = torch.ones(2)
  data = [Holder, len, os, t, 'text', None]
  out = xu.for_each_instance_rewrite(data, _is_number, lambda x: x + 1)
  assert all(o is d for o, d in zip(out, data))


# -------------------------------------------------------------- ToXlaTensorArena


def test_arena_converts_all_selected_tensors_in_one_call():
  device = torch_xla.device()
  a, b, key = torch.randn(2, 3), torch.randn(4), torch.randn(2)
  data = {key: (a, [b, 1.5]), 'again': a, 's': {2.0}, 'h': Holder(t=b)}
  batches = []

  def convert(tensors):
    batches.append(list(tensors))
    return [t.to(device) for t in tensors]

  out = xm.ToXlaTensorArena(convert, lambda x: type(x) is torch.Tensor).transform(data)
  assert len(batches) == 1 and len(batches[0]) == 3  # key, a, b: each once
  (xkey, (xa, (xb, number))), = [(k, v) for k, v in out.items() if isinstance(k, torch.Tensor)]
  assert all(xm.is_xla_tensor(t) for t in (xkey, xa, xb))
  assert out['again'] is xa and out['h'].t is xb
  assert number == 1.5 and out['s'] == {2.0}
  torch.testing.assert_close(xa.cpu(), a)
  torch.testing.assert_close(xb.cpu(), b)
  torch.testing.assert_close(xkey.cpu(), key)


def test_arena_with_nothing_selected_does_not_call_convert():

  def convert(tensors):
    raise AssertionError('convert_fn called without tensors')

  data = {'a': [1, 2]}
  assert xm.ToXlaTensorArena(convert, lambda x: type(x) is torch.Tensor).transform(data) == data


def test_arena_rejects_a_convert_fn_returning_the_wrong_count():
  arena = xm.ToXlaTensorArena(lambda tensors: tensors[:1], lambda x: type(x) is torch.Tensor)
  with pytest.raises(ValueError, match='ToXlaTensorArena: convert_fn returned 1 values for 2'):
    arena.transform([torch.zeros(1), torch.ones(1)])


# ------------------------------------------------------------ DataWrapper / None


def test_send_cpu_data_to_device_passes_none_wrapper_entries():

  class PackWrapper(xu.DataWrapper):

    def __init__(self, pack):
      self.pack = pack

    def get_tensors(self):
      return [self.pack.data, self.pack.sorted_indices, self.pack.unsorted_indices]

    def from_tensors(self, tensors):
      return torch.nn.utils.rnn.PackedSequence(tensors[0], self.pack.batch_sizes, tensors[1], tensors[2])

  padded = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]).unsqueeze(-1)
  pack = torch.nn.utils.rnn.pack_padded_sequence(padded, [3, 2], batch_first=True)
  assert pack.sorted_indices is None
  device = torch_xla.device()
  moved = xm.send_cpu_data_to_device(PackWrapper(pack), device)
  assert isinstance(moved, torch.nn.utils.rnn.PackedSequence)
  assert moved.data.device == device and moved.batch_sizes.device.type == 'cpu'
  assert moved.sorted_indices is None and moved.unsorted_indices is None
  torch.testing.assert_close(moved.data.cpu(), pack.data)


# -------------------------------------------------------------- clip_grad_norm_


def test_clip_grad_norm_without_gradients_on_xla_is_an_xla_zero():
  xt = torch.rand(3, 3, dtype=torch.bfloat16).to(torch_xla.device())
  for params in (xt, [xt], iter([xt])):
    norm = torch.nn.utils.clip_grad_norm_(params, 1.0)
    assert norm.device.type == 'xla'
    torch.testing.assert_close(norm.cpu(), torch.tensor(0.0))


def test_clip_grad_norm_cpu_parameters_keep_pytorch_behaviour():
  norm = torch.nn.utils.clip_grad_norm_(torch.rand(3), 1.0)
  assert norm.device.type == 'cpu' and norm.item() == 0.0
  p = torch.nn.Parameter(torch.ones(4))
  p.grad = torch.full((4,), 3.0)
  norm = torch.nn.utils.clip_grad_norm_([p], 1.0)
  torch.testing.assert_close(norm, torch.tensor(6.0))
  torch.testing.assert_close(p.grad, torch.full((4,), 3.0 / (6.0 + 1e-6)))


@pytest.mark.parametrize('norm_type', [2.0, float('inf')])
def test_clip_grad_norm_with_gradients_on_xla_matches_cpu(norm_type):
  torch.manual_seed(0)
  cpu = [torch.nn.Parameter(torch.randn(3, 4)), torch.nn.Parameter(torch.randn(5))]
  for p in cpu:
    p.grad = torch.randn_like(p) * 5
  device = torch_xla.device()
  xla = []
  for p in cpu:
    xp = torch.nn.Parameter(p.detach().to(device))
    xp.grad = p.grad.to(device)
    xla.append(xp)
  expected = torch.nn.utils.clip_grad_norm_(cpu, 1.0, norm_type=norm_type)
  actual = torch.nn.utils.clip_grad_norm_(xla, 1.0, norm_type=norm_type)
  assert actual.device.type == 'xla'
  torch.testing.assert_close(actual.cpu(), expected, rtol=1e-5, atol=1e-6)
  for p, xp in zip(cpu, xla):
    torch.testing.assert_close(xp.grad.cpu(), p.grad, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_keeps_its_signature():
  import inspect
  from torch.nn.utils import clip_grad
  patched = torch.nn.utils.clip_grad_norm_
  assert clip_grad.clip_grad_norm_ is patched
  assert list(inspect.signature(patched).parameters) == [
      'parameters', 'max_norm', 'norm_type', 'error_if_nonfinite', 'foreach'
  ]


# ----------------------------------------------------------------- small helpers


def test_fn_data_generator():
  calls = []

  def gen_tensor(*size):
    calls.append(size)
    return torch.randn(*size)

  gen = xu.FnDataGenerator(lambda x: x * 3.0 + 1.0, 4, gen_tensor, dims=[2, 5], count=3)
  assert len(gen) == 3
  for _ in range(2):  # each pass starts over
    pairs = list(gen)
    assert len(pairs) == 3
    for data, target in pairs:
      assert data.shape == (4, 2, 5)
      torch.testing.assert_close(target, data * 3.0 + 1.0)
  assert calls == [(4, 2, 5)] * 6
  default = next(iter(xu.FnDataGenerator(lambda x: x, 2, torch.zeros)))
  assert default[0].shape == (2, 1)


def test_timed_and_timed_scope():
  lines = []
  assert xu.timed(lambda: 42, msg='Model: ', printfn=lines.append) == 42
  with xu.TimedScope(msg='Loop: ', printfn=lines.append):
    pass
  with xu.TimedScope(msg='Failed: ', printfn=lines.append) as scope:
    scope.set_error(RuntimeError('x'))
  assert len(lines) == 2
  assert lines[0].startswith('Model: ') and lines[0].endswith('ms')
  assert lines[1].startswith('Loop: ') and float(lines[1][len('Loop: '):-2]) >= 0.0


def test_print_fn_follows_debug(monkeypatch):
  monkeypatch.setenv('DEBUG', '0')
  assert xu.get_print_fn() is xu.null_print
  assert xu.timed(lambda: 'r', printfn=None) == 'r'
  monkeypatch.setenv('DEBUG', '1')
  assert xu.get_print_fn() is xu.eprint


def test_env_flags(monkeypatch):
  monkeypatch.setenv('XU_FLAG', 'true')
  assert xu.check_env_flag('XU_FLAG') and xu.getenv_as('XU_FLAG', bool)
  monkeypatch.setenv('XU_FLAG', '2')
  assert xu.check_env_flag('XU_FLAG') and xu.getenv_as('XU_FLAG', bool)
  monkeypatch.setenv('XU_FLAG', '0')
  assert not xu.check_env_flag('XU_FLAG') and not xu.getenv_as('XU_FLAG', bool)
  monkeypatch.delenv('XU_FLAG')
  assert not xu.check_env_flag('XU_FLAG') and xu.check_env_flag('XU_FLAG', default='1')


def test_shape_and_flatten():
  nested = [[(1, 2, 3), (4, 5, 6)], [(7, 8, 9), (10, 11, 12)]]
  assert xu.shape(nested) == [2, 2, 3]
  assert xu.shape(5) == []
  assert xu.flatten_nested_tuple(nested) == tuple(range(1, 13))
  with pytest.raises(ValueError, match='shape: ragged'):
    xu.shape([[1, 2], [3]])
  base = [1]
  assert xu.list_copy_append(base, 2) == [1, 2] and base == [1]


def test_lazy_property_computes_once():
  calls = []
  lazy = xu.LazyProperty(lambda: calls.append(1) or 'value')
  assert calls == []
  assert lazy.value == 'value' and lazy.value == 'value'
  assert calls == [1]


def test_parallel_work_keeps_order_and_reraises():
  assert xu.parallel_work(3, lambda a, b: a * b, [1, 2, 3, 4], [5, 6, 7, 8]) == [5, 12, 21, 32]

  def fail(x):
    if x == 2:
      raise KeyError('two')
    return x

  with pytest.raises(KeyError, match='two'):
    xu.parallel_work(2, fail, [1, 2, 3])


def test_free_tcp_ports_can_be_bound():
  import socket
  ports = xu.get_free_tcp_ports(2)
  assert len(ports) == 2 and all(0 < p < 65536 for p in ports)
  with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
    s.bind(('', ports[0]))


def test_tmp_folder_removed_when_collected_or_exited():
  import gc
  folder = xu.TmpFolder()
  path = folder.name
  assert os.path.isdir(path)
  del folder
  gc.collect()
  assert not os.path.exists(path)
  with xu.TmpFolder() as name:
    assert os.path.isdir(name)
  assert not os.path.exists(name)


def test_sample_generator_next_alias():
  gen = iter(xu.SampleGenerator('d', 1))
  assert gen.next() == 'd'
  with pytest.raises(StopIteration):
    gen.next()


def test_map_tensors_keeps_no_tensor_alive():
  # Without the garbage collector's help: nothing map_tensors saw outlives the call.
  import gc
  import weakref
  gc.disable()
  try:
    t = torch.ones(3)
    seen = weakref.ref(t)
    out = xu.map_tensors({'a': [t, (t, 1)]}, lambda x: x * 2)
    assert torch.equal(out['a'][0], torch.full((3,), 2.0)) and out['a'][1][0] is out['a'][0]
    found = xu.tensors_in([t, t])
    assert len(found) == 1
    del t, found
    assert seen() is None
  finally:
    gc.enable()
