"""Three steps of a small regression model under Lightning's Trainer with the
accelerator named by argv[1]; prints the device and the losses as JSON."""
import json
import sys

import lightning as L
import torch


class Regression(L.LightningModule):

  def __init__(self):
    super().__init__()
    torch.manual_seed(0)
    self.net = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    self.losses = []

  def training_step(self, batch, index):
    x, y = batch
    loss = torch.nn.functional.mse_loss(self.net(x), y)
    self.losses.append(loss.detach())
    return loss

  def configure_optimizers(self):
    return torch.optim.SGD(self.parameters(), lr=0.1)


g = torch.Generator().manual_seed(1)
data = torch.utils.data.TensorDataset(torch.randn(24, 6, generator=g), torch.randn(24, 1, generator=g))
model = Regression()
trainer = L.Trainer(accelerator=sys.argv[1], devices=1, max_steps=3, logger=False, enable_checkpointing=False,
                    enable_progress_bar=False, enable_model_summary=False)
trainer.fit(model, torch.utils.data.DataLoader(data, batch_size=8))
print(json.dumps({'device': str(model.device), 'losses': [float(l.cpu()) for l in model.losses]}))
