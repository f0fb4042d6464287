"""Differentiable collectives, the distributed matrix product, synchronized batch
normalization and non-maximal suppression."""

import torch
import torch.nn.functional as F

from torch_xla.core import _replica
from torch_xla.core import xla_model as xm
from torch_xla._extension import xlac as _xlac


def _group_position(tensor, groups):
  """(position of the tensor's replica in its group, group size)."""
  info = (_replica.for_device(tensor.device.index)
          if xm.is_xla_tensor(tensor) else None)
  if info is None:
    return 0, 1
  for group in groups or [list(range(info.world_size))]:
    if info.ordinal in group:
      return list(group).index(info.ordinal), len(group)
  raise ValueError(f'replica {info.ordinal} is in none of the groups {groups}')


class _AllReduce(torch.autograd.Function):

  @staticmethod
  def forward(ctx, value, reduce_type, scale, groups):
    ctx.reduce_type = reduce_type
    ctx.scale = scale
    ctx.groups = groups
    reduced = xm.all_reduce(reduce_type, value, groups=groups)
    if reduce_type in (xm.REDUCE_MAX, xm.REDUCE_MIN, xm.REDUCE_MUL):
      ctx.save_for_backward(value, reduced)
    return reduced * scale if scale != 1.0 else reduced

  @staticmethod
  def backward(ctx, grad_output):
    # Every replica's output depends on every input of its group, so an input's
    # gradient sums the gradients of all the group's outputs.
    reduce_type, scale, groups = ctx.reduce_type, ctx.scale, ctx.groups
    if reduce_type == xm.REDUCE_SUM:
      return xm.all_reduce(xm.REDUCE_SUM, grad_output, scale=scale,
                           groups=groups), None, None, None
    if reduce_type in (xm.REDUCE_MAX, xm.REDUCE_MIN):
      # As amax/amin: the inputs equal to the result share its gradient evenly.
      value, reduced = ctx.saved_tensors
      hit = (value == reduced).to(grad_output.dtype)
      total, hits = xm.all_reduce(xm.REDUCE_SUM, [grad_output.clone(), hit.clone()],
                                  groups=groups)
      return total * hit * scale / hits, None, None, None
    if reduce_type == xm.REDUCE_MUL:
      # d(prod_r x_r)/dx_i is the product of the other replicas' values.
      value, _ = ctx.saved_tensors
      position, size = _group_position(value, groups)
      gathered = xm.all_gather(value.unsqueeze(0), dim=0, groups=groups)
      mine = torch.arange(size, device=value.device) == position
      mine = mine.view([size] + [1] * value.dim())
      others = torch.where(mine, torch.ones_like(gathered), gathered).prod(0)
      total = xm.all_reduce(xm.REDUCE_SUM, grad_output, groups=groups)
      return total * others * scale, None, None, None
    raise RuntimeError(f'all_reduce: the {reduce_type!r} reduction has no '
                       'gradient')


class _AllGather(torch.autograd.Function):

  @staticmethod
  def forward(ctx, value, dim, groups):
    ctx.dim = dim
    ctx.groups = groups
    return xm.all_gather(value, dim=dim, groups=groups)

  @staticmethod
  def backward(ctx, grad_output):
    # This replica's input is its slice of every group member's output: its
    # gradient is the sum over the group of that slice of their gradients.
    _, size = _group_position(grad_output, ctx.groups)
    grad = xm.reduce_scatter(xm.REDUCE_SUM, grad_output, 1.0, ctx.dim, size,
                             groups=ctx.groups)
    return grad, None, None


def all_reduce(reduce_type, value, scale=1.0, groups=None):
  """xm.all_reduce() of one tensor, differentiable. Returns the reduced value.

  Gradients: sum passes the summed gradient back to every replica; max and
  min give it to the inputs equal to the result, shared evenly among ties;
  mul gives each input the product of the others' values.
  """
  return _AllReduce.apply(value, reduce_type, scale, groups)


def all_gather(value, dim=0, groups=None):
  """xm.all_gather() along `dim`, differentiable: the gradient of a replica's
  input sums the group's gradients of its slice (a reduce_scatter)."""
  return _AllGather.apply(value, dim, groups)


