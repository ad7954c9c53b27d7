"""HubPreprocessorModule: the tokenizer and packer as a SavedModel with TF Hub's BERT preprocessor API.

The companion of `HubEncoderModule`, as tfhub.dev publishes `bert_en_uncased_preprocess`
beside its encoders; code written for those runs on it unchanged:

    preprocessor = hub.load("saved_models/minilm_hub/preprocessor")   # or tf.saved_model.load
    preprocessor(tf.constant(["a gorgeous film"]))                    # → encoder inputs, default seq_length
    tokens = preprocessor.tokenize(tf.constant(["a gorgeous film"]))  # ragged (batch, words, wordpieces)
    preprocessor.bert_pack_inputs([tokens_a, tokens_b], seq_length=64)
    preprocessor.tokenize.get_special_tokens_dict()                    # vocab_size, start_of_sequence_id, ...

It runs keras_bert's own `BertTokenizer` (the one `serve_text` and the Python
pipelines use) and `BertInputPacker`, so its ids and packing are those of
`keras_bert` itself: Hugging Face's "longest_first" truncation of pairs, where
TF Hub's preprocessors give each segment a token in turn. No variables; the
vocabulary is an asset. TensorFlow and tensorflow-text only (loading it needs
`import tensorflow_text`, which registers the tokenizer's ops).
"""

import copy

import tensorflow as tf

from keras_bert.preprocessing.input_packer import BertInputPacker

ENCODER_INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def _hub_inputs(packed):
    """Our packer's dict → TF Hub's encoder input names."""
    return {
        "input_word_ids": packed["token_ids"],
        "input_mask": packed["padding_mask"],
        "input_type_ids": packed["segment_ids"],
    }


class _Callable(tf.train.Checkpoint):
    """A saved sub-object whose `__call__` is a `tf.function` (TF Hub's `tokenize`, `bert_pack_inputs`).

    Assigning `__call__` on the instance is what `tf.saved_model.save` needs to
    make the loaded object callable; attributes (e.g. `get_special_tokens_dict`)
    can hang off it as they do on tfhub.dev's preprocessors.
    """

    def __init__(self, function):
        super().__init__()
        self.__call__ = function


class HubPreprocessorModule(tf.train.Checkpoint):
    """The exported preprocessor object (see the module docstring for its API).

    Args:
        tokenizer: the `BertTokenizer` the encoder was trained with.
        seq_length: the sequence length of `__call__`, and `bert_pack_inputs`'
            default.
        vocab_file: path of the vocabulary, saved as an asset.
        metadata_file: path of `keras_bert_export.json`, saved as an asset.
    """

    def __init__(self, tokenizer, seq_length, vocab_file, metadata_file):
        super().__init__()
        if not isinstance(seq_length, int) or seq_length < 3:
            raise ValueError(f"`seq_length` must be an int >= 3 ([CLS], [SEP] and a token); received {seq_length!r}")
        self.tokenizer = tokenizer
        self.vocab_file = tf.saved_model.Asset(vocab_file)
        self.metadata_file = tf.saved_model.Asset(metadata_file)
        self._packer = BertInputPacker.from_tokenizer(tokenizer, seq_length)
        self._seq_length = seq_length

        strings = tf.TensorSpec([None], tf.string, name="sentences")
        self.__call__ = tf.function(self._preprocess, input_signature=[strings], autograph=False)
        self.tokenize = _Callable(tf.function(self._tokenize, input_signature=[strings], autograph=False))
        self.tokenize.get_special_tokens_dict = _Callable(
            tf.function(self._special_tokens, input_signature=[], autograph=False)
        )
        default_seq_length = seq_length

        # The default is a plain int in the function's signature: the loaded function binds it
        # when a caller leaves `seq_length` out (a None default would match no traced function).
        def pack_inputs(inputs, seq_length=default_seq_length):
            return self._pack(inputs, seq_length)

        pack = tf.function(pack_inputs, autograph=False)
        # Like tfhub.dev's: 1 or 2 segments, each (batch, tokens) or (batch, words, wordpieces),
        # and `seq_length` a tensor, so any length works after loading (a Python int would
        # have to match one traced at export).
        for ragged_rank in (1, 2):
            for num_segments in (1, 2):
                specs = [tf.RaggedTensorSpec([None] * (ragged_rank + 1), tf.int32, ragged_rank) for _ in range(num_segments)]
                pack.get_concrete_function(specs, seq_length=tf.TensorSpec([], tf.int32))
        self.bert_pack_inputs = _Callable(pack)

    def signatures(self):
        """`{"serving_default": ...}`: strings → encoder inputs at the default seq_length."""
        strings = tf.TensorSpec([None], tf.string, name="sentences")
        return {"serving_default": self.__call__.get_concrete_function(strings)}

    def _preprocess(self, sentences):
        """`(batch,)` strings → the encoder's int32 inputs of shape `(batch, seq_length)`."""
        sentences = tf.ensure_shape(sentences, [None])
        return _hub_inputs(self._packer(sentences))

    def _tokenize(self, sentences):
        """`(batch,)` strings → int32 ragged `(batch, words, wordpieces)`, as TF Hub's `tokenize`."""
        sentences = tf.ensure_shape(sentences, [None])
        return self.tokenizer.tokenize_words(sentences)

    def _special_tokens(self):
        tok = self.tokenizer
        ids = {
            "vocab_size": tok.vocabulary_size(),
            "start_of_sequence_id": tok.cls_token_id,
            "end_of_segment_id": tok.sep_token_id,
            "padding_id": tok.pad_token_id,
            "mask_id": tok.mask_token_id,
        }
        return {name: tf.constant(value, tf.int32) for name, value in ids.items()}

    def _pack(self, inputs, seq_length):
        """1 or 2 ragged token segments → the encoder's inputs of shape `(batch, seq_length)`."""
        if not isinstance(inputs, (list, tuple)) or not 1 <= len(inputs) <= 2:
            raise ValueError(f"bert_pack_inputs takes a list of 1 or 2 tokenized segments; received {inputs!r:.200}")
        segments = [s.merge_dims(-2, -1) if s.shape.rank == 3 else s for s in inputs]
        seq_length = tf.cast(seq_length, tf.int32)
        check = tf.debugging.assert_greater_equal(
            seq_length, 2 + len(segments), message="seq_length must leave room for [CLS], one [SEP] per segment"
        )
        with tf.control_dependencies([check]):
            seq_length = tf.identity(seq_length)
        # The packer's ops all take the length as a tensor; only its constructor wants an
        # int (to validate it early). A copy keeps the module's own packer unchanged.
        packer = copy.copy(self._packer)
        packer.sequence_length = seq_length
        return _hub_inputs(packer(*segments))
