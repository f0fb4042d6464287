"""Buffers the user allows an execution to take over (_set_buffer_donation), and the
_XLAC helpers that describe a tensor."""
import pytest
import torch
import torch_xla
import torch_xla.debug.metrics as met

XLAC = torch_xla._XLAC
DEV = torch_xla.device()


@pytest.fixture
def buffer_donor_config():
  before = XLAC._xla_get_enable_alias_with_buffer_donor_config()
  XLAC._xla_set_enable_alias_with_buffer_donor_config(True)
  assert XLAC._xla_get_enable_alias_with_buffer_donor_config()
  yield
  XLAC._xla_set_enable_alias_with_buffer_donor_config(before)


def _aliases():
  data = met.metric_data('InputOutputAliasCount')
  return 0 if data is None else data[1]


def test_a_step_donates_a_requested_buffer_that_tensors_still_hold():
  host0, host1 = torch.randn(4, 2, 2), torch.randn(4, 2, 2)
  t0, t1 = host0.to(DEV), host1.to(DEV)
  met.clear_all()
  assert XLAC._set_buffer_donation(t0, True)
  assert XLAC._get_buffer_donation(t0) and not XLAC._get_buffer_donation(t1)
  assert met.counter_value('XlaSetBufferDonation') == 1
  t2 = t0 + t1
  t1 += 2
  torch_xla.sync(wait=True)
  assert _aliases() == 2  # t1's update in place, and t0's buffer for t2
  assert XLAC._is_placecholder(t0)
  torch.testing.assert_close(t2.cpu(), host0 + host1)
  torch.testing.assert_close(t1.cpu(), host1 + 2)
  with pytest.raises(RuntimeError, match='donated'):
    t0.cpu()
  with pytest.raises(RuntimeError, match='donated'):
    (t0 * 2).cpu()


def test_a_partial_sync_donates_only_when_enabled(buffer_donor_config):
  for enabled in (True, False):
    XLAC._xla_set_enable_alias_with_buffer_donor_config(enabled)
    # A shape no other test compiles: the alias count is taken when a graph is new.
    host = torch.randn(8191)
    t0 = host.to(DEV)
    assert XLAC._set_buffer_donation(t0, True)
    met.clear_all()
    t1 = t0 * 3
    XLAC._xla_sync_multi([t0, t1], [str(DEV)], True, False)
    assert _aliases() == (1 if enabled else 0)
    assert XLAC._is_placecholder(t0) == enabled
    torch.testing.assert_close(t1.cpu(), host * 3)


def test_requested_donation_of_an_updated_buffer_counts_once():
  t0 = torch.randn(4, 2, 2).to(DEV)
  expected = t0.cpu() + 2
  assert XLAC._set_buffer_donation(t0, True)
  met.clear_all()
  t0 += 2
  torch_xla.sync()
  assert _aliases() == 1
  torch.testing.assert_close(t0.cpu(), expected)


def test_a_pending_tensor_has_no_buffer_to_donate_and_a_step_without_graph_keeps_the_request():
  t = torch.ones(3, device=DEV) + 1
  assert not XLAC._set_buffer_donation(t, True)
  torch_xla.sync()
  assert XLAC._set_buffer_donation(t, True)
  torch_xla.sync()
  assert XLAC._get_buffer_donation(t)
  assert XLAC._set_buffer_donation(t, False) and not XLAC._get_buffer_donation(t)


def test_tensor_debug_info():
  assert 'Not a XLATensor' in XLAC._get_xla_tensor_debug_info(torch.randn(5))
  t = torch.randn(5).to(DEV) + 5
  info = XLAC._get_xla_tensor_debug_info(t)
  assert 'XLA Shape: f32[5]' in info and 'XLAData: None' in info and 'add' in info
  torch_xla.sync()
  info = XLAC._get_xla_tensor_debug_info(t)
  assert 'Data Shape: f32[5]' in info and 'IR: None' in info
  assert XLAC._get_xla_tensor_shape_type(t.half()) == 'f16'
  size = XLAC._get_xla_tensor_dimension_size(torch.zeros(7, 3, device=DEV), 0)
  assert size.device.type == 'xla' and size.item() == 7
  moved = XLAC._xla_tensors_from_aten([torch.arange(3)], [str(DEV)])
  assert moved[0].device == DEV and moved[0].cpu().tolist() == [0, 1, 2]
  assert 'stablehlo' in XLAC._get_xla_tensors_hlo([t * 2])
  revs = XLAC._get_git_revs()
  assert revs['xla'] == torch_xla.__version__ and 'torch' in revs
