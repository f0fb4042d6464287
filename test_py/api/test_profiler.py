"""torch_xla.debug.profiler: the profile of a training step holds the user's
annotations and the runtime's spans (the graph's compilation and execution, the
transfers), consistently nested and timed, in files TensorBoard and Perfetto open;
from start_trace/stop_trace, and from a profiler server asked by trace() in this
process and in another one."""
import glob
import gzip
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest
import torch

import torch_xla
import torch_xla.debug.profiler as xp
import torch_xla.runtime as xr

DEV = torch_xla.device()


@pytest.fixture(autouse=True)
def compiles_here():
  """The persistent cache off, so that a new graph is compiled (not loaded) here (the
  suite's own process runs without it: conftest.py)."""
  xr.initialize_cache(None)
  yield


def _free_port():
  with socket.socket() as s:
    s.bind(('', 0))
    return s.getsockname()[1]


def _profile_files(logdir):
  xplanes = glob.glob(os.path.join(logdir, 'plugins', 'profile', '*', '*.xplane.pb'))
  traces = glob.glob(os.path.join(logdir, 'plugins', 'profile', '*', '*.trace.json.gz'))
  assert len(xplanes) == 1 and len(traces) == 1, (xplanes, traces)
  return xplanes[0], traces[0]


def _spans(trace_json):
  with gzip.open(trace_json, 'rt') as f:
    data = json.load(f)
  return [e for e in data['traceEvents'] if e['ph'] == 'X'], data


def _named(spans, name):
  return [s for s in spans if s['name'] == name]


def _inside(inner, outer):
  """inner lies within outer on the same timeline (1 µs of rounding allowed)."""
  return ((inner['pid'], inner['tid']) == (outer['pid'], outer['tid']) and inner['ts'] >= outer['ts'] - 1e-3 and
          inner['ts'] + inner['dur'] <= outer['ts'] + outer['dur'] + 1e-3)


def _training_step(model, opt, x, step):
  with xp.StepTrace('train_step', step_num=step):
    with xp.Trace('forward'):
      loss = model(x).square().mean()
    with xp.Trace('backward'):
      loss.backward()
    opt.step()
    opt.zero_grad()


def test_profile_of_a_training_step_holds_annotations_and_graph_spans(tmp_path):
  torch.manual_seed(0)
  model = torch.nn.Sequential(torch.nn.Linear(11, 9), torch.nn.ReLU(), torch.nn.Linear(9, 3)).to(DEV)
  opt = torch.optim.SGD(model.parameters(), lr=0.1)
  x = torch.randn(6, 11).to(DEV)
  torch_xla.sync(wait=True)  # nothing of earlier tests left pending in the trace
  xp.start_trace(tmp_path)
  _training_step(model, opt, x, step=0)
  fetched = model[0].weight.cpu()
  xp.stop_trace()
  assert fetched.shape == (9, 11)

  xplane, trace_json = _profile_files(str(tmp_path))
  spans, data = _spans(trace_json)
  assert all(s['dur'] >= 0 for s in spans)
  (step,) = _named(spans, 'train_step')
  assert step['args']['step_num'] == 0
  (forward,) = _named(spans, 'forward')
  (backward,) = _named(spans, 'backward')
  assert _inside(forward, step) and _inside(backward, step)
  assert forward['ts'] + forward['dur'] <= backward['ts'] + 1e-3

  # The step's graph ran at the end of the StepTrace: synced, lowered, compiled and
  # launched inside it, on the same thread.
  # A sync whose graph could not be built records no arguments; after the device-loop
  # tests one such span appears in the step (under investigation), so only the built
  # graphs are checked here.
  syncs = [s for s in _named(spans, 'XLAGraphExecutor::SyncTensorsGraph') if _inside(s, step) and 'args' in s]
  assert syncs and all(int(s['args']['ops']) > 0 for s in syncs)
  compiles = _named(spans, 'PjRtComputationClient::Compile')
  launches = _named(spans, 'PjRtComputationClient::ExecuteComputation')
  assert compiles and launches
  for span in compiles + launches + _named(spans, 'XLAGraphExecutor::Lower'):
    assert any(_inside(span, s) for s in syncs), span
  for c in compiles:
    assert any(_inside(c, e) for e in _named(spans, 'XLAGraphExecutor::Compile'))
  # Each launch ran on the device's timeline: from its launch to its completion.
  executions = _named(spans, 'Execution')
  assert len(executions) >= len(launches)
  device_tracks = {m['tid']: m['args']['name'] for m in data['traceEvents'] if m['name'] == 'thread_name'}
  assert {device_tracks[e['tid']] for e in executions} == {'xla:0'}
  first_launch = min(launches, key=lambda s: s['ts'])
  assert min(e['ts'] for e in executions) >= first_launch['ts'] - 1e-3
  # The weights came back to the host after the step.
  (fetch,) = [t for t in _named(spans, 'PjRtComputationClient::TransferFromDevice') if t['ts'] > step['ts']]
  assert fetch['args']['bytes'] == 9 * 11 * 4
  # Every host thread with spans has a name.
  names = {(m['pid'], m['tid']) for m in data['traceEvents'] if m['name'] == 'thread_name'}
  assert {(s['pid'], s['tid']) for s in spans} <= names


