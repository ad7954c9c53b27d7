"""SentencePieceTokenizer (ALBERT): ids equal to transformers' AlbertTokenizer, tf.data, packing, files.

Backend-independent (TensorFlow ops in tf.data, the same whatever KERAS_BACKEND is): tested once, as
the BertTokenizer tests are.
The full-data figure is benchmarks/studies/family_tokenizer_agreement/family_tokenizer_agreement.py.
"""

import json
import os
import shutil

import keras
import pytest
import tensorflow as tf

from keras_bert.preprocessing.input_packer import BertInputPacker
from keras_bert.preprocessing.sentence_piece_tokenizer import SentencePieceTokenizer
from preprocessing_helpers import (
    FAMILY_HARD_CASES,
    check_eager_graphs_are_shared,
    family_folder,
    family_tokenizers,
    hf_ids,
    real_lines_per_file,
)

# Text preprocessing does the same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)


def test_real_lines_and_hard_cases_equal_transformers():
    ours, reference = family_tokenizers("albert")
    texts = list(real_lines_per_file()) + FAMILY_HARD_CASES
    assert len(texts) > 800
    mine = ours.tokenize(texts).to_list()
    theirs = hf_ids(reference, texts)
    # The Viterbi of SentencePiece and of the Rust Unigram break ties between
    # equal-score segmentations differently ("---" as "-" "--" or "--" "-"):
    # the only kind of difference on the full data (2 of 77,084 lines).
    differing = [t for t, a, b in zip(texts, mine, theirs) if a != b]
    assert [t for t in differing if "---" not in t] == []
    assert len(differing) <= 2


def _variant_with_number_commas(folder):
    """The test model plus digit+comma pieces likelier than any other, as spiece.model in `folder`."""
    from sentencepiece import sentencepiece_model_pb2  # writes the test's variant model

    model = sentencepiece_model_pb2.ModelProto()
    with open(os.path.join(family_folder("albert"), "spiece.model"), "rb") as f:
        model.ParseFromString(f.read())
    for text in ("▁5,", "5,", "00,", "▁1,000,"):
        piece = model.pieces.add()
        piece.piece, piece.score = text, 0.0
    (folder / "spiece.model").write_bytes(model.SerializeToString())
    return {p.piece: i for i, p in enumerate(model.pieces)}


@pytest.mark.parametrize("with_tokenizer_json", [False, True], ids=["spiece_only", "converted_tokenizer_json"])
def test_digit_comma_pieces_follow_transformers(tmp_path, with_tokenizer_json):
    """transformers 5 penalises digit+comma pieces when its tokenizer.json says so (AlbertConverter)."""
    import types

    from transformers import AlbertTokenizer  # the reference
    from transformers.convert_slow_tokenizer import AlbertConverter  # writes ALBERT's hub-style tokenizer.json

    vocabulary = _variant_with_number_commas(tmp_path)
    if with_tokenizer_json:
        original = types.SimpleNamespace(
            vocab_file=str(tmp_path / "spiece.model"), keep_accents=False, do_lower_case=True,
            convert_tokens_to_ids=vocabulary.get, add_prefix_space=True,
        )  # fmt: skip
        AlbertConverter(original).converted().save(str(tmp_path / "tokenizer.json"))
    reference = AlbertTokenizer.from_pretrained(str(tmp_path))
    ours = SentencePieceTokenizer.from_pretrained(tmp_path)
    assert ours.split_number_commas == with_tokenizer_json
    texts = ["5, 1,000,000 and 15,000, 5,5", "x 1,000, y"]
    ids = ours.tokenize(texts).to_list()
    assert ids == hf_ids(reference, texts)
    # The penalty changes the answer here: "▁1,000," is one piece without it.
    assert (vocabulary["▁1,000,"] in ids[1]) != with_tokenizer_json


def test_tf_data_and_tf_function_equal_eager():
    ours, _ = family_tokenizers("albert")
    texts = FAMILY_HARD_CASES[:6]
    eager = ours.tokenize(texts).to_list()
    # Batched, as a pipeline maps it: one trace inside the dataset's graph.
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(3).map(ours.tokenize)
    assert [row for batch in dataset for row in batch.to_list()] == eager
    assert ours.tokenize(texts[0]).numpy().tolist() == eager[0]



