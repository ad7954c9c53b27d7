"""Hugging Face task checkpoints both ways: transformers' BertFor* classes <-> our task models.

Numerical truth is transformers' own forward pass (and its own `pipeline`), on
random tiny models whose every weight is moved off its initial value.
"""

import json
import shutil

import keras
import numpy as np
import pytest

from harness import numpy_tree, random_bert_inputs
from keras_bert import BertClassifier, BertMultipleChoice, BertQuestionAnswerer, BertTokenClassifier
from keras_bert.cli.main import main
from keras_bert.converters import save_hf_checkpoint
from task_helpers import FIXTURES

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

VOCABULARY_SIZE = 147  # tests/fixtures/tasks/vocab.txt
LABELS = ["negative", "neutral", "positive"]
OURS = {
    "BertForSequenceClassification": BertClassifier,
    "BertForTokenClassification": BertTokenClassifier,
    "BertForQuestionAnswering": BertQuestionAnswerer,
    "BertForMultipleChoice": BertMultipleChoice,
}


def tiny_task_model(cls_name, seed=0, **config):
    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=VOCABULARY_SIZE, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=32, attn_implementation="eager", **config,
    )
    model = getattr(transformers, cls_name)(config).eval()
    with torch.no_grad():  # off the initial zeros and ones, so that a mapping error shows
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    return model


def save_with_tokenizer(model, folder):
    model.save_pretrained(folder)
    transformers.BertTokenizer(str(FIXTURES / "vocab.txt")).save_pretrained(folder)
    # transformers 5 saves tokenizer.json only; Hub checkpoints (and ours) keep vocab.txt beside it.
    shutil.copy(FIXTURES / "vocab.txt", folder / "vocab.txt")
    return folder


def inputs_for(cls_name):
    inputs = random_bert_inputs(4, 12, VOCABULARY_SIZE, pad_last=3)
    if cls_name == "BertForMultipleChoice":  # (batch, choices, length)
        inputs = {name: np.stack([value[:2], value[2:]], axis=1) for name, value in inputs.items()}
    return inputs


def hf_logits(model, inputs):
    """transformers' logits as ours are laid out (QA: {"start", "end"})."""
    with torch.no_grad():
        out = model(**{hf: torch.tensor(inputs[ours], dtype=torch.long) for hf, ours in (
            ("input_ids", "token_ids"), ("token_type_ids", "segment_ids"), ("attention_mask", "padding_mask"))})
    if hasattr(out, "start_logits"):
        return {"start": out.start_logits.numpy(), "end": out.end_logits.numpy()}
    return out.logits.numpy()


def assert_same_logits(ours, theirs, inputs):
    if isinstance(theirs, dict):
        real = inputs["padding_mask"].astype(bool)  # our span head sets padding to -1e9; transformers does not
        for key in theirs:
            np.testing.assert_allclose(ours[key][real], theirs[key][real], atol=1e-5)
    else:
        np.testing.assert_allclose(ours, theirs, atol=1e-5)


TASKS = [
    ("BertForSequenceClassification", dict(num_labels=3, id2label=dict(enumerate(LABELS)))),
    ("BertForSequenceClassification", dict(num_labels=1, problem_type="regression")),
    ("BertForTokenClassification", dict(num_labels=3, id2label=dict(enumerate(["O", "B-X", "I-X"])))),
    ("BertForQuestionAnswering", {}),
    ("BertForMultipleChoice", {}),
]


@pytest.mark.parametrize("cls_name,config", TASKS, ids=[f"{c}-{len(k)}" for c, k in TASKS])
def test_task_checkpoints_both_ways(cls_name, config, tmp_path):
    hf = tiny_task_model(cls_name, **config)
    hf.save_pretrained(tmp_path / "hf")
    inputs = inputs_for(cls_name)

    model = OURS[cls_name].from_pretrained(tmp_path / "hf")
    assert_same_logits(numpy_tree(model(inputs)), hf_logits(hf, inputs), inputs)
    if "id2label" in config:
        assert model.label_names == list(config["id2label"].values())
    if config.get("num_labels") == 1:
        assert model.num_classes == 1 and model.label_names is None  # the regressor

    # Ours -> Hugging Face: transformers loads every tensor (none missing or unexpected) and agrees.
    model.set_weights([w + 0.01 for w in model.get_weights()])  # as after fine-tuning: not the weights we read
    save_hf_checkpoint(model, tmp_path / "back", vocabulary=str(FIXTURES / "vocab.txt"))
    back, info = getattr(transformers, f"AutoModelFor{cls_name[len('BertFor'):]}").from_pretrained(
        tmp_path / "back", attn_implementation="eager", output_loading_info=True
    )
    assert type(back).__name__ == cls_name
    assert not any(info[key] for key in ("missing_keys", "unexpected_keys", "mismatched_keys")), info
    assert_same_logits(numpy_tree(model(inputs)), hf_logits(back.eval(), inputs), inputs)
    if "id2label" in config:
        assert back.config.id2label == config["id2label"]
    if config.get("num_labels") == 1:
        assert back.config.problem_type == "regression" and back.config.num_labels == 1


