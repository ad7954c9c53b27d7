"""A ModernBERT folder through the command line: fine-tune, predict, export a SavedModel that serves raw strings
(a classifier; a question answerer and a tagger, whose answers and entities are mapped back to characters through
the byte-level BPE's offsets and words);
and a tiny ModernBERT pretrained from scratch (`keras-bert pretrain --family modernbert`) that fine-tunes from its run.

The folder is what transformers writes for a tiny random `ModernBertModel`
plus a ModernBERT-style `tokenizer.json` (byte-level BPE trained on Austen,
see `preprocessing_helpers`). `keras-bert finetune --init` must build a
`ModernBertClassifier` on it with its own tokenizer (not a WordPiece
vocab.txt), the run folder must keep that tokenizer, and `keras-bert
predict` on the run and on its SavedModel (tokenizer inside the graph) must
give the same probabilities as the Keras model on our tokenizer's ids.
"""

import json

import keras
import numpy as np
import pytest

from family_helpers import hf_model, transformers
from keras_bert.cli import main as cli
from preprocessing_helpers import AUSTEN, write_modernbert_tokenizer_folder
from task_helpers import FIXTURES, check_served_answers, classify_rows, write_rows

pytestmark = pytest.mark.only_backend(
    "tensorflow",
    reason="command-line plumbing, the same on every backend (the classifier's numbers are checked on all three in "
    "tests/converters/test_hf_modernbert_tasks.py); on TensorFlow the SavedModel export runs in this process",
)
TEXTS = ["A delightful, witty comedy.", "Dull and far too long; I left early."]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from keras_bert import ModernBertTokenizer

    folder = write_modernbert_tokenizer_folder(tmp_path_factory.mktemp("modernbert"), vocab_size=400)
    tokenizer = ModernBertTokenizer.from_pretrained(folder)
    config = transformers.ModernBertConfig(
        vocab_size=tokenizer.vocabulary_size(), hidden_size=32, num_attention_heads=4, intermediate_size=48,
        num_hidden_layers=2, local_attention=8, max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id,
        cls_token_id=tokenizer.cls_token_id, sep_token_id=tokenizer.sep_token_id,
        bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id,
    )
    hf_model("ModernBertModel", config, seed=0).save_pretrained(folder)  # config.json: model_type "modernbert"
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:32])
    return folder


def test_finetune_predict_and_serve_a_modernbert_classifier(folder, tmp_path, capsys):
    import tensorflow as tf

    from keras_bert import ModernBertClassifier
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer
    from keras_bert.preprocessing import BertInputPacker, ModernBertTokenizer

    run = tmp_path / "run"
    assert cli([
        "finetune", "--task", "classify", "--init", str(folder), "--train", str(folder / "train.tsv"),
        "--sequence-length", "24", "--batch-size", "16", "--epochs", "1", "--learning-rate", "1e-3",
        "--pooling", "mean", "--no-tensorboard", "--out", str(run),
    ]) == 0  # fmt: skip
    files = find_model(run)
    model = load_keras_model(files)
    assert isinstance(model, ModernBertClassifier) and model.pooling == "mean"
    tokenizer = load_tokenizer(files)
    assert isinstance(tokenizer, ModernBertTokenizer)
    assert tokenizer.get_config() == ModernBertTokenizer.from_pretrained(folder).get_config()
    assert json.loads((run / "finetune.json").read_text())["job"]["lowercase"] is None

    packed = BertInputPacker.from_tokenizer(tokenizer, 24)(TEXTS)
    expected = keras.ops.convert_to_numpy(keras.ops.softmax(model({k: v.numpy() for k, v in packed.items()})))
    capsys.readouterr()
    assert cli(["predict", str(run), *TEXTS]) == 0
    from_run = _probabilities(capsys.readouterr().out)
    assert float(np.abs(from_run - expected).max()) <= 1e-5

    assert cli(["export", str(run), "--out", str(tmp_path / "served")]) == 0
    served = tf.saved_model.load(str(tmp_path / "served"))
    probabilities = served.signatures["serve_text"](text=tf.constant(TEXTS))["probabilities"].numpy()
    delta = float(np.abs(probabilities - expected).max())
    print(f"ModernBERT SavedModel serve_text vs Keras: max |delta| {delta:.2e}")
    assert delta <= 1e-5
    capsys.readouterr()
    assert cli(["predict", str(tmp_path / "served"), *TEXTS]) == 0
    np.testing.assert_allclose(_probabilities(capsys.readouterr().out), from_run, atol=1e-5)


def test_finetune_a_modernbert_question_answerer_and_serve_its_answers(folder, tmp_path):
    from keras_bert import ModernBertQuestionAnswerer

    run = tmp_path / "qa"
    metrics, model, _ = _finetune(folder, "qa", "squad_v1", run, epochs=2, batch_size=32, learning_rate=3e-3)
    print(f"ModernBERT QA (tiny, random start, 2 epochs): validation exact match {metrics['exact_match']:.1f}")
    # The labels are right only if the answers' character spans found their tokens: a tiny model learns them.
    assert metrics["exact_match"] > 30
    assert isinstance(model, ModernBertQuestionAnswerer)
    check_served_answers(run, tmp_path / "served")


