"""The kit's worker roles on a real GPU: the heuristics-asking role starts with the card's description and cuDNN's
version and answers for the card and for the card's own description (deviceless); the build role starts at a lower
priority with the run's identity; the GPU layer's one cuDNN handle is made once per device."""

from __future__ import annotations

import os

import pytest

import cudnn_lab as cl
from cudnn_lab.gpu.workers import Worker

pytestmark = pytest.mark.gpu

MATMUL = cl.MatmulSpec(batch=1, m=256, n=256, k=256, dtype="fp16")


def test_the_ask_role_answers_for_the_card_and_for_a_target_description() -> None:
    from cudnn_lab.gpu.ask_worker import TARGET
    from cudnn_lab.gpu.deviceless import Answer, device_description

    w = Worker(TARGET, stderr="inherit")
    try:
        info = w.start()
        assert info["cudnn"] >= 90800 and info["description"]["deviceName"] == device_description(0)["deviceName"]
        here = w.request({"spec": MATMUL.to_dict(), "description": None, "sm_count": None,
                          "modes": ["A"]}, timeout_s=120)
        answer = Answer.from_dict(here["answer"])
        assert answer.proposals and answer.cudnn_version == info["cudnn"]
        there = w.request({"spec": MATMUL.to_dict(), "description": info["description"], "sm_count": None,
                           "modes": ["A"]}, timeout_s=120)
        assert {p["plan"] for p in there["answer"]["proposals"]} & {p.plan for p in answer.proposals}
        assert w.started == 1
    finally:
        w.close()


def test_the_build_role_starts_at_a_lower_priority_with_the_runs_identity() -> None:
    from cudnn_lab.gpu.build_pool import HELPER_NICE, Helper
    from cudnn_lab.gpu.build_role import identity_fields
    from cudnn_lab.gpu.device import device_info

    h = Helper(0)
    try:
        h.worker.wait_ready()
        assert h.ready is not None and h.ready["info"] == identity_fields(device_info(0))
        with open(f"/proc/{h.pid}/stat") as f:
            niceness = int(f.read().rsplit(")", 1)[1].split()[16])
        assert niceness == min(19, os.nice(0) + HELPER_NICE)
    finally:
        h.kill()
    assert not h.alive()


def test_the_cudnn_handle_is_made_once_per_device() -> None:
    from cudnn_lab.gpu.session import cudnn_handle

    assert cudnn_handle(0) is cudnn_handle(0)
