"""Global attention over long inputs in query chunks (TensorFlow and JAX on a CPU): the unchunked result, in
less memory.

Keras' op there computes the full `(batch, heads, seq_q, seq_k)` scores; `keras_bert.layers._fused` cuts
queries longer than `QUERY_CHUNK` into equal chunks, one at a time. Here the chunk is made small (4 queries) so
that tiny inputs are cut (10 = 3 chunks of 4, the last one padded by 2): the outputs must equal the one-call
outputs with a key padding mask and with a per-query attention mask, on JAX the traced program must hold no full
score matrix, and on TensorFlow a graph traced with a free length (as `predict` retraces for a second length,
and as a served SavedModel is) must chunk when it runs.
"""

import keras
import numpy as np
import pytest

from keras_bert.layers import SelfAttention
from keras_bert.layers import _fused

pytestmark = pytest.mark.not_backend(
    "torch", reason="torch's scaled_dot_product_attention is called whole: it never writes the scores out on a CPU"
)
HIDDEN, HEADS, LENGTH = 16, 2, 10
FREE_LENGTH_IS_TENSORFLOWS = pytest.mark.only_backend(
    "tensorflow", reason="a length left free in a traced graph is TensorFlow's; JAX traces each length"
)


def _layer_and_inputs():
    layer = SelfAttention(HEADS)
    layer.build((None, LENGTH, HIDDEN))
    rng = np.random.default_rng(0)
    layer.set_weights([0.3 * rng.standard_normal(w.shape).astype("float32") for w in layer.get_weights()])
    x = rng.standard_normal((2, LENGTH, HIDDEN)).astype("float32")
    padding_mask = np.ones((2, LENGTH), "int32")
    padding_mask[1, 6:] = 0
    # A per-query mask (packed documents): queries 0-4 see keys 0-4, queries 5-9 keys 5-9.
    document = np.arange(LENGTH) // 5
    attention_mask = np.broadcast_to(document[:, None] == document[None, :], (2, LENGTH, LENGTH)).astype("int32")
    return layer, x, padding_mask, attention_mask


def _traces_a_loop(forward):
    """Whether a `tf.function`'s graph (its branches and loops included) holds a While op."""
    library = forward.get_concrete_function().graph.as_graph_def().library.function
    return any(node.op in ("While", "StatelessWhile") for function in library for node in function.node_def)


def _outputs(layer, x, padding_mask, attention_mask):
    return [keras.ops.convert_to_numpy(layer(x, padding_mask=padding_mask)),
            keras.ops.convert_to_numpy(layer(x, attention_mask=attention_mask))]


def test_chunked_attention_equals_one_call(monkeypatch):
    layer, x, padding_mask, attention_mask = _layer_and_inputs()
    whole = _outputs(layer, x, padding_mask, attention_mask)
    monkeypatch.setattr(_fused, "QUERY_CHUNK", 4)
    chunked = _outputs(layer, x, padding_mask, attention_mask)
    for a, b in zip(chunked, whole):
        np.testing.assert_allclose(a, b, atol=1e-6)
    # The masks mattered: without them the outputs differ.
    assert np.abs(keras.ops.convert_to_numpy(layer(x)) - whole[0]).max() > 1e-3


@pytest.mark.only_backend("jax", reason="reads the traced program (a jaxpr); TensorFlow runs the same function")
def test_no_full_score_matrix_is_computed(monkeypatch):
    import jax

    monkeypatch.setattr(_fused, "QUERY_CHUNK", 4)
    rng = np.random.default_rng(0)
    query, key, value = (rng.standard_normal((1, LENGTH, HEADS, 8)).astype("float32") for _ in range(3))
    mask = np.ones((1, 1, 1, LENGTH), bool)

    def shapes(fn):
        """Every intermediate's shape in the traced program, loops' bodies included."""
        found = set()

        def walk(jaxpr):
            for equation in jaxpr.eqns:
                found.update(tuple(v.aval.shape) for v in equation.outvars)
                for param in equation.params.values():
                    for inner in param if isinstance(param, (tuple, list)) else [param]:
                        if hasattr(inner, "eqns"):
                            walk(inner)
                        elif hasattr(inner, "jaxpr") and hasattr(inner.jaxpr, "eqns"):
                            walk(inner.jaxpr)

        walk(jax.make_jaxpr(fn)(query, key, value, mask).jaxpr)
        return found

    chunked = shapes(lambda q, k, v, m: _fused.attention(q, k, v, mask=m))
    assert (1, HEADS, 4, LENGTH) in chunked and (1, HEADS, LENGTH, LENGTH) not in chunked, sorted(chunked)
    monkeypatch.setattr(_fused, "QUERY_CHUNK", 1024)
    assert (1, HEADS, LENGTH, LENGTH) in shapes(lambda q, k, v, m: _fused.attention(q, k, v, mask=m))