def test_a_head_for_another_task_says_what_it_is(tmp_path):
    tiny_task_model("BertForQuestionAnswering").save_pretrained(tmp_path / "qa")
    with pytest.raises(ValueError, match=r"is a BertForQuestionAnswering checkpoint \(qa_outputs\.bias \(2,\), "
                                         r"qa_outputs\.weight \(2, 16\)\), not a head for BertClassifier: load it "
                                         r"with BertQuestionAnswerer\.from_pretrained"):
        BertClassifier.from_pretrained(tmp_path / "qa", num_classes=2)
    tiny_task_model("BertForSequenceClassification", num_labels=3).save_pretrained(tmp_path / "cls")
    with pytest.raises(ValueError, match=r"BertForSequenceClassification checkpoint.*not a head for BertTokenClassifier"):
        BertTokenClassifier.from_pretrained(tmp_path / "cls")
    with pytest.raises(ValueError, match=r"num_classes=3\. Received: num_classes=2"):
        BertClassifier.from_pretrained(tmp_path / "cls", 2)
    assert BertClassifier.from_pretrained(tmp_path / "cls", 3, dropout=0.2).dropout == 0.2

    config = json.loads((tmp_path / "cls" / "config.json").read_text())
    (tmp_path / "cls" / "config.json").write_text(json.dumps({**config, "problem_type": "multi_label_classification"}))
    with pytest.raises(ValueError, match="problem_type='multi_label_classification'"):
        BertClassifier.from_pretrained(tmp_path / "cls")
    del config["architectures"]  # no class named: the head tensors fit a classifier (or a tagger), not QA
    (tmp_path / "cls" / "config.json").write_text(json.dumps(config))
    assert BertTokenClassifier.from_pretrained(tmp_path / "cls").num_classes == 3
    with pytest.raises(ValueError, match=r"no `architectures`.*classifier\.weight \(3, 16\).*not a head for Bert"
                                         r"QuestionAnswerer"):
        BertQuestionAnswerer.from_pretrained(tmp_path / "cls")


def test_transformers_pipeline_and_ours_agree(tmp_path, capsys):
    """The same texts through transformers' pipeline("text-classification") and ours, both ways round."""
    from keras_bert import BertTokenizer, TextClassifierPipeline  # imports TensorFlow (tensorflow-text)

    texts = ["the cast was superb and lovely .", "clumsy ending , really boring .", "weak film"]
    hf = tiny_task_model("BertForSequenceClassification", num_labels=3, id2label=dict(enumerate(LABELS)))
    folder = save_with_tokenizer(hf, tmp_path / "hf")

    def hf_pipeline(path):
        classify = transformers.pipeline("text-classification", model=str(path), top_k=None, device="cpu")
        return [{row["label"]: row["score"] for row in rows} for rows in classify(texts)]

    def our_pipeline(model):
        pipeline = TextClassifierPipeline(model, BertTokenizer.from_pretrained(folder))
        return [result["probabilities"] for result in pipeline(texts)]

    theirs = hf_pipeline(folder)
    ours = our_pipeline(BertClassifier.from_pretrained(folder))
    for a, b in zip(ours, theirs):
        assert set(a) == set(LABELS)
        np.testing.assert_allclose([a[label] for label in LABELS], [b[label] for label in LABELS], atol=1e-6)

    # Both ways through the command line: the HF folder -> .keras (with its vocab.txt sidecar) -> HF folder.
    assert main(["convert", str(folder), str(tmp_path / "tuned.keras")]) == 0
    assert "BertClassifier" in capsys.readouterr().out
    model = keras.saving.load_model(tmp_path / "tuned.keras")
    assert type(model) is BertClassifier and model.label_names == LABELS
    model.set_weights([w + 0.01 for w in model.get_weights()])  # as after fine-tuning
    model.save(tmp_path / "tuned.keras")
    assert main(["convert", str(tmp_path / "tuned.keras"), str(tmp_path / "exported"), "--to", "hf"]) == 0
    assert "BertClassifier" in capsys.readouterr().out
    exported = json.loads((tmp_path / "exported" / "config.json").read_text())
    assert exported["architectures"] == ["BertForSequenceClassification"]
    assert exported["id2label"] == {str(i): label for i, label in enumerate(LABELS)}
    theirs = hf_pipeline(tmp_path / "exported")
    for a, b in zip(our_pipeline(model), theirs):
        np.testing.assert_allclose([a[label] for label in LABELS], [b[label] for label in LABELS], atol=1e-6)


