"""Ops on XLA tensors written with torch_xla.core.xla_builder.

    import torch_xla.core.xla_op_registry as xor

    def slice_and_add(a, b, dimno=0):
      sa = a.slice_in_dim(start_index=0, limit_index=1, dimno=dimno)
      sb = b.slice_in_dim(start_index=1, limit_index=2, dimno=dimno)
      return sa + sb

    SLICE_AND_ADD = xor.register('slice_and_add', slice_and_add)
    z = SLICE_AND_ADD(x, y, dimno=0)   # x, y: XLA tensors

The function receives one xla_builder.Op per tensor argument and the keyword arguments
as given; it is built into a computation once per input shapes and keywords (register
ops once, at module level, to keep that cache). Calling the op adds the computation to
the lazy graph. See docs/adding_ops.md.
"""

import pickle
import sys
import threading

from torch_xla._extension import xlac
from torch_xla.core import xla_builder as xb
from torch_xla.utils import utils as xu


class Op(object):
  """A PyTorch operation on XLA tensors whose lowering is a Python function of
  xla_builder Ops.

  Args:
    name (str): The name of the operation.
    opfn (callable): The function building the operation's result from one Op per
      tensor argument.
  """

  def __init__(self, name, opfn):
    self._name = name
    self._opfn = opfn
    self._opname = 'xla::_op_' + name
    self._lock = threading.Lock()
    self._computations = dict()

  def __call__(self, *args, **kwargs):
    """The results of the operation on the XLA tensors `args`: one tensor, or a list
    of them when the function returns a tuple of several.

    Args:
      args: The XLA tensors the operation takes.
      kwargs: Keyword arguments of the function (Python values, not tensors).
    """
    shapes = xb.tensor_shape(args)
    try:
      key = pickle.dumps([[s.shape for s in shapes], kwargs])
    except (pickle.PicklingError, TypeError, AttributeError) as e:
      raise TypeError(f'xla_op_registry op {self._name!r}: the keyword arguments '
                      f'must be plain Python values: {e}') from e
    with self._lock:
      computation = self._computations.get(key, None)
      if computation is None:
        computation = xb.create_computation(self._name, self._opfn, shapes,
                                            **kwargs)
        self._computations[key] = computation
        if xu.getenv_as('XLA_OP_PRINT_COMPUTATIONS', bool, False):
          print(xb.get_computation_hlo(computation), file=sys.stderr)
    result = xlac()._xla_user_computation(self._opname, args, computation)
    return result[0] if len(result) == 1 else result


def register(name, opfn):
  """Registers a PyTorch operation with an XLA lowering function.

  Register operations once (at module level) so that their computations are built
  once per input shapes.

  Args:
    name (str): The name of the operation.
    opfn (callable): The function implementing the XLA lowering.
  Returns:
    The `Op` object which can be called to perform the XLA driven PyTorch
    operation.
  """
  return Op(name, opfn)
