"""ModernBERT's task heads against transformers' ModernBertFor* classes, both ways.

Random tiny transformers task models (every weight perturbed, see
`family_helpers`) saved with `save_pretrained` load as our task models with
their heads, labels and head options (`classifier_pooling`,
`classifier_activation`, `classifier_bias`) and give transformers' logits
within `ATOL` (1e-5) on padded rows longer than the local window; written
back with `save_hf_checkpoint`, they load in transformers without a missing
or unexpected key and give the same logits again.
"""

import json

import keras
import numpy as np
import pytest

from family_helpers import ATOL, hf_forward, hf_model, padded_batch, transformers
from harness import run_saving_test
from keras_bert import BertClassifier, ModernBertBackbone, ModernBertClassifier
from keras_bert.converters import save_hf_checkpoint

ONCE = "reads config.json and refuses before any tensor is computed: the same on every backend"
# Token ids 1-3 are ModernBERT's specials here; 0 pads.
TINY = dict(vocab_size=50, hidden_size=32, num_attention_heads=4, intermediate_size=40, max_position_embeddings=64,
            pad_token_id=0, bos_token_id=1, cls_token_id=1, eos_token_id=2, sep_token_id=3)
# Block 0 global, 1 and 2 local with radius 3: the 23-token rows reach past the window.
LAYOUT = dict(num_hidden_layers=3, global_attn_every_n_layers=3, local_attention=6, global_rope_theta=2000.0)
LABELS = ["negative", "neutral", "positive"]
SEQUENCE_CASES = {
    "cls": dict(num_labels=3, id2label=dict(enumerate(LABELS))),
    # Mean pooling with every bias on and the tanh GELU in the head.
    "mean-biases-tanh": dict(num_labels=3, classifier_pooling="mean", classifier_bias=True, norm_bias=True,
                             classifier_activation="gelu_pytorch_tanh", id2label=dict(enumerate(LABELS))),
    "regression": dict(num_labels=1, problem_type="regression", classifier_pooling="mean"),
}


def tiny_task_model(class_name, seed=0, **config):
    return hf_model(class_name, transformers.ModernBertConfig(**{**TINY, **LAYOUT, **config}), seed=seed)


def inputs():
    return padded_batch(TINY["vocab_size"], padding_id=0, segments=False, length=23)


def max_delta(ours, theirs):
    theirs = theirs.detach().numpy()
    ours = keras.ops.convert_to_numpy(ours)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    return float(np.abs(ours - theirs).max())


@pytest.mark.parametrize("case", sorted(SEQUENCE_CASES))
def test_sequence_classification_both_ways(case, tmp_path):
    config = SEQUENCE_CASES[case]
    hf = tiny_task_model("ModernBertForSequenceClassification", seed=sorted(SEQUENCE_CASES).index(case), **config)
    hf.save_pretrained(tmp_path / "hf")
    classifier = ModernBertClassifier.from_pretrained(tmp_path / "hf")
    assert classifier.pooling == config.get("classifier_pooling", "cls")
    assert classifier.head_bias == config.get("classifier_bias", False)
    assert classifier.num_classes == config["num_labels"]
    assert classifier.label_names == (LABELS if config["num_labels"] == 3 else None)
    x = inputs()
    delta = max_delta(classifier.predict(x, verbose=0), hf_forward(hf, x).logits)
    # A direct call runs every position of the last block; `predict` only [CLS]'s with cls pooling.
    delta = max(delta, max_delta(classifier(x), hf_forward(hf, x).logits))
    print(f"ModernBertForSequenceClassification {case}: max |delta| {delta:.2e}")
    assert delta <= ATOL

    folder = save_hf_checkpoint(classifier, tmp_path / "back")
    written = json.loads((tmp_path / "back" / "config.json").read_text())
    assert written["architectures"] == ["ModernBertForSequenceClassification"]
    back, info = transformers.AutoModelForSequenceClassification.from_pretrained(
        folder, attn_implementation="eager", output_loading_info=True
    )
    assert not any(info[kind] for kind in ("missing_keys", "unexpected_keys", "mismatched_keys")), info
    for key in ("classifier_pooling", "classifier_bias", "classifier_activation", "num_labels", "id2label"):
        assert getattr(back.config, key) == getattr(hf.config, key), key
    assert back.config.problem_type == config.get("problem_type", "single_label_classification")
    back_delta = max_delta(classifier(x), hf_forward(back.eval(), x).logits)
    print(f"ModernBertClassifier -> transformers {case}: max |delta| {back_delta:.2e}")
    assert back_delta <= ATOL


def test_classifier_round_trips_keras_and_trains(tmp_path):
    backbone = ModernBertBackbone(
        vocabulary_size=50, num_layers=2, num_heads=4, hidden_dim=32, intermediate_dim=40, padding_id=0,
        local_attention_window=6, global_attention_every_n_layers=2, max_sequence_length=64,
    )
    classifier = ModernBertClassifier(backbone, num_classes=3, pooling="mean", head_bias=True, dropout=0.1)
    x = inputs()
    assert set(classifier.input) == {"token_ids", "padding_mask"}
    restored = run_saving_test(classifier, x, tmp_path, atol=1e-5)
    assert (restored.pooling, restored.head_bias, restored.dropout) == ("mean", True, 0.1)
    assert [w.path for w in restored.prediction_head.weights] == [
        "prediction_head/dense/kernel", "prediction_head/dense/bias", "prediction_head/layer_norm/gamma",
    ]  # fmt: skip
    classifier.compile(optimizer=keras.optimizers.Adam(1e-2))
    labels = np.array([0, 1, 2, 1])
    first = classifier.train_on_batch(x, labels)
    for _ in range(4):
        last = classifier.train_on_batch(x, labels)
    assert np.all(np.isfinite(last)) and last < first


@pytest.mark.only_backend("torch", reason=ONCE)
def test_what_a_modernbert_head_cannot_be(tmp_path):
    tiny_task_model("ModernBertForSequenceClassification", num_labels=2, classifier_pooling="mean").save_pretrained(
        tmp_path / "mean"
    )
    with pytest.raises(ValueError, match="trained on pooling='mean'; its head cannot read pooling='cls'"):
        ModernBertClassifier.from_pretrained(tmp_path / "mean", pooling="cls")
    with pytest.raises(ValueError, match="not a head for BertClassifier.*ModernBertClassifier.from_pretrained"):
        BertClassifier.from_pretrained(tmp_path / "mean")
    # A bare encoder gets a new head of the size asked for.
    tiny_task_model("ModernBertModel").save_pretrained(tmp_path / "encoder")
    fresh = ModernBertClassifier.from_pretrained(tmp_path / "encoder", num_classes=4, pooling="mean")
    assert (fresh.num_classes, fresh.pooling) == (4, "mean")
    # BERT's head on a ModernBERT encoder has no transformers class.
    with pytest.raises(ValueError, match="A BertClassifier on a ModernBertBackbone has no transformers class"):
        save_hf_checkpoint(BertClassifier(fresh.backbone, num_classes=2), tmp_path / "bert_head")
