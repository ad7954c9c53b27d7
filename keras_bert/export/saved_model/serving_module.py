"""BertServingModule: a model and its tokenizer as one `tf.Module` with two signatures.

TensorFlow backend only: the module holds the Keras model (whose variables are
then TensorFlow variables) and the `BertTokenizer` (TensorFlow and
tensorflow-text ops), so `tf.saved_model.save` writes one graph that goes from
raw strings to task outputs. `export_saved_model` builds it; nothing else in
the package needs it.

Signatures:

- `serve_token_ids`: int32 `token_ids`, `segment_ids`, `padding_mask` of shape
  `(batch, length)` (`(batch, num_choices, length)` for multiple choice), any
  batch size, any length up to the model's `max_sequence_length`. Out-of-range
  ids, a wrong length or mismatched shapes fail with an `InvalidArgumentError`
  that says which input is wrong (never a silent gather of a zero row, which is
  what an out-of-range id does on GPU).
- `serve_text`: string tensors → tokenization, windows of `sequence_length`
  over texts longer than one sequence (the same windows, stride and
  aggregation as the Python pipelines: both run `keras_bert.postprocessing`), a forward pass
  on the packed windows cut to the longest, and the task's outputs (see
  `task_outputs.py`).
"""

import math

import tensorflow as tf

from keras_bert._untracked import untracked
from keras_bert.export import task_outputs
from keras_bert.models.bert_task import inference_scope_of
from keras_bert.preprocessing.input_packer import BertInputPacker

TOKEN_ID_INPUTS = ("token_ids", "segment_ids", "padding_mask")


def _line_table(asset, default):
    """line number (int64) → line of a text asset, initialised when the SavedModel loads."""
    initializer = tf.lookup.TextFileInitializer(
        asset,
        key_dtype=tf.int64,
        key_index=tf.lookup.TextFileIndex.LINE_NUMBER,
        value_dtype=tf.string,
        value_index=tf.lookup.TextFileIndex.WHOLE_LINE,
    )
    return tf.lookup.StaticHashTable(initializer, default_value=default)


