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
from keras_bert import (
    BertClassifier,
    BertQuestionAnswerer,
    BertTokenClassifier,
    ModernBertBackbone,
    ModernBertClassifier,
    ModernBertMaskedLM,
    ModernBertQuestionAnswerer,
    ModernBertTokenClassifier,
)
from keras_bert.converters import save_hf_checkpoint
from keras_bert.models.family_task_models import task_model_class

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


def max_delta(ours, theirs, where=None):
    """max |ours - theirs|, over the positions `where` (bool, the leading axes) when given."""
    theirs = theirs.detach().numpy()
    ours = keras.ops.convert_to_numpy(ours)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    if where is not None:  # padded positions mean nothing in either (ours hold -1e9 in the span logits)
        ours, theirs = ours[where], theirs[where]
    return float(np.abs(ours - theirs).max())


def per_token_outputs(ours, hf_outputs):
    """`[(ours, transformers')]` of a tagger's logits or a span head's start and end logits."""
    if isinstance(ours, dict):
        return [(ours["start"], hf_outputs.start_logits), (ours["end"], hf_outputs.end_logits)]
    return [(ours, hf_outputs.logits)]


def _sequence_case(name):
    # A one-output head is the classifier's head with num_labels=1: which config keys make it is the converter's
    # (the same on every backend), so the regression case runs once; the two pooling cases run on all three.
    if name == "regression":
        return pytest.param(name, marks=pytest.mark.only_backend(
            "torch", reason="a one-output head reads the same config keys on every backend; its numbers are the "
            "classifier head's, checked on all three by the other cases"))
    return name


@pytest.mark.parametrize("case", [_sequence_case(name) for name in sorted(SEQUENCE_CASES)])
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


