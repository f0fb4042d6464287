"""Three steps of transformers' Trainer on a tiny GPT-2 built from a config (random
weights, no dropout, nothing downloaded), with Trainer's defaults (fused AdamW); prints
the device, the optimizer and the losses as JSON. USE_TORCH_XLA=0 runs it on the CPU
without torch_xla. Usage: trainer_gpt2.py OUTPUT_DIR"""
import json
import os
import sys

import torch

if os.environ.get('USE_TORCH_XLA', '1') != '0':
  import torch_xla  # noqa: F401
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class Tokens(Dataset):

  def __init__(self, n=24, length=16, vocab=64):
    self.ids = torch.randint(0, vocab, (n, length), generator=torch.Generator().manual_seed(0))

  def __len__(self):
    return len(self.ids)

  def __getitem__(self, i):
    return {'input_ids': self.ids[i], 'labels': self.ids[i]}


torch.manual_seed(0)
model = GPT2LMHeadModel(
    GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0,
               attn_pdrop=0.0))
args = TrainingArguments(output_dir=sys.argv[1], per_device_train_batch_size=4, max_steps=3, logging_steps=1,
                         report_to=[], save_strategy='no', dataloader_num_workers=0, seed=0)
trainer = Trainer(model=model, args=args, train_dataset=Tokens())
trainer.train()
optim = getattr(trainer.args.optim, 'value', str(trainer.args.optim))  # an enum in transformers 5
print(json.dumps({'device': str(trainer.args.device), 'optim': optim,
                  'losses': [h['loss'] for h in trainer.state.log_history if 'loss' in h]}))
