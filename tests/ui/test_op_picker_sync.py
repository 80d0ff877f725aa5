"""The operation picker, the browser's copy of it and the Lab agree whatever the order of a Load, a click and a switch
made by code (issue 39), and the Lab's callbacks take turns whichever kernel thread delivers them.

Without a browser: what the browser holds is what the kernel sent it (a ToggleButtons syncs ``index`` only; its
echo and update messages are recorded here). A click delivered on another thread stands for JupyterLab 4.4+'s widget
subshell, which ipykernel 7 serves on a thread beside the main shell.
"""

from __future__ import annotations

import threading
from typing import Any

import ipywidgets as W
import pytest
from lab_samples import CONV_RECORDING, MATMUL_RECORDING

import cudnn_lab as cl
from cudnn_lab.specs.presets import preset_info
from cudnn_lab.ui import Lab
from cudnn_lab.ui.fields import OPS
from cudnn_lab.ui.recordings import recordings_of
from cudnn_lab.ui.status import StatusLog


@pytest.fixture
def lab() -> Lab:
    return Lab(cl.ConvSpec(n=2, c=8, h=8, w=8, k=16, r=3, s=3, padding=1, layout="NHWC", dtype="fp16",
                           epilogue=("bias", "relu")), gpu=False)


class FrontEnd:
    """The picker as the browser holds it: a click sets its index at once and sends it; every message the kernel
    sends with an index (the echo of a click, a change made in the kernel) sets it after."""

    def __init__(self, picker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.picker, self.index = picker, picker.index
        send = picker._send

        def sent(msg: dict[str, Any], buffers: Any = None) -> None:
            if "index" in msg.get("state", {}):
                self.index = msg["state"]["index"]
            send(msg, buffers)

        monkeypatch.setattr(picker, "_send", sent)

    def click(self, op: str) -> None:
        """Click ``op``'s button: the kernel gets the new index as it gets a browser's message."""
        self.index = list(OPS).index(op)
        self.picker._handle_msg({"content": {"data": {"method": "update", "state": {"index": self.index},
                                                      "buffer_paths": []}}, "buffers": []})


def shown_op(lab: Lab, front: FrontEnd) -> str:
    """The operation shown, after checking that every side shows it: the picker's value and index, the browser's
    index, the Lab's spec, the form on screen and the recordings offered."""
    picker, form = lab.controls.op, lab.controls
    assert list(OPS)[picker.index] == picker.value == lab.spec.op
    assert front.index == picker.index  # the browser shows what the kernel holds
    assert form.boxes[picker.value] in form.box.children and form.boxes[picker.value].layout.display == "flex"
    offered = [v for _, v in lab.datasets.options]
    assert offered == list(recordings_of(cl.recorded_datasets(kind="run"), picker.value)["name"])
    return str(picker.value)


def test_loads_clicks_and_switches_from_code_keep_every_side_agreeing(lab: Lab, monkeypatch) -> None:
    front = FrontEnd(lab.controls.op, monkeypatch)
    front.click("matmul")
    assert shown_op(lab, front) == "matmul"
    lab.load_recorded(CONV_RECORDING)  # a recording of another operation switches the picker from the kernel
    assert shown_op(lab, front) == "conv" and lab.result.spec.op == "conv"
    lab.spec = cl.MatmulSpec(m=64, n=64, k=64)
    assert shown_op(lab, front) == "matmul"
    name = next(n for n in cl.presets() if preset_info(n).spec.op == "sdpa")
    lab.controls.apply_preset(name)  # the presets picker switches the family too
    assert shown_op(lab, front) == "sdpa" and lab.controls.preset_status.startswith("preset:")
    front.click("conv")
    lab.load_recorded(MATMUL_RECORDING)
    assert shown_op(lab, front) == "matmul" and lab.messages == []


def test_a_click_on_another_thread_during_a_load_comes_after_it(lab: Lab, monkeypatch) -> None:
    """Issue 39: a click on 'matmul' while a conv recording loads, delivered on the widgets' subshell thread, is
    applied after the Load (as the main shell's queue would): matmul shown on every side, none left on conv."""
    front = FrontEnd(lab.controls.op, monkeypatch)
    show, clicks = lab.show_result, []

    def show_with_a_click(result: Any, **kwargs: Any) -> None:
        click = threading.Thread(target=front.click, args=("matmul",), name="widgets subshell")
        click.start()
        clicks.append(click)
        click.join(timeout=0.5)  # room for the click to run beside the Load, were it let
        show(result, **kwargs)

    monkeypatch.setattr(lab, "show_result", show_with_a_click)
    lab.datasets.value = CONV_RECORDING
    lab.load_button.click()
    clicks[0].join()
    assert lab.result.spec.op == "conv" and lab.recorded == CONV_RECORDING
    assert shown_op(lab, front) == "matmul" and lab.messages == []


class _Kernel:
    """A kernel's parent message per thread, as ipykernel keeps it: here the thread's name."""

    def get_parent(self) -> dict[str, Any]:
        return {"header": {"msg_id": threading.current_thread().name}}


def test_callbacks_on_two_threads_take_turns_in_the_log() -> None:
    """The Log's Output takes the message id of the callback inside it. Were a short callback let in and out while
    a long one on another thread is inside, the Output would stay on the short one's message after it ended, and
    the browser would swallow that message's idle status (the operation picker then kept its changes)."""
    log = StatusLog(W)
    log.log.comm.kernel = _Kernel()
    events: list[str] = []
    left_on: dict[str, str] = {}
    inside, short_done = threading.Event(), threading.Event()

    def long_callback() -> None:  # a view built on the subshell
        events.append("long in")
        inside.set()
        short_done.wait(timeout=1.0)  # the short one would end meanwhile, were it let in
        events.append("long out")

    def on_subshell() -> None:
        log.guard(long_callback)
        left_on["subshell"] = log.log.msg_id  # what the browser reads when this message's idle goes out

    subshell = threading.Thread(target=on_subshell, name="subshell")
    subshell.start()
    inside.wait()
    log.guard(lambda: events.append("short"))  # the operation picker's click, on the main shell
    left_on["MainThread"] = log.log.msg_id
    short_done.set()
    subshell.join()
    assert events == ["long in", "long out", "short"]
    assert left_on["subshell"] != "subshell" and left_on["MainThread"] != "MainThread" and log.log.msg_id == ""


def test_stop_acts_beside_the_run_under_way(lab: Lab) -> None:
    """Stop does not wait for the turn of the Run it stops (a Run on one kernel thread, Stop on another)."""
    running, stopped = threading.Event(), []

    def run() -> None:  # stands for Run's measuring loop, which checks Stop between plans
        lab._running = True
        running.set()
        stopped.append(lab._stop.wait(timeout=5.0))
        lab._running = False

    runner = threading.Thread(target=lab.status_log.guard, args=(run,), name="run")
    runner.start()
    running.wait()
    lab.stop_button.click()
    runner.join()
    assert stopped == [True] and "Stopping after the plan being measured" in lab.status.value
