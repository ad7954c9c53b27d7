"""BERT's WordPiece tokenizer on TensorFlow ops, id-for-id equal to Hugging Face's."""

import io
import json
import os

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from keras_bert._utf8 import read_utf8
from keras_bert.converters.tokenizer_files import find_vocabulary, read_do_lower_case
from keras_bert.preprocessing import _bert_text

# Plain graph code without Python control flow on tensors: skipping AutoGraph
# saves ~1 s of tracing every time a tf.data pipeline maps over it.
_no_autograph = tf.autograph.experimental.do_not_convert

PAD_TOKEN = "[PAD]"
UNK_TOKEN = "[UNK]"
CLS_TOKEN = "[CLS]"
SEP_TOKEN = "[SEP]"
MASK_TOKEN = "[MASK]"
SPECIAL_TOKENS = (PAD_TOKEN, UNK_TOKEN, CLS_TOKEN, SEP_TOKEN, MASK_TOKEN)


def load_vocabulary(path):
    """Reads a `vocab.txt` (one token per line) the way Hugging Face does.

    Lines keep everything but their trailing newline, so a token's id is its
    0-based line number.

    Args:
        path: path of a `vocab.txt` file.

    Returns:
        A list of token strings.
    """
    # Hugging Face's reading: universal newlines, a byte-order mark kept as
    # part of the first token; bad bytes are reported as path:line.
    with io.StringIO(read_utf8(path, strip_bom=False), newline=None) as f:
        return [line.rstrip("\n") for line in f.readlines()]


def validate_vocabulary(vocabulary, source="the vocabulary"):
    """Raises `ValueError` for missing special tokens or duplicate entries.

    Args:
        vocabulary: list of token strings.
        source: what to name in the error message (a file path, usually).
    """
    missing = [t for t in SPECIAL_TOKENS if t not in set(vocabulary)]
    if missing:
        raise ValueError(
            f"{source} lacks the special token(s) {missing}; a BERT vocabulary "
            f"must contain all of {list(SPECIAL_TOKENS)}."
        )
    seen, duplicates = set(), []
    for token in vocabulary:
        if token in seen and token not in duplicates:
            duplicates.append(token)
        seen.add(token)
    if duplicates:
        shown = duplicates[:20]
        raise ValueError(
            f"{source} has {len(duplicates)} duplicated token(s), e.g. {shown}; "
            "every token must appear once (its line number is its id)."
        )


