"""ElectraPretrainer: parity of both halves with transformers, the corruption, its labels and loss, the sampling.

A fit step and a `.keras` round trip run here on every backend; the job around the model (its
checkpoints, records, held-out summary, fine-tuning the discriminator, resume) is
tests/robustness/test_electra_pretraining_job.py's, once, on torch.
"""

import warnings

import keras
import numpy as np
import pytest

from harness import run_saving_test
from family_helpers import assert_close, assert_real_tokens_close, hf_forward, hf_model, padded_batch, transformers
from keras_bert import ElectraBackbone, ElectraPretrainer
from test_electra_backbone import TINY_ELECTRA

# test_electra_backbone's discriminator (E = H = 16: the same shapes, so JAX compiles their initializers
# once in a suite run); the generator, half as wide, projects the shared E=16 embeddings to H=8.
HF_DISCRIMINATOR = TINY_ELECTRA
HF_GENERATOR = {**HF_DISCRIMINATOR, "hidden_size": 8, "num_attention_heads": 1, "intermediate_size": 12}
MASK_POSITIONS = np.array([[1, 4, 7], [2, 3, 0], [5, 9, 8], [1, 2, 3]], "int32")  # 0: a padded slot


def masked_batch():
    """`(x, originals, weights)`: a padded batch with [MASK] (id 3) at the real `MASK_POSITIONS`."""
    x = padded_batch(HF_DISCRIMINATOR["vocab_size"])
    real = MASK_POSITIONS > 0
    originals = np.take_along_axis(x["token_ids"], MASK_POSITIONS, axis=1) * real
    masked = x["token_ids"].copy()
    np.put_along_axis(masked, MASK_POSITIONS, np.where(real, 3, masked[:, :1]), axis=1)  # slot 0 keeps [CLS]
    x = {**x, "token_ids": masked, "mask_positions": MASK_POSITIONS}
    return x, originals.astype("int32"), real.astype("float32")


@pytest.fixture(scope="module")
def hf_pair(tmp_path_factory):
    """Random tiny transformers halves sharing their embeddings, as ELECTRA's pretraining leaves them, saved."""
    folder = tmp_path_factory.mktemp("hf_electra")
    discriminator = hf_model("ElectraForPreTraining", transformers.ElectraConfig(**HF_DISCRIMINATOR))
    generator = hf_model("ElectraForMaskedLM", transformers.ElectraConfig(**HF_GENERATOR), seed=1)
    generator.electra.embeddings.load_state_dict(discriminator.electra.embeddings.state_dict())
    discriminator.save_pretrained(folder / "discriminator")
    generator.save_pretrained(folder / "generator")
    return folder, discriminator, generator


def test_both_halves_match_transformers_and_the_discriminator_reads_the_corrupted_text(hf_pair):
    folder, hf_discriminator, hf_generator = hf_pair
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pretrainer = ElectraPretrainer.from_pretrained(str(folder / "discriminator"), str(folder / "generator"), seed=3)
    assert not [w for w in caught if "embeddings differ" in str(w.message)]  # the same embeddings: no warning
    assert pretrainer.generator_size == {"num_layers": 2, "num_heads": 1, "hidden_dim": 8, "intermediate_dim": 12}
    assert pretrainer.generator_backbone.embeddings is pretrainer.backbone.embeddings
    x, _, _ = masked_batch()

    # One forward pass checks both halves: the generator on the masked text, the discriminator on its corruption.
    generator_logits = hf_forward(hf_generator, x).logits.numpy()
    expected = np.take_along_axis(generator_logits, MASK_POSITIONS[..., None], axis=1)
    plain = {k: v for k, v in x.items() if k != "mask_positions"}
    outputs = {k: keras.ops.convert_to_numpy(v) for k, v in pretrainer(x, training=False).items()}
    assert_close(outputs["generator_logits"], expected)
    corrupted, sampled = outputs["corrupted_token_ids"], outputs["sampled_ids"]
    real = MASK_POSITIONS > 0
    at = np.zeros(corrupted.shape, bool)
    np.put_along_axis(at, MASK_POSITIONS, real, axis=1)
    at[:, 0] = False  # padded slots point at [CLS], which stays
    np.testing.assert_array_equal(corrupted[~at], x["token_ids"][~at])  # the original tokens elsewhere
    np.testing.assert_array_equal(np.take_along_axis(corrupted, MASK_POSITIONS, axis=1)[real], sampled[real])
    reference = hf_forward(hf_discriminator, {**plain, "token_ids": corrupted}).logits
    assert_real_tokens_close(outputs["discriminator_logits"], reference, x["padding_mask"])


