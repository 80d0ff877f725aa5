"""Where a result's numbers come from, said plainly: RECORDED on a named GPU (a shipped recording or a saved file)
or MEASURED HERE (a run on this machine), with the GPU, driver, cuDNN version and date. The Lab's banner, the
HTML report and the notebooks use this one function, so every result says the same thing the same way.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any

__all__ = ["KINDS", "Provenance", "banner_html", "cudnn_version_text", "provenance"]

#: What a provenance can be: numbers read from a file made elsewhere, or measured in this session.
KINDS = ("recorded", "measured")
_HEADINGS = {"recorded": "RECORDED", "measured": "MEASURED HERE"}


def cudnn_version_text(value: Any) -> str:
    """cuDNN's version number as text: 91900 -> '9.19.0', 8907 -> '8.9.7'; text stays as it is."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return "unknown" if value in (None, "") or value != value else str(value)
    if v >= 90000:
        return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
    if v >= 1000:
        return f"{v // 1000}.{v % 1000 // 100}.{v % 100}"
    return str(v)


@dataclasses.dataclass(frozen=True)
class Provenance:
    """A result's origin: ``kind`` ('recorded' or 'measured'), the device it ran on and when; ``name`` is the
    recording's name or file (recorded only)."""

    kind: str
    gpu: str
    driver: str
    cudnn: str
    cuda: str
    date: str
    name: str = ""

    @property
    def heading(self) -> str:
        """'RECORDED' or 'MEASURED HERE'."""
        return _HEADINGS[self.kind]

    @property
    def device(self) -> str:
        """'NVIDIA H200 · driver 580.159.04 · CUDA 13.0 · cuDNN 9.19.0 · 2026-11-21'."""
        return " · ".join([self.gpu, f"driver {self.driver}", f"CUDA {self.cuda}", f"cuDNN {self.cudnn}",
                           self.date])

    @property
    def text(self) -> str:
        """One line: 'RECORDED on NVIDIA H200 · driver … · 2026-11-21 (h200_conv_nhwc_fp16)'."""
        where = "on" if self.kind == "recorded" else "on this machine's"
        return f"{self.heading} {where} {self.device}" + (f" ({self.name})" if self.name else "")

    def to_html(self) -> str:
        """The banner: the heading in bold on a colour of its own (amber: recorded, green: measured here)."""
        name = f" <span class='cl-prov-name'>({html.escape(self.name)})</span>" if self.name else ""
        return banner_html(self.kind, f"on {html.escape(self.device)}{name}")


def banner_html(kind: str, markup: str) -> str:
    """A provenance banner: RECORDED or MEASURED HERE in bold, then ``markup`` (made by the caller), on the kind's
    colour (amber: recorded, green: measured here)."""
    colors = {"recorded": ("#fef3c7", "#92400e", "#f59e0b"), "measured": ("#dcfce7", "#166534", "#22c55e")}
    bg, fg, edge = colors[kind]
    return (f"<div class='cl-provenance cl-provenance-{kind}' style='background:{bg};color:{fg};"
            f"border-left:4px solid {edge};padding:3px 8px;margin:2px 0;font-size:12px;line-height:1.4'>"
            f"<b>{_HEADINGS[kind]}</b> {markup}</div>")


def _text(value: Any, missing: str) -> str:
    if value is None or value == "" or value != value:
        return missing
    return str(value)


def provenance(result: Any, *, recorded: bool | None = None, name: str | None = None) -> Provenance:
    """Where ``result`` (a RunResult) comes from. ``recorded`` says it (the caller knows whether it loaded the
    result or measured it); left None, a result that carries the file it was loaded from (``loaded_from``) is
    recorded and any other is measured here. ``name``: the recording's name or file to show."""
    device = getattr(result, "device", None) or {}
    loaded_from = getattr(result, "loaded_from", None)
    if recorded is None:
        recorded = loaded_from is not None
    if recorded and not name and loaded_from is not None:
        name = str(getattr(loaded_from, "stem", loaded_from))
    return Provenance(kind="recorded" if recorded else "measured",
                      gpu=_text(device.get("gpu"), "unknown GPU"),
                      driver=_text(device.get("driver"), "unknown"),
                      cudnn=cudnn_version_text(device.get("cudnn_backend", device.get("cudnn"))),
                      cuda=_text(device.get("cuda"), "unknown"),
                      date=_text((getattr(result, "created", "") or "")[:10], "undated"),
                      name=(name or "") if recorded else "")
