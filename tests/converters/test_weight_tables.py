"""Weight tables, the shared machinery behind every family's names: a family is data, the expansion is shared.

The families' own tables are checked against transformers by the parity
tests (tests/models/test_*_backbone.py, test_hf_parity.py); here the
machinery is checked on a family that is none of them: rotary positions (no
position table), bias-free layers, no norm before the first block's
attention, a final norm, as a new family would state it.
"""

import dataclasses
import importlib
import types

import keras
import numpy as np
import pytest

from keras_bert.converters import hf_bert
from keras_bert.converters.hf_family import Family
from keras_bert.converters.weight_map import assign_entries, entries_to_canonical
from keras_bert.converters.weight_tables import (
    attention,
    dense,
    each_layer,
    layer_norm,
    sublayers,
    table_entries,
    tensor,
)
from keras_bert.layers import SelfAttention

HIDDEN, HEADS, INTERMEDIATE = 8, 2, 12


def built(layer, input_shape):
    layer.build(input_shape)
    return layer


def bias_free_attention():
    layer = keras.layers.MultiHeadAttention(HEADS, HIDDEN // HEADS, use_bias=False)
    layer.build((1, 3, HIDDEN), (1, 3, HIDDEN))
    return layer


def toy_backbone(num_layers=2):
    """An object shaped like a bias-free pre-LN backbone: the attributes a table addresses, nothing else."""
    blocks = [
        types.SimpleNamespace(
            attention_layer_norm=None if i == 0 else built(keras.layers.LayerNormalization(center=False), (HIDDEN,)),
            attention=bias_free_attention(),
            intermediate_dense=built(keras.layers.Dense(2 * INTERMEDIATE, use_bias=False), (HIDDEN,)),
            output_dense=built(keras.layers.Dense(HIDDEN, use_bias=False), (INTERMEDIATE,)),
        )
        for i in range(num_layers)
    ]
    return types.SimpleNamespace(
        embeddings=types.SimpleNamespace(
            token_embedding=built(keras.layers.Embedding(20, HIDDEN), (None,)),
            layer_norm=built(keras.layers.LayerNormalization(center=False), (HIDDEN,)),
        ),
        transformer_layers=blocks,
        final_layer_norm=built(keras.layers.LayerNormalization(center=False), (HIDDEN,)),
        normalize_first=True,
        model_type="toy",
    )


TOY = Family(
    model_type="toy", title="Toy", backbone_class="ToyBackbone", prefix="model.",
    config_fields={"vocabulary_size": ("vocab_size", int), "num_layers": ("num_hidden_layers", int)},
    normalize_first=True,
    backbone={
        "embeddings.token_embedding.embeddings": tensor("embeddings.tok_embeddings.weight"),
        "embeddings.layer_norm": layer_norm("embeddings.norm"),
        "transformer_layers": each_layer(
            "layers.{index}",
            {
                "attention_layer_norm": layer_norm("attn_norm"),
                "attention": attention("attn.q", "attn.k", "attn.v", "attn.o"),
                "intermediate_dense": dense("mlp.Wi"),
                "output_dense": dense("mlp.Wo"),
            },
        ),
        "final_layer_norm": layer_norm("final_norm"),
    },
)


def test_a_new_family_is_a_table_of_names():
    backbone = toy_backbone()
    names = [name for entry in TOY.model_entries(backbone) for name in entry.names]
    block = ["attn.q.weight", "attn.k.weight", "attn.v.weight", "attn.o.weight", "mlp.Wi.weight", "mlp.Wo.weight"]
    assert names == [
        "embeddings.tok_embeddings.weight",
        "embeddings.norm.weight",
        *(f"layers.0.{name}" for name in block),  # layer 0 has no attn_norm: a None layer holds nothing
        "layers.1.attn_norm.weight",
        *(f"layers.1.{name}" for name in block),
        "final_norm.weight",
    ]


def test_tables_round_trip_every_weight():
    source, target = toy_backbone(), toy_backbone()
    tensors = entries_to_canonical(TOY.model_entries(source))
    assert tensors["layers.1.mlp.Wi.weight"].shape == (2 * INTERMEDIATE, HIDDEN)  # (out, in)
    assert tensors["layers.0.attn.o.weight"].shape == (HIDDEN, HIDDEN)
    used = assign_entries(TOY.model_entries(target), tensors)
    assert sorted(used) == sorted(tensors)
    for name, array in entries_to_canonical(TOY.model_entries(target)).items():
        np.testing.assert_array_equal(array, tensors[name])


def test_the_block_form_and_the_table_are_checked():
    backbone = toy_backbone()
    with pytest.raises(ValueError, match=r"Post-LN backbones \(normalize_first=False\) have no counterpart in Toy"):
        TOY.model_entries(types.SimpleNamespace(**{**vars(backbone), "normalize_first": False}))
    with pytest.raises(AttributeError, match="pooler"):
        table_entries(backbone, {"pooler.dense": dense("pooler.dense")})


def test_sublayers_and_heads_take_their_names_under_a_prefix():
    head = types.SimpleNamespace(dense=built(keras.layers.Dense(2), (HIDDEN,)))
    entries = table_entries(types.SimpleNamespace(head=head), {"head": sublayers("cls.head", {"dense": dense("out")})})
    assert [entry.names for entry in entries] == [["cls.head.out.weight"], ["cls.head.out.bias"]]
    model = types.SimpleNamespace(backbone=toy_backbone(1), next_sentence_head=head)
    bert_heads = dataclasses.replace(TOY, heads={"next_sentence_head": hf_bert.HEADS["next_sentence_head"]})
    names = [name for entry in bert_heads.model_entries(model) for name in entry.names]
    assert names[-2:] == ["cls.seq_relationship.weight", "cls.seq_relationship.bias"]


def test_keras_multi_head_attention_and_ours_hold_the_same_tensors():
    """Our fused-QKV `SelfAttention` and Keras' `MultiHeadAttention` (keras-hub's) read one set of q/k/v/o tensors."""
    names = ("q", "k", "v", "o")
    ours = SelfAttention(HEADS)
    ours.build((1, 5, HIDDEN))
    theirs = keras.layers.MultiHeadAttention(HEADS, HIDDEN // HEADS)
    theirs.build((1, 5, HIDDEN), (1, 5, HIDDEN))
    piece = attention(*names)
    rng = np.random.default_rng(0)
    tensors = {f"{n}.{kind}": rng.normal(size=(HIDDEN, HIDDEN) if kind == "weight" else (HIDDEN,)) for n in names
               for kind in ("weight", "bias")}
    assign_entries(piece(ours, ""), tensors)
    assign_entries(piece(theirs, ""), tensors)
    for layer in (ours, theirs):
        for name, array in entries_to_canonical(piece(layer, "")).items():
            np.testing.assert_allclose(array, tensors[name], rtol=1e-6)
    x = rng.normal(size=(1, 5, HIDDEN)).astype("float32")
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(ours(x)), keras.ops.convert_to_numpy(theirs(x, x)), atol=1e-5
    )


def test_query_key_and_value_stacked_in_one_tensor_load_as_three():
    """A checkpoint that stacks q, k, v as one `(3 * hidden, hidden)` tensor (ModernBERT's `Wqkv`) fills the same kernel."""
    rng = np.random.default_rng(1)
    tensors = {f"{n}.{kind}": rng.normal(size=(HIDDEN, HIDDEN) if kind == "weight" else (HIDDEN,)) for n in "qkvo"
               for kind in ("weight", "bias")}
    stacked = {
        "qkv.weight": np.concatenate([tensors[f"{n}.weight"] for n in "qkv"]),
        "qkv.bias": np.concatenate([tensors[f"{n}.bias"] for n in "qkv"]),
        "o.weight": tensors["o.weight"],
        "o.bias": tensors["o.bias"],
    }
    separate, fused = SelfAttention(HEADS), SelfAttention(HEADS)
    for layer in (separate, fused):
        layer.build((1, 5, HIDDEN))
    assign_entries(attention("q", "k", "v", "o")(separate, ""), tensors)
    assign_entries(attention("qkv", "o")(fused, ""), stacked)
    for ours, theirs in zip(separate.weights, fused.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(ours), keras.ops.convert_to_numpy(theirs))
    for name, array in entries_to_canonical(attention("qkv", "o")(fused, "")).items():
        np.testing.assert_allclose(array, stacked[name], rtol=1e-6)
    with pytest.raises(ValueError, match="takes 4 names"):
        attention("q", "k", "v")


@pytest.mark.parametrize("module_name", ["hf_bert", "hf_albert", "hf_electra", "hf_distilbert"])
def test_config_values_are_the_inverse_of_the_fields(module_name):
    family = importlib.import_module(f"keras_bert.converters.{module_name}").FAMILY
    arguments = {argument: 7 for argument in family.config_fields}
    backbone = types.SimpleNamespace(**arguments)
    read = family.read_config(family.config_values(backbone), "config.json")
    assert {argument: read[argument] for argument in arguments} == arguments