@keras.saving.register_keras_serializable(package="keras_bert")
class BertTokenizer(tf.Module):
    """BERT's WordPiece tokenizer, id-for-id equal to Hugging Face's.

    Text goes through BERT's basic cleanup (see `keras_bert.preprocessing.
    _bert_text.normalize`): invalid UTF-8, NUL, U+FFFD and every Unicode
    "C*" character (controls, format characters such as the zero-width
    joiner, unassigned code points) are dropped; tab/newline and all Unicode
    spaces, including the no-break space, separate words; when lowercasing,
    text is lowercased, NFD-decomposed and its combining marks (category Mn)
    are dropped — no other Unicode folding (`…`, `²`, `ß`, `ς` stay as they
    are); punctuation (ASCII 33-47, 58-64, 91-96, 123-126 and Unicode "P*")
    and CJK ideographs become words of their own. Words longer than
    `max_chars_per_word` characters become `[UNK]`, and so do words that
    WordPiece cannot cover. Literal special tokens such as `"[MASK]"` in the
    text map to their ids, as in Hugging Face (`special_tokens_in_strings`).

    WordPiece itself runs on tensorflow-text's C++ `FastWordpieceTokenizer`
    (without its own Unicode folding); everything is TensorFlow ops, so the
    tokenizer works eagerly, inside `tf.function` and inside
    `tf.data.Dataset.map`, on any Keras backend, and exports in a SavedModel.

    Agreement: ids and offsets equal those of transformers' `BertTokenizer`
    (the Rust tokenizer, default since transformers 5) on every line of
    ../shared/data (see benchmarks/tokenizer_agreement.py). Character classes
    come from this Python's Unicode tables, as in the legacy Python
    tokenizer; so on code points unassigned in them or newer (e.g. emoji of
    Unicode 15 on Python 3.11) we drop what the Rust tokenizer maps to
    `[UNK]`. The legacy Python tokenizer differs from both on a word-final
    capital sigma (it lowercases "ΟΔΟΣ" to "οδος"; we and Rust give "οδοσ")
    and, when cased, by an extra NFC step.

    Args:
        vocabulary: list of tokens (id = position) or the path of a
            `vocab.txt` file. Must contain `[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`
            and `[MASK]` and no duplicates.
        lowercase: lowercase the text (uncased models).
        strip_accents: drop combining marks after NFD. `None` follows
            `lowercase`, as in BERT and Hugging Face.
        tokenize_chinese_chars: make every CJK ideograph a word of its own.
        special_tokens_in_strings: map literal `[CLS]`, `[SEP]`, `[PAD]`,
            `[MASK]`, `[UNK]` in the input text to their ids (Hugging Face's
            behaviour). With `False` they are tokenized as plain text.
        max_chars_per_word: words with more characters become `[UNK]`.

    Examples:

    >>> tokenizer = BertTokenizer.from_pretrained("path/to/bert-base-uncased")
    >>> tokenizer.tokenize(["Héllo, world!"])
    <tf.RaggedTensor [[7592, 1010, 2088, 999]]>
    >>> tokenizer.detokenize([[101, 7592, 1010, 2088, 999, 102, 0]])
    <tf.Tensor: shape=(1,), dtype=string, numpy=array([b'hello , world !'])>
    """

    def __init__(
        self,
        vocabulary,
        lowercase=True,
        strip_accents=None,
        tokenize_chinese_chars=True,
        special_tokens_in_strings=True,
        max_chars_per_word=100,
        name=None,
    ):
        super().__init__(name=name)
        source = "the vocabulary"
        if isinstance(vocabulary, (str, os.PathLike)):
            source = f"vocabulary file {os.fspath(vocabulary)!r}"
            vocabulary = load_vocabulary(vocabulary)
        elif not isinstance(vocabulary, (list, tuple)):
            raise ValueError(
                "`vocabulary` must be a list of tokens or the path of a vocab.txt "
                f"file; received {type(vocabulary).__name__}: {vocabulary!r:.100}"
            )
        vocabulary = [str(t) for t in vocabulary]
        validate_vocabulary(vocabulary, source)
        if not isinstance(max_chars_per_word, int) or max_chars_per_word < 1:
            raise ValueError(
                "`max_chars_per_word` must be a positive int; received "
                f"{max_chars_per_word!r}"
            )
        # Plain Python containers: tf.Module would otherwise wrap them in
        # trackable structures, slow to build and to walk in a SavedModel.
        self._setattr_tracking = False
        self._vocabulary = tuple(vocabulary)
        self._token_to_id = {t: i for i, t in enumerate(vocabulary)}
        self.lowercase = bool(lowercase)
        self.strip_accents = None if strip_accents is None else bool(strip_accents)
        self.tokenize_chinese_chars = bool(tokenize_chinese_chars)
        self.special_tokens_in_strings = bool(special_tokens_in_strings)
        self.max_chars_per_word = max_chars_per_word

        self.pad_token_id = self._token_to_id[PAD_TOKEN]
        self.unk_token_id = self._token_to_id[UNK_TOKEN]
        self.cls_token_id = self._token_to_id[CLS_TOKEN]
        self.sep_token_id = self._token_to_id[SEP_TOKEN]
        self.mask_token_id = self._token_to_id[MASK_TOKEN]
        self.special_token_ids = sorted(self._token_to_id[t] for t in SPECIAL_TOKENS)
        self._setattr_tracking = True

        # A word of up to `max_chars_per_word` characters can take 4 bytes per
        # character; longer words are replaced by "[UNK]" before WordPiece, so
        # tf-text's own (byte-based) limit never fires.
        self._wordpiece_model = tf_text.FastWordpieceTokenizer(
            vocab=vocabulary,
            suffix_indicator="##",
            max_bytes_per_word=4 * max_chars_per_word,
            token_out_type=tf.int32,
            unknown_token=UNK_TOKEN,
            no_pretokenization=True,
        )
        self._vocabulary_tensor = tf.constant(vocabulary, dtype=tf.string)
        self._special_pattern = "|".join(
            t.replace("[", r"\[").replace("]", r"\]") for t in SPECIAL_TOKENS
        )
        # One graph per method: eager calls then cost one dispatch, not ~20.
        spec = [tf.TensorSpec([None], tf.string)]
        self._words_fn = tf.function(
            self._tokenize_words_1d, input_signature=spec, autograph=False
        )
        self._offsets_fn = tf.function(
            self._tokenize_with_offsets_1d, input_signature=spec, autograph=False
        )

    # ------------------------------------------------------------------ config
    @classmethod
    def from_pretrained(cls, path, **kwargs):
        """Loads the vocabulary and casing of a checkpoint.

        Args:
            path: a Hugging Face folder (`vocab.txt`, optionally
                `tokenizer_config.json` with `do_lower_case`, `strip_accents`,
                `tokenize_chinese_chars`), a Google TF1 checkpoint folder or
                prefix (`vocab.txt`; casing from `bert_config.json` or the
                `uncased_`/`cased_` folder name), a `.keras` file with its
                `.vocab.txt` sidecar (written by `keras-bert convert`), or a
                `vocab.txt` file itself.
            **kwargs: constructor arguments that override the folder's.

        Returns:
            A `BertTokenizer`.
        """
        path = os.fspath(path)
        if not os.path.exists(path) and not os.path.exists(path + ".index"):  # a TF1 prefix names no file
            raise ValueError(f"`path` {path!r} does not exist.")
        is_vocab_file = os.path.isfile(path) and not path.endswith(".keras")
        vocab_file = path if is_vocab_file else find_vocabulary(path)
        if vocab_file is None:
            raise ValueError(
                f"`path` {path!r} has no vocabulary: expected a vocab.txt file, a folder holding one "
                "(Hugging Face or Google TF1 checkpoint), or a .keras file with its .vocab.txt beside it."
            )
        folder = os.path.dirname(path) if is_vocab_file else path
        config_file = os.path.join(folder if os.path.isdir(folder) else os.path.dirname(folder), "tokenizer_config.json")
        # tokenizer_config.json, bert_config.json, then Google's uncased_/cased_ naming.
        options = {"lowercase": read_do_lower_case(folder)}
        if os.path.isfile(config_file):
            with open(config_file, encoding="utf-8") as f:
                hf_config = json.load(f)
            for hf_name, name in (
                ("strip_accents", "strip_accents"),
                ("tokenize_chinese_chars", "tokenize_chinese_chars"),
            ):
                if hf_name in hf_config:
                    options[name] = hf_config[hf_name]
        options.update(kwargs)
        return cls(vocab_file, **options)

    def get_config(self):
        return {
            "vocabulary": list(self._vocabulary),
            "lowercase": self.lowercase,
            "strip_accents": self.strip_accents,
            "tokenize_chinese_chars": self.tokenize_chinese_chars,
            "special_tokens_in_strings": self.special_tokens_in_strings,
            "max_chars_per_word": self.max_chars_per_word,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    # -------------------------------------------------------------- vocabulary
    def vocabulary_size(self):
        """Number of tokens in the vocabulary."""
        return len(self._vocabulary)

    def get_vocabulary(self):
        """The vocabulary as a list of strings; a token's id is its index."""
        return list(self._vocabulary)

    def id_to_token(self, id):
        """The token string of an integer id."""
        if not 0 <= int(id) < len(self._vocabulary):
            raise ValueError(
                f"`id` must be in [0, {len(self._vocabulary)}); received {id!r}"
            )
        return self._vocabulary[int(id)]

    def token_to_id(self, token):
        """The integer id of a token string (a vocabulary entry)."""
        if token not in self._token_to_id:
            raise ValueError(f"`token` {token!r} is not in the vocabulary.")
        return self._token_to_id[token]

    # ------------------------------------------------------------- tokenizing
    @_no_autograph
    def __call__(self, strings):
        return self.tokenize(strings)

    @_no_autograph
    def tokenize(self, strings):
        """Text → WordPiece ids.

        Args:
            strings: a string, a list of strings, or a string tensor of shape
                `()` or `(batch_size,)`.

        Returns:
            int32 ids: a `tf.Tensor` of shape `(num_tokens,)` for a scalar
            input, otherwise a `tf.RaggedTensor` of shape
            `(batch_size, None)`. No `[CLS]`/`[SEP]` are added.
        """
        words = self.tokenize_words(strings)
        return words.merge_dims(-2, -1)

    @_no_autograph
    def tokenize_words(self, strings):
        """Text → WordPiece ids grouped by word (what whole-word masking needs).

        A "word" is a token of BERT's basic tokenizer: a run of letters/digits
        between spaces and punctuation, one punctuation character, or one CJK
        ideograph; literal special tokens are words of one piece.

        Args:
            strings: a string, a list of strings, or a string tensor of shape
                `()` or `(batch_size,)`.

        Returns:
            int32 `tf.RaggedTensor` of shape `(batch_size, None, None)`
            (words, then their wordpieces), or `(None, None)` for a scalar.
        """
        text, scalar = self._as_batch(strings)
        words = self._words_fn(text)
        return words[0] if scalar else words

    @_no_autograph
    def tokenize_with_offsets(self, strings, unit="char"):
        """Text → ids plus each token's span in the ORIGINAL text.

        Spans follow Hugging Face's `return_offsets_mapping`: a token covers
        the original characters whose normalized form it was cut from, so
        `text[start:end]` of an accent-stripped token is the accented
        original; a special token found in the text covers its literal.

        Args:
            strings: a string, a list of strings, or a string tensor of shape
                `()` or `(batch_size,)`.
            unit: `"char"` for Unicode code point offsets (Python `str`
                indices, what SQuAD's `answer_start` uses) or `"byte"` for
                UTF-8 byte offsets (what `tf.strings.substr` uses).

        Returns:
            A tuple `(ids, starts, ends)` of int32 tensors shaped like
            `tokenize`'s output; `ends` are exclusive.
        """
        if unit not in ("char", "byte"):
            raise ValueError(f'`unit` must be "char" or "byte"; received {unit!r}')
        text, scalar = self._as_batch(strings)
        ids, byte_starts, byte_ends, char_starts, char_ends = self._offsets_fn(text)
        outputs = (ids, char_starts, char_ends) if unit == "char" else (ids, byte_starts, byte_ends)
        if scalar:
            outputs = tuple(x[0] for x in outputs)
        return outputs

    @_no_autograph
    def detokenize(self, ids, skip_special_tokens=True):
        """WordPiece ids → text: pieces joined by spaces, `##` glued on.

        Like Hugging Face's `decode(..., clean_up_tokenization_spaces=False)`:
        the result is the normalized text (lowercased, accents stripped, one
        space between words and around punctuation), not the original.

        Args:
            ids: int ids of shape `(num_tokens,)` or `(batch_size, num_tokens)`,
                dense (padding is dropped) or ragged.
            skip_special_tokens: drop `[PAD]`, `[CLS]`, `[SEP]`, `[MASK]`,
                `[UNK]`.

        Returns:
            A string tensor of shape `()` or `(batch_size,)`.
        """
        if not isinstance(ids, (tf.Tensor, tf.RaggedTensor)):
            ids = tf.ragged.constant(ids) if _is_ragged_list(ids) else tf.constant(ids)
        ids = tf.cast(ids, tf.int32)
        scalar = ids.shape.rank == 1
        if scalar:
            ids = ids[tf.newaxis] if isinstance(ids, tf.Tensor) else tf.RaggedTensor.from_tensor(ids[tf.newaxis])
        if isinstance(ids, tf.Tensor):
            ids = tf.RaggedTensor.from_tensor(ids)
        if skip_special_tokens:
            special = tf.constant(self.special_token_ids, tf.int32)
            keep = tf.reduce_all(ids.flat_values[:, None] != special[None, :], axis=-1)
            ids = tf.ragged.boolean_mask(ids, ids.with_flat_values(keep))
        tokens = ids.with_flat_values(tf.gather(self._vocabulary_tensor, ids.flat_values))
        text = tf.strings.reduce_join(tokens, axis=-1, separator=" ")
        text = tf.strings.strip(tf.strings.regex_replace(text, " ##", ""))
        return text[0] if scalar else text

    # -------------------------------------------------------------- internals
    def _as_batch(self, strings):
        if isinstance(strings, tf.RaggedTensor):
            raise ValueError(
                "`strings` must be a string or a 1-D batch of strings; received a "
                f"RaggedTensor of shape {strings.shape}"
            )
        text = tf.convert_to_tensor(strings, dtype=tf.string)
        if text.shape.rank == 0:
            return text[tf.newaxis], True
        if text.shape.rank == 1:
            return text, False
        raise ValueError(
            "`strings` must be a string or a 1-D batch of strings; received shape "
            f"{text.shape}"
        )

    def _normalize(self, text):
        strip = self.lowercase if self.strip_accents is None else self.strip_accents
        return _bert_text.normalize(
            text,
            lowercase=self.lowercase,
            strip_accents=strip,
            split_cjk=self.tokenize_chinese_chars,
        )

    def _split_special(self, text):
        """[batch] text → ragged [batch, pieces]: special tokens vs. the rest."""
        if self.special_tokens_in_strings:
            pattern = self._special_pattern
            # tf-text's regex_split stops at a NUL byte. NUL and \x01 are both
            # dropped by the cleanup, and swapping them keeps every offset.
            text = tf.strings.regex_replace(text, "\\x00", "\x01")
            pieces, starts, ends = tf_text.regex_split_with_offsets(text, pattern, pattern)
            is_special = tf.strings.regex_full_match(pieces.flat_values, pattern)
        else:
            pieces = tf.RaggedTensor.from_tensor(text[:, tf.newaxis])
            starts = tf.zeros_like(pieces, dtype=tf.int64)
            ends = pieces.with_flat_values(tf.cast(tf.strings.length(pieces.flat_values), tf.int64))
            is_special = tf.zeros_like(pieces.flat_values, dtype=tf.bool)
        return pieces, starts, ends, is_special

    def _normalize_pieces(self, pieces, is_special):
        normalized = self._normalize(pieces)
        # A special piece is kept verbatim; "[MASK]" is a vocabulary entry, so
        # WordPiece maps it to its id (plain text can never yield "[" + "MASK"
        # in one word, as "[" is punctuation).
        return tf.where(is_special, pieces, normalized)

    def _tokenize_words_1d(self, text):
        pieces, _, _, is_special = self._split_special(text)
        normalized = self._normalize_pieces(pieces.flat_values, is_special)
        words = tf.strings.split(normalized)
        too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > self.max_chars_per_word
        word_text = tf.where(too_long, UNK_TOKEN, words.flat_values)
        wordpieces = self._wordpiece_model.tokenize(word_text)
        # [batch, pieces, words, wordpieces] → [batch, words, wordpieces]
        nested = pieces.with_flat_values(words.with_flat_values(wordpieces))
        return nested.merge_dims(1, 2)

    def _tokenize_with_offsets_1d(self, text):
        pieces, piece_starts, _, is_special = self._split_special(text)
        flat_pieces = pieces.flat_values
        normalized = self._normalize_pieces(flat_pieces, is_special)

        # Words with their byte spans inside the normalized piece.
        words, word_starts, word_ends = tf_text.regex_split_with_offsets(normalized, " +")
        too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > self.max_chars_per_word
        word_text = tf.where(too_long, UNK_TOKEN, words.flat_values)
        ids, wp_starts, wp_ends = self._wordpiece_model.tokenize_with_offsets(word_text)
        word_start = tf.cast(word_starts.flat_values, tf.int64)
        word_end = tf.cast(word_ends.flat_values, tf.int64)
        # A word turned into "[UNK]" spans the whole word, not len("[UNK]").
        wp_starts = tf.cast(wp_starts, tf.int64) + word_start[:, None]
        wp_ends = tf.where(
            too_long[:, None], word_end[:, None], tf.cast(wp_ends, tf.int64) + word_start[:, None]
        )
        # Per token: which piece it came from and its normalized byte span.
        token_piece = tf.gather(words.value_rowids(), ids.value_rowids())
        norm_start = wp_starts.flat_values
        norm_end = wp_ends.flat_values

        # Map normalized bytes back to original characters: normalize every
        # original character on its own; the k-th normalized byte of a piece
        # belongs to the character whose cumulative normalized length first
        # exceeds k. (Whole-string and per-character normalization give the
        # same byte lengths, see `_bert_text.normalize`.)
        chars, char_byte_starts = tf.strings.unicode_split_with_offsets(
            flat_pieces, "UTF-8", errors="replace"
        )
        piece_bytes = tf.cast(tf.strings.length(flat_pieces), tf.int64)
        next_starts = tf.concat(
            [char_byte_starts[:, 1:], piece_bytes[:, tf.newaxis]], axis=1
        )
        char_byte_ends = next_starts.flat_values
        char_byte_starts = char_byte_starts.flat_values
        char_norm_len = tf.cast(tf.strings.length(self._normalize(chars.flat_values)), tf.int64)
        # Global coordinates: pieces laid end to end in one sorted sequence.
        cum_end = tf.cumsum(char_norm_len)
        piece_first_char = chars.row_starts()
        piece_norm_base = tf.concat([[0], cum_end], axis=0)
        piece_norm_base = tf.gather(piece_norm_base, piece_first_char)
        base = tf.gather(piece_norm_base, token_piece)
        first_char = tf.searchsorted(cum_end, norm_start + base, side="right", out_type=tf.int64)
        last_char = tf.searchsorted(cum_end, norm_end - 1 + base, side="right", out_type=tf.int64)
        num_chars = tf.shape(cum_end, out_type=tf.int64)[0]
        first_char = tf.minimum(first_char, num_chars - 1)
        last_char = tf.minimum(last_char, num_chars - 1)
        in_piece_byte_start = tf.gather(char_byte_starts, first_char)
        in_piece_byte_end = tf.gather(char_byte_ends, last_char)
        in_piece_char_start = first_char - tf.gather(piece_first_char, token_piece)
        in_piece_char_end = last_char + 1 - tf.gather(piece_first_char, token_piece)

        # A special piece is one token spanning the whole piece.
        token_special = tf.gather(is_special, token_piece)
        piece_len_chars = tf.cast(chars.row_lengths(), tf.int64)
        in_piece_byte_start = tf.where(token_special, tf.zeros_like(in_piece_byte_start), in_piece_byte_start)
        in_piece_byte_end = tf.where(token_special, tf.gather(piece_bytes, token_piece), in_piece_byte_end)
        in_piece_char_start = tf.where(token_special, tf.zeros_like(in_piece_char_start), in_piece_char_start)
        in_piece_char_end = tf.where(
            token_special, tf.gather(piece_len_chars, token_piece), in_piece_char_end
        )

        # Piece start in the row, in bytes and in characters.
        piece_byte_start = piece_starts.flat_values
        row_text = tf.gather(text, pieces.value_rowids())
        piece_char_start = tf.cast(
            tf.strings.length(
                tf.strings.unicode_transcode(
                    tf.strings.substr(row_text, tf.zeros_like(piece_byte_start), piece_byte_start),
                    "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD,
                ),
                unit="UTF8_CHAR",
            ),
            tf.int64,
        )
        byte_start = tf.gather(piece_byte_start, token_piece) + in_piece_byte_start
        byte_end = tf.gather(piece_byte_start, token_piece) + in_piece_byte_end
        char_start = tf.gather(piece_char_start, token_piece) + in_piece_char_start
        char_end = tf.gather(piece_char_start, token_piece) + in_piece_char_end

        # ids: [batch, pieces, words, wordpieces] → [batch, tokens]
        nested = pieces.with_flat_values(words.with_flat_values(ids))
        ids = nested.merge_dims(1, 3)

        def like_ids(values):
            return ids.with_flat_values(tf.cast(values, tf.int32))

        return (
            ids,
            like_ids(byte_start),
            like_ids(byte_end),
            like_ids(char_start),
            like_ids(char_end),
        )


def _is_ragged_list(ids):
    if hasattr(ids, "shape"):
        return False
    lengths = {len(row) for row in ids if isinstance(row, (list, tuple))}
    return len(lengths) > 1
