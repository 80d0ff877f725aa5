"""``python -m cudnn_lab.gpu.workers TARGET [--nice N]``: a kit worker's child process (see :mod:`.child`)."""

import sys

from .child import main

sys.exit(main(sys.argv[1:]))
