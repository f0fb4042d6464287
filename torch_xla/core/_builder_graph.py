"""The graph of a torch_xla.core.xla_builder computation, and its StableHLO text.

A builder records nodes: an op kind, operand nodes, attributes and the shape the op's
shape rule gave (_builder_ops.py). Building a computation fixes its parameters and its
root; its text is one StableHLO function in MLIR's generic syntax, which the lazy graph
calls (ir/user_function.h in the C++ core). Tuples exist only while building: a tuple
value is the list of its array leaves, a tuple parameter one function argument per
leaf, and a tuple result one function result per leaf.
"""

import hashlib
import re

from torch_xla.core._builder_types import Shape


class Builder(object):
  """Records the nodes of one computation; parameters by number."""

  def __init__(self, name):
    self.name = name
    self.parameters = {}

  def __repr__(self):
    return f'Builder({self.name!r})'


class Node(object):
  __slots__ = ('builder', 'kind', 'operands', 'attrs', 'shape')

  def __init__(self, builder, kind, operands, attrs, shape):
    self.builder = builder
    self.kind = kind
    self.operands = tuple(operands)
    self.attrs = attrs
    self.shape = shape


class Computation(object):
  """A built computation: numbered parameters, a root, and their StableHLO function.

  `flat_parameter_shapes` and `flat_result_shapes` are the (type, sizes) of the
  function's arguments and results, tuples flattened: what
  torch_xla._XLAC._xla_user_computation takes and returns, one XLA tensor each.
  """

  def __init__(self, name, builder, root):
    numbers = sorted(builder.parameters)
    if numbers != list(range(len(numbers))):
      raise ValueError(f'xla_builder computation {name!r}: parameters {numbers} '
                       'are not numbered 0, 1, 2...')
    self.name = name
    self.builder = builder
    self.parameters = [builder.parameters[n] for n in numbers]
    self.root = root
    self._text = None

  @property
  def parameter_shapes(self):
    return [p.shape for p in self.parameters]

  @property
  def result_shape(self):
    return self.root.shape

  @property
  def flat_parameter_shapes(self):
    return [(s.dtype, s.sizes) for p in self.parameters for s in p.shape.leaves()]

  @property
  def flat_result_shapes(self):
    return [(s.dtype, s.sizes) for s in self.root.shape.leaves()]

  def _function(self):
    """(symbol, text of the private function): the symbol is the computation's name
    made an MLIR identifier, and a digest of the text, so that computations of one
    name but different bodies can be called by one graph."""
    if self._text is None:
      writer = Writer()
      block = Block(writer, '    ')
      args = []
      for p in self.parameters:
        args.append([writer.argument(s) for s in p.shape.leaves()])
      results = block.inline(self, args)
      arg_list = ', '.join(f'{a}: {writer.type_of(a)}' for leaf in args for a in leaf)
      result_types = ', '.join(writer.type_of(r) for r in results)
      body = ''.join(block.lines)
      body += (f'    "func.return"({", ".join(results)}) : ({result_types}) '
               '-> ()\n')
      signature = f'({arg_list}) -> ({result_types})'
      digest = hashlib.sha256((signature + body).encode()).hexdigest()[:16]
      base = re.sub(r'[^A-Za-z0-9_]', '_', self.name).strip('_') or 'computation'
      if not re.match(r'[A-Za-z_]', base):
        base = 'c_' + base
      symbol = f'xb_{base}_{digest}'
      self._text = (symbol, signature, body)
    return self._text

  @property
  def symbol(self):
    return self._function()[0]

  @property
  def function_text(self):
    symbol, signature, body = self._function()
    return f'func.func private @{symbol}{signature} {{\n{body}  }}'

  def module_text(self):
    """A module whose @main is this computation: the text to read, or to compile alone."""
    _, signature, body = self._function()
    return (f'module @{self.symbol} {{\n  func.func public @main{signature} '
            f'{{\n{body}  }}\n}}\n')

  def __repr__(self):
    return (f'Computation({self.name!r}, parameters={self.parameter_shapes}, '
            f'result={self.result_shape})')


