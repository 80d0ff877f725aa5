"""cuDNN's classic (non-graph) API, one generation for every family the frontend graph API does not run: the
library search (:mod:`.loader`), the entry points, descriptors and the one-call "plan" (:class:`.base.ClassicCall`)
in a stand-in for a LabGraph (:class:`.base.ClassicLab`), and each family's calls and plan source: softmax,
activations and tensor transforms (:mod:`.ops`), pooling (:mod:`.pool`), RNNs (:mod:`.rnn`). Importing this package
registers the plan sources."""

from . import loader, ops, pool, rnn  # importing them registers the plan sources

__all__ = ["loader", "ops", "pool", "rnn"]
