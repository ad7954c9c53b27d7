"""Bad task data files: each one read correctly, or refused with an error naming `file:line`.

The readers are plain Python (csv/json) and TensorFlow preprocessing, the
same on every Keras backend, so this file runs on one.
"""

import json

import pytest

from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
from keras_bert.preprocessing.task_data.classification_data import classification_features, read_classification_data
from keras_bert.preprocessing.task_data.multiple_choice_data import read_multiple_choice
from keras_bert.preprocessing.task_data.ner_data import read_conll
from keras_bert.preprocessing.task_data.squad_data import read_squad
from robustness_helpers import FIXTURE_VOCAB, TASK_FIXTURES

pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="the readers are Python and TensorFlow code, the same on every backend; checked once"
)


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)


def refused(reader, path, line, *words):
    """Calls `reader(path)`, expecting a ValueError that names `path:line` and `words`."""
    with pytest.raises(ValueError) as error:
        reader(path)
    message = str(error.value)
    assert f"{path}:{line}:" in message, message
    for word in words:
        assert word in message, message
    return message


def read_classify(path):
    return read_classification_data(path, "sentence", "label")


# ----------------------------------------------------------------------------- classification tables
def test_ragged_columns_are_refused_at_their_line(tmp_path):
    path = write(tmp_path, "ragged.tsv", "sentence\tlabel\ngood\t1\nbad\t0\textra\n")
    refused(read_classify, path, 3, "3 fields but the header has 2")


def test_truncated_json_lines_are_refused_at_their_line(tmp_path):
    path = write(tmp_path, "cut.jsonl", '{"sentence": "a", "label": 1}\n{"sentence": "b", "lab')
    refused(read_classify, path, 2, "not valid JSON")


def test_invalid_utf8_is_refused_at_its_line(tmp_path):
    path = write(tmp_path, "latin1.tsv", "sentence\tlabel\nfine\t1\n".encode() + "café\t0\n".encode("latin-1"))
    refused(read_classify, path, 3, "not UTF-8", "0xe9")


def test_labels_of_the_wrong_type_are_refused(tmp_path):
    refused(read_classify, write(tmp_path, "a.jsonl", '{"sentence": "a", "label": [1]}\n'), 1, "has type list")
    refused(read_classify, write(tmp_path, "b.jsonl", '{"sentence": "a", "label": true}\n'), 1, "has type bool")
    refused(read_classify, write(tmp_path, "c.jsonl", '{"sentence": 5, "label": 1}\n'), 1, "must hold text")


def test_eval_labels_outside_the_training_labels_are_refused(tmp_path):
    tokenizer = BertTokenizer(str(FIXTURE_VOCAB))
    train = read_classify(write(tmp_path, "train.tsv", "sentence\tlabel\na\tpos\nb\tneg\n"))
    labels = classification_features(train, tokenizer, sequence_length=8).info["label_names"]
    dev = read_classify(write(tmp_path, "dev.tsv", "sentence\tlabel\na\tpos\nb\tneutral\n"))
    with pytest.raises(ValueError, match=r"dev.tsv:3: label 'neutral' is not one of the 2 labels"):
        classification_features(dev, tokenizer, label_names=labels, sequence_length=8)


def test_non_numeric_and_non_finite_regression_targets_are_refused(tmp_path):
    tokenizer = BertTokenizer(str(FIXTURE_VOCAB))
    for value, why in (("high", "is not a number"), ("nan", "is not a finite number"), ("inf", "is not a finite number")):
        examples = read_classify(write(tmp_path, "r.tsv", f"sentence\tlabel\na\t0.5\nb\t{value}\n"))
        with pytest.raises(ValueError, match=f"r.tsv:3: label '{value}' {why}"):
            classification_features(examples, tokenizer, regression=True, sequence_length=8)


def test_pairs_with_one_side_missing_are_refused(tmp_path):
    def read_pairs(path):
        return read_classification_data(path, "a", "label", pair_column="b")

    refused(read_pairs, write(tmp_path, "p.tsv", "a\tb\tlabel\nx\ty\t1\nx\t\t0\n"), 3, "empty text in column 'b'")
    refused(read_pairs, write(tmp_path, "p.jsonl", '{"a": "x", "label": 1}\n'), 1, "no column 'b'")


