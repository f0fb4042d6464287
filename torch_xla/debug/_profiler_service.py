"""The profiler server and its client: `trace('host:port', logdir, duration_ms)` asks the
server of that port (started by start_server in the profiled process, this one or
another) to record for duration_ms and write the profile into logdir, as the files
<logdir>/plugins/profile/<run>/<server's host name><suffix>.{xplane.pb,trace.json.gz}.

The request and the reply are one line of JSON each over a TCP connection:
  request  {"logdir": str, "run": str, "suffix": str, "duration_ms": int, "delay_ms": int}
  reply    {"files": [paths written]} or {"error": "what went wrong"}
"""
import json
import socket
import sys
import threading
import time

from torch_xla.debug import _trace_files, _trace_session

# A request is a few hundred bytes; anything longer is not one.
_MAX_LINE = 64 * 1024
# How long the server waits for a connected client's request.
_REQUEST_TIMEOUT_S = 10


def _read_line(conn):
  data = bytearray()
  while not data.endswith(b'\n'):
    chunk = conn.recv(4096)
    if not chunk:
      break
    data += chunk
    if len(data) > _MAX_LINE:
      raise ValueError('request too long')
  return bytes(data)


def _send(conn, message):
  conn.sendall(json.dumps(message).encode() + b'\n')


def _profile(request):
  """Records for the request's duration and writes the profile; the files' paths."""
  logdir, run, suffix = request['logdir'], request['run'], request.get('suffix', '')
  duration_ms, delay_ms = int(request['duration_ms']), int(request.get('delay_ms', 0))
  if not isinstance(logdir, str) or not logdir:
    raise ValueError('logdir must be a non-empty path')
  if duration_ms <= 0:
    raise ValueError(f'duration_ms must be positive, got {duration_ms}')
  if not isinstance(run, str) or not run or '/' in run or run in ('.', '..'):
    raise ValueError(f'run must be a folder name, got {run!r}')
  if not isinstance(suffix, str) or '/' in suffix:
    raise ValueError(f'suffix must be part of a file name, got {suffix!r}')
  if delay_ms > 0:
    time.sleep(delay_ms / 1e3)
  recording = _trace_session.Recording()
  try:
    time.sleep(duration_ms / 1e3)
  finally:
    trace = recording.stop()
  return _trace_files.write_profile(trace, logdir, run, _trace_session.host_name() + suffix)


def _serve_connection(conn):
  with conn:
    try:
      conn.settimeout(_REQUEST_TIMEOUT_S)
      request = json.loads(_read_line(conn))
      conn.settimeout(None)
      reply = {'files': _profile(request)}
    except Exception as e:  # every failure goes back to the client, the server stays
      reply = {'error': f'{type(e).__name__}: {e}'}
    try:
      _send(conn, reply)
    except OSError:
      pass  # the client went away


class ProfilerServer:
  """The profiler server of this process on `port`, serving `trace` requests on a
  daemon thread until shutdown() or until the object is garbage collected; both wait
  for the profiles being taken to be written, as torch_xla's server does."""

  def __init__(self, port: int):
    self._socket = None
    if not isinstance(port, int) or not 0 < port < 65536:
      raise RuntimeError(f'start_server: invalid port {port!r}; expected 1..65535')
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
      # Every interface, as torch_xla's server: a client on another host may ask.
      sock.bind(('', port))
      sock.listen()
    except OSError as e:
      sock.close()
      raise RuntimeError(f'start_server: cannot listen on port {port}: {e.strerror or e}') from None
    self.port = port
    self._socket = sock
    self._requests = []  # the threads serving requests
    # The thread holds the socket and the list, not the server: dropping the server
    # shuts it down.
    threading.Thread(
        target=ProfilerServer._accept, args=(sock, self._requests), name=f'ProfilerServer:{port}',
        daemon=True).start()

  @staticmethod
  def _accept(sock, requests):
    while True:
      try:
        conn, _ = sock.accept()
      except OSError:
        return  # closed
      thread = threading.Thread(target=_serve_connection, args=(conn,), name='ProfilerRequest', daemon=True)
      thread.start()
      requests[:] = [t for t in requests if t.is_alive()] + [thread]

  def shutdown(self):
    """Stops accepting requests and waits for those being served to be written."""
    sock, self._socket = self._socket, None
    if sock is None:
      return
    try:
      sock.shutdown(socket.SHUT_RDWR)
    except OSError:
      pass
    sock.close()
    if sys.is_finalizing():
      return  # the interpreter is exiting: the daemon threads stop with it
    for thread in list(self._requests):
      if thread is not threading.current_thread():
        thread.join()

  def __del__(self):
    self.shutdown()

  def __repr__(self):
    return f'ProfilerServer(port={self.port})'


def _parse_address(address):
  host, sep, port = address.strip().rpartition(':')
  if not sep or not host or not port.isdigit():
    raise ValueError(f"trace: service_addr entries are 'host:port', got {address!r}")
  return host.strip('[]'), int(port)


def _request_profile(host, port, request, attempts, deadline, interval_s):
  """Sends the request to one server, retrying connections that fail; its reply."""
  wait_s = (request['delay_ms'] + request['duration_ms']) / 1e3
  last_error = None
  for attempt in range(max(1, attempts)):
    if attempt and time.monotonic() + interval_s > deadline:
      break
    if attempt:
      time.sleep(interval_s)
    try:
      with socket.create_connection((host, port), timeout=max(1.0, deadline - time.monotonic())) as conn:
        # The server replies once it has recorded and written the profile.
        conn.settimeout(wait_s + max(1.0, deadline - time.monotonic()))
        _send(conn, request)
        line = _read_line(conn)
      if not line:
        raise ConnectionError('the server closed the connection without a reply')
      return json.loads(line)
    except (OSError, ValueError) as e:
      last_error = e
  return {'error': f'no reply after {max(1, attempts)} attempt(s): {last_error}'}


def request_trace(service_addr, logdir, duration_ms, delay_ms, num_tracing_attempts, timeout_s, interval_s):
  """Profiles every server of the comma-separated service_addr at once, into one run
  folder of logdir; raises RuntimeError naming the servers that did not profile."""
  addresses = [_parse_address(a) for a in service_addr.split(',') if a.strip()]
  if not addresses:
    raise ValueError(f'trace: no address in service_addr {service_addr!r}')
  if duration_ms <= 0:
    raise ValueError(f'trace: duration_ms must be positive, got {duration_ms}')
  run = _trace_files.run_name()
  deadline = time.monotonic() + timeout_s
  replies = [None] * len(addresses)

  def ask(i, host, port):
    # Servers of one host write apart: their files are named after the port too.
    suffix = f'_{port}' if len(addresses) > 1 else ''
    request = dict(logdir=logdir, run=run, suffix=suffix, duration_ms=int(duration_ms), delay_ms=int(delay_ms))
    replies[i] = _request_profile(host, port, request, num_tracing_attempts, deadline, interval_s)

  threads = [threading.Thread(target=ask, args=(i, h, p), daemon=True) for i, (h, p) in enumerate(addresses)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  failures = [f'{h}:{p}: {r["error"]}' for (h, p), r in zip(addresses, replies) if 'error' in r]
  if failures:
    raise RuntimeError('trace: no profile from ' + '; '.join(failures))
  return [path for r in replies for path in r['files']]