def test_replaced_labels_loss_and_sampling():
    pretrainer = ElectraPretrainer(tiny_discriminator(), generator_size=0.5, seed=0)
    x, originals, weights = masked_batch()
    # Hand-made outputs: row 0 samples its originals at slots 0 and 2 (those stay "original"), another token at slot 1.
    sampled = originals.copy()
    sampled[0, 1] = (originals[0, 1] % 39) + 1
    sampled[2] = (originals[2] % 39) + 1
    rng = np.random.default_rng(0)
    y_pred = {
        "generator_logits": rng.normal(size=(4, 3, 40)).astype("float32"),
        "sampled_ids": sampled,
        "discriminator_logits": rng.normal(size=(4, 10)).astype("float32"),
    }
    terms = {k: keras.ops.convert_to_numpy(v) for k, v in pretrainer.rtd_terms(x, originals, y_pred, weights).items()}
    replaced = np.zeros((4, 10), "float32")
    replaced[0, 4] = 1.0
    replaced[2, [5, 9, 8]] = 1.0
    np.testing.assert_array_equal(terms["replaced"], replaced)

    logits, mask = y_pred["discriminator_logits"], x["padding_mask"].astype("float32")
    bce = np.maximum(logits, 0) - logits * replaced + np.log1p(np.exp(-np.abs(logits)))
    log_probs = y_pred["generator_logits"] - np.log(np.exp(y_pred["generator_logits"]).sum(-1, keepdims=True))
    ce = -np.take_along_axis(log_probs, originals[..., None], axis=-1)[..., 0]
    expected = (ce * weights).sum() / weights.sum() + 50.0 * (bce * mask).sum() / mask.sum()
    loss = pretrainer.compute_loss(x, {"mlm": originals}, y_pred, {"mlm": weights, "nsp": np.ones(4, "float32")})
    np.testing.assert_allclose(keras.ops.convert_to_numpy(loss), expected, rtol=1e-5)

    # Samples follow the generator's softmax: 0.7 / 0.2 / 0.1 over 3000 draws.
    probabilities = np.array([0.7, 0.2, 0.1], "float32")
    logits = np.broadcast_to(np.log(probabilities), (1, 3000, 3)).astype("float32")
    draws = keras.ops.convert_to_numpy(pretrainer.sample_replacements(logits)).ravel()
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / draws.size, probabilities, atol=0.03)


def tiny_discriminator(**overrides):
    config = dict(
        vocabulary_size=40, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=24, max_sequence_length=16,
        dropout=0.0,
    )
    return ElectraBackbone(**{**config, **overrides})


