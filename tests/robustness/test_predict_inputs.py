"""Bad input to `predict`, `fit` and the text pipelines: a right answer or a clear error, never a crash or garbage.

Runs on every backend: the input checks guard the backends' own behaviour
(JAX's gather clamps an out-of-range id where TensorFlow and torch raise).
"""

import numpy as np
import pytest

from harness import tiny_backbone
from keras_bert import BertClassifier, BertTokenClassifier
from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
from keras_bert.pipelines import TextClassifierPipeline, TokenClassifierPipeline
from robustness_helpers import FIXTURE_VOCAB

LENGTH = 16


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizer(str(FIXTURE_VOCAB))


@pytest.fixture(scope="module")
def classifier(tokenizer):
    model = BertClassifier(tiny_backbone(vocabulary_size=tokenizer.vocabulary_size(), max_sequence_length=32), num_classes=2, label_names=["negative", "positive"])
    model.compile()
    return model


def inputs(batch_size=2, length=LENGTH, **overrides):
    x = {name: np.ones((batch_size, length), "int32") for name in ("token_ids", "segment_ids", "padding_mask")}
    return {**x, **overrides}


@pytest.mark.parametrize(
    "x, message",
    [
        (inputs(token_ids=np.full((2, LENGTH), 10**6, "int32")), r"`token_ids` must be in \[0, 147\).*1000000"),
        (inputs(token_ids=np.full((2, LENGTH), -1, "int32")), r"`token_ids` must be in \[0, 147\).*-1"),
        (inputs(segment_ids=np.full((2, LENGTH), 2, "int32")), r"`segment_ids` must be in \[0, 2\)"),
        (inputs(token_ids=np.ones((2, LENGTH), "float32")), "must be an integer tensor"),
        (inputs(length=600), "sequence length 600 is longer than max_sequence_length=32"),
        (inputs(segment_ids=np.ones((2, LENGTH - 1), "int32")), "must have the same shape"),
        ({"token_ids": np.ones((2, LENGTH), "int32")}, r"Missing: \['segment_ids', 'padding_mask'\]"),
        (inputs(batch_size=0), "hold 0 examples"),
    ],
    ids=["token_id_too_large", "token_id_negative", "segment_id", "float_ids", "too_long", "ragged", "missing",
         "zero_examples"],
)
def test_predict_refuses_bad_inputs_and_still_works_after(classifier, x, message):
    with pytest.raises(ValueError, match=message):
        classifier.predict(x, verbose=0)
    assert classifier.predict(inputs(), verbose=0).shape == (2, 2)


@pytest.mark.parametrize(
    "labels, message",
    [
        (np.array([0, 2]), r"class labels must be in \[0, 2\).*Received 2"),
        (np.array([-1, 0]), r"class labels must be in \[0, 2\).*Received -1"),
        (np.array([0.5, 1.0], "float32"), "class labels must be integer ids. Received 0.5"),
        (np.array([0.0, np.nan], "float32"), "labels must be finite"),
        (np.array(["neg", "pos"]), "labels must be numbers"),
    ],
    ids=["too_large", "negative", "fractional", "nan", "strings"],
)
def test_fit_refuses_labels_out_of_range_or_of_the_wrong_type(classifier, labels, message):
    with pytest.raises(ValueError, match=message):
        classifier.fit(inputs(), labels, verbose=0)


def test_token_labels_may_hold_the_ignore_id_but_nothing_else_out_of_range(tokenizer):
    tagger = BertTokenClassifier(tiny_backbone(vocabulary_size=tokenizer.vocabulary_size(), max_sequence_length=32), num_classes=3)
    tagger.compile()
    labels = np.full((2, LENGTH), -100, "int32")
    labels[:, 1] = 2
    tagger.fit(inputs(), labels, verbose=0)
    labels[0, 3] = 3
    with pytest.raises(ValueError, match=r"class labels must be in \[0, 3\) or -100.*Received 3"):
        tagger.fit(inputs(), labels, verbose=0)


def test_pipeline_on_unusual_texts_gives_one_valid_answer_each(classifier, tokenizer):
    pipeline = TextClassifierPipeline(classifier, tokenizer, sequence_length=LENGTH, window_stride=LENGTH - 2)
    texts = ["\x00\x01", "😀", "我爱北京", "שלום", "e\u0301", "line\r\nbreak\rmixed", "the film " * 994]
    results = pipeline(texts)
    assert len(results) == len(texts)
    for result in results:
        assert result["label"] in ("negative", "positive")
        assert sum(result["probabilities"].values()) == pytest.approx(1.0)
    # 1,988 tokens = 142 windows of 14, each "the film" x 7: the windowed
    # answer (mean of the windows' logits) must equal the one-window answer.
    one_window = pipeline("the film " * 7)
    assert results[-1]["probabilities"] == pytest.approx(one_window["probabilities"], abs=1e-5)


def test_pipeline_answers_zero_texts_with_zero_answers(classifier, tokenizer):
    assert TextClassifierPipeline(classifier, tokenizer, sequence_length=LENGTH)([]) == []
    tagger = BertTokenClassifier(tiny_backbone(vocabulary_size=tokenizer.vocabulary_size(), max_sequence_length=32), num_classes=3, label_names=["O", "B-PER", "I-PER"])
    assert TokenClassifierPipeline(tagger, tokenizer, sequence_length=LENGTH)([]) == []


@pytest.mark.parametrize(
    "texts, pairs, message",
    [
        ("", None, "text 0 is empty"),
        (["fine", " \t\n"], None, "text 1 is empty"),
        (["a", "b"], ["c"], "2 texts but 1 pairs"),
        (["a"], [""], "pair 0 is empty"),
        (None, None, "`texts` must be a string or a list of strings. Received NoneType"),
        (b"bytes", None, "Received bytes"),
        (["ok", 7], None, "Item 1 is a int"),
    ],
    ids=["empty", "whitespace_only", "pair_missing", "pair_empty", "none", "bytes", "not_a_string"],
)
def test_pipeline_refuses_bad_texts(classifier, tokenizer, texts, pairs, message):
    pipeline = TextClassifierPipeline(classifier, tokenizer, sequence_length=LENGTH)
    with pytest.raises(ValueError, match=message):
        pipeline(texts, pairs=pairs)


def test_predict_gives_one_output_per_line_of_a_crlf_file_with_blank_lines(classifier, tmp_path):
    import json

    from robustness_helpers import run_cli

    classifier.save(tmp_path / "model.keras")
    (tmp_path / "in.txt").write_bytes(b"good film\r\n\r\n \t \r\nbad\r\n")
    status, out, err = run_cli(["predict", tmp_path / "model.keras", "--tokenizer", FIXTURE_VOCAB,
                                "--sequence-length", LENGTH, "--file", tmp_path / "in.txt"])
    records = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and [r["input"] for r in records] == ["good film", "", " \t ", "bad"]
    assert [("error" in r, "label" in r) for r in records] == [(False, True), (True, False), (True, False), (False, True)]
    assert "in.txt:2: empty input" in err and "in.txt:3: empty input" in err


def test_a_pair_whose_shorter_text_is_cut_says_how_many_tokens(classifier, tokenizer):
    pipeline = TextClassifierPipeline(classifier, tokenizer, sequence_length=LENGTH)
    # 20 + 30 wordpieces: the 30 are windowed, the 20 cut to (16 - 3) // 2 = 6 in every window.
    stats = pipeline.input_stats(["the film " * 10], ["the film " * 15])
    assert stats == [{"tokens": 50, "windows": 5, "truncated_tokens": 14}]
