"""export_hub_encoder: TF Hub-style encoder + preprocessor SavedModels that train further.

The SavedModels are TensorFlow graphs whatever backend trained the model, so
what they do is checked on the TensorFlow backend (loading them, training
through them with Keras 3's TFSMLayer and, in a child process, tf-keras'
hub.KerasLayer). The argument checks run on every backend; reading the
weights back on every backend is tests/converters/test_hub_saved_model.py.
"""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

from export_helpers import SHORT_TEXTS, packed, saved_functions, tokenizer
from harness import REPO_ROOT, random_bert_inputs, tiny_backbone
from keras_bert.export import export_hub_encoder

# JAX and torch hand the model to the same TensorFlow child process (a .keras file), so the JAX pass adds
# nothing the torch pass does not check; the served graphs themselves are checked on TensorFlow.
pytestmark = pytest.mark.not_backend("jax", reason="from JAX an export goes exactly as from torch (the model saved "
                                     "as .keras, written by a TensorFlow child: keras_bert.export.tensorflow_worker)")
ON_TENSORFLOW = pytest.mark.only_backend(
    "tensorflow", reason="loads and trains the SavedModels (TensorFlow graphs; TFSMLayer is TensorFlow-only)"
)
SEQ_LENGTH = 16
HUB_NAMES = {"input_word_ids": "token_ids", "input_mask": "padding_mask", "input_type_ids": "segment_ids"}


def hub_inputs(inputs):
    return {hub: inputs[ours] for hub, ours in HUB_NAMES.items()}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(backbone with dropout 0.1, export folder, loaded encoder, loaded preprocessor)."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the preprocessor's ops)

    keras.utils.set_random_seed(3)
    backbone = tiny_backbone(dropout=0.1)
    folder = tmp_path_factory.mktemp("hub") / "tiny_hub"
    export_hub_encoder(backbone, folder, tokenizer(), seq_length=SEQ_LENGTH, verbose=False)
    return backbone, folder, tf.saved_model.load(str(folder / "encoder")), tf.saved_model.load(str(folder / "preprocessor"))