def test_a_fit_step_trains_both_halves_and_the_keras_file_predicts_the_same(tmp_path):
    """This backend's train step through the model's own loss moves the generator and the discriminator; the
    reloaded model corrupts and scores the text as the saved one did (inference samples with the fixed seed)."""
    keras.utils.set_random_seed(0)
    pretrainer = ElectraPretrainer(tiny_discriminator(), generator_size=0.5, seed=0)
    x, originals, weights = masked_batch()
    pretrainer.compile(optimizer=keras.optimizers.SGD(0.1))
    halves = {"generator": pretrainer.generator_backbone, "discriminator": pretrainer.discriminator_backbone}
    before = {name: [keras.ops.convert_to_numpy(w).copy() for w in half.trainable_weights]
              for name, half in halves.items()}
    history = pretrainer.fit(x, {"mlm": originals}, sample_weight={"mlm": weights}, batch_size=4, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert {"generator_loss", "rtd_loss", "rtd_accuracy"} <= set(history.history)
    for name, half in halves.items():
        after = [keras.ops.convert_to_numpy(w) for w in half.trainable_weights]
        assert any(not np.array_equal(b, a) for b, a in zip(before[name], after)), f"the {name} did not train"
    run_saving_test(pretrainer, x, tmp_path)


def test_bad_arguments_are_named():
    backbone = tiny_discriminator()
    with pytest.raises(ValueError, match="generator hidden_dim=32, discriminator hidden_dim=16"):
        ElectraPretrainer(backbone, generator_size={"hidden_dim": 32, "num_heads": 2})
    with pytest.raises(ValueError, match="generator hidden_dim=32, discriminator hidden_dim=16"):
        ElectraPretrainer(backbone, generator_size=2.0)
    with pytest.raises(ValueError, match=r"generator_size=0"):
        ElectraPretrainer(backbone, generator_size=0)
    with pytest.raises(ValueError, match=r"rtd_weight=-1"):
        ElectraPretrainer(backbone, rtd_weight=-1)
    with pytest.raises(ValueError, match="needs an ElectraBackbone"):
        ElectraPretrainer(object())


SMALL_COMPUTE = dict(normalize_first=True, gated_feed_forward=True, attention_bias=False, feed_forward_bias=False,
                     layer_norm_bias=False)


def test_small_compute_blocks_reach_both_halves_learn_and_round_trip(tmp_path):
    """BertBackbone's small-compute options on ELECTRA (pre-LN, GeGLU, no biases): the generator gets the
    discriminator's blocks and a bias-free head transform, configs keep the options (and configs without them
    stay as they were), a few steps on one batch lower the generator's loss, and the `.keras` file predicts
    the same."""
    keras.utils.set_random_seed(0)
    pretrainer = ElectraPretrainer(tiny_discriminator(**SMALL_COMPUTE), generator_size=0.5, seed=0)
    halves = {"generator": pretrainer.generator_backbone, "discriminator": pretrainer.discriminator_backbone}
    for name, half in halves.items():
        assert {k: half.get_config()[k] for k in SMALL_COMPUTE} == SMALL_COMPUTE, name
        assert half.final_layer_norm is not None and half.transformer_layers[0].gated_feed_forward, name
        encoder_biases = [w.path for w in half.weights if w.path.endswith(("bias", "beta"))]
        assert not encoder_biases, (name, encoder_biases)
    head = pretrainer.generator.masked_lm_head
    assert not head.transform_bias and not head.layer_norm_bias
    assert "normalize_first" not in tiny_discriminator().get_config()

    x, originals, weights = masked_batch()
    pretrainer.compile(optimizer=keras.optimizers.Adam(1e-2))
    losses = [float(pretrainer.train_on_batch(x, {"mlm": originals}, sample_weight={"mlm": weights},
                                              return_dict=True)["generator_loss"]) for _ in range(40)]
    assert np.isfinite(losses).all() and losses[-1] < 0.5 * losses[0], losses
    run_saving_test(pretrainer, x, tmp_path)


def test_a_pre_ln_or_bias_free_electra_backbone_has_no_transformers_counterpart(hf_pair):
    """Published ELECTRA checkpoints are post-LN with biases: loading one into other blocks is refused, and the
    weight map refuses such a backbone by name rather than mapping it with tensors missing."""
    from keras_bert.converters.hf_electra import FAMILY

    folder, _, _ = hf_pair
    with pytest.raises(ValueError, match=r"shapes .*Received: \['normalize_first'\]"):
        ElectraBackbone.from_pretrained(str(folder / "discriminator"), normalize_first=True)
    with pytest.raises(ValueError, match="Pre-LN backbones .* no counterpart in ELECTRA checkpoints"):
        FAMILY.backbone_entries(tiny_discriminator(normalize_first=True))
    with pytest.raises(ValueError, match="attention_bias=False has no counterpart in ELECTRA checkpoints"):
        FAMILY.backbone_entries(tiny_discriminator(attention_bias=False))
    assert FAMILY.backbone_entries(tiny_discriminator())  # BERT's blocks map
