"""Packed sequences in the models: a packed row computes exactly what its examples compute alone."""

import json

import keras
import numpy as np
import pytest

from harness import numpy_tree, run_saving_test, tiny_backbone
from keras_bert import BertBackbone, BertPretrainer

VOCAB, CLS, SEP, PAD = 40, 2, 3, 0
T = 24  # packed row length
CONFIG = dict(vocabulary_size=VOCAB, max_sequence_length=32)


def example(rng, len_a, len_b):
    """One `[CLS] A [SEP] B [SEP]`: (token_ids, segment_ids)."""
    a, b = rng.integers(5, VOCAB, len_a), rng.integers(5, VOCAB, len_b)
    tokens = np.concatenate([[CLS], a, [SEP], b, [SEP]]).astype("int32")
    segments = np.concatenate([np.zeros(len_a + 2), np.ones(len_b + 1)]).astype("int32")
    return tokens, segments


def packed_batch(seed=0):
    """Two packed rows: 3 examples (all of T but 1 pad), and 2 examples then padding.

    Returns the packed inputs and, per row, the (offset, tokens, segments, mask_positions) of each example.
    """
    rng = np.random.default_rng(seed)
    rows = [[example(rng, 3, 4), example(rng, 2, 2), example(rng, 2, 1)], [example(rng, 5, 6), example(rng, 1, 2)]]
    S, P = 3, 4
    x = {name: np.zeros((2, T), "int32") for name in ("token_ids", "segment_ids", "padding_mask", "sequence_ids", "position_ids")}
    x["nsp_positions"] = np.zeros((2, S), "int32")
    x["mask_positions"] = np.zeros((2, P), "int32")
    layout = []
    for r, examples in enumerate(rows):
        offset, row_layout, masks = 0, [], []
        for k, (tokens, segments) in enumerate(examples):
            n = len(tokens)
            span = slice(offset, offset + n)
            x["token_ids"][r, span], x["segment_ids"][r, span] = tokens, segments
            x["padding_mask"][r, span], x["sequence_ids"][r, span] = 1, k + 1
            x["position_ids"][r, span] = np.arange(n)
            x["nsp_positions"][r, k] = offset
            local_masks = [1, n - 2]  # a token of A and one of B, in example-local positions
            masks += [offset + m for m in local_masks][: P - len(masks)]
            row_layout.append((offset, tokens, segments, local_masks))
            offset += n
        assert offset <= T
        x["mask_positions"][r, : len(masks)] = masks
        layout.append(row_layout)
    return x, layout


def alone(examples):
    """Each (tokens, segments, local_masks) alone in an unpacked row of length T, padded: one batch."""
    x = {name: np.zeros((len(examples), T), "int32") for name in ("token_ids", "segment_ids", "padding_mask")}
    x["mask_positions"] = np.zeros((len(examples), 2), "int32")
    for i, (tokens, segments, local_masks) in enumerate(examples):
        n = len(tokens)
        x["token_ids"][i, :n], x["segment_ids"][i, :n], x["padding_mask"][i, :n] = tokens, segments, 1
        x["mask_positions"][i, : len(local_masks)] = local_masks
    return x


def packed_and_unpacked_pretrainers():
    packed = BertPretrainer(tiny_backbone(**CONFIG, packed_inputs=True))
    unpacked = BertPretrainer(tiny_backbone(**CONFIG))
    assert [w.path for w in packed.weights] == [w.path for w in unpacked.weights]
    unpacked.set_weights(packed.get_weights())
    return packed, unpacked


def assert_each_example_as_if_alone(packed, unpacked, x, layout, atol=1e-5):
    out = numpy_tree(packed(x))
    sequence = numpy_tree(packed.backbone({k: x[k] for k in packed.backbone.input_names}))["sequence_output"]
    examples = [(tokens, segments, local_masks) for row in layout for _, tokens, segments, local_masks in row]
    single = alone(examples)
    expected = numpy_tree(unpacked(single))
    expected_sequence = numpy_tree(unpacked.backbone({k: single[k] for k in unpacked.backbone.input_names}))
    i = checked = 0
    for r, row_layout in enumerate(layout):
        for k, (offset, tokens, segments, local_masks) in enumerate(row_layout):
            n = len(tokens)
            np.testing.assert_allclose(sequence[r, offset : offset + n], expected_sequence["sequence_output"][i, :n], atol=atol)
            np.testing.assert_allclose(out["nsp"][r, k], expected["nsp"][i], atol=atol)
            for m, local in enumerate(local_masks):
                for slot in np.flatnonzero(x["mask_positions"][r] == offset + local):  # none: the row's slots ran out
                    np.testing.assert_allclose(out["mlm"][r, slot], expected["mlm"][i, m], atol=atol)
                    checked += 1
            i += 1
    assert checked == x["mask_positions"].size  # every prediction slot was compared


