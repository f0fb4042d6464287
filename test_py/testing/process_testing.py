"""Helpers of the multi-process tests: launching a script as several processes (through
torchrun, or by hand with torchrun's environment) and reading what each process
reported. Every launch has a deadline: a hang fails the test."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

# test_py/, on the launched scripts' path: they import the helpers as the tests do
# (`from testing.process_testing import report`).
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A launch that takes longer than this fails its test (the processes are killed).
LAUNCH_TIMEOUT = 240


def free_port():
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


def child_env(devices_per_process, **extra):
  env = dict(os.environ)
  # A process that aborts prints the Python stacks of its threads (faulthandler).
  env.update(CPU_NUM_DEVICES=str(devices_per_process), XLA_REPLICA_TIMEOUT='60', PYTHONFAULTHANDLER='1',
             PYTHONPATH=os.pathsep.join([TESTS, env.get('PYTHONPATH', '')]))
  env.update({k: str(v) for k, v in extra.items()})
  return env


class Launch:
  """The outcome of a launch: exit codes, output, seconds, and the results reported."""

  def __init__(self, returncodes, output, seconds):
    self.returncodes = returncodes
    self.output = output
    self.seconds = seconds
    # Each result is one JSON object after 'RESULT ' (the processes share the output).
    decoder = json.JSONDecoder()
    self.results = []
    start = output.find('RESULT ')
    while start >= 0:
      value, end = decoder.raw_decode(output, start + len('RESULT '))
      self.results.append(value)
      start = output.find('RESULT ', end)

  def show(self):
    """Prints the whole output: pytest shows it with a failing test (the assertion
    message keeps only its start)."""
    print(f'---- output of the launch (exit codes {self.returncodes}, {self.seconds:.1f} s) ----')
    print(self.output)
    return self

  def __repr__(self):
    return f'Launch(returncodes={self.returncodes}, seconds={self.seconds:.1f}, output=...{self.output[-3000:]})'


def report(**values):
  """Called in a launched script: one result line for the test to read, written with
  one system call so that the processes' lines do not mix."""
  sys.stdout.flush()
  os.write(sys.stdout.fileno(), ('RESULT ' + json.dumps(values) + '\n').encode())


def torchrun(script, nproc=2, devices_per_process=2, timeout=LAUNCH_TIMEOUT, **env):
  """Runs `script` (a path) under torchrun on this host."""
  command = [sys.executable, '-m', 'torch.distributed.run', '--nproc-per-node', str(nproc),
             '--master-addr', '127.0.0.1', '--master-port', str(free_port()), script]
  start = time.monotonic()
  done = subprocess.run(command, env=child_env(devices_per_process, **env), capture_output=True,
                        text=True, timeout=timeout)
  return Launch([done.returncode], done.stdout + done.stderr, time.monotonic() - start).show()


def by_hand(script, nproc=2, devices_per_process=2, timeout=LAUNCH_TIMEOUT, **env):
  """Runs `script` as `nproc` processes with torchrun's environment but no launcher
  watching them (as on several hosts: nobody stops the others when one dies)."""
  port = free_port()
  start = time.monotonic()
  processes = []
  for rank in range(nproc):
    processes.append(subprocess.Popen(
        [sys.executable, script],
        env=child_env(devices_per_process, RANK=rank, WORLD_SIZE=nproc, LOCAL_RANK=rank,
                      LOCAL_WORLD_SIZE=nproc, MASTER_ADDR='127.0.0.1', MASTER_PORT=port, **env),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True))
  outputs = []
  try:
    for p in processes:
      left = max(1.0, timeout - (time.monotonic() - start))
      outputs.append(p.communicate(timeout=left)[0])
  finally:
    for p in processes:
      if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
  return Launch([p.returncode for p in processes], '\n'.join(outputs), time.monotonic() - start).show()
