"""The process that asks cuDNN's heuristics (``python -m cudnn_lab.gpu.ask_worker``): one JSON query per line on
stdin, one JSON answer per line on stdout. It runs apart from the user's process because cuDNN can crash while
answering for a target (a segmentation fault, docs/FINDINGS.md) and because another cuDNN version must be loaded in
a process of its own (``LD_LIBRARY_PATH`` set by the parent; torch is never imported here).

First line written: ``{"ready": true, "cudnn": <backend version>, "description": <the card's, or null>}``.
Query: ``{"id": n, "spec": {...}, "description": {...} | null, "sm_count": int | null, "modes": [...]}``.
Answer: ``{"id": n, "answer": Answer.to_dict()}`` or ``{"id": n, "error": {"type": ..., "message": ...}}``.
"""

from __future__ import annotations

import json
import sys
from typing import Any
from ..specs import spec_from_dict
from .deviceless import ask


def _card_description() -> Any:
    try:
        from .deviceless import device_description

        return device_description(0)
    except Exception:  # noqa: BLE001 - no GPU in this process: deviceless targets only
        return None


def _handle() -> Any:
    """A cuDNN handle on the card, made without torch (another cuDNN may be loaded in this process)."""
    import cudnn
    from cuda.bindings import driver

    driver.cuInit(0)
    _, dev = driver.cuDeviceGet(0)
    _, ctx = driver.cuDevicePrimaryCtxRetain(dev)
    driver.cuCtxSetCurrent(ctx)
    return cudnn.create_handle()


def serve(stdin: Any = sys.stdin, stdout: Any = sys.stdout) -> int:
    """Answer queries until stdin closes."""
    import cudnn

    try:
        version = int(cudnn.backend_version())
    except Exception as e:  # noqa: BLE001 - no cuDNN library here: say so in one line, not a traceback
        stdout.write(json.dumps({"ready": False, "error": str(e).splitlines()[0][:300]}) + "\n")
        stdout.flush()
        return 3
    card = _card_description()
    handle = None
    stdout.write(json.dumps({"ready": True, "cudnn": version, "description": card}) + "\n")
    stdout.flush()
    for line in stdin:
        if not line.strip():
            continue
        query = json.loads(line)
        reply: dict[str, Any] = {"id": query.get("id")}
        try:
            spec = spec_from_dict(query["spec"])
            if query.get("description") is None and handle is None:
                handle = _handle()
            answer = ask(spec, description=query.get("description"), sm_count=query.get("sm_count"),
                         modes=tuple(query.get("modes") or ("A", "B", "FALLBACK")),
                         handle=handle if query.get("description") is None else None)
            reply["answer"] = answer.to_dict()
        except Exception as e:  # noqa: BLE001 - every refusal goes back to the parent as data
            detail = getattr(e, "detail", "") or str(e)
            reply["error"] = {"type": type(e).__name__, "message": str(e)[:4000], "detail": detail[:20000]}
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
