"""Comparing two runs of a model tensor by tensor, to find where they part.

Put `save(name, tensor)` calls at the points of interest in the model (they return the
tensor, so they can wrap an expression), run it once with `configure(dir1)` (or
MODELCMP_SAVEDIR=dir1 in the environment), for instance on the CPU, and once with
`configure(dir2)`, for instance on the XLA device; then `compare(dir1, dir2)` lists every
saved tensor whose values differ beyond the tolerances, with its largest differences,
and every tensor saved by one run only. With no directory configured, save() does
nothing, so the calls can stay in the model.

The files: DIR/NAME.ID, where ID counts the saves of NAME since configure() (a layer
called twice gives NAME.0 and NAME.1), each a torch.save of the tensor on the CPU; with
save(..., step=S), DIR/step-S/NAME.ID, the count starting again at each new step. Among
replicas only the master saves. From the shell:

    python -m torch_xla.debug.model_comparator [--rtol R --atol A --max_diffs N] DIR1 DIR2

prints the report and exits with 1 when there are differences.
"""

import argparse
import os
import re
import sys
import threading
import traceback

import torch

_lock = threading.Lock()
_save_dir = None
_tensor_ids = {}  # saves so far of each name (in the current step)
_step = None

_SAVED_FILE = re.compile(r'(.*)\.(\d+)$')
_STEP_FOLDER = re.compile(r'step-(\d+)$')


def configure(save_dir):
  """Saves go to `save_dir` from now on (None: saves do nothing), counted afresh."""
  global _save_dir, _tensor_ids, _step
  with _lock:
    _save_dir = save_dir
    _tensor_ids = {}
    _step = None


def _current_save_dir():
  if _save_dir is not None:
    return _save_dir
  return os.environ.get('MODELCMP_SAVEDIR') or None


def _is_master():
  import torch_xla.core.xla_model as xm
  return xm.is_master_ordinal(local=False)


def _caller_name():
  """FILE.lLINE of the first caller outside this module, as the name of an unnamed save."""
  here = os.path.abspath(__file__)
  for frame in reversed(traceback.extract_stack(limit=8)[:-1]):
    if os.path.abspath(frame.filename) != here:
      return f'{os.path.basename(frame.filename)}.l{frame.lineno}'
  return 'noname'


def save(name, tensor, step=None):
  """Saves a CPU copy of `tensor` under `name` (None: the caller's FILE.lLINE) in the
  configured directory, in its step-`step` folder when step is given, and returns
  `tensor`. Does nothing but return it when no directory is configured."""
  save_dir = _current_save_dir()
  if save_dir is None:
    return tensor
  if not isinstance(tensor, torch.Tensor):
    raise TypeError(f'model_comparator.save: expected a tensor, got {type(tensor).__name__}')
  data = tensor.detach().cpu()
  if not _is_master():
    return tensor
  name = _caller_name() if name is None else str(name)
  global _tensor_ids, _step
  with _lock:
    folder = save_dir
    if step is not None:
      folder = os.path.join(save_dir, f'step-{step}')
      if step != _step:
        _step = step
        _tensor_ids = {}
    index = _tensor_ids.get(name, 0)
    _tensor_ids[name] = index + 1
  os.makedirs(folder, exist_ok=True)
  torch.save(data, os.path.join(folder, f'{name}.{index}'))
  return tensor


def _index_of(shape, flat_index):
  index = []
  for size in reversed(shape):
    index.append(flat_index % size)
    flat_index //= size
  return list(reversed(index))


