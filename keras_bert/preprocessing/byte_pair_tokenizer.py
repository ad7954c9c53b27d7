"""RoBERTa's byte-level BPE tokenizer on TensorFlow ops, id-for-id with transformers' RobertaTokenizer."""

import json
import os

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from keras_bert.converters.checkpoint import resolve_location
from keras_bert.converters.tokenizer_files import find_tokenizer_files
from keras_bert.preprocessing import _byte_pair_offsets as offsets
from keras_bert.preprocessing._special_tokens import WHITE_SPACE, SpecialTokenSplitter, check_special_tokens
from keras_bert.preprocessing._tokenizer_json import ADDED_TOKEN_FLAGS, UNICODE_FORMS, read_tokenizer_json
from keras_bert.preprocessing.tokenizer import Tokenizer, no_autograph

SPECIAL_TOKENS = {"cls": "<s>", "pad": "<pad>", "sep": "</s>", "unk": "<unk>", "mask": "<mask>"}

# GPT-2's pre-tokenizer is `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
# ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`. RE2 has no lookahead; what `\s+(?!\S)`
# does is to leave the last whitespace character of a run that precedes a
# non-space on its own (a " " then joins the next word). A marker inserted
# before that character, split on and dropped, does the same. U+FFFF is a
# noncharacter; text that holds one is refused (see `_words`). tf-text's
# regex_split stops at a NUL byte, so NUL travels as U+FFFE (another
# noncharacter, in the same class of the pattern) and is restored after.
# `\s` is Unicode White_Space to the Rust tokenizer (WHITE_SPACE; RE2's `\s` is ASCII only).
_MARKER = "\uffff"
_NUL = "\ufffe"
_KEEP = (
    f"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{{L}}+| ?\\p{{N}}+"
    f"| ?[^{WHITE_SPACE}\\p{{L}}\\p{{N}}{_MARKER}]+|[{WHITE_SPACE}]+"
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


# GPT-2's printable byte characters back to their bytes.
_BYTE_VALUES = {character: byte for byte, character in byte_to_unicode().items()}


def _read_files(files):
    """vocab.json + merges.txt, or tokenizer.json → (constructor arguments, post-processor layout or None)."""
    if "tokenizer.json" in files:
        return read_tokenizer_json(files["tokenizer.json"])
    with open(files["vocab.json"], encoding="utf-8") as f:
        vocabulary = json.load(f)
    with open(files["merges.txt"], encoding="utf-8") as f:
        merges = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#version")]
    return {"vocabulary": vocabulary, "merges": merges}, None


def _is_blank(token):
    """Whether a vocabulary token stands for white space only (its bytes, or an added token's text)."""
    if token and all(c in _BYTE_VALUES for c in token):
        try:
            return bytes(_BYTE_VALUES[c] for c in token).decode("utf-8").isspace()
        except UnicodeDecodeError:  # part of a character
            return False
    return bool(token) and token.isspace()


def _check_added_tokens(added_tokens, vocabulary):
    """`added_tokens` as a list of complete dicts (see `BytePairTokenizer`), or ValueError naming the bad entry."""
    checked = []
    for entry in added_tokens:
        if not isinstance(entry, dict) or set(entry) - {"content", *ADDED_TOKEN_FLAGS} or "content" not in entry:
            raise ValueError(
                f"`added_tokens` entries must be dicts with a `content` and the flags {list(ADDED_TOKEN_FLAGS)}; "
                f"received {entry!r:.100}"
            )
        if entry["content"] not in vocabulary:
            raise ValueError(f"The added token {entry['content']!r} is not in the vocabulary.")
        checked.append({"content": entry["content"], **{flag: bool(entry.get(flag, False)) for flag in ADDED_TOKEN_FLAGS}})
    return sorted(checked, key=lambda entry: vocabulary[entry["content"]])


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

    A `tokenizer.json` can say more, and `from_pretrained` reads it all (see
    `_tokenizer_json`): added tokens beyond the special ones, whitespace
    they take along (`lstrip`/`rstrip`), a Unicode normalization, a space
    before each piece of text (`add_prefix_space`), no GPT-2 split
    (`use_regex=False`). `ModernBertTokenizer` is this tokenizer with
    ModernBERT's special tokens and layout.

    The merges run in a `tf.while_loop` over the batch's distinct words, one
    merge per word and step, so the tokenizer is TensorFlow ops throughout:
    eager, `tf.function`, `tf.data` on any Keras backend, SavedModel.
    Agreement with transformers on ../shared/data is measured by
    benchmarks/studies/family_tokenizer_agreement/family_tokenizer_agreement.py.

    Args:
        vocabulary: dict token → id (the content of `vocab.json`, with the
            added tokens) or the path of a `vocab.json`.
        merges: list of merge rules `"a b"` in rank order, or the path of a
            `merges.txt`.
        added_tokens: the tokens cut out of the text before the BPE, each a
            dict with `content` (a token of `vocabulary`) and the flags of
            `tokenizer.json`'s `added_tokens`: `special` (cut out only while
            `special_tokens_in_strings`; skipped by `detokenize`), `lstrip`
            / `rstrip` (the match takes the whitespace before / after it),
            `normalized` (matched after `unicode_normalization`, else
            before). None: the special tokens, special, no flags.
        add_prefix_space: put a space before each piece of text between
            added tokens that does not start with one.
        use_regex: split the text into words with GPT-2's pattern first;
            without, each piece between added tokens is one word.
        unicode_normalization: None, or the form ("NFC", "NFKC", "NFD",
            "NFKD") applied to the text between the added tokens that are
            not `normalized`.
        special_tokens_in_strings: map literal special tokens in the text to
            their ids (transformers' behaviour).
        trim_offsets: `tokenize_with_offsets` leaves the spaces at a token's
            ends out of its span (RoBERTa's post-processor does; ModernBERT's
            does not). None: the family's (`trims_offsets`); a
            `tokenizer.json` says it in its post-processor.

    Examples:

    >>> tokenizer = BytePairTokenizer.from_pretrained("path/to/roberta-base")
    >>> tokenizer.tokenize(["Hello world"])
    """

    special_tokens = SPECIAL_TOKENS
    # How BertInputPacker lays out a pair: <s> A </s></s> B </s>, one segment type.
    separators_between = 2
    typed_segments = False
    # The family's name in messages, and the files `from_pretrained` reads: all of the first, or one of the second.
    family = "RoBERTa"
    tokenizer_files = (("vocab.json", "merges.txt"), ("tokenizer.json",))
    # transformers' RobertaTokenizer trims offsets unless told otherwise.
    trims_offsets = True
    space_before_words = True

    def __init__(
        self,
        vocabulary,
        merges,
        added_tokens=None,
        add_prefix_space=False,
        use_regex=True,
        unicode_normalization=None,
        special_tokens_in_strings=True,
        trim_offsets=None,
        name=None,
    ):
        if isinstance(vocabulary, (str, os.PathLike)) or isinstance(merges, (str, os.PathLike)):
            if not (isinstance(vocabulary, (str, os.PathLike)) and isinstance(merges, (str, os.PathLike))):
                raise ValueError("`vocabulary` and `merges` must both be paths or both be Python values.")
            files = _read_files({"vocab.json": vocabulary, "merges.txt": merges})[0]
            vocabulary, merges = files["vocabulary"], files["merges"]
        if not isinstance(vocabulary, dict) or not all(isinstance(i, int) for i in vocabulary.values()):
            raise ValueError(
                "`vocabulary` must be a dict token → int id or the path of a vocab.json; received "
                f"{type(vocabulary).__name__}: {vocabulary!r:.100}"
            )
        if not isinstance(merges, (list, tuple)) or not all(isinstance(m, str) and len(m.split(" ")) == 2 for m in merges):
            bad = next((m for m in merges if not (isinstance(m, str) and len(m.split(" ")) == 2)), merges) if isinstance(merges, (list, tuple)) else merges
            raise ValueError(f'`merges` must be a list of "a b" rules or the path of a merges.txt; received {bad!r:.100}')
        if unicode_normalization not in (None, *UNICODE_FORMS):
            raise ValueError(
                f"`unicode_normalization` must be None or one of {UNICODE_FORMS}; received {unicode_normalization!r}"
            )
        check_special_tokens(vocabulary, self.special_tokens.values(), "The vocabulary", f"{self.family}'s")
        default = [{"content": t, "special": True} for t in self.special_tokens.values()]
        tokens = _check_added_tokens(default if added_tokens is None else added_tokens, vocabulary)
        super().__init__(vocabulary, special_tokens_in_strings, name=name)
        self._keep_plain(
            _merges=list(merges),
            # Kept as None when it is the default, so that a config says only what differs.
            added_tokens=None if tokens == _check_added_tokens(default, vocabulary) else tokens,
            # `detokenize` skips every special added token, as transformers' decode does.
            special_token_ids=sorted({*self.special_token_ids, *(vocabulary[t["content"]] for t in tokens if t["special"])}),
        )
        self.add_prefix_space = bool(add_prefix_space)
        self.use_regex = bool(use_regex)
        self.unicode_normalization = unicode_normalization
        self.trim_offsets = self.trims_offsets if trim_offsets is None else bool(trim_offsets)
        # Tokens of white space only (GPT-2's "Ġ", "Ċ", runs of spaces): `tokenize_words` joins them to the word before.
        self._blank_ids = tf.constant([_is_blank(token) for token in self.get_vocabulary()], tf.bool)

        init = tf.lookup.KeyValueTensorInitializer
        self._token_ids = tf.lookup.StaticHashTable(
            init(tf.constant(list(vocabulary)), tf.constant(list(vocabulary.values()), tf.int32)),
            default_value=self.unk_token_id,
        )
        self._merge_ranks = tf.lookup.StaticHashTable(
            init(tf.constant(merges, tf.string), tf.range(len(merges), dtype=tf.int32)), default_value=_NO_RANK
        )
        byte_map = byte_to_unicode()
        self._byte_chars = tf.constant([byte_map[b] for b in range(256)])
        self._char_bytes = tf.lookup.StaticHashTable(
            init(tf.constant([byte_map[b] for b in range(256)]), tf.constant([bytes([b]) for b in range(256)])),
            default_value="",
        )
        # The Rust tokenizers match the added tokens in two passes: those not `normalized` on the raw text, then
        # the others on the normalized text between them. The first pass also makes the text valid UTF-8.
        cut = [t for t in tokens if self.special_tokens_in_strings or not t["special"]]
        self._raw_tokens = self._splitter([t for t in cut if not t["normalized"]], vocabulary)
        normalized = [t for t in cut if t["normalized"]]
        self._normalized_tokens = self._splitter(normalized, vocabulary) if normalized else None

    @staticmethod
    def _splitter(tokens, vocabulary):
        return SpecialTokenSplitter(
            {t["content"]: vocabulary[t["content"]] for t in tokens},
            lstrip={t["content"] for t in tokens if t["lstrip"]},
            rstrip={t["content"] for t in tokens if t["rstrip"]},
        )

    # ------------------------------------------------------------------ config
    @classmethod
    def from_pretrained(cls, path, cache_dir=None, **kwargs):
        """Loads a checkpoint's `vocab.json` + `merges.txt`, or its `tokenizer.json` (see `tokenizer_files`).

        From a `tokenizer.json`, its added tokens, normalizer and
        pre-tokenizer options come too, and its post-processor must place
        the special tokens as this family does.

        Args:
            path: a Hugging Face folder, or one of its tokenizer files, or a
                preset name / `hf://owner/name` (the Hugging Face cache;
                downloaded when online), e.g. "modernbert_base_en".
            cache_dir: Hugging Face cache folder for presets and hub names.
            **kwargs: constructor arguments that override the files'.

        Returns:
            A tokenizer of this class.

        Raises:
            ValueError: missing files, or a `tokenizer.json` this tokenizer
                would not follow exactly (the message says what in it).
        """
        if not os.path.exists(os.fspath(path)):
            path = resolve_location(path, cache_dir)[0]  # a preset or hf:// name; an unknown preset raises
        names, alternatives = cls.tokenizer_files
        files, _ = find_tokenizer_files(path, names, family=cls.family, alternatives=alternatives)
        arguments, layout = _read_files(files)
        if layout is not None:
            arguments.update(cls._layout_arguments(layout, files["tokenizer.json"]))
        return cls(**{**arguments, **kwargs})

    @classmethod
    def from_preset(cls, preset, cache_dir=None, **kwargs):
        """`from_pretrained` under keras-hub's name, e.g. `ModernBertTokenizer.from_preset("modernbert_base_en")`."""
        return cls.from_pretrained(preset, cache_dir=cache_dir, **kwargs)

    @classmethod
    def _layout_arguments(cls, layout, path):
        """Constructor arguments a `tokenizer.json`'s post-processor layout sets; ValueError if not this family's."""
        expected = {
            "cls": cls.special_tokens["cls"],
            "sep": cls.special_tokens["sep"],
            "separators_between": cls.separators_between,
            "typed_segments": cls.typed_segments,
        }
        if layout != expected:
            raise ValueError(f"{path}: its post-processor lays out pairs as {layout}; {cls.family}'s is {expected}.")
        return {}

    def get_config(self):
        return {
            "vocabulary": dict(self._token_to_id),
            "merges": list(self._merges),
            "added_tokens": self.added_tokens,
            "add_prefix_space": self.add_prefix_space,
            "use_regex": self.use_regex,
            "unicode_normalization": self.unicode_normalization,
            "special_tokens_in_strings": self.special_tokens_in_strings,
            "trim_offsets": self.trim_offsets,
        }

    # ------------------------------------------------------------- tokenizing
    @no_autograph
    def tokenize_with_offsets(self, strings, unit="char"):
        """Text → ids plus each token's span, as `BertTokenizer.tokenize_with_offsets` (the same arguments and
        results), the spans those of `tokenizers`' `return_offsets_mapping`.

        A token covers the characters its bytes came from: a token that
        holds part of a character's bytes covers the whole character, a
        normalized character covers the original one it stands for, a
        special token its whole match (the white space `lstrip` took along
        too), and with `trim_offsets` the spaces at a token's ends are left
        out (see `_byte_pair_offsets`). Text that is not valid UTF-8 is
        counted with its bad bytes replaced by U+FFFD, as it is tokenized.
        """
        return self._offsets_on_batch(strings, unit)

    @no_autograph
    def tokenize_words(self, strings):
        """Text → ids grouped by word, as `BertTokenizer.tokenize_words` (the same arguments and results).

        A word is a word of GPT-2's split (the pre-tokenizer's, with the
        space before it: " world"), a special token found in the text, or a
        run of white space that no word follows (before a line break, at the
        end), which joins the word before it: every word but a text's
        leading white space starts with a token that is not blank, the token
        a tagger reads its tag from. The words' ids are `tokenize`'s, in order.
        """
        return self._on_batch(strings, lambda text: self._traced().words(text))

    def word_start_ids(self):
        """The ids of the tokens that start a word: those that begin with a space (GPT-2's "Ġ") and the special ones.

        Byte-level BPE keeps the space before a word inside its first token,
        so whole-word masking and the cutting of long sentences at word
        starts (`keras_bert.preprocessing.pretraining`) read the words off
        the tokens; a text's first word, which has no space before it, is
        the caller's to mark.
        """
        space = byte_to_unicode()[ord(" ")]
        return sorted(
            {i for i, token in enumerate(self.get_vocabulary()) if token.startswith(space)}
            | set(self.special_token_ids)
        )

    # -------------------------------------------------------------- internals
    def _graph_functions(self):
        return {**super()._graph_functions(), "offsets": self._tokenize_with_offsets_1d, "words": self._words_1d}

    def _join_pieces(self, pieces):
        chars = tf.strings.unicode_split(tf.strings.reduce_join(pieces, axis=-1), "UTF-8")
        # Special tokens are kept as they are written; every other character is one byte.
        as_bytes = self._char_bytes.lookup(chars.flat_values)
        as_bytes = tf.where(as_bytes == "", chars.flat_values, as_bytes)
        text = tf.strings.reduce_join(chars.with_flat_values(as_bytes), axis=-1)
        return tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD)

    def _words(self, text):
        """`(n,)` text pieces → ragged `(n, words)`: GPT-2's pre-tokenization (`use_regex`), else each piece whole."""
        if not self.use_regex:
            return tf.RaggedTensor.from_tensor(text[:, tf.newaxis])
        check = tf.debugging.assert_equal(
            tf.reduce_any(tf.strings.regex_full_match(text, f"(?s).*[{_MARKER}{_NUL}].*")), False,
            message="BytePairTokenizer: the text contains U+FFFE or U+FFFF, Unicode noncharacters it cannot take",
        )
        with tf.control_dependencies([check]):
            marked = tf.strings.regex_replace(text, "\x00", _NUL)
        marked = tf.strings.regex_replace(marked, f"([{WHITE_SPACE}])([^{WHITE_SPACE}])", f"{_MARKER}\\1\\2")
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
        return self._raw_tokens.tokenize(text, self._tokenize_normalized)

    def _tokenize_normalized(self, pieces):
        """`(n,)` raw text between added tokens → int32 ragged `(n, None)`: normalized, normalized tokens cut out."""
        return self._on_normalized(pieces, "tokenize", self._tokenize_text)

    def _on_normalized(self, pieces, split, run):
        """`run` on raw text between added tokens, normalized, with the `normalized` added tokens cut out by the
        splitter's `split` method ("tokenize" or "words", which `run`'s results fit)."""
        if self.unicode_normalization is not None:
            pieces = tf_text.normalize_utf8(pieces, self.unicode_normalization)
        if self._normalized_tokens is None:
            return run(pieces)
        return getattr(self._normalized_tokens, split)(pieces, run)

    def _tokenize_text(self, pieces):
        """`(n,)` text without added tokens → int32 ragged `(n, None)` BPE ids."""
        # [pieces, words, ids] → [pieces, ids]
        return self._text_words(pieces).merge_dims(1, 2)

    def _text_words(self, pieces):
        """`(n,)` text without added tokens → int32 ragged `(n, words, ids)`."""
        _, words, tokens = self._word_tokens(pieces)
        return words.with_flat_values(tokens.with_flat_values(self._token_ids.lookup(tokens.flat_values)))

    # -------------------------------------------------------------- words
    def _words_1d(self, text):
        """String `(batch,)` → int32 ragged `(batch, words, ids)` (see `tokenize_words`)."""
        words = self._raw_tokens.words(text, self._normalized_words)
        per_word = words.values  # (all words, ids)
        blank = tf.math.unsorted_segment_min(
            tf.cast(tf.gather(self._blank_ids, per_word.flat_values), tf.int32), per_word.value_rowids(),
            per_word.nrows(),
        ) > 0
        place = tf.range(per_word.nrows()) - tf.gather(words.row_starts(), words.value_rowids())
        # A blank word after another word of its text joins it.
        starts_word = ~(blank & (place > 0))
        joined = tf.cumsum(tf.cast(starts_word, tf.int64)) - 1
        num_joined = tf.reduce_sum(tf.cast(starts_word, tf.int64))
        ids_per_word = tf.math.unsorted_segment_sum(per_word.row_lengths(), joined, num_joined)
        words_per_text = tf.math.unsorted_segment_sum(
            tf.cast(starts_word, tf.int64), words.value_rowids(), words.nrows()
        )
        return tf.RaggedTensor.from_row_lengths(
            tf.RaggedTensor.from_row_lengths(per_word.flat_values, ids_per_word, validate=False),
            words_per_text,
            validate=False,
        )

    def _normalized_words(self, pieces):
        """`(n,)` raw text between added tokens → int32 ragged `(n, words, ids)`."""
        return self._on_normalized(pieces, "words", self._text_words)

    def _word_tokens(self, pieces):
        """`(n,)` text without added tokens → `(prefixed, words, tokens)`: the pieces with their prefix space
        (`add_prefix_space`), their words (ragged `(n, words)`, end to end in `prefixed`) and each word's BPE
        tokens (ragged `(num_words, tokens)`, end to end in the word's bytes)."""
        if self.add_prefix_space:
            # The ByteLevel pre-tokenizer's: a space before every piece that does not start with one ("" stays empty).
            bare = (pieces != "") & (tf.strings.substr(pieces, 0, 1) != " ")
            pieces = tf.where(bare, tf.strings.join([" ", pieces]), pieces)
        words = self._words(pieces)
        # BPE once per distinct word of the batch.
        unique, index = tf.unique(words.flat_values)
        raw = tf.strings.bytes_split(unique)
        codes = tf.io.decode_raw(raw.flat_values, tf.uint8)[:, 0]
        symbols = raw.with_flat_values(tf.gather(self._byte_chars, tf.cast(codes, tf.int32)))
        tokens = self._merge(symbols.to_tensor(""))
        return pieces, words, tf.gather(tf.ragged.boolean_mask(tokens, tokens != ""), index)

    # ------------------------------------------------------------ offsets
    def _tokenize_with_offsets_1d(self, text):
        """String `(batch,)` → ids, byte starts, byte ends, char starts, char ends (int32 ragged `(batch, None)`)."""
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD)
        found = self._raw_tokens.offsets(text, self._normalized_offsets)  # (batch, tokens, 5)
        ids, first, last, leading, trailing = tf.unstack(found.flat_values, axis=1)
        starts, ends = first, last + 1
        if self.trim_offsets:
            is_first = (starts == 0) | (offsets.in_row(tf.range(tf.size(ids, out_type=tf.int64)), found) == 0)
            starts, ends = offsets.trim_spaces(starts, ends, leading, trailing, is_first, self.add_prefix_space)
        # Character → UTF-8 byte, per text, one past the last character included.
        _, char_bytes = tf.strings.unicode_split_with_offsets(text, "UTF-8")
        text_bytes = tf.cast(tf.strings.length(text), tf.int64)
        table = tf.concat([char_bytes, text_bytes[:, tf.newaxis]], axis=1)
        base = tf.gather(table.row_starts(), found.value_rowids())

        def as_ragged(values):
            return tf.RaggedTensor.from_row_splits(tf.cast(values, tf.int32), found.row_splits, validate=False)

        return (
            as_ragged(ids),
            as_ragged(tf.gather(table.flat_values, base + starts)),
            as_ragged(tf.gather(table.flat_values, base + ends)),
            as_ragged(starts),
            as_ragged(ends),
        )

    def _normalized_offsets(self, pieces):
        """`(n,)` raw text between added tokens → int64 ragged `(n, None, 5)` (see `SpecialTokenSplitter.offsets`),
        characters counted in the raw piece."""
        if self.unicode_normalization is None:
            normalized, alignment = pieces, None
        else:
            normalized, alignment = offsets.normalized_alignment(pieces, self.unicode_normalization)
        if self._normalized_tokens is None:
            found = self._text_offsets(normalized)
        else:
            found = self._normalized_tokens.offsets(normalized, self._text_offsets)
        if alignment is None:
            return found
        ids, first, last, leading, trailing = tf.unstack(found.flat_values, axis=1)
        base = tf.gather(alignment.row_starts(), found.value_rowids())
        first, last = (tf.gather(alignment.flat_values, base + i) for i in (first, last))
        return found.with_flat_values(tf.stack([ids, first, last, leading, trailing], axis=1))

    def _text_offsets(self, pieces):
        """`(n,)` text without added tokens → int64 ragged `(n, None, 5)`, characters counted in the piece."""
        prefixed, words, tokens = self._word_tokens(pieces)
        flat_tokens = tokens.flat_values
        # Each token's bytes in its word, then the characters that hold its first and last byte (global positions:
        # the words of the batch laid end to end).
        token_bytes = tokens.with_flat_values(offsets.char_lengths(flat_tokens))  # one character per byte
        word_bytes = tf.cast(tf.strings.length(words.flat_values), tf.int64)
        word_base = tf.cumsum(word_bytes, exclusive=True)
        token_word = tokens.value_rowids()
        first_byte = tf.gather(word_base, token_word) + offsets.starts_in_rows(token_bytes)
        last_byte = first_byte + token_bytes.flat_values - 1
        chars, char_bytes = tf.strings.unicode_split_with_offsets(words.flat_values, "UTF-8")
        char_starts = tf.gather(word_base, chars.value_rowids()) + char_bytes.flat_values

        word_start = offsets.starts_in_rows(words.with_flat_values(offsets.char_lengths(words.flat_values)))

        def char_in_piece(byte):
            char = tf.searchsorted(char_starts, byte, side="right", out_type=tf.int64) - 1
            return char - tf.gather(chars.row_starts(), token_word) + tf.gather(word_start, token_word)

        first, last = char_in_piece(first_byte), char_in_piece(last_byte)
        # The space `add_prefix_space` put first stands for the piece's first character.
        shift = offsets.char_lengths(prefixed) - offsets.char_lengths(pieces)
        token_piece = tf.gather(words.value_rowids(), token_word)
        first = tf.maximum(first - tf.gather(shift, token_piece), 0)
        last = tf.maximum(last - tf.gather(shift, token_piece), 0)
        space = byte_to_unicode()[ord(" ")]
        leading = offsets.char_lengths(tf.strings.regex_replace(flat_tokens, f"^({space}*).*$", r"\1"))
        trailing = offsets.char_lengths(tf.strings.regex_replace(flat_tokens, f"^.*?({space}*)$", r"\1"))
        values = tf.stack([tf.cast(self._token_ids.lookup(flat_tokens), tf.int64), first, last, leading, trailing], 1)
        # [pieces, words, tokens, 5] → [pieces, tokens, 5]
        return words.with_flat_values(tokens.with_flat_values(values)).merge_dims(1, 2)
