"""Runs torchgen.gen_backend_stubs from the installed torch wheel on our op yaml.

torchgen finds ATen's native_functions.yaml and templates relative to its own folder.
Releases up to 2.11 look only where a source checkout has them (aten/src/ATen beside
torchgen/); later ones also look in the wheel's torchgen/packaged/. For the older ones
this makes a folder in the build tree that looks like a checkout (links to the wheel's
torchgen/ and its packaged ATen files) and runs torchgen from there.

  python run_torchgen.py SOURCE_YAML OUTPUT_DIR WORK_DIR

Afterwards every generated XLA kernel wrapper opens a torch_xla::EagerOpScope before it
calls our kernel, so that eager mode runs each op's results when the op returns
(cpp/aten/eager_mode.h). torchgen has no hook for code around a backend's kernels.
"""
import inspect
import os
import subprocess
import sys

source_yaml, output_dir, work_dir = sys.argv[1:4]

import torchgen  # noqa: E402
import torchgen.gen_backend_stubs as stubs  # noqa: E402

package = os.path.dirname(os.path.abspath(torchgen.__file__))


def add_eager_op_scopes():
  path = os.path.join(output_dir, 'RegisterXLA.cpp')
  text = open(path).read()
  call = '  return torch_xla::XLANativeFunctions::'
  count = text.count(call)
  if count == 0:
    sys.exit(f'run_torchgen.py: no kernel calls ("{call.strip()}") in {path}; torchgen changed its wrappers')
  text = text.replace(call, '  torch_xla::EagerOpScope eager_op_scope;\n' + call)
  include = '#include <torch/library.h>\n'
  if include not in text:
    sys.exit(f'run_torchgen.py: no "{include.strip()}" in {path} to place the eager scope\'s include after')
  text = text.replace(include, include + '#include "aten/eager_mode.h"\n', 1)
  open(path, 'w').write(text)


def generate(command, **kwargs):
  code = subprocess.call(command, **kwargs)
  if code == 0:
    add_eager_op_scopes()
  return code


command = [sys.executable, '-m', 'torchgen.gen_backend_stubs', '--source_yaml', source_yaml, '--output_dir', output_dir]
if 'torchgen/packaged' in inspect.getsource(stubs.run):
  sys.exit(generate(command))

root = os.path.join(work_dir, 'torchgen_root')
os.makedirs(os.path.join(root, 'aten'), exist_ok=True)
links = {os.path.join(root, 'torchgen'): package, os.path.join(root, 'aten', 'src'): os.path.join(package, 'packaged')}
for link, target in links.items():
  if os.path.islink(link) and os.readlink(link) != target:
    os.unlink(link)
  if not os.path.lexists(link):
    os.symlink(target, link)
env = dict(os.environ, PYTHONPATH=os.pathsep.join([root] + os.environ.get('PYTHONPATH', '').split(os.pathsep)))
sys.exit(generate(command, env=env, cwd=root))