def test_packed_row_equals_each_example_alone():
    packed, unpacked = packed_and_unpacked_pretrainers()
    x, layout = packed_batch()
    assert packed(x)["nsp"].shape == (2, 3, 2)
    assert_each_example_as_if_alone(packed, unpacked, x, layout)


def test_the_equality_test_catches_leaks_and_unrestarted_positions():
    """The check above fails when attention crosses examples or positions run on."""
    packed, unpacked = packed_and_unpacked_pretrainers()
    x, layout = packed_batch()
    leaking = {**x, "sequence_ids": np.where(x["sequence_ids"] > 0, 1, 0).astype("int32")}
    with pytest.raises(AssertionError):
        assert_each_example_as_if_alone(packed, unpacked, leaking, layout)
    running_positions = {**x, "position_ids": np.tile(np.arange(T, dtype="int32"), (2, 1))}
    with pytest.raises(AssertionError):
        assert_each_example_as_if_alone(packed, unpacked, running_positions, layout)


def test_explicit_attention_path_is_block_diagonal():
    """With attention probabilities returned (no fused kernel), nothing reaches across examples."""
    packed = tiny_backbone(**CONFIG, packed_inputs=True, output_attentions=True)
    unpacked = tiny_backbone(**CONFIG)
    unpacked.set_weights(packed.get_weights())
    x, layout = packed_batch()
    out = numpy_tree(packed({k: x[k] for k in packed.input_names}))
    same = x["sequence_ids"][:, :, None] == x["sequence_ids"][:, None, :]  # (batch, seq, seq)
    for probs in out["attentions"]:
        assert np.all(probs[np.broadcast_to(~same[:, None], probs.shape)] == 0.0)
    single = alone([(tokens, segments, [1]) for _, tokens, segments, _ in layout[0]])
    expected = numpy_tree(unpacked({k: single[k] for k in unpacked.input_names}))["sequence_output"]
    for i, (offset, tokens, _, _) in enumerate(layout[0]):
        np.testing.assert_allclose(out["sequence_output"][0, offset : offset + len(tokens)], expected[i, : len(tokens)], atol=1e-5)


def test_packed_backbone_config_round_trip_and_weights_shared_with_unpacked():
    backbone = tiny_backbone(**CONFIG, packed_inputs=True)
    config = backbone.get_config()
    assert config["packed_inputs"] is True
    assert BertBackbone.from_config(config).get_config() == config
    assert "packed_inputs" not in tiny_backbone(**CONFIG).get_config()  # unpacked configs stay as they were
    unpacked = tiny_backbone(**CONFIG)
    assert [(w.path, tuple(w.shape)) for w in backbone.weights] == [(w.path, tuple(w.shape)) for w in unpacked.weights]
    assert backbone.count_params() == unpacked.count_params()
    assert list(BertPretrainer(backbone).input) == [
        "token_ids", "segment_ids", "padding_mask", "sequence_ids", "position_ids", "mask_positions", "nsp_positions"
    ]


def test_nsp_loss_and_accuracy_count_real_examples_only():
    packed, _ = packed_and_unpacked_pretrainers()
    packed.compile()
    x, layout = packed_batch()
    logits = keras.ops.convert_to_numpy(packed(x)["nsp"])  # (2, 3, 2)
    labels = np.array([[0, 1, 1], [1, 0, 1]], "int32")
    weights = np.array([[1, 1, 1], [1, 1, 0]], "float32")  # row 2 holds 2 examples
    y = {"mlm": np.take_along_axis(x["token_ids"], x["mask_positions"], axis=1), "nsp": labels}
    w = {"mlm": np.ones(x["mask_positions"].shape, "float32"), "nsp": weights}
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_probs, labels[..., None], axis=-1)[..., 0]
    accuracy = (logits.argmax(-1) == labels).astype("float32")
    results = packed.evaluate(x, y, sample_weight=w, batch_size=2, verbose=0, return_dict=True)
    np.testing.assert_allclose(results["nsp_loss"], (nll * weights).sum() / weights.sum(), rtol=1e-4)
    np.testing.assert_allclose(results["nsp_accuracy"], (accuracy * weights).sum() / weights.sum(), rtol=1e-5)


