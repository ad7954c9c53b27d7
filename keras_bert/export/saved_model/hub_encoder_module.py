"""HubEncoderModule: a `BertBackbone` as a reusable SavedModel with TF Hub's BERT encoder API.

Code written for the BERT encoders of tfhub.dev runs on it unchanged:

    encoder = hub.KerasLayer("saved_models/minilm_hub/encoder", trainable=True)   # tf-keras
    encoder = keras.layers.TFSMLayer("saved_models/minilm_hub/encoder",           # Keras 3
                                     call_training_endpoint="serve_training", trainable=True)
    outputs = encoder({"input_word_ids": ids, "input_mask": mask, "input_type_ids": types})
    outputs["pooled_output"]     # (batch_size, hidden_dim) float32, also as outputs["default"]
    outputs["sequence_output"]   # (batch_size, seq_length, hidden_dim) float32
    outputs["encoder_outputs"]   # num_layers tensors like sequence_output, one per transformer block

TensorFlow backend only: the module holds the Keras model, whose variables are
then TensorFlow variables, and is written by `tf.saved_model.save`
(`export_hub_encoder` builds it). What the saved object offers, as a TF Hub
"reusable SavedModel" does:

- `__call__(inputs, training=False)`, traced for `training` True and False
  (dropout is active only with True), which `hub.KerasLayer` calls;
- `serve(inputs)` and `serve_training(inputs)`, one-argument endpoints for
  Keras 3's `TFSMLayer(call_endpoint=..., call_training_endpoint=...)`;
- `variables`, `trainable_variables` (the backbone's, in its order) and
  `regularization_losses` (none);
- `keras_bert_variables`: the same variables by their Keras path
  (`embeddings/token_embedding/embeddings`, ...), which
  `BertBackbone.from_pretrained` reads back;
- the `serving_default` signature for TF Serving (`encoder_outputs` flattened
  into `encoder_outputs_0`, `encoder_outputs_1`, ...: a signature returns a
  flat dict), and the vocabulary and metadata as assets.
"""

import keras
import tensorflow as tf

from keras_bert._untracked import untracked

# TF Hub's input names, and the backbone inputs they feed.
HUB_INPUTS = {"input_word_ids": "token_ids", "input_mask": "padding_mask", "input_type_ids": "segment_ids"}