@FREE_LENGTH_IS_TENSORFLOWS
def test_a_length_only_known_when_the_graph_runs_is_chunked_there(monkeypatch):
    import tensorflow as tf

    layer, x, padding_mask, attention_mask = _layer_and_inputs()
    whole = _outputs(layer, x, padding_mask, attention_mask)
    short = keras.ops.convert_to_numpy(layer(x[:, :3], padding_mask=padding_mask[:, :3]))
    monkeypatch.setattr(_fused, "QUERY_CHUNK", 4)
    free = [tf.TensorSpec((None, None, HIDDEN)), tf.TensorSpec((None, None), tf.int32),
            tf.TensorSpec((None, None, None), tf.int32)]
    forward = tf.function(lambda x, p, a: (layer(x, padding_mask=p), layer(x, attention_mask=a)), input_signature=free)
    for a, b in zip(forward(x, padding_mask, attention_mask), whole):
        np.testing.assert_allclose(a.numpy(), b, atol=1e-6)
    # A length within one chunk takes the one-call branch: the same outputs.
    np.testing.assert_allclose(forward(x[:, :3], padding_mask[:, :3], attention_mask[:, :3, :3])[0].numpy(), short,
                               atol=1e-6)
    # The chunk loop is in the graph (inside the branch the length chooses when it runs).
    assert _traces_a_loop(forward)


@FREE_LENGTH_IS_TENSORFLOWS
def test_a_learned_position_table_keeps_free_length_graphs_out_of_the_chunk_loop(tmp_path):
    """No input longer than a learned position table gets through the embeddings, so a backbone with one (BERT and
    its family: 512 rows, within one chunk) tells its attention layers, and a graph with a free length carries no
    chunk loop, before and after a `.keras` round trip; ModernBERT (rotary positions up to 8,192) keeps it."""
    import tensorflow as tf

    from harness import tiny_backbone
    from keras_bert import AlbertBackbone, ModernBertBackbone

    def free_length_forward(backbone):
        free = {name: tf.TensorSpec((None, None), tf.int32) for name in backbone.input_names}
        return tf.function(lambda inputs: backbone(inputs)["sequence_output"], input_signature=[free])

    bert = tiny_backbone()
    albert = AlbertBackbone(vocabulary_size=50, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=32,
                            embedding_dim=8, max_sequence_length=32)
    modern = ModernBertBackbone(vocabulary_size=50, num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=24,
                                padding_id=0, max_sequence_length=64)
    assert [block.attention.max_length for block in bert.transformer_layers] == [32, 32]
    assert albert.transformer_layer.attention.max_length == 32
    bert.save(tmp_path / "bert.keras")
    reloaded = keras.saving.load_model(tmp_path / "bert.keras")
    assert [_traces_a_loop(free_length_forward(m)) for m in (bert, albert, reloaded, modern)] == [
        False, False, False, True]
    # The free-length graph gives the eager outputs at a length it never saw when traced.
    rng = np.random.default_rng(0)
    inputs = {"token_ids": rng.integers(1, 50, (2, 7)).astype("int32"), "segment_ids": np.zeros((2, 7), "int32"),
              "padding_mask": np.ones((2, 7), "int32")}
    np.testing.assert_allclose(free_length_forward(bert)(inputs).numpy(), keras.ops.convert_to_numpy(bert(inputs)["sequence_output"]),
                               atol=1e-6)
