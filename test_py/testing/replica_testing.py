"""Helpers of the replication tests: running a function on replicas with a bound on
the whole run, and the collectives computed on the CPU from every replica's input."""

import torch

import torch_xla.distributed.xla_multiprocessing as xmp

REPLICAS = 4
# A replication test that takes longer than this fails instead of hanging.
RUN_TIMEOUT = 120


def run_replicas(fn, nprocs=REPLICAS, args=(), timeout=RUN_TIMEOUT):
  """fn(index, *args) on `nprocs` replicas; the results by replica."""
  return xmp.spawn(fn, args=args, nprocs=nprocs, join=False).join(timeout)


def group_of(replica, groups, count=REPLICAS):
  for group in groups or [list(range(count))]:
    if replica in group:
      return list(group)
  raise ValueError(f'replica {replica} in no group of {groups}')


_REDUCERS = {
    'sum': lambda a, b: a + b,
    'mul': lambda a, b: a * b,
    'max': torch.maximum,
    'min': torch.minimum,
    'and': lambda a, b: a & b,
    'or': lambda a, b: a | b,
}


def all_reduce(inputs, replica, reduce_type, groups=None):
  members = group_of(replica, groups, len(inputs))
  out = inputs[members[0]].clone()
  for m in members[1:]:
    out = _REDUCERS[reduce_type](out, inputs[m])
  return out


def all_gather(inputs, replica, dim, groups=None):
  return torch.cat([inputs[m] for m in group_of(replica, groups, len(inputs))], dim)


def reduce_scatter(inputs, replica, reduce_type, dim, groups=None):
  members = group_of(replica, groups, len(inputs))
  total = all_reduce(inputs, replica, reduce_type, groups)
  return total.chunk(len(members), dim)[members.index(replica)]


def all_to_all(inputs, replica, split_dim, concat_dim, groups=None):
  members = group_of(replica, groups, len(inputs))
  k = members.index(replica)
  return torch.cat([inputs[m].chunk(len(members), split_dim)[k] for m in members],
                   concat_dim)


def collective_permute(inputs, replica, pairs):
  for source, target in pairs:
    if target == replica:
      return inputs[source].clone()
  return torch.zeros_like(inputs[replica])
