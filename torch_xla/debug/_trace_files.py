"""A recorded trace as the files TensorBoard's profile plugin reads from
`<logdir>/plugins/profile/<run>/`: `<host>.xplane.pb` (an XSpace protocol buffer, what
xprof and TensorBoard's profile plugin open) and `<host>.trace.json.gz` (Chrome trace
JSON, which Perfetto and chrome://tracing open as well).

The XSpace is encoded here by hand (the fields below are those of xplane.proto, package
tensorflow.profiler): the profiler needs no protobuf library.
"""
import dataclasses
import gzip
import json
import os
import time
from typing import Dict, List, Optional

# The plane of the host's events, as XLA's profilers name it.
HOST_PLANE = '/host:CPU'
# Device timelines get line ids of their own, above any thread id.
_TRACK_LINE_BASE = 1 << 40


@dataclasses.dataclass
class Span:
  """One recorded span: times in wall-clock nanoseconds since the epoch."""
  name: str
  start_ns: int
  end_ns: int
  thread: int
  track: str  # non-empty: a device's timeline ("xla:0") rather than the thread's
  args: Dict[str, str]


@dataclasses.dataclass
class Trace:
  spans: List[Span]
  thread_names: Dict[int, str]
  dropped: int = 0


def run_name():
  """A run folder's name as TensorBoard's profile plugin names them: the time."""
  return time.strftime('%Y_%m_%d_%H_%M_%S')


def write_profile(trace: Trace, logdir: str, run: str, host: str) -> List[str]:
  """Writes the trace under logdir/plugins/profile/<run>/ and returns the files' paths."""
  folder = os.path.join(logdir, 'plugins', 'profile', run)
  os.makedirs(folder, exist_ok=True)
  xplane = os.path.join(folder, f'{host}.xplane.pb')
  with open(xplane, 'wb') as f:
    f.write(xspace_bytes(trace, host))
  chrome = os.path.join(folder, f'{host}.trace.json.gz')
  with gzip.open(chrome, 'wt', encoding='utf-8') as f:
    json.dump(chrome_trace(trace, host), f)
  return [xplane, chrome]


def _arg_value(text: str):
  """An argument as a number where it reads as an integer (sizes, counts, steps)."""
  try:
    return int(text)
  except ValueError:
    return text


def _tracks(trace: Trace) -> List[str]:
  return sorted({s.track for s in trace.spans if s.track})


# ---- Chrome trace JSON (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU)


def chrome_trace(trace: Trace, host: str) -> dict:
  """The trace as a Chrome trace: process 1 holds the host's threads, process 2 the
  devices' timelines; complete events ("X") in microseconds from the first span's start
  (metadata.start_unix_ns: a float of epoch microseconds would round to 0.25 µs)."""
  host_pid, device_pid = 1, 2
  base_ns = min((s.start_ns for s in trace.spans), default=0)
  events = [
      {'ph': 'M', 'name': 'process_name', 'pid': host_pid, 'args': {'name': f'{HOST_PLANE} ({host})'}},
      {'ph': 'M', 'name': 'process_sort_index', 'pid': host_pid, 'args': {'sort_index': 0}},
  ]
  track_tids = {track: i for i, track in enumerate(_tracks(trace))}
  if track_tids:
    events.append({'ph': 'M', 'name': 'process_name', 'pid': device_pid, 'args': {'name': 'XLA devices'}})
    events.append({'ph': 'M', 'name': 'process_sort_index', 'pid': device_pid, 'args': {'sort_index': 1}})
  for track, tid in track_tids.items():
    events.append({'ph': 'M', 'name': 'thread_name', 'pid': device_pid, 'tid': tid, 'args': {'name': track}})
  for thread in sorted({s.thread for s in trace.spans if not s.track}):
    name = trace.thread_names.get(thread, f'thread {thread}')
    events.append({'ph': 'M', 'name': 'thread_name', 'pid': host_pid, 'tid': thread, 'args': {'name': name}})
  for s in sorted(trace.spans, key=lambda s: (s.start_ns, -s.end_ns)):
    event = {
        'ph': 'X',
        'name': s.name,
        'pid': device_pid if s.track else host_pid,
        'tid': track_tids[s.track] if s.track else s.thread,
        'ts': (s.start_ns - base_ns) / 1e3,
        'dur': max(s.end_ns - s.start_ns, 0) / 1e3,
    }
    if s.args:
      event['args'] = {k: _arg_value(v) for k, v in s.args.items()}
    events.append(event)
  metadata = {'host': host, 'start_unix_ns': base_ns}
  if trace.dropped:
    metadata['dropped_events'] = trace.dropped
  return {'displayTimeUnit': 'ns', 'traceEvents': events, 'metadata': metadata}


