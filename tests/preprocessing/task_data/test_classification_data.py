"""Classification data: file formats, label mapping, bad input, windows over long texts."""

import json

import numpy as np
import pytest
import tensorflow as tf

from keras_bert.preprocessing.task_data.classification_data import (
    BertClassifierPreprocessor,
    average_windows,
    classification_features,
    classification_windows,
    encode_labels,
    read_classification_data,
)
from keras_bert.preprocessing.task_data.task_features import read_table, window_spans
from task_helpers import FIXTURES, fixture_tokenizer, write


# Text preprocessing and metrics are TensorFlow / NumPy code that does the
# same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)


def test_reads_tsv_csv_and_jsonl_alike(tmp_path):
    tsv = write(tmp_path / "a.tsv", 'sentence\tlabel\r\nsaid "hi", twice\tpositive\r\n\r\na dull film\tnegative\r\n')
    csv_path = write(tmp_path / "a.csv", 'sentence,label\n"said ""hi"", twice",positive\na dull film,negative\n')
    jsonl = write(tmp_path / "a.jsonl", json.dumps({"sentence": 'said "hi", twice', "label": "positive"}) + "\n"
                  + json.dumps({"sentence": "a dull film", "label": "negative"}) + "\n")
    for path in (tsv, csv_path, jsonl):
        examples = read_classification_data(path, "sentence", "label")
        assert [(e.text, e.label) for e in examples] == [('said "hi", twice', "positive"), ("a dull film", "negative")]
    # Line numbers count the header and blank lines.
    assert read_classification_data(tsv, "sentence", "label")[1].source == f"{tsv}:4"


def test_header_less_files_take_column_numbers(tmp_path):
    path = write(tmp_path / "ratings.tsv", "1\t2.5\tgood fun\r\n2\t-1.0\tno fun\r\n")
    examples = read_classification_data(path, text_column=2, label_column=1, header=False)
    values, names = encode_labels(examples, regression=True)
    assert names is None and values.dtype == np.float32
    np.testing.assert_allclose(values, [2.5, -1.0])


def test_labels_map_to_ids_sorted_and_numeric_labels_sort_as_numbers(tmp_path):
    path = write(tmp_path / "a.tsv", "s\tl\nx\t10\ny\t9\nz\t10\nw\t2\n")
    ids, names = encode_labels(read_classification_data(path, "s", "l"))
    assert names == ["2", "9", "10"] and ids.tolist() == [2, 1, 2, 0]
    # JSON integer labels, and whole floats (9.0, as pandas writes an int column with gaps), are the same
    # labels as the strings.
    jsonl = write(tmp_path / "b.jsonl", '{"s": "x", "l": 10}\n{"s": "y", "l": 2}\n{"s": "z", "l": 9.0}\n')
    ids, _ = encode_labels(read_classification_data(jsonl, "s", "l"), names)
    assert ids.tolist() == [2, 0, 1]


@pytest.mark.parametrize(
    "content, call, message",
    [
        ("sentence\tlabel\ngood\tpositive\nbad\tneutral\n", dict(label_names=["negative", "positive"]),
         r"a\.tsv:3: label 'neutral' is not one of the 2 labels \['negative', 'positive'\]"),
        ("sentence\tlabel\ngood\t0.5\nbad\tvery\n", dict(regression=True),
         r"a\.tsv:3: label 'very' is not a number"),
        ("sentence\tlabel\ngood\tnan\n", dict(regression=True), r"a\.tsv:2: label 'nan' is not a finite number"),
        ("sentence\tlabel\n  \tpositive\n", {}, r"a\.tsv:2: empty text in column 'sentence'"),
        ("sentence\tlabel\ngood\tpositive\nbad\n", {}, r"a\.tsv:3: 1 fields but the header has 2"),
        ("sentence\tlabel\ngood\t\n", {}, r"a\.tsv:2: empty label in column 'label'"),
        ("text\tlabel\ngood\tpositive\n", {}, r"a\.tsv:2: no column 'sentence'; the row has \['text', 'label'\]"),
        ("sentence\tlabel\n", {}, r"a\.tsv: no examples"),
    ],
)
def test_bad_input_names_file_and_line(tmp_path, content, call, message):
    path = write(tmp_path / "a.tsv", content)
    with pytest.raises(ValueError, match=message):
        examples = read_classification_data(path, "sentence", "label")
        encode_labels(examples, **call)


def test_mistyped_json_labels_and_texts_are_refused(tmp_path):
    path = write(tmp_path / "a.jsonl", '{"sentence": "fine", "label": [1]}\n')
    with pytest.raises(ValueError, match=r"a\.jsonl:1: label \[1\] has type list"):
        read_classification_data(path, "sentence", "label")
    path = write(tmp_path / "d.jsonl", '{"sentence": "fine", "label": true}\n')
    with pytest.raises(ValueError, match=r"d\.jsonl:1: label True has type bool"):
        read_classification_data(path, "sentence", "label")
    path = write(tmp_path / "b.jsonl", '{"sentence": 3, "label": "x"}\n')
    with pytest.raises(ValueError, match=r"b\.jsonl:1: column 'sentence' must hold text, found int"):
        read_classification_data(path, "sentence", "label")
    path = write(tmp_path / "c.jsonl", "[1, 2]\n")
    with pytest.raises(ValueError, match=r"c\.jsonl:1: expected a JSON object per line"):
        list(read_table(path))


