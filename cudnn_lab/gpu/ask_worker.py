"""The heuristics-asking role of the kit's worker (``cudnn_lab.gpu.ask_worker:answer``, run by
:mod:`cudnn_lab.gpu.workers`; the user's side is :mod:`cudnn_lab.gpu.asker`). It runs apart from the user's process
because cuDNN can crash while answering for a target (a segmentation fault, docs/FINDINGS.md) and because another
cuDNN version must be loaded in a process of its own (``LD_LIBRARY_PATH`` set by the parent; torch is never
imported here).

Ready info: ``{"cudnn": <backend version>, "description": <the card's, or null>}``.
Message: ``{"spec": {...}, "description": {...} | null, "sm_count": int | null, "modes": [...]}``.
Reply: ``{"answer": Answer.to_dict()}`` or ``{"error": {"type": ..., "message": ..., "detail": ...}}``.
"""

from __future__ import annotations

from typing import Any

from ..specs import spec_from_dict
from .deviceless import HEURISTIC_MODES, ask, device_description
from .session import cudnn_handle
from .workers import role

__all__ = ["answer", "TARGET"]

#: The role's worker target.
TARGET = "cudnn_lab.gpu.ask_worker:answer"


def _card_description() -> Any:
    try:
        return device_description(0)
    except Exception:  # noqa: BLE001 - no GPU in this process: deviceless targets only
        return None


def _start() -> dict[str, Any]:
    """Load cuDNN (its error, in one line, where it cannot be) and describe the card, if there is one."""
    import cudnn

    return {"cudnn": int(cudnn.backend_version()), "description": _card_description()}


@role(start=_start)
def answer(message: dict[str, Any]) -> dict[str, Any]:
    """cuDNN's heuristics' answer for one query, or its refusal as data."""
    try:
        spec = spec_from_dict(message["spec"])
        here = message.get("description") is None
        found = ask(spec, description=message.get("description"), sm_count=message.get("sm_count"),
                    modes=tuple(message.get("modes") or HEURISTIC_MODES), handle=cudnn_handle(0) if here else None)
        return {"answer": found.to_dict()}
    except Exception as e:  # noqa: BLE001 - every refusal goes back to the parent as data
        detail = getattr(e, "detail", "") or str(e)
        return {"error": {"type": type(e).__name__, "message": str(e)[:4000], "detail": detail[:20000]}}