class BertServingModule(tf.Module):
    """The exported object: `serve_token_ids`, `serve_text`, `tokenize`, and the assets.

    Args:
        model: a keras_bert model built on the TensorFlow backend
            (`BertBackbone`, `BertClassifier`, `BertTokenClassifier`,
            `BertQuestionAnswerer` or `BertMultipleChoice`).
        task: the task kind, see `task_outputs.task_kind`.
        tokenizer: the `BertTokenizer` the model was trained with.
        options: the `ServingOptions` resolved for `model` (length, label
            names, text pair, windows, question answering).
        vocab_file: path of the vocabulary file, saved as an asset.
        metadata_file: path of `keras_bert_export.json`, saved as an asset.
        labels_file: path of the label names file (one per line), saved as an
            asset and read by `serve_text` through a lookup table; None for
            models without label names.
    """

    def __init__(self, model, task, tokenizer, options, vocab_file, metadata_file, labels_file=None):
        super().__init__(name="keras_bert_serving")
        # The Keras model is held untracked: the save would trace its default signature and write it into
        # the file, where nothing reads it (keras_bert/_untracked.py). Its variables are listed instead, which
        # also makes them reachable whatever Keras' trackable children look like (what keras.export does too).
        self._keras = untracked(model=model)
        self.model_variables = list(model.variables)
        self.tokenizer = tokenizer
        self.vocab_asset = tf.saved_model.Asset(vocab_file)
        self.metadata_asset = tf.saved_model.Asset(metadata_file)
        self._task = task
        # task_outputs reads the options from these attributes.
        self._sequence_length = options.sequence_length
        self._label_names = tuple(options.label_names or ())
        self._text_pair = options.text_pair
        self._window_stride = options.window_stride
        self._max_query_length = options.max_query_length
        self._doc_stride = options.doc_stride
        # A context token lies in at most ceil(window / stride) windows; the
        # window is at most sequence_length - 3 tokens (see keras_bert.postprocessing.text_windows).
        self._max_context_offset = max(0, math.ceil((options.sequence_length - 3) / max(options.doc_stride, 1)) - 1)
        self._max_answer_length = options.max_answer_length
        self._n_best_size = options.n_best_size
        self._allow_no_answer = options.allow_no_answer
        self._null_score_diff_threshold = options.null_score_diff_threshold
        backbone = model if task == "backbone" else model.backbone
        self._vocabulary_size = backbone.vocabulary_size
        # DistilBERT takes no segment_ids (its classifier drops them): accept BERT's two types.
        self._num_segments = getattr(backbone, "num_segments", 2)
        self._max_sequence_length = backbone.max_sequence_length
        self.packer = BertInputPacker.from_tokenizer(tokenizer, options.sequence_length)
        # id → token, read from the vocabulary asset: a SavedModel whose asset
        # is missing fails to load instead of serving with a wrong vocabulary.
        self.vocab_table = _line_table(self.vocab_asset, default="[UNK]")
        self.label_table = None
        if labels_file is not None:
            self.labels_asset = tf.saved_model.Asset(labels_file)
            self.label_table = _line_table(self.labels_asset, default="")
        self.tokenize = tf.function(
            self._tokenize, input_signature=[tf.TensorSpec([None], tf.string, name="text")], autograph=False
        )

    # ------------------------------------------------------------ signatures
    def signatures(self):
        """`{"serve_token_ids": ..., "serve_text": ...}` concrete functions for `tf.saved_model.save`."""
        rank = 3 if self._task == "multiple_choice" else 2
        ids_spec = {name: tf.TensorSpec([None] * rank, tf.int32, name=name) for name in TOKEN_ID_INPUTS}
        serve_token_ids = tf.function(self._serve_token_ids, autograph=False).get_concrete_function(**ids_spec)
        serve_text = tf.function(self._serve_text, autograph=False).get_concrete_function(**self._text_specs())
        return {"serve_token_ids": serve_token_ids, "serve_text": serve_text}

    def _text_specs(self):
        def strings(name, rank=1):
            return tf.TensorSpec([None] * rank, tf.string, name=name)

        if self._task == "question_answerer":
            return {"question": strings("question"), "context": strings("context")}
        if self._task == "multiple_choice":
            return {"context": strings("context"), "choices": strings("choices", rank=2)}
        if self._text_pair:
            return {"text": strings("text"), "text_pair": strings("text_pair")}
        return {"text": strings("text")}

    def _serve_token_ids(self, token_ids, segment_ids, padding_mask):
        inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
        with tf.control_dependencies(self._input_checks(inputs)):
            inputs = {name: tf.identity(value) for name, value in inputs.items()}
        return task_outputs.token_id_outputs(self, self._call_model(inputs))

    def _serve_text(self, **texts):
        # A loaded signature does not enforce its `[None]` shape: a rank-2 batch of strings reached
        # the tokenizer, which flattened it into more answers than rows. EnsureShape checks at run
        # time ("Shape of tensor text [1,2] is not compatible with expected shape [?]"); an assert
        # on tf.rank or tf.size is folded away by Grappler, which trusts the static shape.
        specs = self._text_specs()
        texts = {name: tf.ensure_shape(value, specs[name].shape) for name, value in texts.items()}
        return task_outputs.text_outputs(self, **texts)

    def _tokenize(self, text):
        """Debugging aid: the WordPiece tokens the model sees, `""`-padded, and their ids."""
        ids = self.tokenizer.tokenize(text)
        tokens = ids.with_flat_values(self.vocab_table.lookup(tf.cast(ids.flat_values, tf.int64)))
        return {"tokens": tokens.to_tensor(default_value=""), "token_ids": ids.to_tensor(default_value=-1)}

    # --------------------------------------------------------------- helpers
    def _call_model(self, inputs):
        with inference_scope_of(self._keras.model):  # traced in the scope the model's own predict runs in
            outputs = self._keras.model(inputs, training=False)
        if self._task == "backbone":
            return {k: tf.cast(outputs[k], tf.float32) for k in ("sequence_output", "pooled_output")}
        if isinstance(outputs, dict):
            return {k: tf.cast(v, tf.float32) for k, v in outputs.items()}
        return tf.cast(outputs, tf.float32)

    def _input_checks(self, inputs):
        """Assertions that turn bad token-id inputs into errors naming the input."""
        token_ids = inputs["token_ids"]
        shape = tf.shape(token_ids)
        checks = [
            tf.debugging.assert_equal(
                tf.shape(inputs[name]), shape,
                message=f"`{name}` must have the shape of `token_ids`",
            )
            for name in ("segment_ids", "padding_mask")
        ]
        checks += [
            tf.debugging.assert_less_equal(
                shape[-1], self._max_sequence_length,
                message=f"sequence length must be at most the model's max_sequence_length={self._max_sequence_length}",
            ),
            tf.debugging.assert_non_negative(token_ids, message="`token_ids` must be >= 0"),
            tf.debugging.assert_less(
                token_ids, self._vocabulary_size,
                message=f"`token_ids` must be < vocabulary_size={self._vocabulary_size}",
            ),
            tf.debugging.assert_non_negative(inputs["segment_ids"], message="`segment_ids` must be >= 0"),
            tf.debugging.assert_less(
                inputs["segment_ids"], self._num_segments,
                message=f"`segment_ids` must be < num_segments={self._num_segments}",
            ),
            tf.debugging.assert_equal(
                tf.reduce_all((inputs["padding_mask"] == 0) | (inputs["padding_mask"] == 1)), True,
                message="`padding_mask` must hold only 0 and 1",
            ),
        ]
        return checks

    def pack_texts(self, first, second=None):
        """Strings → packed int32 inputs cut to the batch's longest row.

        Cutting the padding columns changes nothing in the outputs (padding is
        masked out of attention and never pooled) and saves their compute.
        """
        packed = self.packer(first) if second is None else self.packer(first, second)
        lengths = tf.reduce_sum(packed["padding_mask"], axis=-1)
        # An empty batch has no longest row; 2 ([CLS] [SEP]) keeps shapes valid.
        longest = tf.reduce_max(tf.concat([tf.reshape(lengths, [-1]), [2]], axis=0))
        return {name: value[..., :longest] for name, value in packed.items()}
