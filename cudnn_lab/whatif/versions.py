"""Run one spec under another cuDNN (``python -m cudnn_lab.version_worker SPEC OPTIONS OUT``): the parent
(:func:`cudnn_lab.whatif.run_under`) puts that cuDNN's folder first on ``LD_LIBRARY_PATH``; this process loads the
frontend (and so that cuDNN) before torch, turns torch's own cuDNN use off (torch refuses a cuDNN it was not built
with: docs/FINDINGS.md) and runs the spec with the kit's run, without PyTorch baselines (those come from the
parent's process). The result is written as JSON to OUT; a kit error as {"error": ...}.

It sits beside :mod:`cudnn_lab.whatif`, above the runs layer it calls; the kit modules imported here load neither
torch nor cudnn, so the frontend's cuDNN is still the first one loaded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .runs import run
from .specs import spec_from_json


def main(argv: list[str]) -> int:
    """Run the spec and write its result (or the error) to OUT; 0 on success, 1 on a failure written to OUT."""
    spec_json, options_json, out = argv
    out_path = Path(out)
    try:
        import cudnn  # first: the folder on LD_LIBRARY_PATH provides libcudnn, not torch's wheel

        version = int(cudnn.backend_version())
        import torch

        torch.backends.cudnn.enabled = False  # torch's conv/SDPA paths would refuse this cuDNN
        spec = spec_from_json(spec_json)
        options = {**json.loads(options_json), "baselines": False}
        result = run(spec, options)
        result.settings["cudnn_lib_version"] = version
        result.save(out_path)
        return 0
    except Exception as e:  # noqa: BLE001 - every failure goes back to the parent as data, in one line
        out_path.write_text(json.dumps({"error": type(e).__name__, "message": str(e)[:4000]}))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
