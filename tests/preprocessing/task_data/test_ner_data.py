"""NER data: CoNLL reading and its errors, first-wordpiece alignment, and the way back to words."""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert.preprocessing.task_data.ner_data import (
    BertTokenClassifierPreprocessor,
    TaggedSentence,
    ner_features,
    ner_label_names,
    read_conll,
    word_predictions,
)
from task_helpers import FIXTURES, fixture_tokenizer, write


# Text preprocessing and metrics are TensorFlow / NumPy code that does the
# same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)

CONLL = """-DOCSTART- -X- -X- O

zorbak NNP I-NP B-PER
lee NNP I-NP I-PER
lives VBZ O O
in IN O O
kettleton NNP I-NP B-LOC
. . O O

acme NNP I-NP B-ORG
opened VBD O O
"""


def test_reads_conll_2003_layout(tmp_path):
    sentences = read_conll(write(tmp_path / "a.conll", CONLL))
    assert len(sentences) == 2
    assert sentences[0].words == ["zorbak", "lee", "lives", "in", "kettleton", "."]
    assert sentences[0].tags == ["B-PER", "I-PER", "O", "O", "B-LOC", "O"]
    assert sentences[1].source.endswith("a.conll:10")
    assert ner_label_names(sentences) == ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    # Two columns (word, tag) and words only.
    two = read_conll(write(tmp_path / "b.conll", "ada B-PER\nsang O\n"))
    assert two[0].tags == ["B-PER", "O"]
    words = read_conll(write(tmp_path / "c.txt", "ada\nsang\n\nhi\n"), labelled=False)
    assert [s.words for s in words] == [["ada", "sang"], ["hi"]] and words[0].tags is None


@pytest.mark.parametrize(
    "content, message",
    [
        ("ada NNP B-PER\nsang VBD O B-MISC\n", r"a\.conll:2: 4 columns .* but the file's first token line "
                                               r"\(.*a\.conll:1\) has 3: ragged columns \(a token with more than one label"),
        ("ada NNP B-PER\n\nsang\n", r"a\.conll:3: 1 columns"),
        ("ada NNP PER\n", r"a\.conll:1: tag 'PER' is not a BIO tag"),
        ("ada NNP B-PER|I-LOC\n", r"a\.conll:1: tag 'B-PER\|I-LOC' holds more than one label"),
        ("ada\n", r"a\.conll:1: one column only"),
        ("-DOCSTART- -X- O\n\n", r"a\.conll: no sentences"),
    ],
)
def test_bad_conll_names_file_and_line(tmp_path, content, message):
    path = write(tmp_path / "a.conll", content)
    with pytest.raises(ValueError, match=message):
        read_conll(path)


def test_unknown_tag_in_held_out_data_names_its_line(tmp_path):
    train = read_conll(write(tmp_path / "train.conll", "ada B-PER\nsang O\n"))
    dev = read_conll(write(tmp_path / "dev.conll", "ada B-PER\n\nin O\nrome B-LOC\n"))
    with pytest.raises(ValueError, match=r"dev\.conll:4: tag 'B-LOC' is not one of the 3 tags"):
        ner_features(dev, fixture_tokenizer(), ner_label_names(train))


def test_labels_go_to_first_wordpieces_and_come_back_to_words():
    tokenizer = fixture_tokenizer()
    sentence = TaggedSentence(["zorbak", "lee", "lives", "in", "kettleton", "."], ["B-PER", "I-PER", "O", "O", "B-LOC", "O"])
    names = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    features = ner_features([sentence], tokenizer, names, sequence_length=16)
    pieces = [tokenizer.id_to_token(i) for i in features.x["token_ids"][0] if i]
    assert pieces == ["[CLS]", "zor", "##bak", "lee", "lives", "in", "kettle", "##ton", ".", "[SEP]"]
    assert features.y[0, :10].tolist() == [-100, 3, -100, 4, 0, 0, 1, -100, 0, -100]
    assert np.all(features.y[0, 10:] == -100)
    assert features.info["word_index"][0, :10].tolist() == [-1, 0, -1, 1, 2, 3, 4, -1, 5, -1]
    # Logits that are right on the first pieces and wrong elsewhere give back the words' tags.
    logits = np.zeros((1, 16, len(names)), "float32")
    logits[0, :, 2] = 1.0  # "I-LOC" everywhere ...
    for position, label in enumerate(features.y[0]):
        if label >= 0:
            logits[0, position, label] = 5.0  # ... except on labelled positions
    assert word_predictions(logits, features) == [sentence.tags]


def test_truncated_sentences_and_tokenless_words_are_counted_and_get_o():
    tokenizer = fixture_tokenizer()
    sentences = [
        TaggedSentence(["anna", "\u200b", "lives", "in", "new", "york", "."], ["B-PER", "O", "O", "O", "B-LOC", "I-LOC", "O"]),
        TaggedSentence(["ben", "lives", "in", "rome", "."], ["B-PER", "O", "O", "B-LOC", "O"]),
    ]
    features = ner_features(sentences, tokenizer, ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"], sequence_length=6)
    # 4 tokens fit: sentence 0 keeps anna lives in new (the zero-width space has no token), loses york and ".".
    assert features.info["num_words_without_tokens"] == 1
    assert features.info["num_truncated_words"] == 2 + 1  # york, "." and sentence 1's "."
    assert features.info["num_truncated_sentences"] == 2
    logits = np.eye(5)[np.maximum(features.y, 0)] * (features.y >= 0)[..., None]
    predicted = word_predictions(logits, features)
    assert predicted[0] == ["B-PER", "O", "O", "O", "B-LOC", "O", "O"]
    assert predicted[1] == ["B-PER", "O", "O", "B-LOC", "O"]


def test_preprocessor_in_tf_data_with_string_tags_and_word_weights():
    tokenizer = fixture_tokenizer()
    names = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    preprocessor = BertTokenClassifierPreprocessor(tokenizer, sequence_length=8, label_names=names)
    words = tf.ragged.constant([["zorbak", "lives", "in", "oslo"], ["hi", "ben"]])
    tags = tf.ragged.constant([["B-PER", "O", "O", "B-LOC"], ["O", "B-PER"]])
    weights = tf.ragged.constant([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0]])
    dataset = tf.data.Dataset.from_tensor_slices((words, tags, weights)).batch(2).map(preprocessor)
    x, y, w = next(iter(dataset))
    assert x["token_ids"].shape == (2, 8) and y.dtype == tf.int32
    assert y.numpy().tolist() == [[-100, 3, -100, 0, 0, 1, -100, -100], [-100, 0, 3, -100, -100, -100, -100, -100]]
    assert w.numpy().tolist() == [[0, 1, 0, 2, 3, 4, 0, 0], [0, 5, 6, 0, 0, 0, 0, 0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not one of `label_names`"):
        preprocessor(words, tf.ragged.constant([["B-PER", "O", "O", "B-XYZ"], ["O", "O"]]))


def test_fixture_files_read_cleanly():
    train = read_conll(FIXTURES / "ner_train.conll")
    assert len(train) == 400
    assert ner_label_names(train) == ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
