"""gpu/frontend.warm_engine_family without a GPU: the frontend's Python engine modules a graph plans with are
imported ahead of a run (once per family), and nothing it meets can fail the run."""

from __future__ import annotations

import sys

import cudnn_lab as cl
from cudnn_lab.gpu import frontend


def test_a_gemm_warms_its_engine_family_once(monkeypatch) -> None:
    monkeypatch.setattr(frontend, "_WARMED", set())
    frontend.warm_engine_family_async(cl.MatmulSpec(m=64, n=64, k=64, dtype="bf16")).join(60)
    assert frontend._WARMED == {"frost_gemm"}
    from cudnn.engines import manifest

    family = next(f for f in manifest.MANIFEST if f.name == "frost_gemm")
    assert family.analyzer is not None and family.analyzer[0] in sys.modules
    asked: list[object] = []
    monkeypatch.setattr(frontend, "build_graph", lambda spec: asked.append(spec))  # no graph: quiet, no retry
    frontend.warm_engine_family(cl.MatmulSpec(m=64, n=64, k=64, dtype="bf16"))
    assert asked and frontend._WARMED == {"frost_gemm"}


def test_warming_is_quiet_for_a_graph_no_family_claims_and_for_a_failure(monkeypatch) -> None:
    monkeypatch.setattr(frontend, "_WARMED", set())
    frontend.warm_engine_family(cl.ConvSpec(n=1, c=8, h=8, w=8, k=8, r=3, s=3, padding=1, layout="NHWC",
                                            dtype="fp16"))
    assert "frost_gemm" not in frontend._WARMED

    def boom(spec: object) -> None:
        raise RuntimeError("no graph")

    monkeypatch.setattr(frontend, "build_graph", boom)
    frontend.warm_engine_family(cl.MatmulSpec(m=64, n=64, k=64, dtype="bf16"))  # no exception
    assert "frost_gemm" not in frontend._WARMED
