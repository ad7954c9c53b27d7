"""RoBERTa's byte-level BPE tokenizer on TensorFlow ops, id-for-id with transformers' RobertaTokenizer."""

import json
import os

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from keras_bert.converters.tokenizer_files import find_tokenizer_files
from keras_bert.preprocessing._special_tokens import SpecialTokenSplitter, check_special_tokens
from keras_bert.preprocessing.tokenizer import Tokenizer

SPECIAL_TOKENS = {"cls": "<s>", "pad": "<pad>", "sep": "</s>", "unk": "<unk>", "mask": "<mask>"}

# GPT-2's pre-tokenizer is `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
# ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`. RE2 has no lookahead; what `\s+(?!\S)`
# does is to leave the last whitespace character of a run that precedes a
# non-space on its own (a " " then joins the next word). A marker inserted
# before that character, split on and dropped, does the same. U+FFFF is a
# noncharacter; text that holds one is refused (see `_words`). tf-text's
# regex_split stops at a NUL byte, so NUL travels as U+FFFE (another
# noncharacter, in the same class of the pattern) and is restored after.
_MARKER = "\uffff"
_NUL = "\ufffe"
# Unicode White_Space, what `\s` means to the Rust tokenizer (RE2's `\s` is ASCII only).
_SPACE = r"\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}"
_KEEP = (
    f"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{{L}}+| ?\\p{{N}}+"
    f"| ?[^{_SPACE}\\p{{L}}\\p{{N}}{_MARKER}]+|[{_SPACE}]+"
)
_SPLIT = f"{_MARKER}|{_KEEP}"
_NO_RANK = 2**30