def test_xplane_is_an_xspace_with_the_same_spans(tmp_path):
  descriptor_pb2 = pytest.importorskip('google.protobuf.descriptor_pb2')
  from google.protobuf import descriptor_pool, message_factory

  model = torch.nn.Linear(5, 13).to(DEV)
  x = torch.randn(2, 5).to(DEV)
  xp.start_trace(tmp_path)
  with xp.Trace('outer', tag='a'):
    model(x).sum().item()
  xp.stop_trace()
  xplane, trace_json = _profile_files(str(tmp_path))

  # xplane.proto's messages (package tensorflow.profiler), built here to read the file.
  f = descriptor_pb2.FileDescriptorProto(name='xplane_test.proto', package='tensorflow.profiler', syntax='proto3')
  T = descriptor_pb2.FieldDescriptorProto

  def message(name, fields, nested=()):
    m = f.message_type.add(name=name)
    for number, field_name, kind, repeated, type_name in fields:
      fd = m.field.add(name=field_name, number=number, type=kind,
                       label=T.LABEL_REPEATED if repeated else T.LABEL_OPTIONAL)
      if type_name:
        fd.type_name = type_name
    for entry_name, value_type in nested:
      e = m.nested_type.add(name=entry_name)
      e.options.map_entry = True
      e.field.add(name='key', number=1, type=T.TYPE_INT64, label=T.LABEL_OPTIONAL)
      e.field.add(name='value', number=2, type=T.TYPE_MESSAGE, label=T.LABEL_OPTIONAL, type_name=value_type)

  P = '.tensorflow.profiler.'
  message('XSpace', [(1, 'planes', T.TYPE_MESSAGE, True, P + 'XPlane'), (2, 'errors', T.TYPE_STRING, True, None),
                     (3, 'warnings', T.TYPE_STRING, True, None), (4, 'hostnames', T.TYPE_STRING, True, None)])
  message('XPlane', [(1, 'id', T.TYPE_INT64, False, None), (2, 'name', T.TYPE_STRING, False, None),
                     (3, 'lines', T.TYPE_MESSAGE, True, P + 'XLine'),
                     (4, 'event_metadata', T.TYPE_MESSAGE, True, P + 'XPlane.EventMetadataEntry'),
                     (5, 'stat_metadata', T.TYPE_MESSAGE, True, P + 'XPlane.StatMetadataEntry'),
                     (6, 'stats', T.TYPE_MESSAGE, True, P + 'XStat')],
          nested=[('EventMetadataEntry', P + 'XEventMetadata'), ('StatMetadataEntry', P + 'XStatMetadata')])
  message('XLine', [(1, 'id', T.TYPE_INT64, False, None), (2, 'name', T.TYPE_STRING, False, None),
                    (3, 'timestamp_ns', T.TYPE_INT64, False, None), (4, 'events', T.TYPE_MESSAGE, True, P + 'XEvent'),
                    (9, 'duration_ps', T.TYPE_INT64, False, None), (10, 'display_id', T.TYPE_INT64, False, None),
                    (11, 'display_name', T.TYPE_STRING, False, None)])
  message('XEvent', [(1, 'metadata_id', T.TYPE_INT64, False, None), (2, 'offset_ps', T.TYPE_INT64, False, None),
                     (3, 'duration_ps', T.TYPE_INT64, False, None), (4, 'stats', T.TYPE_MESSAGE, True, P + 'XStat')])
  message('XStat', [(1, 'metadata_id', T.TYPE_INT64, False, None), (2, 'double_value', T.TYPE_DOUBLE, False, None),
                    (3, 'uint64_value', T.TYPE_UINT64, False, None), (4, 'int64_value', T.TYPE_INT64, False, None),
                    (5, 'str_value', T.TYPE_STRING, False, None), (6, 'bytes_value', T.TYPE_BYTES, False, None)])
  message('XEventMetadata', [(1, 'id', T.TYPE_INT64, False, None), (2, 'name', T.TYPE_STRING, False, None)])
  message('XStatMetadata', [(1, 'id', T.TYPE_INT64, False, None), (2, 'name', T.TYPE_STRING, False, None)])
  pool = descriptor_pool.DescriptorPool()
  pool.Add(f)
  XSpace = message_factory.GetMessageClass(pool.FindMessageTypeByName('tensorflow.profiler.XSpace'))

  space = XSpace()
  with open(xplane, 'rb') as fp:
    space.ParseFromString(fp.read())
  (plane,) = space.planes
  assert plane.name == '/host:CPU'
  assert list(space.hostnames) == [os.uname().nodename]
  names = {k: v.name for k, v in plane.event_metadata.items()}
  stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
  events = [(line, e) for line in plane.lines for e in line.events]
  # The same spans as the JSON, at the same times (ps from the line's start in ns).
  json_spans, data = _spans(trace_json)
  assert sorted(names[e.metadata_id] for _, e in events) == sorted(s['name'] for s in json_spans)
  (outer,) = [(line, e) for line, e in events if names[e.metadata_id] == 'outer']
  line, event = outer
  (json_outer,) = _named(json_spans, 'outer')
  start_ns = line.timestamp_ns + event.offset_ps // 1000
  assert abs((start_ns - data['metadata']['start_unix_ns']) / 1e3 - json_outer['ts']) < 1e-3
  assert abs(event.duration_ps / 1e6 - json_outer['dur']) < 1e-3
  assert {stat_names[s.metadata_id]: s.str_value for s in event.stats} == {'tag': 'a'}
  assert line.name == threading.current_thread().name
  assert line.id == threading.get_native_id()
  assert {'PjRtComputationClient::Compile', 'PjRtComputationClient::TransferFromDevice'} <= set(names.values())
  assert 'xla:0' in {l.name for l in plane.lines}


