"""The plan table's vocabulary in one table: each column of ``RunResult.plans`` with its dtype, unit, title (the
header in words) and what it means. The plan columns (``results.run.PLAN_COLUMNS``), the loading layer's dtype lists
(``results.loading.INT_COLUMNS`` ...), the frames' dtypes and the tables' headers (``plots.tables.ALL_COLUMN_TITLES``)
derive from it; :func:`doc_table` is the documented schema. A sweep's point columns (``POINT_SCHEMA``) are the
same kind of table: ``sweeps.POINT_COLUMNS``, a point's dtypes, the loaders' number checks and the sweep report's
titles derive from it. Pure data: imports nothing of the kit.
"""

from __future__ import annotations

import dataclasses

__all__ = ["DTYPES", "Column", "PLAN_SCHEMA", "PLAN_COLUMNS", "columns_of", "column", "doc_table", "POINT_SCHEMA",
           "POINT_COLUMNS", "point_column", "point_columns_of"]

#: A column's dtype: whole numbers (pandas Int64), numbers (float64), flags (boolean), text (object; JSON text too).
DTYPES: tuple[str, ...] = ("int", "float", "bool", "text")


@dataclasses.dataclass(frozen=True)
class Column:
    """One column: its name, dtype (:data:`DTYPES`), unit ('' where it has none), title and meaning."""

    name: str
    dtype: str
    unit: str
    title: str
    doc: str

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"column {self.name}: dtype must be one of {', '.join(DTYPES)}, not {self.dtype!r}")


