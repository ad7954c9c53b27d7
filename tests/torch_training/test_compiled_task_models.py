"""Every task model (and family backbone) trains under `jit_compile=True` on torch as its eager step does, and
predicts and evaluates through its compiled forward as eagerly.

One parametrized case per head: its own inputs (a choices or tuple axis,
masked positions), labels (dicts, -100 positions, floats, none) and sample
weights; each fits 2 epochs of 2 batches eagerly and compiled from the same
weights, dropout off (test_compiled_train_step.py compares the masks).
Compiled with "aot_eager" (the same graphs as inductor's, built in seconds);
the forward of `predict` / `evaluate` as the exported graph uncompiled
(test_compiled_forward.py runs it through inductor).
"""

import os

import keras
import numpy as np
import pytest

from harness import random_bert_inputs, tiny_backbone
from keras_bert import AlbertBackbone, DistilBertBackbone
from keras_bert.models import (
    BertClassifier,
    BertMaskedLM,
    BertMultipleChoice,
    BertQuestionAnswerer,
    BertTextEmbedder,
    BertTokenClassifier,
    ElectraDiscriminator,
)
from keras_bert.optimizers import create_optimizer
from keras_bert.torch_training import CompiledTrainStep, compiled_forward, compiled_train_step

pytestmark = pytest.mark.only_backend(
    "torch", reason="the compiled step is the torch backend's `jit_compile=True`; TensorFlow and JAX compile with XLA"
)

VOCAB, BATCH, LENGTH = 40, 8, 10


def _inputs(seed=0):
    return random_bert_inputs(BATCH, LENGTH, VOCAB, seed=seed)


def _rng():
    return np.random.default_rng(3)


def token_classifier():
    y = _rng().integers(0, 5, (BATCH, LENGTH)).astype("int32")
    y[:, 0] = -100
    return BertTokenClassifier(tiny_backbone(vocabulary_size=VOCAB), num_classes=5, dropout=0.0), _inputs(), y, None


def question_answerer():
    rng = _rng()
    y = {"start": rng.integers(0, 6, (BATCH,)).astype("int32"), "end": rng.integers(4, 8, (BATCH,)).astype("int32")}
    return BertQuestionAnswerer(tiny_backbone(vocabulary_size=VOCAB)), _inputs(), y, None


def multiple_choice():
    x = {name: np.stack([_inputs(seed)[name] for seed in range(3)], axis=1) for name in _inputs()}  # (batch, 3, length)
    y = _rng().integers(0, 3, (BATCH,))
    return BertMultipleChoice(tiny_backbone(vocabulary_size=VOCAB), dropout=0.0), x, y, None


def masked_lm():
    rng = _rng()
    x = _inputs()
    x["mask_positions"] = np.sort(np.stack([rng.choice(np.arange(1, 8), 3, replace=False) for _ in range(BATCH)]),
                                  axis=1).astype("int32")
    w = (rng.random((BATCH, 3)) > 0.3).astype("float32")
    return BertMaskedLM(tiny_backbone(vocabulary_size=VOCAB)), x, rng.integers(5, VOCAB, (BATCH, 3)), w


def text_embedder():
    x = {name: np.stack([_inputs(seed)[name] for seed in range(2)], axis=1) for name in _inputs()}  # anchors, positives
    return BertTextEmbedder(tiny_backbone(vocabulary_size=VOCAB)), x, None, None


def electra_discriminator():
    x = _inputs()
    y = _rng().integers(0, 2, (BATCH, LENGTH)).astype("int32")
    return ElectraDiscriminator(tiny_backbone(vocabulary_size=VOCAB)), x, y, x["padding_mask"].astype("float32")


def regressor():
    y = _rng().normal(size=(BATCH,)).astype("float32")
    return BertClassifier(tiny_backbone(vocabulary_size=VOCAB), num_classes=1, dropout=0.0), _inputs(), y, None


def distilbert_classifier():
    # DistilBERT takes no segment ids: `fit` drops them from the batches before the step sees them.
    backbone = DistilBertBackbone.from_size("tiny", vocabulary_size=VOCAB, hidden_dim=16, intermediate_dim=32,
                                            num_heads=2, max_sequence_length=32, dropout=0.0)
    return BertClassifier(backbone, num_classes=3, dropout=0.0), _inputs(), _rng().integers(0, 3, (BATCH,)), None


