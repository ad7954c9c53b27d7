"""BertPretrainer and BertMaskedLM: harness, defaults, and that pretraining learns."""

import keras
import numpy as np
import pytest

from harness import StopWhenLearned, random_bert_inputs, run_model_test, run_saving_test, tiny_backbone
from keras_bert import BertMaskedLM, BertPretrainer

VOCAB = 40


def pretraining_batch(batch_size=4, length=10, predictions=3):
    inputs = random_bert_inputs(batch_size, length, VOCAB)
    inputs["mask_positions"] = np.tile(np.array([1, 2, 3], "int32")[:predictions], (batch_size, 1))
    targets = {"mlm": inputs["token_ids"][:, 1 : 1 + predictions].copy(), "nsp": np.arange(batch_size) % 2}
    weights = {"mlm": np.ones((batch_size, predictions), "float32"), "nsp": np.ones((batch_size,), "float32")}
    weights["mlm"][0, -1] = 0.0  # a padded prediction slot
    return inputs, targets, weights


def test_pretrainer_harness(tmp_path):
    inputs, targets, weights = pretraining_batch()
    model = run_model_test(
        lambda: BertPretrainer(tiny_backbone(vocabulary_size=VOCAB)),
        inputs,
        {"mlm": (4, 3, VOCAB), "nsp": (4, 2)},
        tmp_path,
        targets=targets,
        sample_weight=weights,
    )
    # The decoder is the token embedding: the heads add transform, LayerNorm, output bias and NSP only.
    hidden = 16
    head_params = hidden * hidden + hidden + 2 * hidden + VOCAB + 2 * hidden + 2
    assert model.count_params() == model.backbone.count_params() + head_params


def test_masked_lm_harness(tmp_path):
    inputs, targets, weights = pretraining_batch()
    run_model_test(
        lambda: BertMaskedLM(tiny_backbone(vocabulary_size=VOCAB)),
        inputs,
        (4, 3, VOCAB),
        tmp_path,
        targets=targets["mlm"],
        sample_weight=weights["mlm"],
    )


def test_mlm_loss_averages_over_real_masked_positions_only():
    model = BertPretrainer(tiny_backbone(vocabulary_size=VOCAB))
    model.compile()
    inputs, targets, weights = pretraining_batch()
    logits = keras.ops.convert_to_numpy(model(inputs)["mlm"])
    log_probs = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) - logits.max(
        -1, keepdims=True
    )
    nll = -np.take_along_axis(log_probs, targets["mlm"][..., None], axis=-1)[..., 0]
    expected = (nll * weights["mlm"]).sum() / weights["mlm"].sum()
    results = model.evaluate(inputs, targets, sample_weight=weights, batch_size=4, verbose=0, return_dict=True)
    np.testing.assert_allclose(results["mlm_loss"], expected, rtol=1e-4)


def test_pretrainer_rejects_mask_positions_outside_sequence():
    model = BertPretrainer(tiny_backbone(vocabulary_size=VOCAB))
    inputs, _, _ = pretraining_batch()
    inputs["mask_positions"][0, 0] = 10
    with pytest.raises(ValueError, match=r"`mask_positions` must be in \[0, 10\)"):
        model(inputs)


def test_pretrainer_rejects_missing_mask_positions():
    model = BertPretrainer(tiny_backbone(vocabulary_size=VOCAB))
    inputs, _, _ = pretraining_batch()
    del inputs["mask_positions"]
    with pytest.raises(ValueError, match=r"Missing: \['mask_positions'\]"):
        model.predict(inputs, verbose=0)


def counting_task(num_examples=512, length=12, predictions=2, seed=0):
    """A small task with structure both heads can learn.

    Segment A counts up from a random token (s, s+1, ..., wrapping inside the
    non-special ids); segment B either continues the count ("next", label 0)
    or counts from a random other start ("random", label 1). A masked token
    (replaced by [MASK], id 1) is recoverable from its neighbours; NSP needs
    to compare the end of A with the start of B.
    """
    rng = np.random.default_rng(seed)
    low, span = 4, VOCAB - 4
    half = (length - 3) // 2
    token_ids = np.zeros((num_examples, length), "int32")
    labels = rng.integers(0, 2, num_examples)
    positions = np.zeros((num_examples, predictions), "int32")
    targets = np.zeros((num_examples, predictions), "int32")
    for i in range(num_examples):
        start = rng.integers(span)
        b_start = start + half if labels[i] == 0 else start + half + rng.integers(2, span - 2)
        a = low + (start + np.arange(half)) % span
        b = low + (b_start + np.arange(half)) % span
        row = np.concatenate([[2], a, [3], b, [3]])
        token_ids[i, : len(row)] = row
        positions[i] = np.sort(rng.choice([*range(1, 1 + half), *range(2 + half, 2 + 2 * half)], predictions, replace=False))
        targets[i] = token_ids[i, positions[i]]
        token_ids[i, positions[i]] = 1
    segment_ids = np.zeros_like(token_ids)
    segment_ids[:, 2 + half :] = 1
    padding_mask = np.broadcast_to(np.arange(length) < 2 * half + 3, token_ids.shape).astype("int32")
    segment_ids *= padding_mask
    x = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask, "mask_positions": positions}
    y = {"mlm": targets, "nsp": labels.astype("int32")}
    w = {"mlm": np.ones_like(targets, dtype="float32"), "nsp": np.ones(num_examples, "float32")}
    return x, y, w


