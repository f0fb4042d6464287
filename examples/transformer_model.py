"""A small transformer language model: token embedding plus learned positions, a
stack of nn.TransformerEncoder layers (gelu, dropout, batch_first) and a linear head
trained with cross-entropy and label smoothing."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TransformerLM(nn.Module):

  def __init__(self, vocab=1000, d_model=256, nhead=4, dim_feedforward=1024, num_layers=2, max_len=512,
               dropout=0.1):
    super().__init__()
    self.embed = nn.Embedding(vocab, d_model)
    self.pos = nn.Parameter(torch.randn(max_len, d_model) * 0.02)
    layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=dropout, activation='gelu',
                                       batch_first=True)
    self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
    self.norm = nn.LayerNorm(d_model)
    self.head = nn.Linear(d_model, vocab)

  def forward(self, tokens):
    x = self.embed(tokens) + self.pos[:tokens.shape[1]]
    x = self.encoder(x)
    return self.head(self.norm(x))


def lm_loss(logits, targets, label_smoothing=0.1):
  return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), label_smoothing=label_smoothing)
