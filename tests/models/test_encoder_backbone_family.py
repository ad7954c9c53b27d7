"""A backbone family is one small subclass of `EncoderBackbone`: shown here with a family the package does not have.

The family below states only what is its own (its signature, inputs, no pooler,
a position offset, a block hook) and gets everything else from the base:
the graph, the config, `.keras` saving, input checks and task heads.
"""

import keras
import numpy as np
import pytest
from keras import ops

from harness import run_model_test
from keras_bert import BertClassifier
from keras_bert.layers import TransformerEncoder
from keras_bert.models.encoder_backbone import EncoderBackbone, constructor_arguments


@keras.saving.register_keras_serializable(package="keras_bert_tests")
class OffsetPositionsBackbone(EncoderBackbone):
    """Pre-LN blocks with ReLU, no segment ids, no pooler, positions counted from 2."""

    backbone_inputs = ("token_ids", "padding_mask")
    has_pooler = False

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim, dropout=0.0,
                 max_sequence_length=16, layer_norm_epsilon=1e-6, activation="relu", normalize_first=True,
                 output_hidden_states=False, output_attentions=False, dtype=None, **kwargs):
        super().__init__(**constructor_arguments(locals()))

    def position_table_size(self, config):
        return config["max_sequence_length"] + 2

    def position_ids(self, inputs, config):
        return ops.cumsum(ops.ones_like(inputs["token_ids"]), axis=1) + 1  # 2, 3, ...

    def transformer_block(self, config, dtype, index, name):
        # Every other block twice as wide: a family may vary its blocks by index.
        width = config["intermediate_dim"] * (2 if index % 2 else 1)
        return TransformerEncoder(config["num_heads"], width, dropout=config["dropout"], normalize_first=True,
                                  activation=config["activation"], dtype=dtype, name=name)


def _backbone(**overrides):
    return OffsetPositionsBackbone(**{**dict(vocabulary_size=40, num_layers=2, num_heads=2, hidden_dim=8,
                                             intermediate_dim=16), **overrides})


def _inputs():
    padding_mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], "int32")
    return {"token_ids": np.arange(10, dtype="int32").reshape(2, 5) + 3, "padding_mask": padding_mask}


def test_the_family_gets_config_saving_and_training_from_the_base(tmp_path):
    model = run_model_test(_backbone, _inputs(), {"sequence_output": (2, 5, 8), "pooled_output": (2, 8)}, tmp_path)
    config = model.get_config()
    assert set(config) == {"name", "trainable", "dtype", *OffsetPositionsBackbone.config_names()}
    assert model.embeddings.position_embeddings.shape == (18, 8)  # the family's own table size
    assert model.embeddings.segment_embedding is None and model.final_layer_norm is not None
    assert [block.intermediate_dim for block in model.encoder_blocks] == [16, 32]


def test_the_base_checks_the_familys_inputs_and_builds_task_heads_on_it():
    model = _backbone()
    with pytest.raises(ValueError, match="segment_ids"):
        model({**_inputs(), "segment_ids": np.zeros((2, 5), "int32")})
    with pytest.raises(ValueError, match="max_sequence_length=16"):
        model({"token_ids": np.ones((1, 17), "int32"), "padding_mask": np.ones((1, 17), "int32")})
    classifier = BertClassifier(model, num_classes=3, pooling="mean")
    # Preprocessors give every family all three inputs: the task model drops what this backbone does not take.
    logits = classifier.predict({**_inputs(), "segment_ids": np.zeros((2, 5), "int32")}, verbose=0)
    assert logits.shape == (2, 3) and np.isfinite(logits).all()


@pytest.mark.parametrize("family", ["BertBackbone", "RobertaBackbone", "AlbertBackbone", "DistilBertBackbone",
                                    "ElectraBackbone", "ModernBertBackbone", "OffsetPositionsBackbone"])
def test_an_argument_the_family_does_not_take_is_refused_not_passed_to_keras(family):
    """keras.Model takes any keyword without a word: a misspelt option, or another family's (BertBackbone's
    `normalize_first` given to RobertaBackbone), once built a model other than the one asked for."""
    import keras_bert

    cls = OffsetPositionsBackbone if family == "OffsetPositionsBackbone" else getattr(keras_bert, family)
    sizes = dict(vocabulary_size=50, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16)
    if family == "ModernBertBackbone":
        sizes["padding_id"] = 0  # its default is the real vocabulary's
    with pytest.raises(TypeError, match=r"unexpected argument\(s\) 'hiden_dim'.*takes vocabulary_size, num_layers"):
        cls(**sizes, hiden_dim=8)
    # The families without BERT's block options (ElectraBackbone takes them for pretraining from scratch).
    if family not in ("BertBackbone", "OffsetPositionsBackbone", "ElectraBackbone"):
        with pytest.raises(TypeError, match="'gated_feed_forward', 'normalize_first'"):
            cls(**sizes, normalize_first=True, gated_feed_forward=True)
    assert cls(**sizes, name="named", trainable=False).name == "named"  # what keras.Model itself takes still goes
