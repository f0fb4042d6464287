"""Internals that libraries built on torch_xla import (Lightning: `_internal.tpu`)."""
