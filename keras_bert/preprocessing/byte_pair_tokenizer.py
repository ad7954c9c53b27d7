"""RoBERTa's byte-level BPE tokenizer on TensorFlow ops, id-for-id with transformers' RobertaTokenizer."""

import json
import os

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from keras_bert._untracked import untracked
from keras_bert.converters.tokenizer_files import find_tokenizer_files
from keras_bert.preprocessing import _special_tokens
from keras_bert.preprocessing._shared_graphs import eager_graphs

# Plain graph code without Python control flow on tensors (see bert_tokenizer.py).
_no_autograph = tf.autograph.experimental.do_not_convert

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
class BytePairTokenizer(tf.Module):
    """RoBERTa's byte-level BPE tokenizer, id-for-id with transformers'.

    As transformers' `RobertaTokenizer` (the Rust `tokenizers` one, the
    default since transformers 5) with `add_prefix_space=False`: literal
    special tokens (`<s>`, `</s>`, `<pad>`, `<unk>`, `<mask>`) are cut out
    and map to their ids; the text between them is split with GPT-2's
    pattern (contractions, letters, digits, other symbols, each with at most
    one leading space; whitespace runs), every piece's UTF-8 bytes become
    GPT-2's printable byte characters, and the BPE merges apply in rank
    order, the leftmost of equal ranks first.

    The merges run in a `tf.while_loop` over the batch's distinct words, one
    merge per word and step, so the tokenizer is TensorFlow ops throughout:
    eager, `tf.function`, `tf.data` on any Keras backend, SavedModel.
    Agreement with transformers on ../shared/data is measured by
    benchmarks/family_tokenizer_agreement.py.

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

    # How BertInputPacker lays out a pair: <s> A </s></s> B </s>, one segment type.
    separators_between = 2
    typed_segments = False

    def __init__(self, vocabulary, merges, special_tokens_in_strings=True, name=None):
        super().__init__(name=name)
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
        missing = [t for t in SPECIAL_TOKENS.values() if t not in vocabulary]
        if missing:
            raise ValueError(
                f"The vocabulary lacks the special token(s) {missing}; RoBERTa's must contain all of "
                f"{list(SPECIAL_TOKENS.values())}."
            )
        self._setattr_tracking = False  # plain Python values, not trackables
        self._vocabulary = dict(vocabulary)
        self._merges = list(merges)
        self._id_to_token = {i: t for t, i in vocabulary.items()}
        self.special_tokens_in_strings = bool(special_tokens_in_strings)
        for role, token in SPECIAL_TOKENS.items():
            setattr(self, f"{role}_token_id", vocabulary[token])
        self.special_token_ids = sorted(vocabulary[t] for t in SPECIAL_TOKENS.values())
        self._setattr_tracking = True

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
        size = max(vocabulary.values()) + 1
        self._vocabulary_tensor = tf.constant([self._id_to_token.get(i, "") for i in range(size)])
        self._specials = _special_tokens.SpecialTokenSplitter({t: vocabulary[t] for t in SPECIAL_TOKENS.values()})
        spec = [tf.TensorSpec([None], tf.string)]
        # Untracked: a SavedModel holding the tokenizer does not need this graph again (see keras_bert/_untracked.py).
        self._graphs = untracked(
            tokenize=tf.function(self._tokenize_1d, input_signature=spec, autograph=False),
            eager=None,  # the graphs eager calls run: see `_traced`
        )

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
            "vocabulary": dict(self._vocabulary),
            "merges": list(self._merges),
            "special_tokens_in_strings": self.special_tokens_in_strings,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    # -------------------------------------------------------------- vocabulary
    def vocabulary_size(self):
        """Number of ids: the largest id + 1."""
        return int(self._vocabulary_tensor.shape[0])

    def get_vocabulary(self):
        """The tokens as a list of strings; a token's id is its index."""
        return [self._id_to_token.get(i, "") for i in range(self.vocabulary_size())]

    def id_to_token(self, id):
        """The token string of an integer id."""
        if int(id) not in self._id_to_token:
            raise ValueError(f"`id` must be an id of the vocabulary (0..{self.vocabulary_size() - 1}); received {id!r}")
        return self._id_to_token[int(id)]

    def token_to_id(self, token):
        """The integer id of a token (byte-level characters, e.g. "Ġthe")."""
        if token not in self._vocabulary:
            raise ValueError(f"`token` {token!r} is not in the vocabulary.")
        return self._vocabulary[token]

    # ------------------------------------------------------------- tokenizing
    @_no_autograph
    def __call__(self, strings):
        return self.tokenize(strings)

    @_no_autograph
    def tokenize(self, strings):
        """Text → BPE ids.

        Args:
            strings: a string, a list of strings, or a string tensor of shape
                `()` or `(batch_size,)`.

        Returns:
            int32 ids: a `tf.Tensor` of shape `(num_tokens,)` for a scalar
            input, otherwise a `tf.RaggedTensor` of shape
            `(batch_size, None)`. No `<s>`/`</s>` are added.
        """
        text, scalar = _special_tokens.as_batch(strings)
        ids = self._traced().tokenize(text)
        return ids[0] if scalar else ids

    @_no_autograph
    def detokenize(self, ids, skip_special_tokens=True):
        """Ids → the original text (byte-level BPE loses nothing).

        Like transformers' `decode(..., clean_up_tokenization_spaces=False)`;
        bytes that do not form valid UTF-8 become U+FFFD.

        Args:
            ids: int ids of shape `(num_tokens,)` or `(batch_size, num_tokens)`,
                dense or ragged.
            skip_special_tokens: drop `<s>`, `</s>`, `<pad>`, `<unk>`, `<mask>`.

        Returns:
            A string tensor of shape `()` or `(batch_size,)`.
        """
        pieces, scalar = _special_tokens.gather_pieces(
            ids, self._vocabulary_tensor, self.special_token_ids if skip_special_tokens else ()
        )
        chars = tf.strings.unicode_split(tf.strings.reduce_join(pieces, axis=-1), "UTF-8")
        # Special tokens are kept as they are written; every other character is one byte.
        as_bytes = self._char_bytes.lookup(chars.flat_values)
        as_bytes = tf.where(as_bytes == "", chars.flat_values, as_bytes)
        text = tf.strings.reduce_join(chars.with_flat_values(as_bytes), axis=-1)
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD)
        return text[0] if scalar else text

    # -------------------------------------------------------------- internals
    def _traced(self):
        """This tokenizer's graphs; in an eager call, those an equal tokenizer traced first (see _shared_graphs)."""
        return eager_graphs(self._graphs, lambda: (
            type(self), frozenset(self._vocabulary.items()), tuple(self._merges), self.special_tokens_in_strings))

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
        pieces, special_ids = self._specials.split(text, self.special_tokens_in_strings)
        is_special = special_ids >= 0
        words = self._words(tf.where(is_special, "", pieces.flat_values))
        # BPE once per distinct word of the batch.
        unique, index = tf.unique(words.flat_values)
        raw = tf.strings.bytes_split(unique)
        codes = tf.io.decode_raw(raw.flat_values, tf.uint8)[:, 0]
        symbols = raw.with_flat_values(tf.gather(self._byte_chars, tf.cast(codes, tf.int32)))
        tokens = self._merge(symbols.to_tensor(""))
        token_ids = tf.ragged.boolean_mask(self._token_ids.lookup(tokens), tokens != "")
        word_ids = tf.gather(token_ids, index)
        # [pieces, words, ids] → [pieces, ids], then the special pieces' ids.
        per_piece = words.with_flat_values(word_ids).merge_dims(1, 2)
        special = tf.RaggedTensor.from_row_lengths(
            tf.boolean_mask(special_ids, is_special), tf.cast(is_special, per_piece.row_splits.dtype)
        )
        per_piece = tf.concat([per_piece, special], axis=1)
        return pieces.with_flat_values(per_piece).merge_dims(1, 2)
