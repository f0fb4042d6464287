"""Three steps of transformers' Trainer on a tiny GPT-2 built from a config (random
weights, no dropout, nothing downloaded), with Trainer's defaults (fused AdamW); prints
the device, the optimizer, the layout of a weight and the losses as JSON.
USE_TORCH_XLA=0 runs it on the CPU without torch_xla.

With `fsdp_v2` the model is a tiny Llama, and the XLA run shards it with FSDPv2
(fsdp_config xla_fsdp_v2: SPMD sharding of every parameter over the 'fsdp' axis of all
devices); the CPU run is the same model and steps without FSDP. (transformers 5.24's
FSDPv2 output sharding knows the output class of Llama-like models, not GPT-2's.)

Usage: trainer_causal_lm.py OUTPUT_DIR [fsdp_v2]"""
import json
import os
import sys

import torch

xla = os.environ.get('USE_TORCH_XLA', '1') != '0'
fsdp_v2 = len(sys.argv) > 2 and sys.argv[2] == 'fsdp_v2'
if xla:
  if fsdp_v2:
    os.environ['XLA_USE_SPMD'] = '1'  # FSDPv2 runs in SPMD mode, as torch_xla's docs have it
  import torch_xla  # noqa: F401
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments


class Tokens(Dataset):

  def __init__(self, n=24, length=16, vocab=64):
    self.ids = torch.randint(0, vocab, (n, length), generator=torch.Generator().manual_seed(0))

  def __len__(self):
    return len(self.ids)

  def __getitem__(self, i):
    return {'input_ids': self.ids[i], 'labels': self.ids[i]}


torch.manual_seed(0)
if fsdp_v2:
  model = LlamaForCausalLM(
      LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=2, max_position_embeddings=32))
else:
  model = GPT2LMHeadModel(
      GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2, resid_pdrop=0.0, embd_pdrop=0.0,
                 attn_pdrop=0.0))
fsdp = dict(fsdp='full_shard', fsdp_config={'xla': True, 'xla_fsdp_v2': True}) if xla and fsdp_v2 else {}
args = TrainingArguments(output_dir=sys.argv[1], per_device_train_batch_size=4, max_steps=3, logging_steps=1,
                         report_to=[], save_strategy='no', dataloader_num_workers=0, seed=0, **fsdp)
trainer_class = Trainer
if fsdp:

  class trainer_class(Trainer):  # noqa: N801

    def create_scheduler(self, num_training_steps, optimizer=None):
      # transformers 5.24 skips creating the optimizer on its FSDP-XLA path (it delays the
      # creation until after wrapping, then never creates it) and fails here; FSDPv2 keeps
      # the model's parameters, so the optimizer can be made over them now.
      if optimizer is None and self.optimizer is None:
        self.create_optimizer()
      return super().create_scheduler(num_training_steps, optimizer)


trainer = trainer_class(model=model, args=args, train_dataset=Tokens())
trainer.train()
optim = getattr(trainer.args.optim, 'value', str(trainer.args.optim))  # an enum in transformers 5
layout = ''
if fsdp:
  layout = torch_xla._XLAC._get_xla_sharding_spec(trainer.model.module.model.layers[0].mlp.up_proj.weight)
print(json.dumps({'device': str(trainer.args.device), 'optim': optim, 'layout': layout,
                  'losses': [h['loss'] for h in trainer.state.log_history if 'loss' in h]}))