#: Every column of a plan frame, in the frame's order.
PLAN_SCHEMA: tuple[Column, ...] = (
    Column('plan', 'text', '', 'plan',
           "the plan's name as cuDNN gives it (engine id and knobs, e.g. ``eng4_k24=27``)"),
    Column('engine_id', 'int', '', 'engine',
           'the engine and its knob settings (JSON text); together they pin the plan across versions'),
    Column('knobs', 'text', '', 'knobs',
           'the engine and its knob settings (JSON text); together they pin the plan across versions'),
    Column('heuristic_rank', 'int', '', 'rank',
           "position in the order the chosen heuristic modes proposed plans (0 = the heuristic's pick)"),
    Column('rank_A', 'int', '', 'rank in A',
           "the plan's index in each mode's own list (missing where a mode did not propose it)"),
    Column('rank_B', 'int', '', 'rank in B',
           "the plan's index in each mode's own list (missing where a mode did not propose it)"),
    Column('rank_FALLBACK', 'int', '', 'rank in FALLBACK',
           "the plan's index in each mode's own list (missing where a mode did not propose it)"),
    Column('behavior_notes', 'text', '', 'behaviour notes',
           "cuDNN's behavior notes (e.g. RUNTIME_COMPILATION), comma separated"),
    Column('workspace_bytes', 'int', 'bytes', 'workspace',
           'scratch memory the plan needs'),
    Column('build_ms', 'float', 'ms', 'build (ms)',
           'time to build (finalize, compile) the plan, apart from run time'),
    Column('status', 'text', '', 'status',
           'ok, build_failed, run_failed, not_built (the heuristic policy builds only the pick); explored: '
           'refused, not_tried'),
    Column('error', 'text', '', 'error message',
           'the reason a plan failed, one line'),
    Column('timing_mode', 'text', '', 'timing',
           'cuda_graph (replay of captured calls) or events; calls per timed sample'),
    Column('calls_per_sample', 'int', 'calls', 'calls per sample',
           'cuda_graph (replay of captured calls) or events; calls per timed sample'),
    Column('median_ms', 'float', 'ms', 'median (µs)',
           'latency per call; capped is True when the time cap stopped sampling'),
    Column('iqr_ms', 'float', 'ms', 'IQR (µs)',
           'latency per call; capped is True when the time cap stopped sampling'),
    Column('min_ms', 'float', 'ms', 'min (µs)',
           'latency per call; capped is True when the time cap stopped sampling'),
    Column('samples', 'int', 'samples', 'samples',
           'latency per call; capped is True when the time cap stopped sampling'),
    Column('capped', 'bool', '', 'time-capped',
           'latency per call; capped is True when the time cap stopped sampling'),
    Column('screened', 'bool', '', 'screened (few samples)',
           'far slower than the best plan timed before it (``screen_ratio``): a few event samples only'),
    Column('host_ms', 'float', 'ms', 'host enqueue (µs)',
           'host time to enqueue one call (launch overhead, apart from GPU time)'),
    Column('tflops', 'float', 'TFLOP/s', 'TFLOP/s',
           "throughput from the spec's FLOP count and minimal bytes at the median"),
    Column('gbps', 'float', 'GB/s', 'GB/s',
           "throughput from the spec's FLOP count and minimal bytes at the median"),
    Column('pct_of_ceiling', 'float', '%', '% of roofline',
           "share of the measured roofline bound at this plan's arithmetic intensity"),
    Column('rel_l2', 'float', 'relative', 'rel. L2 error',
           'error against the float64 PyTorch reference'),
    Column('max_abs', 'float', '', 'max abs error',
           'error against the float64 PyTorch reference'),
    Column('max_rel', 'float', 'relative', 'max rel error',
           'error against the float64 PyTorch reference'),
    Column('nan_count', 'int', 'elements', 'NaNs',
           'non-finite outputs (outputs are NaN-poisoned before the checked run)'),
    Column('inf_count', 'int', 'elements', 'Infs',
           'non-finite outputs (outputs are NaN-poisoned before the checked run)'),
    Column('within_torch', 'float', 'share', 'within torch tol.',
           "share of elements within torch.testing's and cuDNN's tolerance bands"),
    Column('within_cudnn', 'float', 'share', 'within cuDNN tol.',
           "share of elements within torch.testing's and cuDNN's tolerance bands"),
    Column('pass_torch', 'bool', '', 'passes torch tol.',
           'every element within the band and no NaN/Inf'),
    Column('pass_cudnn', 'bool', '', 'passes cuDNN tol.',
           'every element within the band and no NaN/Inf'),
    Column('knob_names', 'text', '', 'knobs by name',
           "the plan's knobs by name from the backend knob table (``TILE_SIZE=0, TILEK=1``; ``cudnn_lab.knobs``)"),
    Column('proposed', 'bool', '', 'proposed by heuristics',
           "False for configurations sampled beyond the heuristics' proposals (``explore``); origin says why"),
    Column('origin', 'text', '', 'origin',
           "False for configurations sampled beyond the heuristics' proposals (``explore``); origin says why"),
    Column('kernels', 'text', '', 'kernels',
           'JSON list of the kernels one execution launches (CUPTI): {name, kind, count, us, total_us}'),
    Column('kernel_count', 'float', 'launches', 'kernels per call',
           'launches per execution, and their summed GPU time (CUPTI kernel time)'),
    Column('kernel_ms', 'float', 'ms', 'kernel time (µs)',
           'launches per execution, and their summed GPU time (CUPTI kernel time)'),
    Column('launch_gap_ms', 'float', 'ms', 'launch gap (µs)',
           "median_ms minus kernel_ms: launch gaps and host-side time between a plan's kernels"),
    Column('kernel_gap_ms', 'float', 'ms', 'gap between kernels (µs)',
           "GPU time between one execution's kernels (CUPTI): the span from its first kernel's start to its last "
           "kernel's end minus kernel_ms; 0 for one kernel, negative where kernels overlap. A replayed median "
           "includes it, kernel_ms does not: compare median_ms with kernel_ms + kernel_gap_ms (the span)"),
    Column('numeric_notes', 'text', '', 'numerical notes',
           "cuDNN's numerical notes (TENSOR_CORE, DOWN_CONVERT_INPUTS, FFT, ...), found by note filters"),
    Column('deterministic', 'bool', '', 'deterministic',
           'repeated executions on the same inputs gave bitwise-equal outputs'),
    Column('replay_over_kernel', 'float', 'ratio', 'replay / kernel time',
           "median_ms over kernel_ms: the timer's launch-gap overhead (1.0 = none; cupti timing: 1.0)"),
    Column('reused', 'bool', '', 'reused',
           "this run reused the plan's check and time from an earlier run in the process (``resample=True``: not)"),
    Column('from_cache', 'bool', '', 'from plan cache',
           'the plan was loaded from the plan cache on disk instead of built (build_ms is the load time)'),
)

#: The plan frame's columns, in order.
PLAN_COLUMNS: tuple[str, ...] = tuple(c.name for c in PLAN_SCHEMA)
_BY_NAME: dict[str, Column] = {c.name: c for c in PLAN_SCHEMA}


def column(name: str) -> Column:
    """The schema entry of a plan column (KeyError naming it for a name that is not one)."""
    return _BY_NAME[name]