def test_empty_and_whitespace_only_texts_are_refused(tmp_path):
    refused(read_classify, write(tmp_path, "e.tsv", "sentence\tlabel\n \u3000\t1\n"), 2, "empty text")
    with pytest.raises(ValueError, match=r"e2.tsv: no examples"):
        read_classify(write(tmp_path, "e2.tsv", "sentence\tlabel\n\n"))


def test_mixed_newline_styles_and_a_byte_order_mark_are_read_with_the_right_lines(tmp_path):
    data = "\ufeffsentence\tlabel\r\nfirst\t1\nsecond\t0\rthird\t1\r\n".encode()
    examples = read_classify(write(tmp_path, "mixed.tsv", data))
    assert [(e.text, e.label) for e in examples] == [("first", "1"), ("second", "0"), ("third", "1")]
    assert [e.source.rsplit(":", 1)[1] for e in examples] == ["2", "3", "4"]


def test_a_one_megabyte_text_field_is_read_whole(tmp_path):
    text = "a very long review " * (2**20 // 19 + 1)
    for name, data in (("big.csv", f'sentence,label\n"{text}",1\n'), ("big.tsv", f"sentence\tlabel\n{text}\t1\n")):
        [example] = read_classify(write(tmp_path, name, data))
        assert example.text == text and example.label == "1"


def test_nul_and_control_characters_in_a_field_are_kept_for_the_tokenizer(tmp_path):
    [example] = read_classify(write(tmp_path, "nul.tsv", "sentence\tlabel\ngood\x00 film\x07\t1\n"))
    assert example.text == "good\x00 film\x07"
    assert BertTokenizer(str(FIXTURE_VOCAB)).tokenize(example.text).numpy().tolist() == [
        BertTokenizer(str(FIXTURE_VOCAB)).token_to_id("good"), BertTokenizer(str(FIXTURE_VOCAB)).token_to_id("film")
    ]


# ----------------------------------------------------------------------------- NER, SQuAD, multiple choice
def test_conll_ragged_columns_and_bad_tags_are_refused_at_their_line(tmp_path):
    refused(read_conll, write(tmp_path, "r.conll", "Ada B-PER\nLovelace I-PER x\n"), 2, "ragged columns")
    refused(read_conll, write(tmp_path, "t.conll", "Ada B-PER\nLovelace PER\n"), 2, "not a BIO tag")
    refused(read_conll, write(tmp_path, "u.conll", b"Ada B-PER\n\nLov\xe9lace I-PER\n"), 3, "not UTF-8")


def test_truncated_squad_json_is_refused_with_its_line(tmp_path):
    data = (TASK_FIXTURES / "squad_v1_dev.json").read_bytes()
    path = write(tmp_path, "cut.json", data[: len(data) // 3])
    message = refused(read_squad, path, data[: len(data) // 3].count(b"\n") + 1, "not valid JSON")
    assert "truncated" in message


def test_squad_answers_that_do_not_match_the_context_are_refused(tmp_path):
    squad = {"data": [{"paragraphs": [{"context": "Ada was born in London.", "qas": [
        {"id": "q1", "question": "Where?", "answers": [{"text": "London", "answer_start": 3}]}]}]}]}
    path = write(tmp_path, "off.json", json.dumps(squad))
    with pytest.raises(ValueError, match=r"qas\[0\] \(id 'q1'\).*'London' at answer_start=3 does not match"):
        read_squad(path)


def test_multiple_choice_labels_out_of_range_or_not_integers_are_refused(tmp_path):
    header = "sent1,sent2,ending0,ending1,label\n"
    refused(read_multiple_choice, write(tmp_path, "a.csv", header + "a,b,c,d,2\n"), 2, "out of range for 2 choices")
    refused(read_multiple_choice, write(tmp_path, "b.csv", header + "a,b,c,d,1.5\n"), 2, "not the index of a choice")
    refused(read_multiple_choice, write(tmp_path, "c.csv", header + "a,b,c,,1\n"), 2, "empty text in column 'ending1'")
