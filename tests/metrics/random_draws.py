"""The hypothesis settings of the metric reference tests: derandomized in CI, widened by environment.

    KERAS_BERT_HYPOTHESIS_EXAMPLES=20000 KERAS_BERT_HYPOTHESIS_RANDOM=1 python -m pytest tests/metrics -q
"""

import os

from hypothesis import settings

MAX_EXAMPLES = int(os.environ.get("KERAS_BERT_HYPOTHESIS_EXAMPLES", "100"))
RANDOM_DRAWS = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=not os.environ.get("KERAS_BERT_HYPOTHESIS_RANDOM"),
    deadline=None,
    database=None,
)
