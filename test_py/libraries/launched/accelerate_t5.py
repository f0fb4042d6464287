"""Three steps of a tiny T5 (from a config, no dropout, nothing downloaded) prepared by
accelerate's Accelerator, with AdamW; prints the device and the losses as JSON.
USE_TORCH_XLA=0 runs it on the CPU without torch_xla."""
import json
import os

import torch

on_cpu = os.environ.get('USE_TORCH_XLA', '1') == '0'
if not on_cpu:
  import torch_xla  # noqa: F401
from accelerate import Accelerator
from transformers import T5Config, T5ForConditionalGeneration

torch.manual_seed(0)
model = T5ForConditionalGeneration(
    T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=2, dropout_rate=0.0,
             decoder_start_token_id=0))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
accelerator = Accelerator(cpu=on_cpu)
model, optimizer = accelerator.prepare(model, optimizer)
g = torch.Generator().manual_seed(1)
losses = []
for _ in range(3):
  ids = torch.randint(1, 64, (4, 10), generator=g).to(accelerator.device)
  labels = torch.randint(1, 64, (4, 6), generator=g).to(accelerator.device)
  loss = model(input_ids=ids, labels=labels).loss
  accelerator.backward(loss)
  optimizer.step()
  optimizer.zero_grad()
  losses.append(loss.item())
print(json.dumps({'device': str(accelerator.device), 'losses': losses}))