def byte_to_unicode():
    """GPT-2's reversible map from the 256 byte values to printable characters."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    mapping, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            mapping[byte] = chr(byte)
        else:
            mapping[byte] = chr(256 + extra)
            extra += 1
    return mapping


def _read_files(files):
    """vocab.json + merges.txt, or tokenizer.json → (vocabulary dict, merges list)."""
    if "tokenizer.json" in files:
        with open(files["tokenizer.json"], encoding="utf-8") as f:
            model = json.load(f).get("model", {})
        if model.get("type") != "BPE":
            raise ValueError(f"{files['tokenizer.json']} holds no BPE model (type {model.get('type')!r}).")
        merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
        return model["vocab"], merges
    with open(files["vocab.json"], encoding="utf-8") as f:
        vocabulary = json.load(f)
    with open(files["merges.txt"], encoding="utf-8") as f:
        merges = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#version")]
    return vocabulary, merges


@keras.saving.register_keras_serializable(package="keras_bert")
class BytePairTokenizer(Tokenizer):
    """RoBERTa's byte-level BPE tokenizer, id-for-id with transformers'.

    As transformers' `RobertaTokenizer` (the Rust `tokenizers` one, the
    default since transformers 5) with `add_prefix_space=False`: literal
    special tokens (`<s>`, `</s>`, `<pad>`, `<unk>`, `<mask>`) are cut out
    and map to their ids; the text between them is split with GPT-2's
    pattern (contractions, letters, digits, other symbols, each with at most
    one leading space; whitespace runs), every piece's UTF-8 bytes become
    GPT-2's printable byte characters, and the BPE merges apply in rank
    order, the leftmost of equal ranks first. `detokenize` gives the
    original text back (byte-level BPE loses nothing), as transformers'
    `decode(..., clean_up_tokenization_spaces=False)`; bytes that do not
    form valid UTF-8 become U+FFFD.

    The merges run in a `tf.while_loop` over the batch's distinct words, one
    merge per word and step, so the tokenizer is TensorFlow ops throughout:
    eager, `tf.function`, `tf.data` on any Keras backend, SavedModel.
    Agreement with transformers on ../shared/data is measured by
    benchmarks/studies/family_tokenizer_agreement/family_tokenizer_agreement.py.

    Args:
        vocabulary: dict token → id (the content of `vocab.json`) or the path
            of a `vocab.json`.
        merges: list of merge rules `"a b"` in rank order, or the path of a
            `merges.txt`.
        special_tokens_in_strings: map literal special tokens in the text to
            their ids (transformers' behaviour).

    Examples:

    >>> tokenizer = BytePairTokenizer.from_pretrained("path/to/roberta-base")
    >>> tokenizer.tokenize(["Hello world"])
    """

    special_tokens = SPECIAL_TOKENS
    # How BertInputPacker lays out a pair: <s> A </s></s> B </s>, one segment type.
    separators_between = 2
    typed_segments = False

    def __init__(self, vocabulary, merges, special_tokens_in_strings=True, name=None):
        if isinstance(vocabulary, (str, os.PathLike)) or isinstance(merges, (str, os.PathLike)):
            if not (isinstance(vocabulary, (str, os.PathLike)) and isinstance(merges, (str, os.PathLike))):
                raise ValueError("`vocabulary` and `merges` must both be paths or both be Python values.")
            vocabulary, merges = _read_files({"vocab.json": vocabulary, "merges.txt": merges})
        if not isinstance(vocabulary, dict) or not all(isinstance(i, int) for i in vocabulary.values()):
            raise ValueError(
                "`vocabulary` must be a dict token → int id or the path of a vocab.json; received "
                f"{type(vocabulary).__name__}: {vocabulary!r:.100}"
            )
        if not isinstance(merges, (list, tuple)) or not all(isinstance(m, str) and len(m.split(" ")) == 2 for m in merges):
            bad = next((m for m in merges if not (isinstance(m, str) and len(m.split(" ")) == 2)), merges) if isinstance(merges, (list, tuple)) else merges
            raise ValueError(f'`merges` must be a list of "a b" rules or the path of a merges.txt; received {bad!r:.100}')
        check_special_tokens(vocabulary, SPECIAL_TOKENS.values(), "The vocabulary", "RoBERTa's")
        super().__init__(vocabulary, special_tokens_in_strings, name=name)
        self._keep_plain(_merges=list(merges))

        init = tf.lookup.KeyValueTensorInitializer
        tokens = list(vocabulary)
        self._token_ids = tf.lookup.StaticHashTable(
            init(tf.constant(tokens), tf.constant([vocabulary[t] for t in tokens], tf.int32)),
            default_value=self.unk_token_id,
        )
        self._merge_ranks = tf.lookup.StaticHashTable(
            init(tf.constant(merges), tf.range(len(merges), dtype=tf.int32)), default_value=_NO_RANK
        )
        byte_map = byte_to_unicode()
        self._byte_chars = tf.constant([byte_map[b] for b in range(256)])
        self._char_bytes = tf.lookup.StaticHashTable(
            init(tf.constant([byte_map[b] for b in range(256)]), tf.constant([bytes([b]) for b in range(256)])),
            default_value="",
        )
        self._specials = SpecialTokenSplitter({t: vocabulary[t] for t in SPECIAL_TOKENS.values()})

    # ------------------------------------------------------------------ config
    @classmethod
    def from_pretrained(cls, path, **kwargs):
        """Loads a RoBERTa checkpoint's `vocab.json` + `merges.txt` (or `tokenizer.json`).

        Args:
            path: a Hugging Face folder, or one of its tokenizer files.
            **kwargs: constructor arguments.

        Returns:
            A `BytePairTokenizer`.
        """
        files, _ = find_tokenizer_files(path, ("vocab.json", "merges.txt"), family="RoBERTa")
        vocabulary, merges = _read_files(files)
        return cls(vocabulary, merges, **kwargs)

    def get_config(self):
        return {
            "vocabulary": dict(self._token_to_id),
            "merges": list(self._merges),
            "special_tokens_in_strings": self.special_tokens_in_strings,
        }

    # -------------------------------------------------------------- internals
    def _join_pieces(self, pieces):
        chars = tf.strings.unicode_split(tf.strings.reduce_join(pieces, axis=-1), "UTF-8")
        # Special tokens are kept as they are written; every other character is one byte.
        as_bytes = self._char_bytes.lookup(chars.flat_values)
        as_bytes = tf.where(as_bytes == "", chars.flat_values, as_bytes)
        text = tf.strings.reduce_join(chars.with_flat_values(as_bytes), axis=-1)
        return tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD)

    def _words(self, text):
        """`(n,)` text pieces → ragged `(n, words)`: GPT-2's pre-tokenization."""
        check = tf.debugging.assert_equal(
            tf.reduce_any(tf.strings.regex_full_match(text, f"(?s).*[{_MARKER}{_NUL}].*")), False,
            message="BytePairTokenizer: the text contains U+FFFE or U+FFFF, Unicode noncharacters it cannot take",
        )
        with tf.control_dependencies([check]):
            marked = tf.strings.regex_replace(text, "\x00", _NUL)
        marked = tf.strings.regex_replace(marked, f"([{_SPACE}])([^{_SPACE}])", f"{_MARKER}\\1\\2")
        words = tf_text.regex_split(marked, _SPLIT, _KEEP)
        return words.with_flat_values(tf.strings.regex_replace(words.flat_values, _NUL, "\x00"))

    def _merge(self, symbols):
        """Dense `(words, max_len)` byte characters ("" = padding) → BPE tokens, "" padded."""

        def step(symbols, _):
            left, right = symbols[:, :-1], symbols[:, 1:]
            ranks = self._merge_ranks.lookup(tf.strings.join([left, right], separator=" "))
            ranks = tf.where((left == "") | (right == ""), _NO_RANK, ranks)
            best = tf.argmin(ranks, axis=1, output_type=tf.int32)
            merging = tf.reduce_min(ranks, axis=1) < _NO_RANK
            # Row r merges columns best[r] and best[r] + 1; later columns shift left.
            columns = tf.range(tf.shape(symbols)[1])[tf.newaxis, :]
            at = best[:, tf.newaxis]
            shifted = tf.concat([symbols[:, 1:], tf.fill([tf.shape(symbols)[0], 1], "")], axis=1)
            merged = tf.where(columns == at, tf.strings.join([symbols, shifted]), symbols)
            merged = tf.where(columns > at, shifted, merged)
            return tf.where(merging[:, tf.newaxis], merged, symbols), tf.reduce_any(merging)

        symbols, _ = tf.while_loop(
            lambda _, more: more, step, (symbols, tf.constant(True)),
            shape_invariants=(tf.TensorShape([None, None]), tf.TensorShape([])),
        )
        return symbols

    def _tokenize_1d(self, text):
        return self._specials.tokenize(text, self._tokenize_text, self.special_tokens_in_strings)

    def _tokenize_text(self, pieces):
        """`(n,)` text without special tokens → int32 ragged `(n, None)` BPE ids."""
        words = self._words(pieces)
        # BPE once per distinct word of the batch.
        unique, index = tf.unique(words.flat_values)
        raw = tf.strings.bytes_split(unique)
        codes = tf.io.decode_raw(raw.flat_values, tf.uint8)[:, 0]
        symbols = raw.with_flat_values(tf.gather(self._byte_chars, tf.cast(codes, tf.int32)))
        tokens = self._merge(symbols.to_tensor(""))
        token_ids = tf.ragged.boolean_mask(self._token_ids.lookup(tokens), tokens != "")
        word_ids = tf.gather(token_ids, index)
        # [pieces, words, ids] → [pieces, ids]
        return words.with_flat_values(word_ids).merge_dims(1, 2)
