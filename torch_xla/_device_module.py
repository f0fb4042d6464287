"""`torch.xla`: the device module PyTorch looks up by device type (torch.get_device_module
('xla'), torch.random.fork_rng(device_type='xla'), torch.utils.checkpoint's
preservation of RNG state), registered when torch_xla is imported."""
import torch

from torch_xla._extension import xlac as _xlac
from torch_xla.core import xla_model as xm


def is_available():
  return device_count() > 0


def device_count():
  return _xlac()._xla_device_count()


def current_device():
  """The ordinal of the calling replica's device."""
  return xm.xla_device().index


def synchronize(device=None):
  """Waits for the device's pending and running work."""
  xm.wait_device_ops()


def manual_seed(seed):
  xm.set_rng_state(int(seed))


def manual_seed_all(seed):
  for i in range(device_count()):
    xm.set_rng_state(int(seed), device=f'xla:{i}')


def seed():
  manual_seed(torch.seed())


def initial_seed():
  return xm.get_rng_state()


def get_rng_state(device='xla'):
  """The device's RNG state as a tensor (a 64-bit seed), as device modules give it."""
  return torch.tensor([xm.get_rng_state(_device(device))], dtype=torch.int64)


def set_rng_state(new_state, device='xla'):
  xm.set_rng_state(int(torch.as_tensor(new_state).reshape(-1)[0]), _device(device))


def get_rng_state_all():
  return [get_rng_state(f'xla:{i}') for i in range(device_count())]


def set_rng_state_all(new_states):
  for i, state in enumerate(new_states):
    set_rng_state(state, f'xla:{i}')


def _device(device):
  if isinstance(device, int):
    return f'xla:{device}'
  text = str(device)
  return None if text == 'xla' else text