# ---- XSpace (xplane.proto)


def _varint(n: int) -> bytes:
  n &= (1 << 64) - 1  # int64 fields: negatives as their 64-bit two's complement
  out = bytearray()
  while True:
    byte = n & 0x7F
    n >>= 7
    if n:
      out.append(byte | 0x80)
    else:
      out.append(byte)
      return bytes(out)


def _int_field(number: int, value: int) -> bytes:
  return _varint(number << 3) + _varint(value) if value else b''


def _bytes_field(number: int, value: bytes) -> bytes:
  return _varint(number << 3 | 2) + _varint(len(value)) + value


def _str_field(number: int, value: str) -> bytes:
  return _bytes_field(number, value.encode('utf-8')) if value else b''


def _stat(metadata_id: int, value: str) -> bytes:
  """An XStat: int64_value (field 4) for integers, str_value (5) otherwise."""
  v = _arg_value(value)
  body = _int_field(1, metadata_id)
  if isinstance(v, int) and -(1 << 63) <= v < (1 << 63):
    body += _varint(4 << 3) + _varint(v)
  else:
    body += _bytes_field(5, str(value).encode('utf-8'))
  return body


class _Metadata:
  """Ids of the plane's event and stat names (ids start at 1)."""

  def __init__(self):
    self.events: Dict[str, int] = {}
    self.stats: Dict[str, int] = {}

  @staticmethod
  def _id(table, name):
    return table.setdefault(name, len(table) + 1)

  def event(self, name):
    return self._id(self.events, name)

  def stat(self, name):
    return self._id(self.stats, name)


def _line(line_id: int, name: str, spans: List[Span], metadata: _Metadata) -> bytes:
  """An XLine: its events' offsets (ps) from the line's timestamp (ns), the earliest start."""
  spans = sorted(spans, key=lambda s: (s.start_ns, -s.end_ns))
  origin = spans[0].start_ns
  end = max(s.end_ns for s in spans)
  body = _int_field(1, line_id) + _str_field(2, name) + _int_field(3, origin)
  for s in spans:
    event = _int_field(1, metadata.event(s.name))
    event += _int_field(2, (s.start_ns - origin) * 1000)
    event += _int_field(3, max(s.end_ns - s.start_ns, 0) * 1000)
    for key, value in s.args.items():
      event += _bytes_field(4, _stat(metadata.stat(key), value))
    body += _bytes_field(4, event)
  body += _int_field(9, (end - origin) * 1000)
  body += _int_field(10, line_id) + _str_field(11, name)
  return body


def _host_plane(trace: Trace, host: str, metadata: _Metadata) -> bytes:
  by_line: Dict[tuple, List[Span]] = {}
  for s in trace.spans:
    by_line.setdefault((s.track, s.thread if not s.track else 0), []).append(s)
  track_ids = {track: _TRACK_LINE_BASE + i for i, track in enumerate(_tracks(trace))}
  body = _int_field(1, 1) + _str_field(2, HOST_PLANE)
  for (track, thread), spans in sorted(by_line.items(), key=lambda kv: (kv[0][0] != '', kv[0])):
    if track:
      line_id, name = track_ids[track], track
    else:
      line_id, name = thread, trace.thread_names.get(thread, f'thread {thread}')
    body += _bytes_field(3, _line(line_id, name, spans, metadata))
  for name, event_id in metadata.events.items():
    entry = _int_field(1, event_id) + _bytes_field(2, _int_field(1, event_id) + _str_field(2, name))
    body += _bytes_field(4, entry)
  for name, stat_id in metadata.stats.items():
    entry = _int_field(1, stat_id) + _bytes_field(2, _int_field(1, stat_id) + _str_field(2, name))
    body += _bytes_field(5, entry)
  return body


def xspace_bytes(trace: Trace, host: Optional[str]) -> bytes:
  """The trace as a serialized XSpace: one host plane, a line per thread and one per
  device timeline, the events' arguments as stats."""
  metadata = _Metadata()
  plane = _host_plane(trace, host or '', metadata)
  space = _bytes_field(1, plane)
  if trace.dropped:
    space += _str_field(3, f'{trace.dropped} trace events were dropped beyond the bound on a trace')
  if host:
    space += _str_field(4, host)
  return space
