"""torch_xla.runtime and the device functions of torch_xla 2.x."""
import os
import subprocess
import sys
from unittest import mock

import pytest
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr


def test_device_type_reads_pjrt_device():
  with mock.patch.dict(os.environ, {'PJRT_DEVICE': 'TPU'}):
    assert xr.device_type() == 'TPU'
  with mock.patch.dict(os.environ, {'PJRT_DEVICE': 'CUDA_12'}):
    assert xr.device_type() == 'CUDA'
  assert xr.device_type() == 'CPU'


def test_set_device_type_after_start_refuses_another_kind():
  xm.xla_device()
  assert torch_xla._XLAC._xla_runtime_is_initialized()
  xr.set_device_type('CPU')  # the kind in use: accepted
  with pytest.raises(RuntimeError, match='already started'):
    xr.set_device_type('TPU')
  assert os.environ['PJRT_DEVICE'] == 'CPU'


def test_set_device_type_before_start_sets_the_variable():
  with mock.patch.dict(os.environ, {'PJRT_DEVICE': 'CPU'}), \
       mock.patch.object(torch_xla._XLAC, '_xla_runtime_is_initialized', return_value=False):
    xr.set_device_type('CUDA')
    assert os.environ['PJRT_DEVICE'] == 'CUDA'


def test_default_device_selection_at_import():
  code = 'import torch_xla.runtime as xr; print(xr.device_type())'
  env = {k: v for k, v in os.environ.items() if k != 'PJRT_DEVICE'}
  out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                       timeout=120)
  assert out.stdout.strip() == 'CPU', out.stderr
  env['PJRT_SELECT_DEFAULT_DEVICE'] = '0'
  out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                       timeout=120)
  assert out.stdout.strip() == 'None', out.stderr


def test_device_names_and_counts():
  n = torch_xla.device_count()
  assert torch_xla.devices() == [torch.device('xla', i) for i in range(n)]
  assert torch_xla.real_devices() == [f'CPU:{i}' for i in range(n)]
  assert torch_xla._XLAC._xla_get_all_devices() == [f'CPU:{i}' for i in range(n)]
  assert xr.global_device_count() == n == xr.addressable_runtime_device_count()
  assert xr.runtime_device_attributes('xla:0') == {'name': 'CPU:0', 'kind': 'CPU', 'id': 0}
  assert len(xr.global_runtime_device_attributes()) == n
  assert xr.host_index() == 0
  assert xr.get_master_ip() == os.environ.get('MASTER_ADDR', '127.0.0.1')
  assert xr.is_bf16_supported()
  with pytest.raises(ValueError, match='not an XLA device'):
    torch_xla._XLAC._xla_real_devices([f'xla:{n}'])


def test_cached_compilation_graph_count_grows_with_new_graphs():
  # The in-memory cache keeps XLA_COMPILATION_CACHE_SIZE graphs; a full one stays full.
  capacity = int(os.environ.get('XLA_COMPILATION_CACHE_SIZE', '1024'))
  before = xr.get_num_cached_compilation_graph()
  t = torch.arange(4093, device=xm.xla_device()) * 13 + 5  # a graph no other test has
  torch_xla.sync()
  assert xr.get_num_cached_compilation_graph() == min(before + 1, capacity)
  assert t.cpu().tolist() == [i * 13 + 5 for i in range(4093)]


def test_env_var_names_module():
  import torch_xla.core.xla_env_vars as xenv
  assert xenv.PJRT_DEVICE == 'PJRT_DEVICE' and xenv.CPU_NUM_DEVICES == 'CPU_NUM_DEVICES'
  assert os.environ[xenv.PJRT_DEVICE] == xr.device_type()


def test_device_index_out_of_range_is_an_index_error():
  with pytest.raises(IndexError, match='xla:10 does not exist'):
    torch_xla.device(10)
  with pytest.raises(RuntimeError):
    xm.xla_device(10)


def test_torch_xla_is_the_device_module_of_xla():
  assert torch.get_device_module('xla') is torch.xla
  assert torch.xla.device_count() == torch_xla.device_count() and torch.xla.is_available()
  torch.xla.manual_seed(1234)
  state = torch.xla.get_rng_state()
  with torch.random.fork_rng(device_type='xla'):
    inside = torch.rand(3, device='xla').cpu()
  after = torch.rand(3, device='xla').cpu()
  # fork_rng restored the state, so the draw after it repeats the draw inside it.
  assert torch.equal(inside, after)
  torch.xla.set_rng_state(state)
  assert torch.equal(torch.rand(3, device='xla').cpu(), inside)
