"""The error of replicas that fell out of step, shared by the replicas of one process
(core/_replica.py) and the processes of a torchrun run (core/_processes.py)."""


class ReplicationError(RuntimeError):
  """The replicas fell out of step: one failed, left, or did not arrive in time."""