def compare_tensors(tensor1, tensor2, rtol=1e-05, atol=1e-08, max_diffs=25):
  """A report of where two tensors differ, '' when they agree: a line for a shape
  difference, else one line per differing element, the largest differences first (at
  most max_diffs of them): its index, both values and their difference. Elements differ
  when |a - b| > max(rtol * max(|a|, |b|), atol); NaN equals only NaN."""
  shape1, shape2 = list(tensor1.shape), list(tensor2.shape)
  if shape1 != shape2:
    return f'Tensors have different shape: {shape1} vs. {shape2}\n'
  a = tensor1.detach().cpu().reshape(-1)
  b = tensor2.detach().cpu().reshape(-1)
  if a.is_complex() or b.is_complex():
    a, b = a.to(torch.complex128), b.to(torch.complex128)
  else:
    a, b = a.to(torch.float64), b.to(torch.float64)
  error = (a - b).abs()
  bound = torch.clamp(torch.maximum(a.abs(), b.abs()) * rtol, min=atol)
  both_nan = torch.isnan(a) & torch.isnan(b)
  one_nan = torch.isnan(a) ^ torch.isnan(b)
  error = torch.where(both_nan, torch.zeros_like(error), error)
  error = torch.where(one_nan, torch.full_like(error, float('inf')), error)
  differing = ((error > bound) | one_nan).nonzero().reshape(-1)
  if differing.numel() == 0:
    return ''
  order = torch.argsort(error[differing], descending=True, stable=True)
  lines = []
  for i in differing[order[:max_diffs]].tolist():
    lines.append(f'{_index_of(shape1, i)}: {a[i].item()} vs. {b[i].item()}\terror={error[i].item()}\n')
  if differing.numel() > max_diffs:
    lines.append(f'... {differing.numel() - max_diffs} more differences (of {differing.numel()})\n')
  return ''.join(lines)


def _parse_path(path):
  """(name, id, step or None) of a saved tensor's path."""
  match = _SAVED_FILE.match(os.path.basename(path))
  if match is None:
    raise ValueError(f'model_comparator: {path} is not a saved tensor (NAME.ID)')
  step_match = _STEP_FOLDER.match(os.path.basename(os.path.dirname(path)))
  return match.group(1), int(match.group(2)), int(step_match.group(1)) if step_match else None


def tensor_file_compare(path1, path2, rtol=1e-05, atol=1e-08, max_diffs=25):
  """compare_tensors of two saved tensor files, under a heading naming the tensor;
  '' when they agree."""
  report = compare_tensors(torch.load(path1), torch.load(path2), rtol=rtol, atol=atol,
                           max_diffs=max_diffs)
  if not report:
    return ''
  name, index, step = _parse_path(path1)
  heading = f'Changes in saved tensor "{name}" with id={index}'
  if step is not None:
    heading += f' at step={step}'
  return heading + '\n' + ''.join(f'  {line}\n' for line in report.splitlines())


def _saved_tensors(save_dir):
  """The saved tensors' paths under save_dir, relative to it."""
  paths = set()
  for root, _, files in os.walk(save_dir):
    for fname in files:
      if _SAVED_FILE.match(fname):
        paths.add(os.path.relpath(os.path.join(root, fname), save_dir))
  return paths


def compare(save_dir1, save_dir2, rtol=1e-05, atol=1e-08, max_diffs=25):
  """The report of every saved tensor that differs between the two directories (see
  compare_tensors), and of every one saved in one of them only; '' when the runs
  agree."""
  for save_dir in (save_dir1, save_dir2):
    if not os.path.isdir(save_dir):
      raise FileNotFoundError(f'model_comparator.compare: {save_dir} is not a directory')
  files1, files2 = _saved_tensors(save_dir1), _saved_tensors(save_dir2)
  report = []
  for path in sorted(files1 | files2):
    if path not in files2:
      report.append(f'Mismatch: {path} not in {save_dir2}\n')
    elif path not in files1:
      report.append(f'Mismatch: {path} not in {save_dir1}\n')
    else:
      report.append(
          tensor_file_compare(os.path.join(save_dir1, path), os.path.join(save_dir2, path), rtol=rtol,
                              atol=atol, max_diffs=max_diffs))
  return ''.join(report)


def main(argv=None):
  parser = argparse.ArgumentParser(description='Compares the tensors saved by two runs of a model.')
  parser.add_argument('--rtol', type=float, default=1e-05)
  parser.add_argument('--atol', type=float, default=1e-08)
  parser.add_argument('--max_diffs', type=int, default=25)
  parser.add_argument('savedir1', metavar='SAVEDIR1')
  parser.add_argument('savedir2', metavar='SAVEDIR2')
  args = parser.parse_args(argv)
  report = compare(args.savedir1, args.savedir2, rtol=args.rtol, atol=args.atol, max_diffs=args.max_diffs)
  if report:
    print(report, file=sys.stderr)
    return 1
  return 0


if __name__ == '__main__':
  sys.exit(main())
