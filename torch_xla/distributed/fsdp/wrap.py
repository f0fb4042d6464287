"""Auto-wrap policies for sharded data parallelism, with torch_xla's signatures.

A policy is called as policy(module=m, recurse=..., unwrapped_params=n): with
recurse=True it says whether to look into m's children for modules to wrap; with
recurse=False whether to wrap m itself (n is the number of m's parameters that no
wrapped child holds). `recursive_wrap` walks a module with a policy and wraps what it
chooses with `wrapper_cls` (SpmdFullyShardedDataParallel, for instance), innermost
first.
"""
from typing import Any, Callable, Optional, Set, Tuple, Type

import torch.nn as nn

__all__ = ['always_wrap_policy', 'lambda_auto_wrap_policy', 'transformer_auto_wrap_policy',
           'size_based_auto_wrap_policy', 'recursive_wrap']


def always_wrap_policy(*args, **kwargs) -> bool:
  """Wraps every submodule."""
  return True


def lambda_auto_wrap_policy(module: nn.Module, recurse: bool, unwrapped_params: int, lambda_fn: Callable) -> bool:
  """Wraps the submodules for which lambda_fn(module) is true."""
  return True if recurse else bool(lambda_fn(module))


def transformer_auto_wrap_policy(module: nn.Module, recurse: bool, unwrapped_params: int,
                                 transformer_layer_cls: Set[Type[nn.Module]]) -> bool:
  """Wraps each instance of the transformer layer classes; the rest stays with the outer
  wrapper."""
  return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module: nn.Module,
                                recurse: bool,
                                unwrapped_params: int,
                                min_num_params: int = int(1e8),
                                force_leaf_modules: Optional[Set[Type[nn.Module]]] = None,
                                exclude_wrap_modules: Optional[Set[Type[nn.Module]]] = None) -> bool:
  """Wraps modules holding at least min_num_params parameters not yet wrapped; does not
  look inside `force_leaf_modules` and never wraps `exclude_wrap_modules` (containers)."""
  leaves = size_based_auto_wrap_policy.FORCE_LEAF_MODULES if force_leaf_modules is None else force_leaf_modules
  excluded = (size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES
              if exclude_wrap_modules is None else exclude_wrap_modules)
  large = unwrapped_params >= min_num_params
  if recurse:
    return large and not isinstance(module, tuple(leaves))
  return large and not isinstance(module, tuple(excluded))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {nn.ModuleList, nn.ModuleDict}
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {nn.MultiheadAttention}


def _wrap(module: nn.Module, wrapper_cls: Callable, **kwargs) -> nn.Module:
  # A module may carry its own wrapper arguments.
  overrides = getattr(module, '_wrap_overrides', None)
  return wrapper_cls(module, **({**kwargs, **overrides} if overrides else kwargs))


def recursive_wrap(module: nn.Module,
                   auto_wrap_policy: Callable,
                   wrapper_cls: Callable,
                   ignored_modules: Set[nn.Module],
                   ignored_params: Set[nn.Parameter],
                   only_wrap_children: bool = False,
                   **kwargs: Any) -> Tuple[nn.Module, int]:
  """Wraps the children of `module` that `auto_wrap_policy` chooses (and `module` itself
  unless only_wrap_children). Returns the module (wrapped or not) and the number of
  parameters now inside wrappers."""
  if auto_wrap_policy is None or wrapper_cls is None:
    raise ValueError('recursive_wrap needs an auto_wrap_policy and a wrapper_cls')
  if isinstance(wrapper_cls, type) and isinstance(module, wrapper_cls):
    raise ValueError(f'recursive_wrap: the module is already a {wrapper_cls.__name__}')
  num_params = sum(p.numel() for p in module.parameters() if p not in ignored_params)
  if not auto_wrap_policy(module=module, recurse=True, unwrapped_params=num_params):
    return module, 0
  wrapped_params = 0
  for name, child in module.named_children():
    if child in ignored_modules:
      continue
    wrapped_child, count = recursive_wrap(child, auto_wrap_policy, wrapper_cls, ignored_modules, ignored_params,
                                          **kwargs)
    setattr(module, name, wrapped_child)
    wrapped_params += count
  remainder = num_params - wrapped_params
  if not only_wrap_children and auto_wrap_policy(module=module, recurse=False, unwrapped_params=remainder):
    return _wrap(module, wrapper_cls, **kwargs), num_params
  return module, wrapped_params
