"""learn_vocabulary / write_vocabulary: reserved tokens first, size, and a tokenizer that loads it."""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
from keras_bert.preprocessing.vocabulary import count_words, learn_vocabulary, write_vocabulary
from preprocessing_helpers import AUSTEN


# Text preprocessing and metrics are TensorFlow / NumPy code that does the
# same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)

RESERVED = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_learned_vocabulary_loads_and_covers_the_corpus(tmp_path):
    vocabulary = learn_vocabulary(str(AUSTEN / "persuasion.txt"), 2000)
    assert vocabulary[:5] == RESERVED
    assert 0.95 * 2000 <= len(vocabulary) <= 2000
    assert len(set(vocabulary)) == len(vocabulary)
    # The learner keeps every single character and its "##" form.
    assert {"e", "##e", "q", "##q"} <= set(vocabulary)

    path = write_vocabulary(vocabulary, tmp_path / "model" / "vocab.txt")
    assert (tmp_path / "model" / "vocab.txt").read_text(encoding="utf-8").splitlines() == vocabulary
    tokenizer = BertTokenizer.from_pretrained(tmp_path / "model")
    assert tokenizer.pad_token_id == 0 and tokenizer.vocabulary_size() == len(vocabulary)
    assert path.endswith("vocab.txt")

    text = (AUSTEN / "persuasion.txt").read_text(encoding="utf-8").split("\n\n")[200:260]
    ids = tokenizer.tokenize(text).flat_values.numpy()
    assert np.mean(ids == tokenizer.unk_token_id) < 0.001
    # Learned with the tokenizer's own cleanup: accents never appear in pieces.
    assert not any("é" in token for token in vocabulary)


def test_cased_vocabulary_from_a_dataset_and_size_is_never_exceeded():
    lines = tf.data.TextLineDataset(str(AUSTEN / "northangerabbey.txt"))
    vocabulary = learn_vocabulary(lines, 1000, lowercase=False, num_iterations=2)
    assert len(vocabulary) <= 1000 and vocabulary[:5] == RESERVED
    assert "Catherine" in vocabulary and "catherine" not in vocabulary
    counts = count_words(tf.data.Dataset.from_tensors("Cafe\u0301 CAFÉ café"), lowercase=True)
    assert counts == {"cafe": 3}


def test_reserved_tokens_order_and_validation(tmp_path):
    reserved = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]"]
    vocabulary = learn_vocabulary(tf.data.Dataset.from_tensor_slices(["a b c"] * 20), 50, reserved_tokens=reserved)
    assert vocabulary[:6] == reserved
    with pytest.raises(ValueError, match=r"\['\[MASK\]'\] missing"):
        learn_vocabulary(["x"], 100, reserved_tokens=RESERVED[:4])
    with pytest.raises(ValueError, match="`vocabulary_size` must be an int larger"):
        learn_vocabulary(["x"], 5)
    with pytest.raises(ValueError, match="no file matches"):
        learn_vocabulary(str(tmp_path / "none*.txt"), 100)
    with pytest.raises(ValueError, match="line breaks"):
        write_vocabulary(["[PAD]", "a\nb"], tmp_path / "v.txt")


def test_the_vocabulary_has_the_size_asked_for(shared_data):
    """`keras-bert vocab --size 4000` on Persuasion learned 3,861 tokens (the threshold search stopped short)."""
    vocabulary = learn_vocabulary([str(shared_data / "austen" / "persuasion.txt")], 4000)
    assert len(vocabulary) == 4000 and len(set(vocabulary)) == 4000


def test_a_corpus_too_small_for_the_size_says_so(tmp_path, capsys):
    corpus = tmp_path / "small.txt"
    corpus.write_text("the cat sat on the mat\nthe dog\n", encoding="utf-8")
    vocabulary = learn_vocabulary([str(corpus)], 200, verbose=True)
    assert len(vocabulary) < 200
    assert f"{len(vocabulary)} of the 200 tokens asked for" in capsys.readouterr().out
