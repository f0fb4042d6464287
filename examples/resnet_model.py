"""A small ResNet-style network: a conv stem, basic residual blocks (one with stride 2
and a 1x1 projection shortcut, one with a grouped, dilated conv), average and adaptive
average pooling, a linear head."""
import torch.nn as nn
import torch.nn.functional as F


class BasicBlock(nn.Module):

  def __init__(self, cin, cout, stride=1, groups=1, dilation=1):
    super().__init__()
    self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=dilation, dilation=dilation, groups=groups,
                           bias=False)
    self.bn1 = nn.BatchNorm2d(cout)
    self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
    self.bn2 = nn.BatchNorm2d(cout)
    self.shortcut = None
    if stride != 1 or cin != cout:
      self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

  def forward(self, x):
    out = F.relu(self.bn1(self.conv1(x)))
    out = self.bn2(self.conv2(out))
    identity = x if self.shortcut is None else self.shortcut(x)
    return F.relu(out + identity)


class SmallResNet(nn.Module):

  def __init__(self, num_classes=10):
    super().__init__()
    self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
    self.pool = nn.AvgPool2d(2)
    self.block1 = BasicBlock(16, 32, stride=2)
    self.block2 = BasicBlock(32, 32, groups=4, dilation=2)
    self.head = nn.Linear(32, num_classes)

  def forward(self, x):
    x = self.pool(self.stem(x))
    x = self.block2(self.block1(x))
    x = F.adaptive_avg_pool2d(x, 1).flatten(1)
    return F.log_softmax(self.head(x), dim=1)