class HubEncoderModule(tf.train.Checkpoint):
    """The exported encoder object (see the module docstring for its API).

    A `tf.train.Checkpoint` rather than a `tf.Module`: `variables` and
    `trainable_variables` must be saved attributes of the object (what
    `hub.KerasLayer` reads), and `tf.Module` reserves those names for properties.

    Args:
        backbone: a `BertBackbone` built on the TensorFlow backend, without
            `packed_inputs`.
        vocab_file: path of the vocabulary, saved as an asset.
        metadata_file: path of `keras_bert_export.json`, saved as an asset.
    """

    def __init__(self, backbone, vocab_file, metadata_file):
        super().__init__()
        if getattr(backbone, "packed_inputs", False):
            raise ValueError(
                "A backbone with packed_inputs=True takes sequence_ids and position_ids, which TF Hub's encoder "
                "API does not have; rebuild it unpacked: BertBackbone.from_pretrained(path, packed_inputs=False)."
            )
        # The Keras models are held untracked: the save would trace each one's default signature and write it
        # into the file, where nothing reads it (keras_bert/_untracked.py). The variables are listed below.
        self._keras = untracked(backbone=backbone, encoder=_encoder_model(backbone))
        self.variables = list(backbone.variables)
        self.trainable_variables = list(backbone.trainable_variables)
        self.regularization_losses = []
        # The weights only: the dropout seed generators' states are variables too, not weights.
        self.keras_bert_variables = {v.path: v for v in backbone.weights}
        if len(self.keras_bert_variables) != len(backbone.weights):
            raise ValueError(f"{backbone.name} has variables that share a path; they cannot be exported by path.")
        self.vocab_file = tf.saved_model.Asset(vocab_file)
        self.metadata_file = tf.saved_model.Asset(metadata_file)
        self._limits = (backbone.vocabulary_size, backbone.num_segments, backbone.max_sequence_length)
        self._num_layers = backbone.num_layers

        spec = {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in HUB_INPUTS}
        self.__call__ = tf.function(self._call, autograph=False)
        for training in (False, True):
            self.__call__.get_concrete_function(spec, training=training)
        self.serve = tf.function(lambda inputs: self._call(inputs, training=False), input_signature=[spec],
                                 autograph=False)
        self.serve_training = tf.function(lambda inputs: self._call(inputs, training=True), input_signature=[spec],
                                          autograph=False)

    def signatures(self):
        """`{"serving_default": ...}` for `tf.saved_model.save` (TF Serving's entry point)."""

        def serving_default(input_word_ids, input_mask, input_type_ids):
            inputs = {"input_word_ids": input_word_ids, "input_mask": input_mask, "input_type_ids": input_type_ids}
            outputs = self._call(inputs, training=False)
            flat = {k: v for k, v in outputs.items() if k != "encoder_outputs"}
            flat.update({f"encoder_outputs_{i}": x for i, x in enumerate(outputs["encoder_outputs"])})
            return flat

        spec = {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in HUB_INPUTS}
        function = tf.function(serving_default, autograph=False).get_concrete_function(**spec)
        return {"serving_default": function}

    def _call(self, inputs, training=False):
        """TF Hub's encoder call: a dict of int32 `(batch, seq_length)` inputs → the outputs dict."""
        missing = [name for name in HUB_INPUTS if name not in inputs]
        if missing:
            raise ValueError(f"The encoder takes a dict with {list(HUB_INPUTS)}; missing {missing}.")
        features = {HUB_INPUTS[name]: tf.cast(inputs[name], tf.int32) for name in HUB_INPUTS}
        with tf.control_dependencies(self._input_checks(features)):
            features = {name: tf.identity(value) for name, value in features.items()}
        outputs = self._keras.encoder(features, training=training)
        pooled = tf.cast(outputs["pooled_output"], tf.float32)
        return {
            "pooled_output": pooled,
            "default": pooled,  # TF Hub's alias of the whole-input representation
            "sequence_output": tf.cast(outputs["sequence_output"], tf.float32),
            "encoder_outputs": [tf.cast(x, tf.float32) for x in outputs["encoder_outputs"]],
        }

    def _input_checks(self, features):
        """Assertions that turn bad inputs into errors naming the input (TF Hub's names)."""
        vocabulary_size, num_segments, max_sequence_length = self._limits
        ids, types, mask = features["token_ids"], features["segment_ids"], features["padding_mask"]
        return [
            tf.debugging.assert_equal(tf.shape(types), tf.shape(ids), message="`input_type_ids` must have the shape of `input_word_ids`"),
            tf.debugging.assert_equal(tf.shape(mask), tf.shape(ids), message="`input_mask` must have the shape of `input_word_ids`"),
            tf.debugging.assert_less_equal(
                tf.shape(ids)[-1], max_sequence_length,
                message=f"seq_length must be at most the model's max_sequence_length={max_sequence_length}",
            ),
            tf.debugging.assert_non_negative(ids, message="`input_word_ids` must be >= 0"),
            tf.debugging.assert_less(ids, vocabulary_size, message=f"`input_word_ids` must be < vocabulary_size={vocabulary_size}"),
            tf.debugging.assert_non_negative(types, message="`input_type_ids` must be >= 0"),
            tf.debugging.assert_less(types, num_segments, message=f"`input_type_ids` must be < num_segments={num_segments}"),
            tf.debugging.assert_equal(
                tf.reduce_all((mask == 0) | (mask == 1)), True, message="`input_mask` must hold only 0 and 1"
            ),
        ]


def _encoder_model(backbone):
    """A functional model on the backbone's own layers that also returns every block's output.

    It shares the backbone's variables (nothing is copied), so training through
    the export trains exactly the backbone's weights.
    """
    blocks = []
    for layer in backbone.transformer_layers:
        output = layer.output
        # With output_attentions a block returns (hidden states, attention probabilities).
        blocks.append(output[0] if isinstance(output, (list, tuple)) else output)
    outputs = {
        "sequence_output": backbone.output["sequence_output"],
        "pooled_output": backbone.output["pooled_output"],
        "encoder_outputs": blocks,
    }
    return keras.Model(inputs=backbone.input, outputs=outputs, name=f"{backbone.name}_hub_encoder")
