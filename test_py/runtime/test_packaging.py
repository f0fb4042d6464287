"""Packaging and start-up: the build without googletest, the extras of the Python
tests, and a start that prints nothing unless asked to."""

import os
import subprocess
import sys
import tomllib

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def configure(build_dir, *options):
  return subprocess.run(['cmake', '-S', ROOT, '-B', str(build_dir), '-G', 'Ninja', *options],
                        capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, 'CMakeLists.txt')), reason='needs the source tree')
def test_build_without_googletest_leaves_out_the_cpp_tests(tmp_path):
  done = configure(tmp_path / 'auto', '-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON')
  assert done.returncode == 0, done.stderr
  assert 'googletest not found: the C++ tests are not built' in done.stdout
  assert 'torch_xla_tests' not in (tmp_path / 'auto' / 'build.ninja').read_text()
  # Asked for, the C++ tests need googletest.
  done = configure(tmp_path / 'on', '-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON', '-DTORCH_XLA_BUILD_TESTS=ON')
  assert done.returncode != 0 and 'GTest' in done.stderr


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, 'pyproject.toml')), reason='needs the source tree')
def test_test_extras_bring_what_the_python_tests_import():
  with open(os.path.join(ROOT, 'pyproject.toml'), 'rb') as f:
    extras = tomllib.load(f)['project']['optional-dependencies']['test']
  assert {'pytest', 'scikit-learn'} <= {e.split('>')[0].split('=')[0] for e in extras}


RUN = 'import torch, torch_xla; print(torch.ones(2, device="xla").sum().item())'


def start(**env):
  environ = {k: v for k, v in os.environ.items() if k != 'TF_CPP_MIN_LOG_LEVEL'}
  environ.update(env)
  return subprocess.run([sys.executable, '-c', RUN], capture_output=True, text=True, env=environ, timeout=120)


def test_a_start_prints_nothing_but_what_the_script_prints():
  done = start()
  assert done.returncode == 0 and done.stdout == '2.0\n'
  assert done.stderr == '', done.stderr


def test_the_plugins_info_lines_show_when_the_user_asks():
  done = start(TF_CPP_MIN_LOG_LEVEL='0')
  assert done.returncode == 0 and 'cpu_device_count set via create_options' in done.stderr
