"""The compiled extension (torch_xla._XLAC), imported on first use: modules that need it
only inside their functions, and the pure-Python helpers that import them, load where it
is absent (tests of pure Python, tools that read the package)."""


def xlac():
  from torch_xla import _XLAC
  return _XLAC
