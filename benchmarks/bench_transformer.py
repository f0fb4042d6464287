"""Step time of a 2-layer transformer encoder language model (d_model 256, 4 heads,
feed-forward 1024, sequence 128, batch 16, AdamW, cross-entropy with label smoothing)
on the XLA device against eager PyTorch on the CPU, in the same run.

  python benchmarks/bench_transformer.py [--steps 10]
"""
import argparse
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, here)
sys.path.insert(1, os.path.join(here, '..', 'examples'))
import torch_xla  # noqa: E402
from common import compare_training, report  # noqa: E402
from transformer_model import TransformerLM, lm_loss  # noqa: E402


def make_step(batch, seq, vocab, compiled=False):
  """make_step for compare_training; compiled=True: on the XLA device the model runs
  through torch.compile('openxla')."""

  def build(device):
    torch.manual_seed(0)
    model = TransformerLM(vocab=vocab).train().to(device)
    forward = torch.compile(model, backend='openxla') if compiled and device != 'cpu' else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, vocab, (batch, seq + 1))

    def step():
      data = tokens.to(device)
      opt.zero_grad()
      loss = lm_loss(forward(data[:, :-1]), data[:, 1:])
      loss.backward()
      opt.step()

    return step

  return build


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--steps', type=int, default=10)
  parser.add_argument('--batch', type=int, default=16)
  parser.add_argument('--seq', type=int, default=128)
  parser.add_argument('--vocab', type=int, default=1000)
  args = parser.parse_args()
  torch.set_num_threads(os.cpu_count())
  build = make_step(args.batch, args.seq, args.vocab)
  row = {'bench': 'transformer', 'batch': args.batch, 'seq': args.seq}
  row.update(compare_training(build, args.steps))
  report([row])


if __name__ == '__main__':
  main()