def test_packed_pretrainer_keras_file_round_trip_and_unpacked_reuse(tmp_path):
    packed, _ = packed_and_unpacked_pretrainers()
    x, layout = packed_batch()
    restored = run_saving_test(packed, x, tmp_path)
    assert restored.backbone.packed_inputs
    # A backbone pretrained packed loads unpacked, for fine-tuning, with the same weights.
    backbone = BertBackbone.from_pretrained(str(tmp_path / "model.keras"), packed_inputs=False)
    assert not backbone.packed_inputs and backbone.input_names == ("token_ids", "segment_ids", "padding_mask")
    offset, tokens, segments, _ = layout[0][1]
    single = alone([(tokens, segments, [1])])
    expected = numpy_tree(packed.backbone({k: x[k] for k in packed.backbone.input_names}))["sequence_output"]
    actual = numpy_tree(backbone({k: single[k] for k in backbone.input_names}))["sequence_output"]
    np.testing.assert_allclose(actual[0, : len(tokens)], expected[0, offset : offset + len(tokens)], atol=1e-5)


def test_finetuning_starts_unpacked_from_a_packed_pretrainer(tmp_path):
    from keras_bert.jobs import finetune as finetuning

    packed, _ = packed_and_unpacked_pretrainers()
    packed.save(str(tmp_path / "model.keras"))
    (tmp_path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(VOCAB - 5)]) + "\n")
    backbone, _, _ = finetuning.load_init(str(tmp_path / "model.keras"), dropout=None)
    assert not backbone.packed_inputs
    for a, b in zip(backbone.get_weights(), packed.backbone.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_packed_inputs_bad_input_errors():
    packed = BertPretrainer(tiny_backbone(**CONFIG, packed_inputs=True))
    x, _ = packed_batch()
    missing = {k: v for k, v in x.items() if k != "nsp_positions"}
    with pytest.raises(ValueError, match=r"Missing: \['nsp_positions'\].*built for packed sequences"):
        packed(missing)
    with pytest.raises(ValueError, match=r"`position_ids` must be in \[0, 32\)"):
        packed({**x, "position_ids": x["position_ids"] + 30})
    with pytest.raises(ValueError, match=r"`nsp_positions` must be in \[0, 24\)"):
        packed({**x, "nsp_positions": x["nsp_positions"] + T})
    with pytest.raises(ValueError, match=r"must have the same shape"):
        packed({**x, "sequence_ids": x["sequence_ids"][:, :-1]})
    unpacked = BertPretrainer(tiny_backbone(**CONFIG))
    with pytest.raises(ValueError, match=r"unexpected: \['sequence_ids', 'position_ids', 'nsp_positions'\].*unpacked"):
        unpacked(x)


def test_packed_pretrainer_learns_from_a_packed_dataset(corpus):
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
    from keras_bert.preprocessing.pretraining import pretraining_dataset

    tokenizer = BertTokenizer(str(corpus / "vocab.txt"))
    dataset = pretraining_dataset(
        str(corpus / "train.txt"), tokenizer, sequence_length=32, batch_size=8, short_seq_prob=0.5,
        pack_sequences=True, verbose=0,
    )
    backbone = tiny_backbone(vocabulary_size=tokenizer.vocabulary_size(), packed_inputs=True)
    model = BertPretrainer(backbone)
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    history = model.fit(dataset.take(2).cache().repeat(), steps_per_epoch=2, epochs=4, verbose=0).history
    assert all(np.isfinite(history["loss"]))
    assert history["loss"][-1] < history["loss"][0]
    assert 0.0 <= history["nsp_accuracy"][-1] <= 1.0


@pytest.mark.only_backend(
    "torch", reason="the job's packing wiring is backend-independent; packed fit runs on every backend above"
)
def test_pretrain_job_with_packing(corpus, tmp_path):
    from keras_bert.jobs.pretrain import pretrain

    summary = pretrain(
        corpus=[str(corpus / "train.txt")], vocabulary=str(corpus / "vocab.txt"), output_dir=str(tmp_path),
        size="tiny", sequence_length=32, batch_size=8, steps=2, checkpoint_every=2, seed=1, eval_corpus=[str(corpus / "train.txt")],
        eval_batches=1, tensorboard=False, verbose=0, pack_sequences=True, max_sequences_per_pack=2,
    )
    assert np.isfinite(summary["final_metrics"]["loss"]) and 0.0 <= summary["final_metrics"]["val_nsp_accuracy"] <= 1.0
    assert 0.0 < summary["baselines"]["val_nsp_accuracy_majority_label"] <= 1.0
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["backbone"]["packed_inputs"] and config["job"]["max_sequences_per_pack"] == 2
    model = keras.saving.load_model(str(tmp_path / "model.keras"))
    assert model.backbone.packed_inputs and "nsp_positions" in model.input
