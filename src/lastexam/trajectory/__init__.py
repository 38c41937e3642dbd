"""One trajectory schema for every agent (ATIF-compatible), converters from each agent's
native log, and the reconciliation with the gateway's call log."""

from lastexam.trajectory.build import build_trajectory, read_calls, write_trajectory
from lastexam.trajectory.schema import SCHEMA_VERSION, Step, Trajectory

__all__ = ["SCHEMA_VERSION", "Step", "Trajectory", "build_trajectory", "read_calls", "write_trajectory"]
