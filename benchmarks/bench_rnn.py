"""Training steps of recurrent layers (nn.LSTM, nn.GRU, nn.RNN: 2 layers of 256 over 32
steps, batch 16, SGD) on the XLA device against eager PyTorch on the CPU, in the same
run, with the ops traced a step. The LSTM on the CPU device runs PyTorch's oneDNN
layers in host calls; `--loop` switches oneDNN off, so that it takes the loop over the
time steps that every other device runs (cpp/ops/rnn_loop.cpp), as GRU and RNN always do.

  python benchmarks/bench_rnn.py [--cells lstm,gru,rnn_tanh] [--steps 10] [--loop]
"""
import argparse
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
import torch  # noqa: E402
import torch_xla  # noqa: E402,F401
import torch_xla.core.xla_model as xm  # noqa: E402
import torch_xla.debug.metrics as met  # noqa: E402
from common import compare_training, report  # noqa: E402

CELLS = {
    'lstm': lambda: torch.nn.LSTM(256, 256, num_layers=2),
    'gru': lambda: torch.nn.GRU(256, 256, num_layers=2),
    'rnn_tanh': lambda: torch.nn.RNN(256, 256, num_layers=2),
}


def make_step(cell):

  def build(device):
    torch.manual_seed(0)
    model = CELLS[cell]().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs = torch.randn(32, 16, 256)

    def step():
      opt.zero_grad()
      out, _ = model(inputs.to(device))
      out.square().mean().backward()
      opt.step()

    return step

  return build


def ops_traced(cell):
  """Ops recorded into the graph in one XLA training step."""
  step = make_step(cell)(xm.xla_device())
  step()
  xm.mark_step()
  met.clear_metrics()
  step()
  traced = met.metric_data('LazyTracing')
  xm.mark_step()
  return traced[0] if traced else 0


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--cells', default=','.join(CELLS))
  parser.add_argument('--steps', type=int, default=10)
  parser.add_argument('--loop', action='store_true', help='oneDNN off: the LSTM takes the loop too')
  args = parser.parse_args()
  torch.set_num_threads(os.cpu_count())
  rows = []
  with torch.backends.mkldnn.flags(enabled=not args.loop):
    for cell in args.cells.split(','):
      timing = compare_training(make_step(cell), args.steps)
      rows.append({'cell': cell, 'eager_ms': timing['eager_ms'], 'xla_ms': timing['xla_ms'],
                   'ratio': timing['ratio'], 'first_step_s': timing['xla_first_step_s'],
                   'ops_traced': ops_traced(cell), 'fallbacks': timing['cpu_fallback_ops']})
  report(rows)


if __name__ == '__main__':
  main()