def movie_reviews(shared_data, start, count):
    """`count` (sentence, "negative"/"positive") pairs of the movie-review snippets, by the sign of their rating."""
    lines = (shared_data / "sentiment" / "movieReviewSnippets_GroundTruth.txt").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in lines.splitlines()[start : start + count]]
    return [(text.strip(), "positive" if float(rating) > 0 else "negative") for _, rating, text in rows]


@pytest.mark.only_backend("torch", reason="one 22M-parameter fine-tune is enough: the export itself is "
                                               "checked on every backend with the tiny models above")
def test_fine_tuned_minilm_exports_to_transformers(minilm_path, shared_data, tmp_path):
    from keras_bert.jobs.finetune import finetune  # imports TensorFlow (the data pipeline)
    from keras_bert.jobs.convert import convert
    from keras_bert.pipelines import load_pipeline

    train = tmp_path / "train.tsv"
    rows = movie_reviews(shared_data, 0, 16)  # two steps of 8: the head and every layer move off MiniLM's weights
    train.write_text("sentence\tlabel\n" + "".join(f"{t}\t{label}\n" for t, label in rows), encoding="utf-8")
    finetune("classify", str(minilm_path), train, tmp_path / "run", sequence_length=48, batch_size=8, epochs=1,
             learning_rate=1e-4, verbose=0, tensorboard=False)
    result = convert(tmp_path / "run", tmp_path / "hf", to="hf")
    assert result.model_class == "BertClassifier"

    texts = [text for text, _ in movie_reviews(shared_data, 100, 6)]
    encoded = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")(texts, padding=True, return_tensors="np")
    inputs = {"token_ids": encoded["input_ids"], "segment_ids": encoded["token_type_ids"],
              "padding_mask": encoded["attention_mask"]}
    hf = transformers.AutoModelForSequenceClassification.from_pretrained(tmp_path / "hf", attn_implementation="eager")
    ours = load_pipeline(tmp_path / "run")
    np.testing.assert_allclose(numpy_tree(ours.model(inputs)), hf_logits(hf.eval(), inputs), atol=1e-5)
    assert hf.config.id2label == {0: "negative", 1: "positive"}

    classify = transformers.pipeline("text-classification", model=str(tmp_path / "hf"), top_k=None, device="cpu")
    for theirs, mine in zip(classify(texts), ours(texts)):
        np.testing.assert_allclose(
            [row["score"] for row in sorted(theirs, key=lambda row: row["label"])],
            [mine["probabilities"][label] for label in ("negative", "positive")], atol=1e-5,
        )


@pytest.mark.only_backend("torch", reason="reads a config.json; no backend involved")
def test_label_names_follow_the_ids_not_the_order_config_json_lists_them(tmp_path):
    """A config.json whose `id2label` lists its 12 labels out of order (as a hand-edited or merged config may):
    the names go by id, as transformers reads them (by `int(key)`, so "10" comes after "9", not after "1")."""
    import random

    from keras_bert.converters.hf_tasks import _label_names

    labels = [f"label_{i}" for i in range(12)]
    items = [(str(i), name) for i, name in enumerate(labels)]
    random.Random(0).shuffle(items)
    id2label = dict(items)
    assert list(id2label.values()) != labels
    (tmp_path / "config.json").write_text(json.dumps({"id2label": id2label}))
    reference = transformers.BertConfig.from_pretrained(tmp_path)
    expected = [reference.id2label[i] for i in range(12)]
    assert expected == labels
    assert _label_names(json.loads((tmp_path / "config.json").read_text()), 12, "config.json") == expected
