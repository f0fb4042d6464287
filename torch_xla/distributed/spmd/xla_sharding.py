"""torch_xla's module path of the sharding API (`import
torch_xla.distributed.spmd.xla_sharding as xs`): the same names as the package."""
from torch_xla.distributed.spmd import *  # noqa: F401,F403
from torch_xla.distributed.spmd import __all__  # noqa: F401
