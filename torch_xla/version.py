"""The release of torch_xla's API this package provides.

It is the release of the torch it runs with (torch_xla's releases follow torch's), so
that version checks written for torch_xla 2.x, in libraries such as transformers and
accelerate, take their current code paths.
"""
import torch

__version__ = torch.__version__.split('+')[0]
