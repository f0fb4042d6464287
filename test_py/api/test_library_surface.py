"""The parts of torch_xla's API that libraries built on it (Hugging Face transformers
and accelerate, Lightning) call, beyond the documented ones: the version, moving nested
data to and from the device, an optimizer's gradients."""

import re

import pytest
import torch

import torch_xla
import torch_xla.core.xla_model as xm


def test_version_is_the_torch_release():
  assert re.fullmatch(r'\d+\.\d+\.\d+', torch_xla.__version__)
  assert torch.__version__.startswith(torch_xla.__version__)
  from torch_xla import __version__  # the form transformers uses
  assert __version__ == torch_xla.__version__
  # Lightning checks the installed distribution's version instead.
  from importlib import metadata
  assert metadata.version('torch_xla') == torch_xla.__version__


def test_send_cpu_data_to_device_keeps_the_structure():
  device = xm.xla_device()
  a, b = torch.randn(3, 2), torch.arange(4)
  on_device = torch.ones(2, device=device)
  data = {'a': a, 'pair': (b, 'text'), 'list': [a, 7], 'already': on_device}
  moved = xm.send_cpu_data_to_device(data, device)
  assert moved['a'].device.type == 'xla' and torch.equal(moved['a'].cpu(), a)
  assert torch.equal(moved['pair'][0].cpu(), b) and moved['pair'][1] == 'text'
  assert moved['list'][0] is moved['a']  # one tensor object moves once
  assert moved['list'][1] == 7
  assert moved['already'] is on_device
  # A lone tensor comes back in a list, as torch_xla returns it.
  lone = xm.send_cpu_data_to_device(a, str(device))
  assert isinstance(lone, list) and len(lone) == 1 and torch.equal(lone[0].cpu(), a)


def test_maybe_convert_to_cpu_computes_and_moves():
  device = xm.xla_device()
  x = torch.randn(4, generator=torch.Generator().manual_seed(0))
  pending = x.to(device) * 3 + 1
  data = {'t': pending, 'n': 1}
  on_cpu = xm._maybe_convert_to_cpu(data)
  assert on_cpu['t'].device.type == 'cpu' and on_cpu['n'] == 1
  torch.testing.assert_close(on_cpu['t'], x * 3 + 1)
  kept = xm._maybe_convert_to_cpu(data, convert=False)
  assert kept is data and kept['t'].device.type == 'xla'
  torch.testing.assert_close(kept['t'].cpu(), x * 3 + 1)


def test_fetch_gradients_lists_the_parameters_gradients():
  device = xm.xla_device()
  model = torch.nn.Linear(3, 2).to(device)
  frozen = torch.nn.Parameter(torch.zeros(2, device=device))
  optimizer = torch.optim.SGD([{'params': model.parameters()}, {'params': [frozen]}], lr=0.1)
  model(torch.ones(4, 3, device=device)).sum().backward()
  grads = xm._fetch_gradients(optimizer)
  assert len(grads) == 2  # `frozen` has no gradient
  torch.testing.assert_close(grads[0].cpu(), torch.full((2, 3), 4.0))
  torch.testing.assert_close(grads[1].cpu(), torch.full((2,), 4.0))


def test_tensor_id_tells_tied_tensors_apart():
  """transformers' save_pretrained finds shared (tied) weights on XLA by this id."""
  import torch_xla._XLAC as xlac
  device = xm.xla_device()
  a = torch.randn(3, device=device)
  b = torch.randn(3, device=device)
  assert xlac._xla_get_tensor_id(a) == xlac._xla_get_tensor_id(a)
  assert xlac._xla_get_tensor_id(a) != xlac._xla_get_tensor_id(b)
  embedding = torch.nn.Embedding(5, 3).to(device)
  head = torch.nn.Linear(3, 5, bias=False).to(device)
  head.weight = embedding.weight  # tied, as language models tie them
  assert xlac._xla_get_tensor_id(head.weight) == xlac._xla_get_tensor_id(embedding.weight)
  with pytest.raises(RuntimeError, match='_xla_get_tensor_id'):
    xlac._xla_get_tensor_id(torch.randn(3))
