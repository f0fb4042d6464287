"""The TPU chips attached to this host, counted without starting the runtime.

Lightning's XLA accelerator (its "tpu" accelerator) asks `num_available_devices()`
whether it can run, as in torch_xla: 0 on a host without TPUs, so Lightning's "auto"
does not take the XLA device there, and `accelerator="tpu"` reports the accelerator
unavailable.
"""
import glob
import os

_GOOGLE_PCI_VENDOR_ID = '0x1ae0'
# PCI device ids of TPU chips, with the XLA devices each chip shows (TPU v2 and v3:
# two cores per chip; later generations: one).
_TPU_DEVICES_PER_CHIP = {
    '0x0027': 2,  # v2, v3
    '0x005e': 1,  # v4
    '0x0063': 1,  # v5e
    '0x006f': 1,  # v6e
    '0x0076': 1,  # 7x
}


def _tpu_chips():
  """The PCI device id of each TPU chip on the host."""
  chips = []
  for vendor_path in glob.glob('/sys/bus/pci/devices/*/vendor'):
    try:
      with open(vendor_path) as f:
        if f.read().strip() != _GOOGLE_PCI_VENDOR_ID:
          continue
      with open(os.path.join(os.path.dirname(vendor_path), 'device')) as f:
        device_id = f.read().strip()
    except OSError:
      continue
    if device_id in _TPU_DEVICES_PER_CHIP:
      chips.append(device_id)
  return chips


def num_available_chips():
  """The number of TPU chips attached through PCI."""
  return len(_tpu_chips())


def num_available_devices():
  """The number of XLA TPU devices on this host (0 without TPUs)."""
  return sum(_TPU_DEVICES_PER_CHIP[chip] for chip in _tpu_chips())
