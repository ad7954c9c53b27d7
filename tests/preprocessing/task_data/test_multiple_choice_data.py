"""Multiple-choice data: SWAG-style CSV, packing every choice, bad rows."""

import pytest
import tensorflow as tf

from keras_bert.preprocessing.task_data.multiple_choice_data import (
    BertMultipleChoicePreprocessor,
    multiple_choice_features,
    read_multiple_choice,
)
from task_helpers import FIXTURES, fixture_tokenizer, write


# Text preprocessing and metrics are TensorFlow / NumPy code that does the
# same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)

HEADER = "sent1,sent2,ending0,ending1,ending2,label\n"


def test_reads_swag_columns_and_packs_every_choice():
    examples = read_multiple_choice(FIXTURES / "mc_dev.csv")
    assert len(examples) == 100 and len(examples[0].choices) == 4
    first = examples[0]
    features = multiple_choice_features(examples[:3], fixture_tokenizer(), sequence_length=16)
    assert features.x["token_ids"].shape == (3, 4, 16) and features.y.shape == (3,)
    tokenizer = fixture_tokenizer()
    ids = features.x["token_ids"][0, 2]
    expected = (
        [tokenizer.cls_token_id] + tokenizer.tokenize(first.context).numpy().tolist() + [tokenizer.sep_token_id]
        + tokenizer.tokenize(first.question + " " + first.choices[2]).numpy().tolist() + [tokenizer.sep_token_id]
    )
    assert ids[: len(expected)].tolist() == expected
    x, y = next(iter(features.dataset(batch_size=2)))
    assert x["segment_ids"].shape == (2, 4, 16) and x["segment_ids"].dtype == tf.int32


def test_preprocessor_in_tf_data():
    preprocessor = BertMultipleChoicePreprocessor(fixture_tokenizer(), sequence_length=12)
    data = {"context": ["it is cold .", "it is hot ."], "choices": [["a coat .", "a lamp ."], ["a sunhat .", "a coat ."]]}
    dataset = tf.data.Dataset.from_tensor_slices((data, [0, 0])).batch(2).map(preprocessor)
    x, y = next(iter(dataset))
    assert x["token_ids"].shape == (2, 2, 12) and y.numpy().tolist() == [0, 0]


@pytest.mark.parametrize(
    "row, message",
    [
        ("it is cold .,anna takes,a coat .,a lamp .,a sunhat .,3\n", r"a\.csv:2: label 3 is out of range for 3 choices"),
        ("it is cold .,anna takes,a coat .,a lamp .,a sunhat .,first\n", r"a\.csv:2: label 'first' is not the index"),
        ("it is cold .,anna takes,a coat .,,a sunhat .,0\n", r"a\.csv:2: empty text in column 'ending1'"),
        (",anna takes,a coat .,a lamp .,a sunhat .,0\n", r"a\.csv:2: empty text in column 'sent1'"),
        ("it is cold .,anna takes,a coat .,a lamp .\n", r"a\.csv:2: 4 fields but the header has 6"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path, row, message):
    path = write(tmp_path / "a.csv", HEADER + row)
    with pytest.raises(ValueError, match=message):
        read_multiple_choice(path)


def test_explicit_columns_and_no_question(tmp_path):
    path = write(tmp_path / "b.jsonl", '{"q": "it is dark .", "a": "a lamp .", "b": "a coat .", "gold": 0}\n')
    examples = read_multiple_choice(path, context_column="q", question_column=None, choice_columns=["a", "b"], label_column="gold")
    assert examples[0].question == "" and examples[0].choices == ["a lamp .", "a coat ."] and examples[0].label == 0