def distributed_mm(w, x, split=1):
  """W @ x where each replica holds W's columns in blocks: `w` [N, Ko] is this
  replica's block (replica r holds columns r*Ko to (r+1)*Ko of W [N, Ko*world_size])
  and `x` [Ko*world_size, M] is this replica's own input. Returns this replica's
  W @ x [N, M], differentiable.

  Every replica multiplies its block by its rows of every replica's x (an all_gather
  of x), and an all_reduce sums the blocks' products; `split` cuts x's M columns into
  that many parts done one after the other, so that the gathered x of a large M need
  not be on the device at once. A `w` still pending is computed first, in a graph of
  its own (see below).
  """
  ordinal, world_size = xm.get_ordinal(), xm.xrt_world_size()
  if w.dim() != 2 or x.dim() != 2 or x.size(0) != w.size(1) * world_size:
    raise ValueError(f'distributed_mm: expected w [N, Ko] and x [Ko * {world_size} replicas, M], '
                     f'got w {list(w.shape)} and x {list(x.shape)}')
  if split < 1 or x.size(1) % split:
    raise ValueError(f'distributed_mm: split {split} does not divide the {x.size(1)} columns '
                     'of x into equal parts')
  block = w.size(1)
  # The replicas run one graph for the collectives below, and a replica's block is
  # commonly a slice of the whole weight at the replica's own offset, a constant that
  # would differ between the replicas' graphs: a block still pending is computed
  # first, in a graph of the replica's own (a block already on the device costs
  # nothing here). Gradients still flow through it.
  if xm.is_xla_tensor(w):
    _xlac()._xla_sync_tensors([w])
  # The replica's ordinal as data, not as a constant of the graph: the replicas run
  # one graph, so they pick their blocks by an index they are given.
  mine = torch.tensor([ordinal], device=w.device)
  results = []
  for part in torch.split(x, x.size(1) // split, dim=1):
    columns = part.size(1)
    # Every replica's part side by side: [Ko * world_size, M' * world_size].
    gathered = all_gather(part, dim=1)
    rows = gathered.view(world_size, block, -1).index_select(0, mine).view(block, -1)
    # This replica's block's products with every replica's part, summed over the blocks.
    summed = all_reduce(xm.REDUCE_SUM, w @ rows)
    own = summed.view(summed.size(0), world_size, columns).index_select(1, mine)
    results.append(own.view(summed.size(0), columns))
  return results[0] if len(results) == 1 else torch.cat(results, dim=1)


class SyncBatchNorm(torch.nn.Module):
  """Batch normalization with statistics over the whole batch of all replicas.

  Takes [N, C], [N, C, L], [N, C, H, W] or [N, C, D, H, W] inputs, like
  BatchNorm1d/2d/3d. In training the mean and variance are those of every
  replica's batch together (two in-graph all_reduce collectives: the sum and
  count, then the squared deviations), and the running statistics follow
  eager BatchNorm run on that whole batch; gradients flow across replicas.
  `groups` limits the statistics to replica groups. In eval mode the running
  statistics are used, as in BatchNorm.
  """

  def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
               track_running_stats=True, groups=None):
    super().__init__()
    self.num_features = num_features
    self.eps = eps
    self.momentum = momentum
    self.affine = affine
    self.track_running_stats = track_running_stats
    self.groups = groups
    if affine:
      self.weight = torch.nn.Parameter(torch.ones(num_features))
      self.bias = torch.nn.Parameter(torch.zeros(num_features))
    else:
      self.register_parameter('weight', None)
      self.register_parameter('bias', None)
    if track_running_stats:
      self.register_buffer('running_mean', torch.zeros(num_features))
      self.register_buffer('running_var', torch.ones(num_features))
      self.register_buffer('num_batches_tracked',
                           torch.tensor(0, dtype=torch.long))
    else:
      self.register_buffer('running_mean', None)
      self.register_buffer('running_var', None)
      self.register_buffer('num_batches_tracked', None)

  def forward(self, x):
    if x.dim() not in (2, 3, 4, 5) or x.size(1) != self.num_features:
      raise ValueError(f'SyncBatchNorm({self.num_features}): expected an input '
                       f'of shape [N, {self.num_features}, ...] with 2 to 5 '
                       f'dimensions, got {list(x.shape)}')
    if not self.training and self.track_running_stats:
      return F.batch_norm(x, self.running_mean, self.running_var, self.weight,
                          self.bias, False, 0.0, self.eps)
    dims = [0] + list(range(2, x.dim()))
    shape = [1, -1] + [1] * (x.dim() - 2)
    # Low-precision inputs keep their statistics in float32, as eager's do.
    work = x.float() if x.dtype in (torch.bfloat16, torch.float16) else x
    count = torch.full((1,), x.numel() // x.size(1), dtype=work.dtype,
                       device=x.device)
    sums = all_reduce(xm.REDUCE_SUM, torch.cat([work.sum(dims), count]),
                      groups=self.groups)
    total = sums[-1]
    mean = sums[:-1] / total
    centered = work - mean.view(shape)
    var = all_reduce(xm.REDUCE_SUM, (centered * centered).sum(dims),
                     groups=self.groups) / total
    y = centered * torch.rsqrt(var + self.eps).view(shape)
    if self.affine:
      y = y * self.weight.view(shape) + self.bias.view(shape)
    if self.training and self.track_running_stats:
      self._update_running_stats(mean.detach(), var.detach(), total.detach())
    return y.to(x.dtype)

  def _update_running_stats(self, mean, var, total):
    with torch.no_grad():
      self.num_batches_tracked.add_(1)
      if self.momentum is None:  # cumulative moving average, as BatchNorm
        factor = 1.0 / float(self.num_batches_tracked.item())
      else:
        factor = self.momentum
      unbiased = var * total / (total - 1).clamp(min=1)
      self.running_mean.mul_(1 - factor).add_(mean.to(self.running_mean.dtype) * factor)
      self.running_var.mul_(1 - factor).add_(unbiased.to(self.running_var.dtype) * factor)


