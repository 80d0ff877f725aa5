"""Plan anatomy inside a run: the columns of the plans that ran (knob names, kernels by CUPTI, numerical notes,
determinism: ``columns``) and the engine space explored beyond the heuristics' proposals (``explore``). The run
calls these; each adds plain columns or rows, and every failure is recorded per plan (or as a warning), never raised.
"""

from .columns import LONG_PLAN_MS, kernel_and_note_columns, knob_columns, session_notes
from .explore import explore_rows

__all__ = ["LONG_PLAN_MS", "explore_rows", "kernel_and_note_columns", "knob_columns", "session_notes"]
