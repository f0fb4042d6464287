"""Ending the runtime's daemon threads before the interpreter finalizes.

The heartbeat of a run of several processes, the loaders' transfer threads and the
thread of asynchronous step closures are daemon threads whose work (a store call, a
tensor op) releases the GIL inside C++. Once the interpreter begins to finalize, a
daemon thread that comes back from such a call is ended by `pthread_exit`, whose
unwind the C++ frames it returns through cannot pass, and the process aborts
("terminate called without an active exception"). Each owner therefore tells its
threads to stop from an `atexit` handler, which runs before that point, and joins them
here.
"""

import threading
import time


def join_before_exit(threads, seconds):
  """Waits up to `seconds` in all for `threads` (told to stop already) to end; the
  calling thread, if among them, is skipped."""
  deadline = time.monotonic() + seconds
  for thread in threads:
    if thread is not threading.current_thread():
      thread.join(max(0.0, deadline - time.monotonic()))