def test_preprocessor_packs_pairs_in_tf_data():
    tokenizer = fixture_tokenizer()
    preprocessor = BertClassifierPreprocessor(tokenizer, sequence_length=12)
    texts_a, texts_b = ["a good film .", "a dull plot ."], ["the cast was great .", "bad ."]
    dataset = tf.data.Dataset.from_tensor_slices(((texts_a, texts_b), [1, 0])).batch(2).map(preprocessor)
    x, y = next(iter(dataset))
    ids = tokenizer.tokenize(tf.constant(texts_b)).to_list()
    assert x["token_ids"].dtype == tf.int32 and x["token_ids"].shape == (2, 12)
    assert x["segment_ids"].numpy()[1].tolist() == [0] * 6 + [1] * 3 + [0] * 3
    assert x["token_ids"].numpy()[1, 6:8].tolist() == ids[1]
    assert y.numpy().tolist() == [1, 0]
    config = preprocessor.get_config()
    assert BertClassifierPreprocessor.from_config(config).sequence_length == 12


def test_window_spans():
    assert window_spans(5, 8, 4) == [(0, 5)]
    assert window_spans(0, 8, 4) == [(0, 0)]
    assert window_spans(10, 4, 3) == [(0, 4), (3, 7), (6, 10)]
    # The last window ends at the last token, however the stride falls.
    assert window_spans(11, 4, 3) == [(0, 4), (3, 7), (6, 10), (9, 11)]
    with pytest.raises(ValueError, match="leave no gaps"):
        window_spans(10, 4, 5)


def test_long_texts_become_windows_and_documents_average_their_logits():
    tokenizer = fixture_tokenizer()
    long_text = " ".join(["the film was good and the cast was great ."] * 3)  # 30 tokens
    x, document_index = classification_windows(tokenizer, [long_text, "bad ."], sequence_length=12, stride=5)
    ids = tokenizer.tokenize(long_text).numpy().tolist()
    # 10 tokens per window, a new one every 5: starts 0, 5, 10, 15, 20 (the one at 20 reaches the end).
    assert document_index.tolist() == [0, 0, 0, 0, 0, 1]
    assert x["token_ids"][2, 1:11].tolist() == ids[10:20]
    assert x["token_ids"][4].tolist() == [tokenizer.cls_token_id] + ids[20:30] + [tokenizer.sep_token_id]
    assert x["padding_mask"][5].tolist() == [1] * 4 + [0] * 8
    logits = np.arange(12, dtype="float32").reshape(6, 2)
    np.testing.assert_allclose(average_windows(logits, document_index, 2), [[4.0, 5.0], [10.0, 11.0]])


def test_classification_features_of_the_pair_fixture():
    examples = read_classification_data(FIXTURES / "pairs_train.tsv", "sentence1", "label", pair_column="sentence2")
    features = classification_features(examples, fixture_tokenizer(), sequence_length=24)
    assert features.info["label_names"] == ["negative", "positive"]
    assert len(features) == 400 and features.y.shape == (400,)
    assert set(np.unique(features.x["segment_ids"])) == {0, 1}
    x, y = next(iter(features.dataset(batch_size=8)))
    assert x["token_ids"].shape == (8, 24) and x["token_ids"].dtype == tf.int32
    # Held-out labels map through the training label set.
    dev = read_classification_data(FIXTURES / "pairs_dev.tsv", "sentence1", "label", pair_column="sentence2")
    dev_features = classification_features(dev, fixture_tokenizer(), label_names=["negative", "positive"], sequence_length=24)
    assert dev_features.y.tolist()[:3] == [["negative", "positive"].index(e.label) for e in dev[:3]]


def test_length_buckets_cut_padding_and_keep_labels_aligned():
    from keras_bert.preprocessing.task_data.ner_data import ner_features, ner_label_names, read_conll

    sentences = read_conll(FIXTURES / "ner_train.conll")
    features = ner_features(sentences, fixture_tokenizer(), ner_label_names(sentences), sequence_length=32)
    seen = 0
    for x, y in features.dataset(16, shuffle=True, length_buckets=[8, 16]):
        length = x["token_ids"].shape[1]
        assert length in (8, 16, 32) and y.shape == x["token_ids"].shape
        real = x["padding_mask"].numpy().sum(axis=1)
        # Each batch has the smallest bucket length that holds its longest sequence.
        assert real.max() <= length and (length == 8 or real.max() > {16: 8, 32: 16}[length])
        assert np.all(y.numpy()[x["padding_mask"].numpy() == 0] == -100)
        seen += len(real)
    assert seen == len(features)
    # Repeated, each pass reshuffled: batches stay full across passes.
    batches = list(features.dataset(16, shuffle=True, length_buckets=[8, 16], repeat=True, drop_remainder=True).take(60))
    assert all(len(y) == 16 for _, y in batches)
