"""Reading sentence-transformers folders: what is supported is read, what is not is named."""

import json

import pytest

from embedding_helpers import write_sentence_transformers_folder
from keras_bert import BertTextEmbedder
from keras_bert.converters.sentence_transformers_folder import read_sentence_embedding_config


def test_reads_pooling_normalize_and_max_seq_length(tmp_path):
    path = write_sentence_transformers_folder(tmp_path, pooling="cls", normalize=True, max_seq_length=12)
    config = read_sentence_embedding_config(path)
    assert config == {"transformer_path": path, "pooling": "cls", "normalize": True, "max_seq_length": 12,
                      "do_lower_case": False}
    embedder = BertTextEmbedder.from_pretrained(path)
    assert (embedder.pooling, embedder.normalize, embedder.sequence_length) == ("cls", True, 12)


def test_legacy_pooling_booleans_are_read(tmp_path):
    path = write_sentence_transformers_folder(tmp_path, normalize=False)
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 16, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": False,
         "pooling_mode_max_tokens": True, "pooling_mode_mean_sqrt_len_tokens": False}
    ))
    assert read_sentence_embedding_config(path)["pooling"] == "max"


def test_a_plain_hugging_face_folder_gets_mean_pooling_without_normalisation(tmp_path):
    path = write_sentence_transformers_folder(tmp_path)
    (tmp_path / "modules.json").unlink()
    embedder = BertTextEmbedder.from_pretrained(path)
    assert (embedder.pooling, embedder.normalize, embedder.sequence_length) == ("mean", False, None)


@pytest.mark.parametrize("pooling", ["weightedmean", "lasttoken", ["mean", "max"]])
def test_unsupported_pooling_is_named(tmp_path, pooling):
    path = write_sentence_transformers_folder(tmp_path, pooling=pooling)
    named = repr(pooling if isinstance(pooling, list) else [pooling])
    with pytest.raises(ValueError, match=r"1_Pooling/config.json: unsupported pooling") as error:
        BertTextEmbedder.from_pretrained(path)
    assert named in str(error.value)


def test_unsupported_module_is_named(tmp_path):
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
    ]
    path = write_sentence_transformers_folder(tmp_path, modules=modules)
    with pytest.raises(ValueError, match=r"unsupported module 'sentence_transformers.models.Dense' \(path '2_Dense'\)"):
        BertTextEmbedder.from_pretrained(path)


def test_a_folder_without_pooling_is_named(tmp_path):
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]
    path = write_sentence_transformers_folder(tmp_path, modules=modules)
    with pytest.raises(ValueError, match=r"unsupported module order \['Transformer'\]"):
        read_sentence_embedding_config(path)