def _box_iou_matrix(boxes):
  """IoU of every pair of boxes given as (y0, x0, y1, x1) in either corner order."""
  y0 = torch.minimum(boxes[:, 0], boxes[:, 2])
  y1 = torch.maximum(boxes[:, 0], boxes[:, 2])
  x0 = torch.minimum(boxes[:, 1], boxes[:, 3])
  x1 = torch.maximum(boxes[:, 1], boxes[:, 3])
  area = (y1 - y0) * (x1 - x0)
  inter_h = (torch.minimum(y1[:, None], y1[None, :]) -
             torch.maximum(y0[:, None], y0[None, :])).clamp(min=0)
  inter_w = (torch.minimum(x1[:, None], x1[None, :]) -
             torch.maximum(x0[:, None], x0[None, :])).clamp(min=0)
  inter = inter_h * inter_w
  union = area[:, None] + area[None, :] - inter
  return torch.where(union > 0, inter / union.clamp(min=1e-30),
                     torch.zeros_like(inter))


def nms(boxes, scores, score_threshold, iou_threshold, output_size):
  """Non-maximal suppression with fixed-shape outputs.

  boxes: [N, 4] as (y0, x0, y1, x1); scores: [N]. Boxes scoring above
  score_threshold are visited best first (ties: lower index first); a box is
  dropped when its IoU with an already selected box exceeds iou_threshold.

  Returns (indices, num_valid): int32 [output_size] indices into boxes, in
  selection order and padded with 0, and the int32 count of valid entries.
  Only tensor ops with static shapes are used (no host round trips), so this
  traces into one graph on XLA devices and runs on any device.
  """
  n = boxes.size(0)
  device = boxes.device
  order = torch.sort(scores, descending=True, stable=True).indices
  sorted_boxes = boxes[order].to(torch.float32)
  sorted_scores = scores[order]
  keep = sorted_scores > torch.as_tensor(score_threshold, device=device)
  iou = _box_iou_matrix(sorted_boxes)
  later = torch.ones(n, n, dtype=torch.bool, device=device).triu(diagonal=1)
  suppresses = (iou > torch.as_tensor(iou_threshold, device=device)) & later
  # Greedy pass in score order: a box still kept suppresses the later ones it
  # overlaps. The loop is over a static N, so it needs no data-dependent sync.
  for i in range(n):
    keep = keep & ~(keep[i] & suppresses[i])
  # Kept positions first, each group in score order (stable sort on ~keep).
  ranked = torch.sort((~keep).to(torch.int32), stable=True).indices
  num_valid = torch.clamp(keep.sum(), max=output_size).to(torch.int32)
  if output_size > n:
    ranked = torch.cat([ranked, ranked.new_zeros(output_size - n)])
  selected = order[ranked[:output_size]] if n > 0 else ranked[:output_size]
  slots = torch.arange(output_size, device=device)
  indices = torch.where(slots < num_valid, selected, torch.zeros_like(selected))
  return indices.to(torch.int32), num_valid