def test_finetune_a_modernbert_tagger_and_serve_its_entities(folder, tmp_path):
    import tensorflow as tf

    from keras_bert import ModernBertTokenClassifier
    from keras_bert.pipelines import TokenClassifierPipeline

    run = tmp_path / "ner"
    metrics, model, tokenizer = _finetune(folder, "ner", "ner", run, epochs=8, batch_size=16, learning_rate=5e-3)
    print(f"ModernBERT tagger (tiny, random start, 8 epochs): validation entity F1 {metrics['f1']:.3f}")
    # Words after a sentence's first are tokenized with the space before them, as in running text: a tiny
    # model then finds the fixture's entities in raw text.
    assert metrics["f1"] > 0.5
    assert isinstance(model, ModernBertTokenClassifier)
    texts = ["the team from new york joined umbrella corp .", "Zoë said  the team from new york joined umbrella corp ."]
    pipeline = TokenClassifierPipeline(model, tokenizer, sequence_length=32)
    expected = pipeline(texts)
    assert any(entity["text"] == "new york" for entity in expected[0])
    for row, text in zip(expected, texts):
        assert all(e["text"] == text[e["start"] : e["end"]] == e["text"].strip() != "" for e in row)
    assert cli(["export", str(run), "--out", str(tmp_path / "served")]) == 0
    served = tf.saved_model.load(str(tmp_path / "served")).signatures["serve_text"]
    out = served(text=tf.constant(texts))
    for r, row in enumerate(expected):
        n = int(out["num_entities"][r])
        assert [t.decode() for t in out["entity_text"][r, :n].numpy()] == [e["text"] for e in row]
        assert out["entity_start"][r, :n].numpy().tolist() == [e["start"] for e in row]


def _finetune(folder, task, data, run, epochs, batch_size, learning_rate):
    """`keras-bert finetune --task <task>` on the fixture's `<data>_train` / `<data>_dev` files at 32 tokens →
    (validation metrics, the run's model, its tokenizer)."""
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer

    suffix = ".json" if task == "qa" else ".conll"
    assert cli([
        "finetune", "--task", task, "--init", str(folder), "--train", str(FIXTURES / f"{data}_train{suffix}"),
        "--eval", str(FIXTURES / f"{data}_dev{suffix}"), "--sequence-length", "32", "--batch-size", str(batch_size),
        "--epochs", str(epochs), "--learning-rate", str(learning_rate), "--no-tensorboard", "--out", str(run),
    ]) == 0  # fmt: skip
    files = find_model(run)
    return json.loads((run / "metrics.json").read_text())["validation"], load_keras_model(files), load_tokenizer(files)


def _probabilities(printed):
    """`(texts, labels)` probabilities of `keras-bert predict`'s JSON lines, in label order (negative, positive)."""
    rows = [json.loads(line) for line in printed.splitlines() if line.startswith("{")]
    assert [row["input"] for row in rows] == TEXTS
    return np.array([[row["probabilities"][label] for label in ("negative", "positive")] for row in rows])


def test_pretrain_a_modernbert_and_finetune_from_the_run(folder, tmp_path):
    import warnings

    from keras_bert import BertPretrainer, ModernBertBackbone, ModernBertClassifier
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer
    from keras_bert.preprocessing import ModernBertTokenizer

    lines = (AUSTEN / "persuasion.txt").read_text(encoding="utf-8").splitlines()[200:500]
    (tmp_path / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = tmp_path / "pretrained"
    assert cli([
        "pretrain", "--family", "modernbert", "--corpus", str(tmp_path / "corpus.txt"), "--vocab", str(folder / "tokenizer.json"),
        "--size", "tiny", "--steps", "4", "--sequence-length", "32", "--batch-size", "8", "--no-tensorboard",
        "--out", str(run),
    ]) == 0  # fmt: skip
    job = json.loads((run / "config.json").read_text())["job"]
    # ModernBERT's recipe where no data option says otherwise: MLM only, 30%, packed documents.
    assert (job["family"], job["sentence_task"], job["masking_rate"], job["pack_sequences"]) == (
        "modernbert", "none", 0.3, True
    )
    files = find_model(run)
    pretrainer = load_keras_model(files)
    assert isinstance(pretrainer, BertPretrainer) and pretrainer.next_sentence_head is None
    assert isinstance(pretrainer.backbone, ModernBertBackbone) and pretrainer.backbone.packed_inputs
    assert not pretrainer.masked_lm_head.transform_bias  # ModernBERT's head, not BERT's
    assert isinstance(load_tokenizer(files), ModernBertTokenizer)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cli([
            "finetune", "--task", "classify", "--init", str(run), "--train", str(folder / "train.tsv"),
            "--sequence-length", "24", "--batch-size", "16", "--epochs", "1", "--no-tensorboard",
            "--out", str(tmp_path / "tuned"),
        ]) == 0  # fmt: skip
    # ModernBERT has no pooler: a cls head reads the [CLS] vector pretraining trained, nothing to warn about.
    assert not [w for w in caught if "never trained" in str(w.message)]
    classifier = load_keras_model(find_model(tmp_path / "tuned"))
    assert isinstance(classifier, ModernBertClassifier) and not classifier.backbone.packed_inputs