# ------------------------------------------------------------------ the encoder
@ON_TENSORFLOW
def test_encoder_outputs_equal_the_backbone(exported):
    backbone, _, encoder, _ = exported
    inputs = random_bert_inputs(3, 10, backbone.vocabulary_size)
    outputs = {k: (v.numpy() if k != "encoder_outputs" else [x.numpy() for x in v])
               for k, v in encoder(hub_inputs(inputs), training=False).items()}
    assert set(outputs) == {"pooled_output", "sequence_output", "encoder_outputs", "default"}
    # Every block's output, from a twin backbone that returns its hidden states.
    twin = type(backbone).from_config({**backbone.get_config(), "output_hidden_states": True})
    twin.set_weights(backbone.get_weights())
    expected = keras.tree.map_structure(keras.ops.convert_to_numpy, twin(inputs, training=False))
    np.testing.assert_allclose(outputs["sequence_output"], expected["sequence_output"], atol=1e-5)
    np.testing.assert_allclose(outputs["pooled_output"], expected["pooled_output"], atol=1e-5)
    np.testing.assert_array_equal(outputs["default"], outputs["pooled_output"])
    assert len(outputs["encoder_outputs"]) == backbone.num_layers
    for got, want in zip(outputs["encoder_outputs"], expected["hidden_states"][1:]):
        np.testing.assert_allclose(got, want, atol=1e-5)
    served = encoder.signatures["serving_default"](**{k: np.asarray(v) for k, v in hub_inputs(inputs).items()})
    np.testing.assert_allclose(served["pooled_output"].numpy(), expected["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(served[f"encoder_outputs_{backbone.num_layers - 1}"].numpy(),
                               expected["sequence_output"], atol=1e-5)


@ON_TENSORFLOW
def test_dropout_is_active_only_with_training_true(exported):
    backbone, _, encoder, _ = exported
    inputs = hub_inputs(random_bert_inputs(2, 8, backbone.vocabulary_size))
    inference = [encoder(inputs, training=False)["pooled_output"].numpy() for _ in range(2)]
    training = [encoder(inputs, training=True)["pooled_output"].numpy() for _ in range(2)]
    np.testing.assert_array_equal(inference[0], inference[1])
    assert np.abs(training[0] - inference[0]).max() > 1e-4
    assert np.abs(training[0] - training[1]).max() > 1e-4  # a fresh dropout mask per call
    np.testing.assert_array_equal(encoder.serve(inputs)["pooled_output"].numpy(), inference[0])
    assert np.abs(encoder.serve_training(inputs)["pooled_output"].numpy() - inference[0]).max() > 1e-4


@ON_TENSORFLOW
def test_encoder_exposes_the_backbone_variables(exported):
    backbone, _, encoder, _ = exported
    assert len(encoder.trainable_variables) == len(backbone.trainable_weights) == 31
    assert all(v.trainable for v in encoder.trainable_variables)
    assert sorted(encoder.keras_bert_variables) == sorted(w.path for w in backbone.weights)
    assert list(encoder.regularization_losses) == []


def test_encoder_saved_model_holds_only_the_functions_it_serves(exported):
    # The save used to trace, and write, the backbone's and the encoder model's Keras default signatures.
    _, folder, _, _ = exported
    assert saved_functions(folder / "encoder") == ["root.__call__", "root.serve", "root.serve_training"]


@ON_TENSORFLOW
def test_bad_encoder_inputs_fail_naming_the_input(exported):
    import tensorflow as tf

    backbone, _, encoder, _ = exported
    inputs = hub_inputs(random_bert_inputs(1, 8, backbone.vocabulary_size))
    with pytest.raises(tf.errors.InvalidArgumentError, match="input_word_ids` must be < vocabulary_size=147"):
        encoder({**inputs, "input_word_ids": np.full((1, 8), 147, "int32")}, training=False)
    with pytest.raises(tf.errors.InvalidArgumentError, match="input_type_ids` must be < num_segments=2"):
        encoder({**inputs, "input_type_ids": np.full((1, 8), 2, "int32")}, training=False)


# --------------------------------------------------------------- the preprocessor
@ON_TENSORFLOW
def test_preprocessor_gives_our_tokenizer_ids_and_packing(exported):
    import tensorflow as tf

    _, _, _, preprocessor = exported
    texts = tf.constant(SHORT_TEXTS)
    ours = packed(SHORT_TEXTS, SEQ_LENGTH)
    got = {k: v.numpy() for k, v in preprocessor(texts).items()}
    for hub, name in HUB_NAMES.items():
        np.testing.assert_array_equal(got[hub], ours[name])
    tokens = preprocessor.tokenize(texts)
    assert tokens.shape.rank == 3  # (batch, words, wordpieces), as tfhub.dev's preprocessors
    assert tokens.to_list() == tokenizer().tokenize_words(SHORT_TEXTS).to_list()
    # Pairs at another length, from word-level and from flat tokens: our longest_first packing.
    pairs = packed(SHORT_TEXTS, 12, pairs=SHORT_TEXTS[::-1])
    for segments in ([tokens, preprocessor.tokenize(texts[::-1])],
                     [tokens.merge_dims(-2, -1), tokenizer().tokenize(SHORT_TEXTS[::-1])]):
        got = {k: v.numpy() for k, v in preprocessor.bert_pack_inputs(segments, seq_length=12).items()}
        for hub, name in HUB_NAMES.items():
            np.testing.assert_array_equal(got[hub], pairs[name])
    special = {k: int(v) for k, v in preprocessor.tokenize.get_special_tokens_dict().items()}
    tok = tokenizer()
    assert special == {"vocab_size": 147, "start_of_sequence_id": tok.cls_token_id,
                       "end_of_segment_id": tok.sep_token_id, "padding_id": tok.pad_token_id,
                       "mask_id": tok.mask_token_id}


# ---------------------------------------------------------- training through it
def _fit_a_few_steps(layer_class, optimizer, folder, backbone):
    inputs = {name: keras.Input((None,), dtype="int32", name=name) for name in HUB_NAMES}
    encoder = layer_class(str(folder / "encoder"), call_endpoint="serve", call_training_endpoint="serve_training",
                          trainable=True)
    model = keras.Model(inputs, keras.layers.Dense(2)(encoder(inputs)["pooled_output"]))
    model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    data = hub_inputs(random_bert_inputs(8, 8, backbone.vocabulary_size))
    labels = np.arange(8) % 2
    before = [w.numpy().copy() for w in encoder.trainable_weights]
    loss_before = model.evaluate(data, labels, verbose=0)
    model.fit(data, labels, epochs=6, batch_size=8, verbose=0)
    changed = sum(not np.array_equal(b, w.numpy()) for b, w in zip(before, encoder.trainable_weights))
    return len(before), changed, loss_before, model.evaluate(data, labels, verbose=0)


@ON_TENSORFLOW
def test_keras3_tfsm_layer_fine_tunes_the_encoder(exported):
    from keras_bert.export import TrainableTFSMLayer

    backbone, folder, _, _ = exported
    # Stock TFSMLayer with a slot-free optimizer (6 SGD steps moved every variable but not the loss:
    # 0.680 -> 0.682 in one run); TrainableTFSMLayer with AdamW, which lowers it.
    for layer_class, optimizer in ((keras.layers.TFSMLayer, keras.optimizers.SGD(0.5)),
                                   (TrainableTFSMLayer, keras.optimizers.AdamW(3e-3))):
        count, changed, loss_before, loss_after = _fit_a_few_steps(layer_class, optimizer, folder, backbone)
        assert count == len(backbone.trainable_weights)
        assert changed == count, f"{layer_class.__name__}: {changed} of {count} encoder variables changed"
        assert np.isfinite(loss_after)
    assert loss_after < loss_before, (loss_before, loss_after)


@ON_TENSORFLOW
def test_stock_tfsm_layer_cannot_build_adam_slots(exported):
    """Why TrainableTFSMLayer exists: if Keras fixes this, this test fails and the subclass can go."""
    backbone, folder, _, _ = exported
    with pytest.raises(ValueError, match="not a valid scope name"):
        _fit_a_few_steps(keras.layers.TFSMLayer, keras.optimizers.Adam(1e-3), folder, backbone)


TF_KERAS_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tensorflow as tf
    import tensorflow_hub as hub
    import tensorflow_text  # registers the preprocessor's ops

    folder, texts = sys.argv[1], json.loads(sys.argv[2])
    text = tf.keras.layers.Input(shape=(), dtype=tf.string)
    encoder = hub.KerasLayer(folder + "/encoder", trainable=True)
    pooled = encoder(hub.KerasLayer(folder + "/preprocessor")(text))["pooled_output"]
    model = tf.keras.Model(text, tf.keras.layers.Dense(2)(pooled))
    model.compile(tf.keras.optimizers.Adam(3e-3), tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    data, labels = tf.constant(texts), np.arange(len(texts)) % 2
    before = [v.numpy().copy() for v in encoder.trainable_weights]
    loss_before = model.evaluate(data, labels, verbose=0)
    model.fit(data, labels, epochs=6, batch_size=len(texts), verbose=0)
    changed = sum(not np.array_equal(b, v.numpy()) for b, v in zip(before, encoder.trainable_weights))
    print(json.dumps({"keras": type(model).__module__, "count": len(before), "changed": changed,
                      "loss_before": loss_before, "loss_after": model.evaluate(data, labels, verbose=0)}))
    """
)


@ON_TENSORFLOW
def test_tf_keras_hub_keras_layer_fine_tunes_the_encoder(exported):
    backbone, folder, _, _ = exported
    env = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONWARNINGS": "ignore"}
    # An even number of distinct texts, twice: the script labels text i with i % 2, so each copy of a
    # text gets the same label (with 5 texts the copies got opposite labels and no loss could fall).
    texts = SHORT_TEXTS[:4] * 2
    result = subprocess.run([sys.executable, "-c", TF_KERAS_SCRIPT, str(folder), json.dumps(texts)],
                            env=env, capture_output=True, text=True, timeout=300, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["keras"].startswith("tf_keras"), report  # really tf-keras, not Keras 3
    assert report["count"] == report["changed"] == len(backbone.trainable_weights)
    assert report["loss_after"] < report["loss_before"], report


# ------------------------------------------------------------- argument checks
def test_export_refuses_bad_arguments_before_writing(tmp_path):
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    backbone = tiny_backbone()
    target = tmp_path / "out"
    with pytest.raises(ValueError, match="`seq_length` must be an int in \\[3, 32\\].*received 64"):
        export_hub_encoder(backbone, target, tokenizer(), seq_length=64)
    with pytest.raises(ValueError, match="tokenizer has 6 tokens but the model's vocabulary_size is 147"):
        export_hub_encoder(backbone, target, BertTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"]))
    with pytest.raises(ValueError, match="`tokenizer` is required"):
        export_hub_encoder(backbone, target, None)
    with pytest.raises(ValueError, match="packed_inputs=True"):
        export_hub_encoder(tiny_backbone(packed_inputs=True), target, tokenizer())
    with pytest.raises(ValueError, match="received a Dense"):
        export_hub_encoder(keras.layers.Dense(2), target, tokenizer())
    target.mkdir()
    with pytest.raises(ValueError, match="already exists; pass overwrite=True"):
        export_hub_encoder(backbone, target, tokenizer(), seq_length=16)
    assert list(tmp_path.iterdir()) == [target] and not list(target.iterdir())