# Per-token heads: transformers class -> (ours, config). The second case turns every bias on, the tanh GELU and
# dropout in the config (inactive at inference, but read and written back).
TOKEN_CASES = {
    "tagger": ("ModernBertForTokenClassification", ModernBertTokenClassifier,
               dict(num_labels=5, id2label=dict(enumerate(["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])))),
    "qa-biases-tanh": ("ModernBertForQuestionAnswering", ModernBertQuestionAnswerer,
                       dict(classifier_bias=True, norm_bias=True, classifier_activation="gelu_pytorch_tanh",
                            classifier_dropout=0.1)),
}


@pytest.mark.parametrize("case", sorted(TOKEN_CASES))
def test_per_token_heads_both_ways(case, tmp_path):
    architecture, cls, config = TOKEN_CASES[case]
    hf = tiny_task_model(architecture, seed=7 + sorted(TOKEN_CASES).index(case), **config)
    hf.save_pretrained(tmp_path / "hf")
    model = cls.from_pretrained(tmp_path / "hf")
    assert type(model) is cls
    assert model.head_bias == config.get("classifier_bias", False)
    assert model.dropout == config.get("classifier_dropout", 0.0)
    if cls is ModernBertTokenClassifier:
        assert (model.num_classes, model.label_names) == (5, ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])
    x = inputs()
    real = x["padding_mask"].astype(bool)
    delta = max(max_delta(ours, theirs, real) for ours, theirs in per_token_outputs(model(x), hf_forward(hf, x)))
    print(f"{architecture}: max |delta| {delta:.2e}")
    assert delta <= ATOL

    folder = save_hf_checkpoint(model, tmp_path / "back")
    back, info = getattr(transformers, architecture).from_pretrained(
        folder, attn_implementation="eager", output_loading_info=True
    )
    assert not any(info[kind] for kind in ("missing_keys", "unexpected_keys", "mismatched_keys")), info
    for key in ("classifier_bias", "classifier_activation", "classifier_dropout", "num_labels", "id2label"):
        assert getattr(back.config, key) == getattr(hf.config, key), key
    outputs = per_token_outputs(model(x), hf_forward(back.eval(), x))
    back_delta = max(max_delta(ours, theirs, real) for ours, theirs in outputs)
    print(f"{cls.__name__} -> transformers: max |delta| {back_delta:.2e}")
    assert back_delta <= ATOL


# The masked LM: transformers' defaults, and every bias on with the tanh GELU and no decoder bias.
MLM_CASES = {
    "defaults": {},
    "biases-tanh-no-decoder-bias": dict(classifier_bias=True, norm_bias=True, decoder_bias=False,
                                        classifier_activation="gelu_pytorch_tanh"),
}


@pytest.mark.parametrize("case", sorted(MLM_CASES))
def test_masked_lm_both_ways(case, tmp_path):
    config = MLM_CASES[case]
    hf = tiny_task_model("ModernBertForMaskedLM", seed=11 + sorted(MLM_CASES).index(case), **config)
    hf.save_pretrained(tmp_path / "hf")
    mlm = ModernBertMaskedLM.from_pretrained(tmp_path / "hf")
    assert (mlm.head_bias, mlm.decoder_bias) == (config.get("classifier_bias", False), config.get("decoder_bias", True))
    assert (mlm.masked_lm_head.output_bias is None) == (not mlm.decoder_bias)
    x = inputs()
    real = x["padding_mask"].astype(bool)
    # Every position decoded, as transformers does without labels.
    x["mask_positions"] = np.tile(np.arange(x["token_ids"].shape[1], dtype="int32"), (len(real), 1))
    delta = max_delta(mlm(x), hf_forward(hf, x).logits, real)
    print(f"ModernBertForMaskedLM {case}: max |delta| {delta:.2e}")
    assert delta <= ATOL

    folder = save_hf_checkpoint(mlm, tmp_path / "back")
    back, info = transformers.ModernBertForMaskedLM.from_pretrained(
        folder, attn_implementation="eager", output_loading_info=True
    )
    assert not any(info[kind] for kind in ("missing_keys", "unexpected_keys", "mismatched_keys")), info
    for key in ("classifier_bias", "classifier_activation", "decoder_bias", "tie_word_embeddings"):
        assert getattr(back.config, key) == getattr(hf.config, key), key
    back_delta = max_delta(mlm(x), hf_forward(back.eval(), x).logits, real)
    print(f"ModernBertMaskedLM -> transformers {case}: max |delta| {back_delta:.2e}")
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


def test_per_token_heads_round_trip_keras_and_train(tmp_path):
    backbone = ModernBertBackbone(
        vocabulary_size=50, num_layers=2, num_heads=4, hidden_dim=32, intermediate_dim=40, padding_id=0,
        local_attention_window=6, global_attention_every_n_layers=2, max_sequence_length=64,
    )
    x = inputs()
    tagger = ModernBertTokenClassifier(backbone, num_classes=3, head_bias=True, dropout=0.1)
    (tmp_path / "tagger").mkdir(), (tmp_path / "qa").mkdir()
    restored = run_saving_test(tagger, x, tmp_path / "tagger", atol=1e-5)
    assert (restored.head_bias, restored.dropout, restored.prediction_head.use_bias) == (True, 0.1, True)
    qa = ModernBertQuestionAnswerer(backbone, dropout=0.1, head_activation="gelu_approximate")
    restored = run_saving_test(qa, x, tmp_path / "qa", atol=1e-5)
    assert (restored.dropout, restored.head_activation, restored.output_dropout.rate) == (0.1, "gelu_approximate", 0.1)
    qa.compile(optimizer=keras.optimizers.Adam(1e-2))
    spans = {"start": np.array([1, 2, 0, 3]), "end": np.array([2, 4, 0, 3])}
    losses = [float(qa.train_on_batch(x, spans, return_dict=True)["loss"]) for _ in range(5)]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]


@pytest.mark.only_backend("torch", reason=ONCE)
def test_fine_tuning_builds_the_family_heads_and_what_needs_offsets_refuses_without_them(tmp_path):
    from keras_bert import SentencePieceTokenizer, export_saved_model
    from keras_bert.pipelines import TokenClassifierPipeline
    from keras_bert.preprocessing.task_data.squad_data import squad_features
    from preprocessing_helpers import family_folder

    backbone = ModernBertBackbone(
        vocabulary_size=400, num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=24, padding_id=0,
    )
    tagger = task_model_class(BertTokenClassifier, backbone)(backbone, num_classes=2, label_names=["O", "B-X"])
    assert type(tagger) is ModernBertTokenClassifier
    qa = task_model_class(BertQuestionAnswerer, backbone)(backbone)
    assert type(qa) is ModernBertQuestionAnswerer
    # SentencePiece (ALBERT) has neither words nor offsets: entities cannot be read from running text.
    albert = SentencePieceTokenizer.from_pretrained(family_folder("albert"))
    with pytest.raises(ValueError, match="^A token_classifier's serve_text reads entities word by word.*"
                                         "SentencePieceTokenizer lacks `tokenize_words` and") as error:
        export_saved_model(tagger, tmp_path / "tagger", tokenizer=albert)
    assert "\n" not in str(error.value) and not (tmp_path / "tagger").exists()
    with pytest.raises(ValueError, match="^TokenClassifierPipeline reads entities word by word"):
        TokenClassifierPipeline(tagger, albert, sequence_length=16)
    # Nor answers: question answering maps them to characters (RoBERTa's and ModernBERT's byte-level BPE can).
    with pytest.raises(ValueError, match="^Question answering maps answers to character offsets.*SentencePieceTokenizer"):
        squad_features([], albert)
