"""ALBERT's SentencePiece tokenizer on TensorFlow ops, id-for-id with transformers' AlbertTokenizer."""

import base64
import json
import os

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from keras_bert.converters.tokenizer_files import find_tokenizer_files
from keras_bert.preprocessing import _bert_text
from keras_bert.preprocessing._special_tokens import SpecialTokenSplitter, check_special_tokens
from keras_bert.preprocessing.tokenizer import Tokenizer

SPECIAL_TOKENS = {"pad": "<pad>", "unk": "<unk>", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"}
# transformers' AlbertConverter (what wrote the tokenizer.json of ALBERT's
# hub checkpoints) lowers the score of every piece that ends in a digit and a
# comma by 100, standing in for ALBERT's original Python tokenizer, which
# re-split such pieces. transformers 5 reading a bare spiece.model does not.
_NUMBER_COMMA_PENALTY = 100.0


def _is_number_comma(piece):
    return len(piece) >= 2 and piece[-1] == "," and piece[-2].isdigit()


def _parse(model_proto):
    # protobuf classes of the sentencepiece package (tensorflow-text reads the model, not Python).
    from sentencepiece import sentencepiece_model_pb2

    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(model_proto)
    return model


def _penalize_number_commas(model_proto, penalize):
    """Serialized model → (model to run, its pieces); digit+comma pieces penalised if asked."""
    model = _parse(model_proto)
    pieces = [p.piece for p in model.pieces]
    if not penalize:
        return model_proto, pieces
    for piece in model.pieces:
        if _is_number_comma(piece.piece):
            piece.score -= _NUMBER_COMMA_PENALTY
    return model.SerializeToString(), pieces


def _tokenizer_json_penalizes(tokenizer_json, model_proto):
    """Whether a tokenizer.json's unigram scores carry AlbertConverter's digit+comma penalty."""
    with open(tokenizer_json, encoding="utf-8") as f:
        vocabulary = json.load(f).get("model", {}).get("vocab") or []
    original = {p.piece: p.score for p in _parse(model_proto).pieces}
    return any(
        _is_number_comma(piece) and piece in original and score <= original[piece] - _NUMBER_COMMA_PENALTY + 1
        for piece, score in vocabulary
    )


@keras.saving.register_keras_serializable(package="keras_bert")
class SentencePieceTokenizer(Tokenizer):
    """ALBERT's SentencePiece (unigram) tokenizer, id-for-id with transformers'.

    The text goes through what transformers' `AlbertTokenizer` (the Rust
    `tokenizers` one, the default since transformers 5) does before its
    unigram model: "``" and "''" become `"`; unless `keep_accents`, NFKD and
    dropping of nonspacing marks; lowercasing one character at a time (Rust's
    tables, as in `BertTokenizer`). Then tensorflow-text's C++
    `SentencepieceTokenizer` runs the model with the normalisation stored in
    it (`nmt_nfkc` for ALBERT: NFKC, control characters dropped, runs of
    whitespace collapsed, "▁" before every word). With
    `split_number_commas`, pieces that end in a digit and a comma are
    penalised as transformers' `AlbertConverter` does, so
    "1,000,000" splits like ALBERT's (when `split_number_commas`). Literal special tokens in the text
    (`[MASK]`, `[CLS]`, `[SEP]`, `<pad>`, `<unk>`) map to their ids, as in
    transformers. `detokenize` joins the pieces and reads "▁" as a space
    (transformers' `decode`): the result is the normalized text (lowercased,
    no accents, single spaces), not the original.

    Everything is TensorFlow ops: the tokenizer works eagerly, in
    `tf.function`, in `tf.data.Dataset.map` on any Keras backend, and inside a
    SavedModel. Agreement with transformers on ../shared/data is measured by
    benchmarks/studies/family_tokenizer_agreement/family_tokenizer_agreement.py.

    Args:
        proto: the SentencePiece model: the path of a `spiece.model` file or
            its bytes.
        lowercase: lowercase the text (ALBERT's `do_lower_case`).
        keep_accents: keep accents (ALBERT's `keep_accents`); by default
            NFKD is applied and nonspacing marks dropped.
        special_tokens_in_strings: map literal special tokens in the text to
            their ids (transformers' behaviour).
        split_number_commas: lower the score of pieces that end in a digit
            and a comma by 100, as transformers' `AlbertConverter` does.
            transformers 5 does so when it reads a `tokenizer.json` written
            by that converter (ALBERT's hub checkpoints), not when it reads a
            bare `spiece.model`; `from_pretrained` decides as it does.

    Known difference: the Rust unigram model and SentencePiece break ties
    between segmentations of equal score differently ("---" as "-" "--" or
    "--" "-"): 2 of the 77,084 lines of ../shared/data differ so.

    Examples:

    >>> tokenizer = SentencePieceTokenizer.from_pretrained("path/to/albert-base-v2")
    >>> tokenizer.tokenize(["Héllo, world!"])
    """

    special_tokens = SPECIAL_TOKENS

    def __init__(
        self,
        proto,
        lowercase=True,
        keep_accents=False,
        special_tokens_in_strings=True,
        split_number_commas=False,
        name=None,
    ):
        if isinstance(proto, (str, os.PathLike)):
            path = os.fspath(proto)
            if not os.path.isfile(path):
                raise ValueError(f"`proto` file {path!r} does not exist (expected a SentencePiece spiece.model).")
            with open(path, "rb") as f:
                proto = f.read()
        if not isinstance(proto, bytes):
            raise ValueError(
                "`proto` must be the path of a spiece.model file or its bytes; received "
                f"{type(proto).__name__}: {proto!r:.100}"
            )
        try:
            model_proto, vocabulary = _penalize_number_commas(proto, split_number_commas)
        except Exception as error:  # protobuf's DecodeError and friends
            raise ValueError(f"`proto` is not a SentencePiece model: {error}") from None
        if not vocabulary:
            raise ValueError("`proto` is not a SentencePiece model: it holds no pieces.")
        token_to_id = {t: i for i, t in enumerate(vocabulary)}
        check_special_tokens(token_to_id, SPECIAL_TOKENS.values(), "The SentencePiece model", "ALBERT's")
        super().__init__(token_to_id, special_tokens_in_strings, name=name)
        self._proto = proto
        self.lowercase = bool(lowercase)
        self.keep_accents = bool(keep_accents)
        self.split_number_commas = bool(split_number_commas)
        self._model_proto = model_proto
        self._specials = SpecialTokenSplitter({t: token_to_id[t] for t in SPECIAL_TOKENS.values()})

    # ------------------------------------------------------------------ config
    @classmethod
    def from_pretrained(cls, path, **kwargs):
        """Loads `spiece.model` and the casing options of an ALBERT checkpoint.

        Args:
            path: a Hugging Face folder with `spiece.model` (and optionally
                `tokenizer_config.json` with `do_lower_case`, `keep_accents`,
                and `tokenizer.json`, whose scores decide
                `split_number_commas`), or a `spiece.model` file itself.
            **kwargs: constructor arguments that override the folder's.

        Returns:
            A `SentencePieceTokenizer`.
        """
        files, config = find_tokenizer_files(path, ("spiece.model",), family="ALBERT", alternatives=())
        options = {}
        tokenizer_json = os.path.join(os.path.dirname(files["spiece.model"]), "tokenizer.json")
        if os.path.isfile(tokenizer_json):
            with open(files["spiece.model"], "rb") as f:
                options["split_number_commas"] = _tokenizer_json_penalizes(tokenizer_json, f.read())
        for hf_name, name in (("do_lower_case", "lowercase"), ("keep_accents", "keep_accents")):
            if hf_name in config:
                options[name] = bool(config[hf_name])
        options.update(kwargs)
        return cls(files["spiece.model"], **options)

    def get_config(self):
        # base64: a config must be JSON (a .keras file or a packer's config holds it).
        return {
            "proto": base64.b64encode(self._proto).decode("ascii"),
            "lowercase": self.lowercase,
            "keep_accents": self.keep_accents,
            "special_tokens_in_strings": self.special_tokens_in_strings,
            "split_number_commas": self.split_number_commas,
        }

    @classmethod
    def from_config(cls, config):
        proto = config["proto"]
        if isinstance(proto, str) and not os.path.exists(proto):
            proto = base64.b64decode(proto)
        return cls(**{**config, "proto": proto})

    # -------------------------------------------------------------- internals
    def _join_pieces(self, pieces):
        text = tf.strings.reduce_join(pieces, axis=-1)
        return tf.strings.strip(tf.strings.regex_replace(text, "▁", " "))

    def _normalize(self, text):
        """transformers' AlbertTokenizer normalizers before the model's own."""
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD)
        text = tf.strings.regex_replace(text, "``|''", '"')
        if not self.keep_accents:
            text = tf_text.normalize_utf8(text, "NFKD")
            text = tf.strings.regex_replace(text, _bert_text.character_classes()["mark"], "")
        if self.lowercase:
            text = _bert_text.lower_characters(text)
        return text

    def _tokenize_1d(self, text):
        # Made inside the traced graph: an eagerly made tf-text model is a
        # resource owned by an eager kernel, which tf.random.set_seed (and so
        # keras.utils.set_random_seed) deletes with the kernel cache.
        model = tf_text.SentencepieceTokenizer(model=self._model_proto, out_type=tf.int32)
        return self._specials.tokenize(
            text, lambda pieces: model.tokenize(self._normalize(pieces)), self.special_tokens_in_strings
        )
