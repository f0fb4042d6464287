"""The CPU plugin's large buffers (a graph's temporaries, big results) come from a cache
of mapped blocks that the next run reuses (cpp/runtime/host_block_cache.h)."""
import os
import subprocess
import sys

import torch

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met

DEV = xm.xla_device()


def counter(name):
  return met.counter_value(name) or 0


def run_large_graph(x_cpu, w_cpu):
  # 1024 x 4096 float32 intermediates are 16 MiB: large enough for the cache.
  x, w = x_cpu.to(DEV), w_cpu.to(DEV)
  h = torch.relu(x @ w)
  y = (h * h.sigmoid()) @ w.t()
  xm.mark_step()
  return y.cpu()


def test_repeated_run_reuses_the_blocks_of_the_last_one():
  torch.manual_seed(0)
  x, w = torch.randn(1024, 512), torch.randn(512, 4096) * 0.05
  expected = (torch.relu(x @ w) * torch.relu(x @ w).sigmoid()) @ w.t()
  first = run_large_graph(x, w)
  misses, hits = counter('HostBlockCacheMiss'), counter('HostBlockCacheHit')
  assert misses > 0, 'no buffer of the graph went through the cache'
  for _ in range(3):
    again = run_large_graph(x, w)
    torch.testing.assert_close(again, expected, rtol=1e-4, atol=1e-4)
  assert counter('HostBlockCacheHit') >= hits + 3
  assert counter('HostBlockCacheMiss') == misses
  torch.testing.assert_close(first, expected, rtol=1e-4, atol=1e-4)


def run_child(script, capacity):
  """Runs `script` in a new process with XLA_CPU_BLOCK_CACHE_MB=capacity; its stdout."""
  env = dict(os.environ, XLA_CPU_BLOCK_CACHE_MB=capacity)
  result = subprocess.run([sys.executable, '-c', script], env=env, capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr
  return result.stdout


def test_cache_can_be_turned_off():
  script = (
      'import torch, torch_xla, torch_xla.core.xla_model as xm, torch_xla.debug.metrics as met\n'
      'd = xm.xla_device()\n'
      'x = torch.ones(1024, 8192, device=d)\n'
      'y = (x * 2 + 1).sum(0)\n'
      'xm.mark_step()\n'
      'assert y.cpu()[0].item() == 3 * 1024\n'
      'print(met.counter_value("HostBlockCacheMiss"), met.counter_value("HostBlockCacheHit"))\n')
  assert run_child(script, '0').split() == ['None', 'None']


def test_malformed_capacity_is_an_error_naming_the_variable():
  script = ('import torch, torch_xla, torch_xla.core.xla_model as xm\n'
            'try:\n'
            '  torch.ones(2, device=xm.xla_device()).cpu()\n'
            'except RuntimeError as e:\n'
            '  print("raised:", e)\n')
  out = run_child(script, '2GB')
  assert 'raised:' in out and "XLA_CPU_BLOCK_CACHE_MB must be a non-negative integer (megabytes), got '2GB'" in out, out


def test_back_to_back_steps_share_one_block_of_temporaries():
  # Each step starts when the one before completes (it reads its weights), on another
  # worker thread, while the one before is still freeing its temporaries: the cache
  # waits for them instead of mapping a second block.
  torch.manual_seed(0)
  x_cpu, w_cpu = torch.randn(1024, 512), torch.randn(512, 4096) * 0.05

  def step(x, w):
    h = torch.relu(x @ w)
    return w - 1e-3 * (x.t() @ (h * h.sigmoid())) / 1024

  expected = w_cpu
  for _ in range(12):
    expected = step(x_cpu, expected)
  x, w = x_cpu.to(DEV), w_cpu.to(DEV)
  w = step(x, w)
  xm.mark_step()
  xm.wait_device_ops()
  misses = counter('HostBlockCacheMiss')
  for _ in range(11):
    w = step(x, w)
    xm.mark_step()
  torch.testing.assert_close(w.cpu(), expected, rtol=1e-4, atol=1e-4)
  assert counter('HostBlockCacheMiss') == misses


def test_mid_sized_results_come_back_to_the_pool_for_the_next_step():
  # 512 x 512 float32 results are 1 MB: pooled (host_buffer_pool.h), whichever thread
  # frees them, and the next step's result of that size reuses the last one's buffer.
  # The plugin's worker may still hold a step's result for a moment after the step
  # completes, so the next step can map one more buffer once; from then on two buffers
  # take turns and no step maps another.
  torch.manual_seed(0)
  a_cpu, b_cpu = torch.randn(512, 512), torch.randn(512, 512)
  a, b = a_cpu.to(DEV), b_cpu.to(DEV)
  for step in range(8):
    c = torch.tanh(a * 0.5 + b)  # the last step's result is dropped here
    xm.mark_step()
    xm.wait_device_ops()
    if step == 1:
      reused, mapped = counter('HostBufferPoolReuse'), counter('HostBufferPoolMap')
  torch.testing.assert_close(c.cpu(), torch.tanh(a_cpu * 0.5 + b_cpu), rtol=1e-5, atol=1e-5)
  assert counter('HostBufferPoolMap') <= mapped + 1
  assert counter('HostBufferPoolReuse') >= reused + 5


def test_results_dropped_while_their_step_runs_come_back_before_the_next_step():
  # A graph of 32 MB and more waits for the one before before it is enqueued, and then
  # for the results the one before dropped while it ran (here the gradient, as
  # zero_grad drops it): the plugin frees them just after that step completes, and the
  # next step takes them from the pool instead of mapping its own. Every expected
  # release comes (a wait that ran out would stall a launch 20 ms).
  torch.manual_seed(0)
  x_cpu, w_cpu = torch.randn(1024, 512), torch.randn(512, 4096) * 0.05
  x, w = x_cpu.to(DEV), w_cpu.to(DEV)
  expected_w = w_cpu
  expected_before = counter('HostBufferPoolExpectedRelease')
  for step in range(10):
    h = torch.relu(x @ w)
    grad = x.t() @ (h * h.sigmoid()) / 1024  # 512 x 4096: 8 MB, pooled
    w = w - 1e-3 * grad
    xm.mark_step()  # back to back: this grad is dropped while its step may still run
  for _ in range(10):
    h = torch.relu(x_cpu @ expected_w)
    expected_w = expected_w - 1e-3 * (x_cpu.t() @ (h * h.sigmoid()) / 1024)
  torch.testing.assert_close(w.cpu(), expected_w, rtol=1e-4, atol=1e-4)
  assert counter('ExecuteAwaitedEarlier') > 0, 'the graph is meant to wait for the one before'
  assert counter('HostBufferPoolExpectedRelease') > expected_before
  assert counter('HostBufferPoolReleaseWaitTimedOut') == 0