class Writer(object):
  """Names the SSA values of one function (unique across its nested regions, as MLIR
  requires) and remembers their types."""

  def __init__(self):
    self._count = 0
    self._types = {}

  def _fresh(self, prefix, shape):
    name = f'%{prefix}{self._count}'
    self._count += 1
    self._types[name] = shape.mlir()
    return name

  def argument(self, shape):
    return self._fresh('arg', shape)

  def value(self, shape):
    return self._fresh('v', shape)

  def type_of(self, name):
    return self._types[name]

  def set_type(self, name, shape):
    self._types[name] = shape.mlir()


class Block(object):
  """The operations of one function body or region, as lines of text."""

  def __init__(self, writer, indent):
    self.writer = writer
    self.indent = indent
    self.lines = []

  def op(self, name, operands, results, attrs='', regions=()):
    """Appends `"name"(operands) ({regions}) {attrs} : (types) -> results` and returns
    the names of its results (Shapes given in `results`)."""
    w = self.writer
    if len(results) == 1:
      names = [w.value(results[0])]
      lhs = names[0]
    else:
      group = w.value(results[0]) if results else None
      if results:
        names = [f'{group}#{i}' for i in range(len(results))]
        for n, s in zip(names, results):
          w.set_type(n, s)
        lhs = f'{group}:{len(results)}'
      else:
        names = []
    text = f'"{name}"({", ".join(operands)})'
    if regions:
      text += ' (' + ', '.join(
          '{\n' + r + self.indent + '}' for r in regions) + ')'
    if attrs:
      text += ' {' + attrs + '}'
    operand_types = ', '.join(w.type_of(o) for o in operands)
    result_types = ', '.join(s.mlir() for s in results)
    if len(results) != 1:
      result_types = f'({result_types})'
    text += f' : ({operand_types}) -> {result_types}'
    self.lines.append(f'{self.indent}{lhs} = {text}\n' if names else
                      f'{self.indent}{text}\n')
    return names

  def inline(self, computation, args):
    """Emits `computation`'s operations here with its parameters bound to `args` (per
    parameter, the list of its leaves' names); returns the names of its result leaves."""
    from torch_xla.core._builder_ops import lower_node
    values = {id(p): list(a) for p, a in zip(computation.parameters, args)}
    stack = [(computation.root, False)]
    while stack:
      node, expanded = stack.pop()
      if id(node) in values:
        continue
      if expanded:
        values[id(node)] = lower_node(self, node,
                                      [values[id(o)] for o in node.operands])
        continue
      if node.kind == 'Parameter':
        raise ValueError(
            f'xla_builder computation {computation.name!r} reads parameter '
            f'{node.attrs["number"]} of builder {node.builder.name!r}, which is '
            'not its own')
      stack.append((node, True))
      for o in reversed(node.operands):
        if id(o) not in values:
          stack.append((o, False))
    return values[id(computation.root)]

  def region(self, computation, args=None):
    """The text of a region computing `computation`: with block arguments for its
    parameters' leaves, or, where `args` is given, reading those values of the
    enclosing block (stablehlo.if's regions take no arguments)."""
    inner = Block(self.writer, self.indent + '    ')
    header = ''
    if args is None:
      args = []
      for p in computation.parameters:
        args.append([self.writer.argument(s) for s in p.shape.leaves()])
      header = (self.indent + '  ^bb0(' + ', '.join(
          f'{a}: {self.writer.type_of(a)}' for leaf in args for a in leaf) +
                '):\n')
    results = inner.inline(computation, args)
    types = ', '.join(self.writer.type_of(r) for r in results)
    inner.lines.append(f'{inner.indent}"stablehlo.return"({", ".join(results)}) '
                       f': ({types}) -> ()\n')
    return header + ''.join(inner.lines)


def i64_array(values):
  values = list(values)
  if not values:
    return 'array<i64>'
  return 'array<i64: ' + ', '.join(str(int(v)) for v in values) + '>'


def int_list(values):
  return '[' + ', '.join(str(int(v)) for v in values) + ']'


def leaf_count(shape):
  return len(shape.leaves())


def tuple_offsets(shape):
  """Where each element of a tuple shape starts among its leaves."""
  offsets, at = [], 0
  for i in range(shape.tuple_size()):
    offsets.append(at)
    at += leaf_count(Shape(shape.tuple_shape(i)))
  return offsets
