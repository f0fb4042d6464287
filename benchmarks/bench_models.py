"""Training steps of the models users bring (PyTorch's stock modules) on the XLA device
against eager PyTorch on the CPU: one table, each row measured in the same process as
its eager baseline (alternating rounds, see common.compare_training).

Rows:
  mnist        the guides' MNIST network (examples/mnist_model.py), batch 128
  encoder      nn.TransformerEncoder(TransformerEncoderLayer(256, 4, 1024, dropout=0,
               batch_first=True), 2) + Linear(256, 1000), batch 16 x sequence 128
  mha          nn.MultiheadAttention(256, 4, batch_first=True) self-attention alone,
               batch 16 x sequence 128, mean squared error against a fixed target
  lstm         Embedding(1000, 256) + nn.LSTM(256, 256, 2 layers) + Linear(256, 1000),
               batch 16 x sequence 32 (a word language model)
  resnet18     ResNet-18 (BasicBlock, layers 2-2-2-2, 64-512 channels, its stem of a
               7x7 stride-2 convolution and a max-pool), 64x64 RGB, 10 classes, batch 16
  gpt2         a GPT-2-sized decoder (12 pre-norm causal layers of width 768, 12 heads,
               GELU MLP of 3072, vocabulary 50257, learnt positions), batch 8 x sequence
               512; on a GPU only (by default)

Every row trains with SGD (momentum 0.9) and cross-entropy (mse for mha). Columns: ms
of an eager step, of an XLA step waiting for its result and per step back to back, the
ratios, the first XLA step (compile included; the persistent compile cache is turned
off for it), graphs executed per step, ops through the CPU fallback, and peak resident
memory of a process that runs only eager steps and of one that runs only XLA steps
(each its own process, MB, and the ratio), with the resident pages of the PJRT plugin's
library in the XLA process and the ratio without them.

On a GPU (PJRT_DEVICE=CUDA) each row runs in one process against PyTorch's own CUDA
on the same GPU: eager, and torch.compile (inductor) of the model; columns are ms per
step waiting for the result (the XLA step back to back too), the ratios against eager
and inductor, the first step (compile included) of each, and peak GPU memory: PyTorch's
allocator's peak for eager and inductor, the PJRT plugin's peak for XLA (both count
what the step allocated, not the allocators' reserves). Float32 matrix products run in
full float32 in all three unless --tf32 (TF32 tensor cores in all three).

  python benchmarks/bench_models.py [--rows mnist,encoder,...] [--steps N]
  PJRT_DEVICE=CUDA python benchmarks/bench_models.py [--rows ...] [--tf32]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))

ROWS = ('mnist', 'encoder', 'mha', 'lstm', 'resnet18')
GPU_ROWS = ROWS + ('gpt2',)
DEFAULT_STEPS = {'mnist': 20, 'encoder': 5, 'mha': 10, 'lstm': 10, 'resnet18': 5, 'gpt2': 5}
GPU_STEPS = 20


def _models():
  """name -> (build_model(), make_batch(generator) -> (inputs, target), loss_fn)."""
  import torch
  import torch.nn as nn
  import torch.nn.functional as F

  def mnist():
    from mnist_model import MNIST
    return MNIST(), lambda: (torch.randn(128, 1, 28, 28), torch.randint(0, 10, (128,))), F.nll_loss

  def encoder():

    class Encoder(nn.Module):

      def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(256, 1000)

      def forward(self, x):
        return self.head(self.encoder(x)).flatten(0, 1)

    return Encoder(), lambda: (torch.randn(16, 128, 256), torch.randint(0, 1000, (16 * 128,))), F.cross_entropy

  def mha():

    class SelfAttention(nn.Module):

      def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(256, 4, batch_first=True)

      def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]

    return SelfAttention(), lambda: (torch.randn(16, 128, 256), torch.randn(16, 128, 256)), F.mse_loss

  def lstm():

    class LanguageModel(nn.Module):

      def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(1000, 256)
        self.lstm = nn.LSTM(256, 256, num_layers=2, batch_first=True)
        self.head = nn.Linear(256, 1000)

      def forward(self, tokens):
        return self.head(self.lstm(self.embedding(tokens))[0]).flatten(0, 1)

    return LanguageModel(), lambda: (torch.randint(0, 1000, (16, 32)), torch.randint(0, 1000, (16 * 32,))), F.cross_entropy

  def resnet18():
    return ResNet18(), lambda: (torch.randn(16, 3, 64, 64), torch.randint(0, 10, (16,))), F.cross_entropy

  def gpt2(layers=12, vocab=50257, batch=8, context=512):

    class Decoder(nn.Module):

      def __init__(self, width=768, heads=12):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, activation='gelu', batch_first=True,
                                           norm_first=True)
        self.layers = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.register_buffer('causal', nn.Transformer.generate_square_subsequent_mask(context), persistent=False)

      def forward(self, tokens):
        n = tokens.shape[1]
        x = self.tokens(tokens) + self.positions(torch.arange(n, device=tokens.device))
        x = self.layers(x, mask=self.causal[:n, :n], is_causal=True)
        return self.head(self.norm(x)).flatten(0, 1)

    return Decoder(), lambda: (torch.randint(0, vocab, (batch, context)), torch.randint(0, vocab,
                                                                                   (batch * context,))), F.cross_entropy

  return {'mnist': mnist, 'encoder': encoder, 'mha': mha, 'lstm': lstm, 'resnet18': resnet18, 'gpt2': gpt2}


def _resnet18_class():
  import torch.nn as nn

  class BasicBlock(nn.Module):

    def __init__(self, inplanes, planes, stride):
      super().__init__()
      self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
      self.bn1 = nn.BatchNorm2d(planes)
      self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
      self.bn2 = nn.BatchNorm2d(planes)
      self.relu = nn.ReLU(inplace=True)
      self.downsample = None
      if stride != 1 or inplanes != planes:
        self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
      identity = x if self.downsample is None else self.downsample(x)
      out = self.relu(self.bn1(self.conv1(x)))
      out = self.bn2(self.conv2(out))
      return self.relu(out + identity)

  class ResNet18(nn.Module):

    def __init__(self, classes=10):
      super().__init__()
      self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                                nn.MaxPool2d(3, 2, 1))
      blocks, inplanes = [], 64
      for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        blocks += [BasicBlock(inplanes, planes, stride), BasicBlock(planes, planes, 1)]
        inplanes = planes
      self.blocks = nn.Sequential(*blocks)
      self.fc = nn.Linear(512, classes)

    def forward(self, x):
      x = self.blocks(self.stem(x))
      return self.fc(x.mean((2, 3)))

  return ResNet18


def ResNet18():
  return _resnet18_class()()


def make_step(name, compiled=False):
  """make_step for common.compare_training: the row's model trained on one fixed batch.
  compiled=True: the model runs through torch.compile (inductor)."""
  import torch

  def build(device):
    torch.manual_seed(0)
    model, make_batch, loss_fn = _models()[name]()
    model = model.train().to(device)
    forward = torch.compile(model) if compiled else model
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    inputs, target = make_batch()

    def step():
      opt.zero_grad()
      loss = loss_fn(forward(inputs.to(device)), target.to(device))
      loss.backward()
      opt.step()

    return step

  return build


def _peak_rss_mb():
  import resource
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _plugin_code_mb():
  """Resident MB of the PJRT plugin's library file (its machine code and read-only
  data, under xla_plugins/): clean pages, shared with the page cache, which the kernel
  can drop. The CPU plugin's static initializers touch pages all through its code, so
  this is most of what the XLA process adds before any tensor."""
  kb, current = 0, ''
  with open('/proc/self/smaps') as f:
    for line in f:
      fields = line.split()
      if '-' in fields[0] and not fields[0].endswith(':'):
        current = fields[5] if len(fields) > 5 else ''
      elif fields[0] == 'Rss:' and '/xla_plugins/' in current:
        kb += int(fields[1])
  return kb / 1024


def _child_timing(name, steps):
  import torch
  from common import compare_training
  torch.set_num_threads(os.cpu_count())
  return compare_training(make_step(name), steps)


def _child_memory(name, device, steps):
  import torch
  torch.set_num_threads(os.cpu_count())
  if device == 'cpu':
    step = make_step(name)('cpu')
    for _ in range(steps):
      step()
  else:
    import torch_xla.core.xla_model as xm
    step = make_step(name)(xm.xla_device())
    for _ in range(steps):
      step()
      xm.mark_step()
    xm.wait_device_ops()
    return {'peak_rss_mb': _peak_rss_mb(), 'plugin_code_mb': _plugin_code_mb()}
  return {'peak_rss_mb': _peak_rss_mb()}


def _xla_host_breakdown(step, steps, wait=True):
  """Where an XLA step's time goes, per step, waiting for each step (or back to back,
  where a call that waits for the last step's execution shows in its own time): the Python step
  (autograd and the optimizer, tracing their ops into the graph; of it, the time inside
  the lowered kernels), the sync (the graph's hash and lookup, the launch), the wait for
  the device after it, the device's time from the launch to the completion
  (ExecuteTime), and the transfers of the batch to the device."""
  import time

  import torch_xla.core.xla_model as xm
  import torch_xla.debug.metrics as met
  xm.wait_device_ops()
  met.clear_metrics()
  python_s = sync_s = wait_s = 0.0
  for _ in range(steps):
    start = time.perf_counter()
    step()
    traced = time.perf_counter()
    xm.mark_step()
    launched = time.perf_counter()
    if wait:
      xm.wait_device_ops()
    python_s += traced - start
    sync_s += launched - traced
    wait_s += time.perf_counter() - launched
  xm.wait_device_ops()

  def ms(metric):
    data = met.metric_data(metric)
    return data[1] / 1e6 / steps if data else 0.0

  tracing = met.metric_data('LazyTracing')
  return {'python_step_ms': python_s * 1e3 / steps, 'kernels_ms': ms('LazyTracing'),
          'ops_traced': tracing[0] / steps if tracing else 0, 'sync_ms': sync_s * 1e3 / steps,
          'wait_ms': wait_s * 1e3 / steps, 'device_ms': ms('ExecuteTime'), 'to_device_ms': ms('TransferToDeviceTime')}


def _child_breakdown(name, steps):
  import torch
  import torch_xla.core.xla_model as xm
  torch.set_num_threads(os.cpu_count())
  step = make_step(name)(xm.xla_device())
  for _ in range(3):
    step()
    xm.mark_step()
  return {'model': name, **_xla_host_breakdown(step, steps)}


def _child_gpu(name, steps, tf32):
  """One row on the GPU: PyTorch eager CUDA, inductor and the XLA device, one after the
  other in this process."""
  import statistics
  import time

  import torch
  import torch_xla.core.xla_model as xm
  import torch_xla.debug.metrics as met
  from common import device_step_times
  from torch_xla.backends import set_mat_mul_precision
  torch.backends.cuda.matmul.allow_tf32 = tf32
  torch.backends.cudnn.allow_tf32 = tf32
  set_mat_mul_precision('default' if tf32 else 'highest')

  def measure(step, wait, peak):
    start = time.perf_counter()
    step()
    wait()
    first = time.perf_counter() - start
    for _ in range(2):
      step()
    wait()
    waiting, back_to_back = device_step_times(step, wait, steps)
    return {'ms': statistics.median(waiting) * 1e3, 'b2b_ms': back_to_back * 1e3, 'first_s': first,
            'peak_mb': peak() / 2**20}

  row = {'model': name}
  for label, compiled in (('eager', False), ('inductor', True)):
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.empty_cache()
    result = measure(make_step(name, compiled)('cuda'), torch.cuda.synchronize, torch.cuda.max_memory_allocated)
    row.update({label + '_' + k: v for k, v in result.items()})
    torch._dynamo.reset()
    torch.cuda.empty_cache()
  device = xm.xla_device()
  xla_step = make_step(name)(device)

  def run_xla():
    xla_step()
    xm.mark_step()

  executions = met.metric_data('ExecuteTime')
  before = executions[0] if executions else 0
  result = measure(run_xla, xm.wait_device_ops, lambda: xm.get_memory_info(device).get('peak_bytes_used', -2**20))
  row.update({'xla_' + k: v for k, v in result.items()})
  for wait in (True, False):
    breakdown = _xla_host_breakdown(xla_step, steps, wait)
    row.update({('xla_waiting_' if wait else 'xla_b2b_') + k: v for k, v in breakdown.items()})
  row['xla_vs_eager'] = row['xla_ms'] / row['eager_ms']
  row['xla_vs_inductor'] = row['xla_ms'] / row['inductor_ms']
  row['xla_b2b_vs_eager'] = row['xla_b2b_ms'] / row['eager_b2b_ms']
  row['graphs_per_step'] = (met.metric_data('ExecuteTime')[0] - before) / (2 * steps + 3)
  fallbacks = [n for n in met.counter_names() if n.startswith('aten::')]
  if fallbacks:
    print('ops run through the CPU fallback:', ', '.join(fallbacks))
  row['fallbacks'] = len(fallbacks)
  row['tf32'] = tf32
  return row


def _run_child(args, env=None, timeout=None):
  try:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), '--child'] + args,
                         env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout)
  except subprocess.TimeoutExpired:
    raise RuntimeError('{} did not finish in {} s'.format(' '.join(args), timeout))
  if out.returncode != 0:
    raise RuntimeError('{} failed:\n{}'.format(' '.join(args), out.stderr[-4000:]))
  lines = [line for line in out.stdout.splitlines() if line.startswith('{')]
  for line in out.stdout.splitlines():
    if line.startswith('ops run through'):
      print(args[1], line)
  return json.loads(lines[-1])


def main():
  parser = argparse.ArgumentParser()
  gpu = os.environ.get('PJRT_DEVICE', 'CPU').upper() == 'CUDA'
  parser.add_argument('--rows', default=','.join(GPU_ROWS if gpu else ROWS))
  parser.add_argument('--tf32', action='store_true', help='on a GPU: float32 products on TF32 tensor cores')
  parser.add_argument('--row-timeout', type=float, default=None, help='on a GPU: seconds a row may take')
  parser.add_argument('--steps', type=int, default=None, help='steps per round (default: per row)')
  parser.add_argument('--no-memory', action='store_true', help='skip the peak-memory processes')
  parser.add_argument('--breakdown', action='store_true',
                      help='instead of the table: where the XLA step spends its time (host and device)')
  parser.add_argument('--child', nargs=3, metavar=('KIND', 'ROW', 'STEPS'), help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.child:
    kind, name, steps = args.child[0], args.child[1], int(args.child[2])
    if kind == 'timing':
      import torch_xla  # noqa: F401
      row = _child_timing(name, steps)
    elif kind == 'breakdown':
      row = _child_breakdown(name, steps)
    elif kind in ('gpu', 'gpu-tf32'):
      row = _child_gpu(name, steps, kind == 'gpu-tf32')
    else:
      row = _child_memory(name, kind, steps)
    print(json.dumps(row))
    return

  from common import report
  rows = []
  if args.breakdown:
    for name in args.rows.split(','):
      rows.append(_run_child(['breakdown', name, str(args.steps or 10)], timeout=args.row_timeout))
      print(json.dumps(rows[-1]), flush=True)
    report(rows)
    return
  if gpu:
    for name in args.rows.split(','):
      try:
        row = _run_child(['gpu-tf32' if args.tf32 else 'gpu', name, str(args.steps or GPU_STEPS)],
                         timeout=args.row_timeout)
      except RuntimeError as error:
        print(error, flush=True)
        continue
      rows.append(row)
      print(json.dumps(row), flush=True)
    if rows:
      # The step times, then where the XLA step's time goes (_xla_host_breakdown).
      parts = ('xla_waiting_', 'xla_b2b_')
      report([{k: v for k, v in row.items() if not k.startswith(parts)} for row in rows])
      report([{'model': row['model'], **{k[4:]: v for k, v in row.items() if k.startswith(parts)}} for row in rows])
    return
  for name in args.rows.split(','):
    steps = args.steps or DEFAULT_STEPS[name]
    # The first step compiles: the persistent cache would otherwise make it a load.
    timing = _run_child(['timing', name, str(steps)], {'XLA_PERSISTENT_CACHE_PATH': ''})
    row = {'model': name, 'eager_ms': timing['eager_ms'], 'xla_ms': timing['xla_ms'], 'ratio': timing['ratio'],
           'xla_b2b_ms': timing['xla_pipelined_ms'], 'b2b_ratio': timing['pipelined_ratio'],
           'first_step_s': timing['xla_first_step_s'], 'graphs_per_step': timing['graphs_per_step'],
           'fallbacks': timing['cpu_fallback_ops']}
    if not args.no_memory:
      eager_mb = _run_child(['cpu', name, '5'])['peak_rss_mb']
      # The first XLA process compiles the step into an empty persistent cache (its peak
      # includes the compiler's); the second loads it from there, as a script run again
      # does.
      with tempfile.TemporaryDirectory() as cache:
        compile_mb = _run_child(['xla', name, '5'], {'XLA_PERSISTENT_CACHE_PATH': cache})['peak_rss_mb']
        xla = _run_child(['xla', name, '5'], {'XLA_PERSISTENT_CACHE_PATH': cache})
      xla_mb = xla['peak_rss_mb']
      # The plugin's code pages, apart: resident but clean and shared, and no part of
      # what the steps allocate.
      row.update({'eager_peak_mb': eager_mb, 'xla_peak_mb': xla_mb, 'memory_ratio': xla_mb / eager_mb,
                  'plugin_code_mb': xla['plugin_code_mb'],
                  'ratio_less_plugin_code': (xla_mb - xla['plugin_code_mb']) / eager_mb,
                  'xla_compiling_peak_mb': compile_mb})
    rows.append(row)
    print(json.dumps(row), flush=True)
  report(rows)


if __name__ == '__main__':
  main()