def test_annotations_outside_a_trace_are_not_recorded(tmp_path):
  with xp.Trace('before'):
    pass

  @xp.trace_me('decorated')
  def work(a):
    return a + 1

  xp.start_trace(tmp_path)
  assert work(1) == 2
  xp.stop_trace()
  with xp.Trace('after'):
    pass
  spans, _ = _spans(_profile_files(str(tmp_path))[1])
  assert [s['name'] for s in spans] == ['decorated']


def test_one_trace_at_a_time(tmp_path):
  with pytest.raises(RuntimeError, match='No profile started'):
    xp.stop_trace()
  xp.start_trace(tmp_path)
  try:
    with pytest.raises(RuntimeError, match='Only one profile may be run at a time'):
      xp.start_trace(tmp_path)
  finally:
    xp.stop_trace()
  xp.start_trace(tmp_path)  # a second trace of the same folder: a run folder of its own
  xp.stop_trace()
  assert len(glob.glob(os.path.join(tmp_path, 'plugins', 'profile', '*', '*.xplane.pb'))) == 2


def test_server_in_this_process(tmp_path):
  port = _free_port()
  server = xp.start_server(port)
  with pytest.raises(RuntimeError, match=f'cannot listen on port {port}'):
    xp.start_server(port)
  model = torch.nn.Linear(7, 6).to(DEV)
  x = torch.randn(3, 7).to(DEV)
  tracer = xp.trace_detached(f'localhost:{port}', str(tmp_path), duration_ms=1500)
  time.sleep(0.3)
  for step in range(3):
    with xp.StepTrace('step', step_num=step):
      model(x).sum().backward()
  tracer.join(timeout=30)
  del server
  spans, _ = _spans(_profile_files(str(tmp_path))[1])
  assert [s['args']['step_num'] for s in _named(spans, 'step')] == [0, 1, 2]
  assert _named(spans, 'PjRtComputationClient::ExecuteComputation')


