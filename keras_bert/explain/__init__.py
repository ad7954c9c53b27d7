"""Why did the model say that? Token attributions and their faithfulness.

    attributor = TokenAttributor(classifier, tokenizer)            # integrated gradients, 64 steps
    rows = attributor(["a gorgeous, witty, seductive movie."])     # TokenAttributions per input
    write_attribution_report(rows, "explained/")                               # attributions.jsonl, report.html, PNGs
    curve = deletion_curve(attributor, texts)                      # most-attributed vs random words deleted

Gradients come from each backend's own differentiation (`gradients.py`);
everything else is numpy and `keras.ops`. This part sits beside `pipelines`:
it imports models, preprocessing and postprocessing, and nothing below it
imports it.
"""

from keras_bert.explain.deletion_curve import DeletionCurve, deletion_curve
from keras_bert.explain.report_files import write_attribution_report
from keras_bert.explain.token_attributions import TokenAttributions
from keras_bert.explain.token_attributor import TokenAttributor

__all__ = ["DeletionCurve", "TokenAttributions", "TokenAttributor", "deletion_curve", "write_attribution_report"]
