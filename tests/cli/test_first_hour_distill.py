"""Issue 49: `keras-bert distill` printed TensorFlow's "triggered tf.function retracing" warnings.

The teacher's predict function was traced in two families: `predict_on_batch` per length-cut batch of the
up-front logits pass (its own input structure, a batch size and then each new length), and `predict` over
the held-out dataset (the evaluation). Five traces of one function within ten calls is TensorFlow's threshold.
"""

import logging

import numpy as np
import pytest

from harness import FIXTURE_VOCABULARY_SIZE, tiny_backbone
from keras_bert.jobs.distill import _teacher_logits
from keras_bert.models import BertTokenClassifier


def _inputs(rng, count, length):
    lengths = rng.integers(3, length + 1, size=count)
    mask = (np.arange(length) < lengths[:, None]).astype("int32")
    token_ids = rng.integers(1, FIXTURE_VOCABULARY_SIZE, size=(count, length)).astype("int32") * mask
    return {"token_ids": token_ids, "segment_ids": 0 * mask, "padding_mask": mask}


@pytest.mark.only_backend("tensorflow", reason="tf.function retracing and its warning are TensorFlow's")
def test_teacher_logits_and_the_held_out_evaluation_retrace_nothing_tensorflow_warns_about(caplog):
    # defers TensorFlow's dataset code, as the job does
    from keras_bert.preprocessing.task_data.task_features import TaskFeatures

    rng = np.random.default_rng(0)
    teacher = BertTokenClassifier(tiny_backbone(max_sequence_length=64), num_classes=5)
    train, held_out = _inputs(rng, 100, 64), _inputs(rng, 50, 64)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        logits = _teacher_logits(teacher, train, 32)
        _teacher_logits(teacher, held_out, 32)
        # The distillation job's evaluation of the teacher (`FinetuneTaskJob.evaluate`) predicts this way.
        expected = teacher.predict(TaskFeatures(train).dataset(32, labels=False), verbose=0)
    assert not [r.getMessage() for r in caplog.records if "retracing" in r.getMessage()]
    assert teacher.predict_function.experimental_get_tracing_count() == 1  # one trace serves every shape
    # The logits of every real token are the teacher's.
    real = train["padding_mask"].astype(bool)
    np.testing.assert_allclose(logits[real], expected[real], atol=1e-5)
