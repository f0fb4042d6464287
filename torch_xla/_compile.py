"""torch_xla.compile and torch_xla.step: a function, or a block, traced as one graph.

Pending work from before is run first, so that it is not part of the graph; eager mode
is off inside; the graph is run when the function returns (or the block ends). With
full_graph=True, anything inside that would run a graph early (reading a value on the
host: .item(), .cpu(), a Python condition on a tensor, print) raises instead of
splitting the function into several graphs. max_different_graphs bounds how many
different graphs the function may trace over its calls (a new input shape traces a new
one): one more raises.
"""
import contextlib
import functools

from torch_xla._extension import xlac as _xlac
from torch_xla.debug._sync_cause import sync_cause


class _GraphCount:
  """The different graphs a compiled function has run at its ends."""

  def __init__(self, name, limit):
    self.name = name
    self.limit = limit
    self.hashes = set()

  def add(self, hashes):
    if self.limit is None:
      return
    self.hashes.update(hashes)
    if len(self.hashes) > self.limit:
      raise RuntimeError(f'torch_xla.compile: {self.name} traced {len(self.hashes)} different graphs, more than '
                         f'max_different_graphs={self.limit} allows (inputs of new shapes or dtypes, or Python '
                         'control flow that changes the ops, trace new graphs)')


@contextlib.contextmanager
def _compiled(full_graph, graphs, graph_name):
  """Runs the pending work, then traces the block and runs its graph at its end (also
  when it raises, as torch_xla does). `graph_name` names the two syncs' graphs in
  PT_XLA_DEBUG's analysis ('' for none)."""
  from torch_xla import sync
  xlac = _xlac()
  saved_eager = xlac._get_use_eager_mode()
  saved_allow = xlac._get_allow_execution()
  xlac._set_use_eager_mode(False)
  try:
    with sync_cause('torch_xla.compile clear the pending graph prior calling the target function',
                    graph_name=graph_name + '_clear_pending' if graph_name else ''):
      sync()
    xlac._set_allow_execution(saved_allow and not full_graph)
    try:
      yield
    finally:
      xlac._set_allow_execution(saved_allow)
      with sync_cause('torch_xla.compile', graph_name=graph_name):
        sync()
    graphs.add(xlac._xla_last_sync_graph_hashes())
  finally:
    xlac._set_use_eager_mode(saved_eager)


def compile(f=None, full_graph=False, name=None, max_different_graphs=None, num_different_graphs_allowed=None):
  """Traces `f` as one graph, compiled once (per input shapes) and run when f returns.

  As a decorator (`@torch_xla.compile`, `@torch_xla.compile(full_graph=True)`), around a
  function or module (`torch_xla.compile(model)`), or as a context manager
  (`with torch_xla.compile(): ...`). `name` names the function in errors (default: its
  __name__). `num_different_graphs_allowed` is the older name of `max_different_graphs`.
  """
  limit = max_different_graphs if max_different_graphs is not None else num_different_graphs_allowed
  if limit is not None and limit < 1:
    raise ValueError(f'torch_xla.compile: max_different_graphs must be at least 1, got {limit}')
  graph_name = name or ''
  if name is None:
    graph_name = getattr(f, '__name__', None) or (type(f).__name__ if f is not None else '')
    name = graph_name or 'the compiled block'
  graphs = _GraphCount(name, limit)
  if f is None:
    return _compiled(full_graph, graphs, graph_name)
  if not callable(f):
    raise TypeError(f'torch_xla.compile: expected a function or module, got a {type(f).__name__}')

  @functools.wraps(f)
  def compiled(*args, **kwargs):
    with _compiled(full_graph, graphs, graph_name):
      return f(*args, **kwargs)

  return compiled


def step():
  """A block traced as one graph and run at its end (torch_xla.compile() without options):

      with torch_xla.step():
        loss = model(x).sum(); loss.backward(); optimizer.step()
  """
  return compile()
