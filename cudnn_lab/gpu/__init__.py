"""The only layer that touches the GPU: plans, execution, timing, ceilings and the device record."""

from .runner import PLAN_POLICIES, run

__all__ = ["PLAN_POLICIES", "run"]