def _of_dtype(schema: tuple[Column, ...], dtype: str) -> tuple[str, ...]:
    """The columns of ``schema`` of one dtype, in order (ValueError for a dtype the schema does not know)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    return tuple(c.name for c in schema if c.dtype == dtype)


def columns_of(dtype: str) -> tuple[str, ...]:
    """The plan columns of one dtype, in the frame's order (what the loaders check each value against)."""
    return _of_dtype(PLAN_SCHEMA, dtype)


#: The columns a sweep adds to each plan row of a point (``sweeps.run_point``), in order; with them a sweep frame
#: has one ``spec_<field>`` column per spec field.
POINT_SCHEMA: tuple[Column, ...] = (
    Column('point_id', 'text', '', 'point', "the point's stable id: its spec, the run options that change its "
           "numbers and the GPU's name (a store resumes by it)"),
    Column('op', 'text', '', 'operation', "the spec's operation family (``Spec.op``)"),
    Column('label', 'text', '', 'problem', "the spec's one-line label"),
    Column('spec', 'text', '', 'spec (JSON)', 'the whole spec as JSON text (``Spec.to_json``)'),
    Column('is_pick', 'bool', '', "heuristic's pick", "the row is the heuristics' pick of its point"),
    Column('is_best', 'bool', '', 'best plan', 'the row is the best plan of its point (results.metrics.best)'),
    Column('point_status', 'text', '', 'point status', 'ok, failed (the run raised) or invalid (the spec refused '
           'the axis values)'),
    Column('point_error', 'text', '', 'point error', 'why a point failed or was refused, one line'),
    Column('flops', 'int', 'FLOP', 'FLOPs', "the spec's floating-point operation count"),
    Column('min_bytes', 'int', 'bytes', 'minimal bytes', "the spec's minimal bytes moved (its bandwidth model)"),
    Column('torch_off_ms', 'float', 'ms', 'PyTorch (µs)', "PyTorch's eager op on the same problem, "
           "cudnn.benchmark off"),
    Column('torch_on_ms', 'float', 'ms', 'cudnn.benchmark (µs)', "PyTorch's eager op with cudnn.benchmark on"),
    Column('baselines', 'text', '', 'other baselines', "the point's further PyTorch baselines (a family's extra "
           "ones, each PyTorch backend with ``backends=True``) as JSON: name -> {ms, iqr_ms} or {error}"),
    Column('gpu', 'text', '', 'GPU', "the GPU's name"),
    Column('driver', 'text', '', 'driver', 'the NVIDIA driver version'),
    Column('cuda', 'text', '', 'CUDA', 'the CUDA version'),
    Column('cudnn', 'int', '', 'cuDNN', "cuDNN's backend version number (91900 is 9.19.0)"),
    Column('cudnn_frontend', 'text', '', 'cuDNN frontend', "the cuDNN frontend's version"),
    Column('sm_count', 'int', 'SMs', 'SMs', 'the streaming multiprocessors the run used'),
    Column('ceiling_tflops', 'float', 'TFLOP/s', 'compute roof', "the compute ceiling measured on this GPU"),
    Column('ceiling_gbps', 'float', 'GB/s', 'memory roof', 'the memory-bandwidth ceiling measured on this GPU'),
    Column('point_s', 'float', 's', 'point time (s)', 'wall time of the whole point (all its phases)'),
    Column('created', 'text', '', 'created', 'when the point was measured (ISO 8601, UTC)'),
)
#: The point columns, in order.
POINT_COLUMNS: tuple[str, ...] = tuple(c.name for c in POINT_SCHEMA)
_POINT_BY_NAME: dict[str, Column] = {c.name: c for c in POINT_SCHEMA}


def point_column(name: str) -> Column:
    """The schema entry of a sweep point column (KeyError naming it for a name that is not one)."""
    return _POINT_BY_NAME[name]


def point_columns_of(dtype: str) -> tuple[str, ...]:
    """The point columns of one dtype, in order (what a point's rows are typed as and the loaders check)."""
    return _of_dtype(POINT_SCHEMA, dtype)


def doc_table() -> str:
    """The documented schema: a Markdown table of every column (name, dtype, unit, meaning)."""
    rows = [f"| {c.name} | {c.dtype} | {c.unit} | {c.doc} |" for c in PLAN_SCHEMA]
    return "\n".join(["| column | dtype | unit | meaning |", "| --- | --- | --- | --- |", *rows])
