"""A script that ends while the runtime's background threads are busy exits cleanly.

The loader's transfer threads and the asynchronous step closures' thread are daemon
threads whose tensor ops release the GIL; ended while in one, they aborted the process
(torch_xla/utils/_daemon_threads.py). Each script runs in a process of its own, to its
end."""

import subprocess
import sys
import textwrap


def run_to_exit(code, tmp_path):
  script = tmp_path / 'script.py'
  script.write_text(textwrap.dedent(code))
  done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180,
                        cwd=tmp_path)
  assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-3000:])
  return done.stdout


def test_a_script_that_breaks_out_of_its_loader_exits_cleanly(tmp_path):
  # The transfer thread is busy with the batches after the second when the script ends
  # (before the fix, 10 of 12 such runs aborted): two runs.
  for _ in range(2):
    out = run_to_exit('''
        import torch
        import torch_xla.core.xla_model as xm
        import torch_xla.distributed.parallel_loader as pl

        device = xm.xla_device()
        data = [(torch.randn(256, 1024), torch.randn(256)) for _ in range(64)]
        for i, (x, y) in enumerate(pl.MpDeviceLoader(data, device)):
          if i == 1:
            break
        print('ended', i, tuple(x.shape))  # no sync: the transfers go on meanwhile
        ''', tmp_path)
    assert out.strip() == 'ended 1 (256, 1024)', out


def test_asynchronous_step_closures_queued_before_the_end_run_and_the_script_exits(tmp_path):
  out = run_to_exit('''
      import torch
      import torch_xla.core.xla_model as xm

      device = xm.xla_device()
      t = torch.randn(512, 512, device=device)

      def work(x, name):
        y = x.cpu()
        for _ in range(40):
          y = torch.tanh(y @ y)
        print(name, tuple(y.shape), flush=True)

      xm.add_step_closure(work, (t, 'first'), run_async=True)
      xm.add_step_closure(work, (t * 2, 'second'), run_async=True)
      xm.mark_step()
      print('main ends', flush=True)
      ''', tmp_path)
  lines = out.splitlines()
  assert 'main ends' in lines, out
  # Both closures ran, in order, whatever the main thread printed meanwhile.
  assert [line for line in lines if line != 'main ends'] == ['first (512, 512)', 'second (512, 512)'], out