def albert_classifier():
    # ALBERT shares one block across layers: no [CLS]-only last block there (`cls_only_scope` is a no-op).
    backbone = AlbertBackbone.from_size("tiny", vocabulary_size=VOCAB, hidden_dim=16, intermediate_dim=32,
                                        num_heads=2, max_sequence_length=32, dropout=0.0)
    return BertClassifier(backbone, num_classes=3, dropout=0.0), _inputs(), _rng().integers(0, 3, (BATCH,)), None


# The suite keeps one case per output structure and one family whose blocks differ: start/end logits (QA), a
# choices axis, a dict of outputs (MLM), one block shared across layers (ALBERT). The others (token classifier,
# text embedder, ELECTRA discriminator, regressor, DistilBERT) matched eager when this was written (2026-11-29);
# run them all with KERAS_BERT_ALL_COMPILED_CASES=1 when the step changes.
ALL_CASES = [token_classifier, question_answerer, multiple_choice, masked_lm, text_embedder, electra_discriminator,
             regressor, distilbert_classifier, albert_classifier]
CASES = ALL_CASES if os.environ.get("KERAS_BERT_ALL_COMPILED_CASES") == "1" else [
    question_answerer, multiple_choice, masked_lm, albert_classifier]


@pytest.mark.parametrize("case", CASES, ids=[case.__name__ for case in CASES])
def test_task_model_trains_compiled_as_eager(case, monkeypatch):
    monkeypatch.setattr(compiled_train_step, "COMPILER", "aot_eager")
    monkeypatch.setattr(compiled_forward, "COMPILE_MODE", None)
    runs = {}
    for jit in (False, True):
        keras.utils.set_random_seed(0)
        model, x, y, w = case()
        model.compile(optimizer=create_optimizer(learning_rate=1e-2, warmup_steps=1, total_steps=8,
                                                 global_clipnorm=0.1), jit_compile=jit)
        keras.utils.set_random_seed(1)
        history = model.fit(x, y, sample_weight=w, batch_size=BATCH // 2, epochs=2, verbose=0, shuffle=False)
        runs[jit] = model, history.history
    (eager, eager_history), (compiled, compiled_history) = runs[False], runs[True]
    assert isinstance(compiled.train_function, CompiledTrainStep)
    assert compiled.train_function.fallback_reason is None
    assert sorted(compiled_history) == sorted(eager_history)
    for key in eager_history:
        np.testing.assert_allclose(compiled_history[key], eager_history[key], rtol=1e-5, atol=1e-6, err_msg=key)
    # Within 1% of one update (learning rate 1e-2): a weight whose true gradient is 0 gets float noise for one
    # (the multiple-choice head's bias: a constant added to every choice leaves the softmax as it is), and Adam
    # scales noise up to a step's size, in either run (seen: 1.1e-5 apart after 4 steps).
    for a, b in zip(compiled.weights, eager.weights):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b), rtol=1e-4,
                                   atol=1e-4, err_msg=a.path)

    # predict and evaluate: the compiled forward on the trained weights, as the eager forward of the same model.
    expected = keras.tree.map_structure(keras.ops.convert_to_numpy, compiled(x, training=False))
    predicted = compiled.predict(x, batch_size=BATCH // 2, verbose=0)
    assert compiled._compiled_forward.traced is not None and compiled._compiled_forward.fallback_reason is None
    keras.tree.map_structure(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5), predicted, expected)
    evaluated = compiled.evaluate(x, y, sample_weight=w, batch_size=BATCH // 2, verbose=0, return_dict=True)
    compiled.compile(optimizer="adam", jit_compile=False)  # the same weights, evaluated eagerly
    eager_evaluated = compiled.evaluate(x, y, sample_weight=w, batch_size=BATCH // 2, verbose=0, return_dict=True)
    assert compiled._compiled_forward is None and sorted(evaluated) == sorted(eager_evaluated)
    for key in evaluated:
        np.testing.assert_allclose(evaluated[key], eager_evaluated[key], rtol=1e-5, atol=1e-6, err_msg=key)
