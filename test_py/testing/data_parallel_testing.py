"""The data-parallel tests' network, data and optimizer, shared with the launched
scripts of the multi-process tests, and their reference: the same steps on one device."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_xla.core.xla_model as xm
from testing.replica_testing import REPLICAS

STEPS = 3
LOCAL_BATCH = 4
WEIGHT_TOL = dict(rtol=1e-5, atol=1e-5)


class SmallNet(nn.Module):
  """Convolution, pooling and linear layers, no batch statistics: the gradient of the
  mean loss over a batch is the mean of the gradients over its parts."""

  def __init__(self):
    super().__init__()
    self.conv = nn.Conv2d(1, 4, 3)
    self.fc1 = nn.Linear(4 * 3 * 3, 16)
    self.fc2 = nn.Linear(16, 10)

  def forward(self, x):
    x = F.max_pool2d(F.relu(self.conv(x)), 2)
    x = F.relu(self.fc1(x.flatten(1)))
    return F.log_softmax(self.fc2(x), dim=1)


def global_batches(steps=STEPS, batch=LOCAL_BATCH * REPLICAS, seed=0):
  g = torch.Generator().manual_seed(seed)
  return [(torch.randn(batch, 1, 8, 8, generator=g), torch.randint(0, 10, (batch,), generator=g))
          for _ in range(steps)]


def initial_model():
  torch.manual_seed(7)
  return SmallNet()


def sgd(params):
  return torch.optim.SGD(params, lr=0.1, momentum=0.9)


def train_on_one_device(model, batches, optimizer_fn):
  device = xm.xla_device()
  model = copy.deepcopy(model).to(device)
  optimizer = optimizer_fn(model.parameters())
  for data, target in batches:
    optimizer.zero_grad()
    F.nll_loss(model(data.to(device)), target.to(device)).backward()
    optimizer.step()
    xm.mark_step()
  return {k: v.cpu() for k, v in model.state_dict().items()}


def assert_same_weights(got, expected):
  assert got.keys() == expected.keys()
  for k in expected:
    torch.testing.assert_close(got[k], expected[k], **WEIGHT_TOL, msg=k)
