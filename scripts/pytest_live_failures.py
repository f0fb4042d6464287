"""A pytest plugin for runs that may be cut off (scripts/device_check.sh): each failing
test's id and the end of its report are appended to $LIVE_FAILURES as soon as it fails,
so that a run stopped by its time limit still says what failed and why.

  LIVE_FAILURES=failures.txt python -m pytest -p pytest_live_failures ...   (scripts/ on sys.path)
"""
import os


_controller = True


def pytest_configure(config):
  global _controller
  _controller = not hasattr(config, 'workerinput')  # an xdist worker's reports reach the controller


def pytest_runtest_logreport(report):
  path = os.environ.get('LIVE_FAILURES')
  if not path or not report.failed or not _controller:
    return
  lines = str(report.longrepr).splitlines()
  errors = [line for line in lines if line.startswith('E ')][:8]
  with open(path, 'a') as f:
    f.write(f'FAILED {report.nodeid} ({report.when})\n')
    for line in errors or lines[-8:]:
      f.write('    ' + line[:400] + '\n')
