"""ModernBERT's tokenizer: the byte-level BPE of its `tokenizer.json`, id-for-id with the `tokenizers` library."""

import keras

from keras_bert.preprocessing.byte_pair_tokenizer import BytePairTokenizer

SPECIAL_TOKENS = {"cls": "[CLS]", "sep": "[SEP]", "pad": "[PAD]", "unk": "[UNK]", "mask": "[MASK]"}


@keras.saving.register_keras_serializable(package="keras_bert")
class ModernBertTokenizer(BytePairTokenizer):
    """ModernBERT's byte-level BPE (OLMo's GPT-NeoX-style vocabulary), id-for-id with transformers'.

    transformers 5 runs ModernBERT's `tokenizer.json` as it is, through the
    Rust `tokenizers` library (`TokenizersBackend`); `from_pretrained` reads
    the same file: the vocabulary and merges, the added tokens with their
    flags (`[MASK]` takes the whitespace before it along when the file says
    `lstrip`; runs of spaces that are added tokens stay whole), the
    normalizer and the `ByteLevel` pre-tokenizer's options (see
    `BytePairTokenizer`). Its post-processor must place `[CLS]` and `[SEP]`
    as `[CLS] A [SEP]` and `[CLS] A [SEP] B [SEP]`, the layout
    `BertInputPacker.from_tokenizer` then builds; the type ids it gives B
    become `typed_segments` (ModernBERT's backbone has no segment embedding,
    so they only show in `segment_ids`).

    Args:
        vocabulary: dict token → id, the added tokens among them.
        merges: list of merge rules `"a b"` in rank order.
        typed_segments: give the second segment's tokens segment id 1.
        **kwargs: the other arguments of `BytePairTokenizer`.

    Examples:

    >>> tokenizer = ModernBertTokenizer.from_pretrained("path/to/ModernBERT-base")
    >>> BertInputPacker.from_tokenizer(tokenizer, sequence_length=16)(["Hello world"])["token_ids"]
    """

    special_tokens = SPECIAL_TOKENS
    # [CLS] A [SEP] B [SEP]
    separators_between = 1
    family = "ModernBERT"
    # Its TemplateProcessing post-processor leaves offsets as they are: "Ġworld" covers " world".
    trims_offsets = False
    tokenizer_files = (("tokenizer.json",), ())

    def __init__(self, vocabulary, merges, typed_segments=False, **kwargs):
        super().__init__(vocabulary, merges, **kwargs)
        self.typed_segments = bool(typed_segments)

    @classmethod
    def _layout_arguments(cls, layout, path):
        expected = {"cls": SPECIAL_TOKENS["cls"], "sep": SPECIAL_TOKENS["sep"], "separators_between": 1}
        if {key: layout[key] for key in expected} != expected:
            raise ValueError(
                f"{path}: its post-processor lays out pairs as {layout}; ModernBERT's is [CLS] $A [SEP] $B [SEP]."
            )
        return {"typed_segments": layout["typed_segments"]}

    def get_config(self):
        return {**super().get_config(), "typed_segments": self.typed_segments}
