"""PackingPreprocessor: what the classification and multiple-choice preprocessors share."""

import keras

from keras_bert.preprocessing.input_packer import BertInputPacker


class PackingPreprocessor:
    """A tokenizer and the `BertInputPacker` built from it, with the config both need to be saved.

    Subclasses define `__call__` (how raw text becomes packed inputs); the
    tokenizer, packer and (de)serialisation are the same for all of them.

    Args:
        tokenizer: a `BertTokenizer` (or its serialised config).
        sequence_length: length of the packed sequences.
        truncate: "longest_first" (Hugging Face's rule) or "round_robin".
    """

    def __init__(self, tokenizer, sequence_length=128, truncate="longest_first"):
        if isinstance(tokenizer, dict):
            tokenizer = keras.saving.deserialize_keras_object(tokenizer)
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.truncate = truncate
        self.packer = BertInputPacker.from_tokenizer(tokenizer, sequence_length, truncate=truncate)

    def get_config(self):
        return {
            "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
            "sequence_length": self.sequence_length,
            "truncate": self.truncate,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)
