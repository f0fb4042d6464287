"""Differentiable collectives and non-maximal suppression."""

import torch

from torch_xla.core import xla_model as xm


class _AllReduce(torch.autograd.Function):

  @staticmethod
  def forward(ctx, value, reduce_type, scale, groups):
    ctx.reduce_type = reduce_type
    ctx.scale = scale
    ctx.groups = groups
    return xm.all_reduce(reduce_type, value, scale=scale, groups=groups)

  @staticmethod
  def backward(ctx, grad_output):
    # d(sum_r x_r * scale)/dx = scale, summed over the replicas' losses. With a
    # single replica every reduce type is the identity, with the same gradient.
    if ctx.reduce_type != xm.REDUCE_SUM and xm.xrt_world_size() > 1:
      raise NotImplementedError(
          f'all_reduce: gradient of a multi-replica {ctx.reduce_type!r} '
          'reduction is not supported')
    grad = xm.all_reduce(xm.REDUCE_SUM, grad_output, scale=ctx.scale,
                         groups=ctx.groups)
    return grad, None, None, None


class _AllGather(torch.autograd.Function):

  @staticmethod
  def forward(ctx, value, dim):
    ctx.dim = dim
    ctx.slice_size = value.size(dim)
    return xm.all_gather(value, dim=dim)

  @staticmethod
  def backward(ctx, grad_output):
    # This replica's input is its ordinal's slice of the gathered output.
    start = xm.get_ordinal() * ctx.slice_size
    return grad_output.narrow(ctx.dim, start, ctx.slice_size), None


def all_reduce(reduce_type, value, scale=1.0, groups=None):
  """xm.all_reduce() of one tensor, differentiable. Returns the reduced value."""
  return _AllReduce.apply(value, reduce_type, scale, groups)


def all_gather(value, dim=0):
  """xm.all_gather() along `dim`, differentiable."""
  return _AllGather.apply(value, dim)


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
