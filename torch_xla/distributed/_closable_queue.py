"""A bounded FIFO that producers can finish and anyone can abort.

queue.Queue cannot wake a thread blocked in put()/get() when the other side
goes away; this one can, which is what lets loader threads shut down.
"""

import collections
import threading

END = object()  # returned by get() once the queue is closed and drained


class ClosableQueue:

  def __init__(self, maxsize):
    self._items = collections.deque()
    self._maxsize = max(1, int(maxsize))
    self._cv = threading.Condition()
    self._closed = False

  def put(self, item):
    """Blocks while full. Returns False (item dropped) once the queue is closed."""
    with self._cv:
      while len(self._items) >= self._maxsize and not self._closed:
        self._cv.wait()
      if self._closed:
        return False
      self._items.append(item)
      self._cv.notify_all()
      return True

  def get(self):
    """Blocks while empty and open; returns END when closed and drained."""
    with self._cv:
      while not self._items and not self._closed:
        self._cv.wait()
      if not self._items:
        return END
      item = self._items.popleft()
      self._cv.notify_all()
      return item

  def close(self, drop_items=False):
    """No more puts; queued items stay readable unless drop_items."""
    with self._cv:
      self._closed = True
      if drop_items:
        self._items.clear()
      self._cv.notify_all()
