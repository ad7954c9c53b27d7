"""The model_type dispatch: every family's checkpoints go to their own backbone class, and others are refused by name."""

import json

import keras
import numpy as np
import pytest

import keras_bert
from family_helpers import hf_model, transformers
from keras_bert import AlbertBackbone, BertBackbone, DistilBertBackbone
from keras_bert.converters.hf_families import FAMILIES


def test_one_table_names_every_family_and_its_exported_class():
    assert sorted(FAMILIES) == ["albert", "bert", "distilbert", "electra", "modernbert", "roberta"]
    for model_type, family in FAMILIES.items():
        assert getattr(keras_bert, family.backbone_class).model_type == model_type


def test_unsupported_model_type_names_the_supported_ones(tmp_path):
    hf_model("BertModel", transformers.BertConfig(
        vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8
    )).save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "model_type": "gpt2"}))
    expected = r"model_type 'gpt2' is not supported. Supported model types: 'bert' \(BertBackbone\), 'albert' \(AlbertBackbone\)"
    for cls in (BertBackbone, AlbertBackbone):
        with pytest.raises(ValueError, match=expected):
            cls.from_pretrained(str(tmp_path))


def test_weights_of_a_deeper_model_and_unknown_activations_are_refused(tmp_path):
    hf_model("DistilBertModel", transformers.DistilBertConfig(
        vocab_size=20, dim=8, n_layers=2, n_heads=2, hidden_dim=8, max_position_embeddings=8
    )).save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "n_layers": 1}))
    with pytest.raises(ValueError, match=r"tensors the model does not use: transformer\.layer\.1\..*not DistilBERT's"):
        DistilBertBackbone.from_pretrained(str(tmp_path))
    (tmp_path / "config.json").write_text(json.dumps({**config, "activation": "swish"}))
    with pytest.raises(ValueError, match=r"activation='swish' is not supported; supported: \['gelu', 'gelu_fast'"):
        DistilBertBackbone.from_pretrained(str(tmp_path))


def test_keras_files_load_into_their_own_family_only(tmp_path):
    backbone = AlbertBackbone(vocabulary_size=20, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=8, embedding_dim=4)
    path = str(tmp_path / "albert.keras")
    backbone.save(path)
    assert AlbertBackbone.from_pretrained(path).get_config() == backbone.get_config()
    with pytest.raises(ValueError, match=r"albert\.keras is a checkpoint of ALBERT.*keras_bert\.AlbertBackbone\.from_pretrained"):
        BertBackbone.from_pretrained(path)


@pytest.mark.parametrize("class_name", ["AlbertBackbone", "DistilBertBackbone", "ElectraBackbone", "RobertaBackbone"])
def test_mixed_precision_flows_through_every_family(class_name):
    cls = getattr(keras_bert, class_name)
    backbone = cls(vocabulary_size=20, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=8, dtype="mixed_bfloat16")
    assert cls.from_config(backbone.get_config()).dtype_policy.name == "mixed_bfloat16"
    inputs = {
        "token_ids": np.array([[0, 5, 6, 2, 1]], "int32"),
        "segment_ids": np.zeros((1, 5), "int32"),
        "padding_mask": np.array([[1, 1, 1, 1, 0]], "int32"),
    }
    outputs = backbone({name: inputs[name] for name in backbone.input_names})
    assert keras.backend.standardize_dtype(outputs["sequence_output"].dtype) == "bfloat16"
    assert {keras.backend.standardize_dtype(w.dtype) for w in backbone.weights} == {"float32"}