def test_equal_tokenizers_share_eager_graphs_and_keep_their_own_in_graphs(monkeypatch):
    folder = family_folder("albert")
    check_eager_graphs_are_shared(
        lambda: SentencePieceTokenizer.from_pretrained(folder), lambda: SentencePieceTokenizer.from_pretrained(folder, lowercase=False),
        FAMILY_HARD_CASES[:6], monkeypatch,
    )

def test_special_ids_detokenize_and_config_round_trip():
    ours, reference = family_tokenizers("albert")
    assert (ours.pad_token_id, ours.unk_token_id, ours.cls_token_id, ours.sep_token_id, ours.mask_token_id) == (
        reference.pad_token_id, reference.unk_token_id, reference.cls_token_id,
        reference.sep_token_id, reference.mask_token_id,
    )  # fmt: skip
    assert ours.vocabulary_size() == len(reference)
    ids = reference("Hello, World! [MASK] café")["input_ids"]
    assert ours.detokenize(ids).numpy().decode() == reference.decode(ids, skip_special_tokens=True)
    config = json.loads(json.dumps(keras.saving.serialize_keras_object(ours)))
    restored = keras.saving.deserialize_keras_object(config)
    assert isinstance(restored, SentencePieceTokenizer) and restored.get_config() == ours.get_config()
    assert restored._model_proto == ours._model_proto


def test_pairs_pack_like_transformers():
    ours, reference = family_tokenizers("albert")
    packer = BertInputPacker.from_tokenizer(ours, sequence_length=16)
    first, second = ["Emma Woodhouse, handsome, clever, and rich", "A"], ["with a comfortable home", "B c"]
    packed = packer(first, second)
    expected = reference(
        first, second, truncation="longest_first", max_length=16, padding="max_length", return_token_type_ids=True
    )
    assert packed["token_ids"].numpy().tolist() == expected["input_ids"]
    assert packed["segment_ids"].numpy().tolist() == expected["token_type_ids"]
    assert packed["padding_mask"].numpy().tolist() == expected["attention_mask"]


def test_missing_and_bad_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="missing spiece.model"):
        SentencePieceTokenizer.from_pretrained(tmp_path)
    (tmp_path / "spiece.model").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        SentencePieceTokenizer.from_pretrained(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        SentencePieceTokenizer.from_pretrained(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="received int"):
        SentencePieceTokenizer(3)


def test_tokenizer_config_sets_casing(tmp_path):
    shutil.copy(os.path.join(family_folder("albert"), "spiece.model"), tmp_path)
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": false, "keep_accents": true}')
    cased = SentencePieceTokenizer.from_pretrained(tmp_path)
    assert (cased.lowercase, cased.keep_accents) == (False, True)
    from transformers import AlbertTokenizer  # the reference

    reference = AlbertTokenizer.from_pretrained(str(tmp_path))
    texts = ["Café NAÏVE Emma", "Ångström"]
    assert cased.tokenize(texts).to_list() == hf_ids(reference, texts)


def test_compatibility_characters_decompose_as_in_transformers():
    """ALBERT's normaliser decomposes with NFKD (compatibility) before dropping accents: "ǅ" (U+01C5) is "D" + "ž",
    the ligature "ﬁ" is "fi", fullwidth letters are ASCII. With NFD they would stay whole and become [UNK]
    (issue 44's mutation run: such a change went unnoticed)."""
    ours, reference = family_tokenizers("albert")
    texts = ["ǅungla", "ǆungla and ǲ", "ﬁne ﬂour", "ＡＢＣ ａｂｃ", "Ⅻ ½ ²", "ﬀ ﬃ ﬆ"]
    mine = ours.tokenize(texts).to_list()
    assert mine == hf_ids(reference, texts)
    assert ours.unk_token_id not in mine[0]  # the example is not [UNK] on both sides
