"""`bert_layout_map(gated_feed_forward=True)` on a ModernBertBackbone: the GeGLU kernel is replicated, the rest as BERT;
and the command line's model-parallel strategy gives a gated backbone that layout without being told."""

import keras
import pytest

from keras_bert.distribution import bert_layout_map


@pytest.mark.only_backend("jax", reason="keras.distribution's layouts are JAX's; the map is checked, no step is run")
def test_modernbert_layout_replicates_the_gated_kernel_and_shards_the_rest():
    from keras_bert import ModernBertBackbone

    mesh = keras.distribution.DeviceMesh((1, 1), ("batch", "model"), keras.distribution.list_devices()[:1])
    backbone = ModernBertBackbone(vocabulary_size=64, num_layers=3, num_heads=2, hidden_dim=16, intermediate_dim=12,
                                  max_sequence_length=32, padding_id=0)
    gated, plain = bert_layout_map(mesh, gated_feed_forward=True), bert_layout_map(mesh)
    axes = {v.path: gated[v.path].axes if gated[v.path] is not None else None for v in backbone.weights}
    for i in range(3):
        block = f"transformer_layer_{i}"
        assert axes[f"{block}/intermediate_dense/kernel"] == (None, None)  # (hidden, 2 * intermediate): replicated
        assert axes[f"{block}/output_dense/kernel"] == ("model", None)  # rows of act(input) * gate
        assert axes[f"{block}/self_attention/qkv/kernel"] == (None, None, "model", None)
        assert plain[f"{block}/intermediate_dense/kernel"].axes == (None, "model")  # BERT's stays column-sharded
    assert axes["embeddings/token_embedding/embeddings"] == ("model", None)
    assert axes["final_layer_norm/gamma"] is None


@pytest.mark.only_backend("jax", reason="keras.distribution's layouts are JAX's; the layouts are checked, no step is run")
def test_the_model_parallel_strategy_replicates_gated_kernels_without_a_flag():
    from keras_bert import BertBackbone, ModernBertBackbone
    from keras_bert.distribution import create_strategy, strategy_scope

    distribution = create_strategy("model-parallel", mesh_shape=(1, len(keras.distribution.list_devices())))
    with strategy_scope(distribution):
        modern = ModernBertBackbone(vocabulary_size=64, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=12,
                                    max_sequence_length=32, padding_id=0)
        bert = BertBackbone(vocabulary_size=64, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=12,
                            max_sequence_length=32)
    for backbone, intermediate in ((modern, (None, None)), (bert, (None, "model"))):
        layouts = {v.path: v._layout.axes for v in backbone.weights if v._layout is not None}
        assert layouts["transformer_layer_0/intermediate_dense/kernel"] == intermediate, backbone.name
        assert layouts["transformer_layer_0/output_dense/kernel"] == ("model", None), backbone.name