def test_trace_of_an_absent_server_fails(tmp_path):
  port = _free_port()
  with pytest.raises(RuntimeError, match=f'no profile from localhost:{port}'):
    xp.trace(f'localhost:{port}', str(tmp_path), duration_ms=100, num_tracing_attempts=2, interval_s=0.1)
  with pytest.raises(ValueError, match="'host:port'"):
    xp.trace('localhost', str(tmp_path))


TRAINING_PROCESS = textwrap.dedent('''
    import sys, time
    import torch, torch_xla
    import torch_xla.debug.profiler as xp
    server = xp.start_server(int(sys.argv[1]))
    model = torch.nn.Linear(4, 3).to('xla')
    x = torch.randn(2, 4).to('xla')
    print('serving', flush=True)
    end = time.time() + 20
    step = 0
    while time.time() < end and sys.stdin.readline().strip() != 'stop':
      with xp.StepTrace('remote_step', step_num=step):
        with xp.Trace('remote_forward'):
          loss = model(x).sum()
        loss.backward()
      step += 1
      print('step', flush=True)
    ''')


def test_server_of_another_process(tmp_path):
  port = _free_port()
  proc = subprocess.Popen([sys.executable, '-c', TRAINING_PROCESS, str(port)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
  try:
    assert proc.stdout.readline().strip() == 'serving'
    tracer = threading.Thread(target=xp.trace, args=(f'localhost:{port}', str(tmp_path)), kwargs=dict(duration_ms=1500))
    tracer.start()
    time.sleep(0.3)
    while tracer.is_alive():  # one step at a time, while the trace runs
      proc.stdin.write('go\n')
      proc.stdin.flush()
      assert proc.stdout.readline().strip() == 'step'
      time.sleep(0.05)
    tracer.join()
    proc.stdin.write('stop\n')
    proc.stdin.flush()
    assert proc.wait(timeout=30) == 0
  finally:
    if proc.poll() is None:
      proc.kill()
  spans, data = _spans(_profile_files(str(tmp_path))[1])
  steps = _named(spans, 'remote_step')
  assert steps
  assert all(any(_inside(f, s) for s in steps) for f in _named(spans, 'remote_forward'))
  assert _named(spans, 'PjRtComputationClient::ExecuteComputation')
  assert {s['pid'] for s in spans} <= {1, 2}


def test_a_sync_inside_an_annotation_raises_and_step_trace_syncs_at_its_end():
  t = torch.ones(2, device=DEV) + 1
  # torch_xla's rule: an annotation is a scope of the traced ops, which a sync would end
  # midway; its count restarts after each sync.
  torch_xla.sync()
  with pytest.raises(RuntimeError, match=r'Expecting scope to be empty but it is outer\.1'):
    with xp.Trace('outer'):
      torch_xla.sync()

  @xp.trace_me('decorated')
  def step():
    torch_xla.sync()

  with pytest.raises(RuntimeError, match=r'Expecting scope to be empty but it is decorated\.2'):
    step()
  torch_xla.sync()  # no annotation open any more
  with xp.StepTrace('train', step_num=0):
    with xp.Trace('forward'):
      u = t * 3
  assert torch.equal(u.cpu(), torch.full((2,), 6.0))
  torch_xla.sync(reset_scope=False)