def test_pretraining_learns_mlm_and_nsp():
    model = BertPretrainer(tiny_backbone(vocabulary_size=VOCAB, hidden_dim=32, intermediate_dim=64, dropout=0.0))
    from keras_bert import create_optimizer

    model.compile(optimizer=create_optimizer(learning_rate=5e-3, weight_decay=0.0, warmup_steps=16))
    x, y, w = counting_task()
    before = model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
    # Up to 20 epochs; most backends pass the bar in fewer (the assertions below re-evaluate).
    stop = StopWhenLearned({"mlm_accuracy": 0.6, "nsp_accuracy": 0.95})
    history = model.fit(x, y, sample_weight=w, batch_size=32, epochs=20, verbose=0, callbacks=[stop])
    after = model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
    # Chance is 1/40 for MLM and 1/2 for NSP.
    assert after["mlm_loss"] < 0.5 * before["mlm_loss"], (before, after)
    assert after["mlm_accuracy"] > 0.5, after
    assert after["nsp_loss"] < 0.5 * before["nsp_loss"], (before, after)
    assert after["nsp_accuracy"] > 0.9, after
    assert history.history["loss"][-1] < history.history["loss"][0]


NO_CPU_FLOAT16_TRAINING = (
    "XLA:CPU has no float16 x float16 -> float32 dot_general for the backward pass "
    "('precision F16_F16_F32 is not supported by dot_general on CPU'); float16 training on JAX needs a GPU"
)


@pytest.mark.parametrize(
    "policy",
    [pytest.param("mixed_float16", marks=pytest.mark.not_backend("jax", reason=NO_CPU_FLOAT16_TRAINING)), "mixed_bfloat16"],
)
def test_mixed_precision_pretraining_step(policy):
    model = BertPretrainer(tiny_backbone(vocabulary_size=VOCAB, dtype=policy))
    model.compile()
    if policy == "mixed_float16":
        # float16 gradients need loss scaling; Keras adds it for a float16 model.
        assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    inputs, targets, weights = pretraining_batch()
    history = model.fit(inputs, targets, sample_weight=weights, epochs=2, verbose=0)
    assert all(np.isfinite(history.history["loss"]))
    outputs = model.predict(inputs, verbose=0)
    assert outputs["mlm"].dtype == np.float32 and np.all(np.isfinite(outputs["mlm"]))


def test_masked_lm_only_pretrainer(tmp_path):
    """`sentence_head=False` (RoBERTa's MLM only): no NSP head, input or output; `.keras` keeps it.

    Its training runs in tests/jobs/test_pretraining_objectives_job.py (the `--sentence-task none` job).
    """
    inputs, _, _ = pretraining_batch()
    model = BertPretrainer(tiny_backbone(vocabulary_size=VOCAB), sentence_head=False)
    assert BertPretrainer.from_config(model.get_config()).get_config() == model.get_config()
    assert keras.tree.map_structure(lambda x: tuple(x.shape), model(inputs)) == {"mlm": (4, 3, VOCAB)}
    restored = run_saving_test(model, inputs, tmp_path)
    assert restored.next_sentence_head is None and restored.get_config()["sentence_head"] is False
    with_nsp = BertPretrainer(tiny_backbone(vocabulary_size=VOCAB))
    assert model.count_params() == with_nsp.count_params() - (2 * 16 + 2)
    # Packed rows: no `nsp_positions` input.
    packed = BertPretrainer(tiny_backbone(vocabulary_size=VOCAB, packed_inputs=True), sentence_head=False)
    assert "nsp_positions" not in packed.input_names and set(packed.output) == {"mlm"}
    with pytest.raises(ValueError, match="Received: sentence_head='no'"):
        BertPretrainer(tiny_backbone(vocabulary_size=VOCAB), sentence_head="no")
