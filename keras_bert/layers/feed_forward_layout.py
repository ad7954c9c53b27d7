"""Whether a gated feed-forward network is building its intermediate kernel: what model-parallel layouts ask.

`TransformerEncoder` builds a gated (GeGLU) intermediate layer inside
`gated_feed_forward_scope`: its kernel holds the input and gate halves side
by side, which a column layout cannot split evenly over devices.
`keras_bert.distribution.BertModelParallel` (the command line's
model-parallel strategy) replicates what is built in the scope, so a
ModernBERT, or a gated BertBackbone, gets that layout whatever its layout
map says, built anew or loaded (see `keras_bert.distribution.bert_layout_map`).
"""

import contextlib
import threading

_STATE = threading.local()


@contextlib.contextmanager
def gated_feed_forward_scope(gated=True):
    """A scope in which the feed-forward intermediate kernel and bias being built are a gated network's."""
    previous = building_gated_feed_forward()
    _STATE.gated = bool(gated)
    try:
        yield
    finally:
        _STATE.gated = previous


def building_gated_feed_forward():
    """True inside `gated_feed_forward_scope(True)`."""
    return getattr(_STATE, "gated", False)
