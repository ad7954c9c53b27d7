"""The base of the package's tokenizers: vocabulary, special tokens, batching, decoding and traced graphs.

`BertTokenizer` (WordPiece), `SentencePieceTokenizer` (ALBERT's unigram
model), `BytePairTokenizer` (RoBERTa's byte-level BPE) and
`ModernBertTokenizer` (its subclass for ModernBERT's `tokenizer.json`)
differ in how text becomes ids and in the files they read; what surrounds
that is written here, once, and `Tokenizer.from_pretrained` picks the class
a checkpoint folder needs.
"""

import importlib
import json
import os

import tensorflow as tf

from keras_bert._untracked import untracked
from keras_bert.preprocessing._shared_graphs import eager_graphs

# Plain graph code without Python control flow on tensors: skipping AutoGraph
# saves ~1 s of tracing every time a tf.data pipeline maps over it.
no_autograph = tf.autograph.experimental.do_not_convert

# Hugging Face's `model_type` → the tokenizer of its checkpoints: (module of keras_bert.preprocessing, class).
# Imported on use: the classes import this module.
TOKENIZER_CLASSES = {
    "bert": ("bert_tokenizer", "BertTokenizer"),
    "distilbert": ("bert_tokenizer", "BertTokenizer"),
    "electra": ("bert_tokenizer", "BertTokenizer"),
    "albert": ("sentence_piece_tokenizer", "SentencePieceTokenizer"),
    "roberta": ("byte_pair_tokenizer", "BytePairTokenizer"),
    "modernbert": ("modern_bert_tokenizer", "ModernBertTokenizer"),
}


# A keras-bert job's output folder holds its tokenizer here when a vocab.txt cannot give it (BPE, SentencePiece):
# {"class_name": ..., "config": get_config()}, written by `save_tokenizer_file`.
SAVED_TOKENIZER_FILE = "keras_bert_tokenizer.json"


def _class_named(name):
    modules = {class_name: module for module, class_name in TOKENIZER_CLASSES.values()}
    if name not in modules:
        raise ValueError(f"No keras_bert tokenizer class {name!r}; the classes: {sorted(modules)}.")
    return getattr(importlib.import_module(f"keras_bert.preprocessing.{modules[name]}"), name)


def _saved_tokenizer_file(path):
    """`path` when it is a saved tokenizer file, the one in the folder `path`, else None."""
    if os.path.basename(path) == SAVED_TOKENIZER_FILE and os.path.isfile(path):
        return path
    inside = os.path.join(path, SAVED_TOKENIZER_FILE)
    return inside if os.path.isdir(path) and os.path.isfile(inside) else None


def read_saved_tokenizer(path):
    """The contents of a saved tokenizer file, checked: a dict with "class_name" and "config"."""
    with open(path, encoding="utf-8") as f:
        try:
            contents = json.load(f)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not a saved keras_bert tokenizer (invalid JSON: {error})") from None
    if not isinstance(contents, dict) or not isinstance(contents.get("config"), dict) or "class_name" not in contents:
        raise ValueError(f"{path}: not a saved keras_bert tokenizer (expected class_name and config).")
    return contents


def saved_tokenizer_contents(tokenizer):
    """What `SAVED_TOKENIZER_FILE` holds for `tokenizer` (a JSON-able dict); `Tokenizer.from_pretrained` reads it back."""
    return {"class_name": type(tokenizer).__name__, "config": tokenizer.get_config()}


def tokenizer_class(path):
    """The tokenizer class `Tokenizer.from_pretrained(path)` builds (see there), without reading its files.

    Raises:
        ValueError: a `config.json` whose `model_type` has no tokenizer here, or a
            saved tokenizer file that names no class of this package.
    """
    from keras_bert.converters.checkpoint import resolve_location  # presets: only when asked
    from keras_bert.converters.hf_checkpoint import read_hf_model_type  # its families: only when asked

    path = os.fspath(path)
    saved = _saved_tokenizer_file(path)
    if saved is not None:
        return _class_named(read_saved_tokenizer(saved)["class_name"])
    if not os.path.exists(path) and not os.path.exists(path + ".index"):  # a TF1 prefix names no file
        # A preset or hf:// name: its config.json in the Hugging Face cache names the class (modernbert_base_en).
        path = resolve_location(path)[0]
    # A .keras file's tokenizer is in its sidecar files, whatever lies beside it.
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    has_config = os.path.exists(path) and not path.endswith(".keras") and os.path.isfile(
        os.path.join(folder, "config.json")
    )
    model_type = read_hf_model_type(folder) if has_config else "bert"
    if model_type not in TOKENIZER_CLASSES:
        raise ValueError(
            f"{os.path.join(folder, 'config.json')}: model_type {model_type!r} has no tokenizer in keras_bert; "
            f"supported: {', '.join(sorted(TOKENIZER_CLASSES))}."
        )
    return _class_named(TOKENIZER_CLASSES[model_type][1])


class Tokenizer(tf.Module):
    """Base of the tokenizers: text ↔ int32 ids with TensorFlow ops only.

    Everything a tokenizer runs on tensors is TensorFlow ops, so it works
    eagerly, inside `tf.function` and `tf.data.Dataset.map` on any Keras
    backend, and inside a SavedModel. Eager calls run one traced graph per
    method (one dispatch, not ~20), shared by equal tokenizers: two
    tokenizers of the same class and `get_config()` trace the same program
    (see `_shared_graphs`).

    A subclass states only its own algorithm and files:
    - `special_tokens`: dict role (`"pad"`, `"unk"`, `"cls"`, `"sep"`,
      `"mask"`) → token string; each role gives an attribute such as
      `cls_token_id`;
    - its constructor: reads and checks its files, then calls this one;
    - `_tokenize_1d(text)`: string `(batch_size,)` → int32 ragged
      `(batch_size, None)`, traced once as the `tokenize` graph (or its own
      `_graph_functions` and `_tokenize_batch`);
    - `_join_pieces(pieces)`: how `detokenize` joins the token strings;
    - `get_config()` (JSON: a `.keras` file or a packer's config holds it)
      and `from_pretrained()`.

    Args:
        token_to_id: dict token string → int id, every one of
            `special_tokens` among them. An id may hold no token (a gap in a
            `vocab.json`): it still counts in `vocabulary_size()`.
        special_tokens_in_strings: map literal special tokens in the text to
            their ids (transformers' behaviour); with `False` they are
            tokenized as plain text.
        name: the `tf.Module` name.
    """

    special_tokens = {}
    # How BertInputPacker lays out a pair: [CLS] A [SEP] B [SEP], B's tokens typed 1.
    separators_between = 1
    typed_segments = True
    # A word's first token holds the space before it (byte-level BPE's "Ġ"): words tokenized one by one (a tagger's
    # training words) are tokenized as running text only with that space before every word but a sentence's first.
    space_before_words = False

    def __init__(self, token_to_id, special_tokens_in_strings=True, name=None):
        super().__init__(name=name)
        tokens = [None] * (max(token_to_id.values()) + 1)
        for token, i in token_to_id.items():
            if i >= 0:  # a negative id names no row of the embedding
                tokens[i] = token
        self._keep_plain(
            _token_to_id=dict(token_to_id),
            _id_to_token=tuple(tokens),
            special_token_ids=sorted(token_to_id[t] for t in self.special_tokens.values()),
        )
        for role, token in self.special_tokens.items():
            setattr(self, f"{role}_token_id", token_to_id[token])
        self.special_tokens_in_strings = bool(special_tokens_in_strings)
        self._vocabulary_tensor = tf.constant(self.get_vocabulary(), dtype=tf.string)
        spec = [tf.TensorSpec([None], tf.string)]
        # Untracked: a SavedModel holding the tokenizer does not need these graphs again
        # (see keras_bert/_untracked.py).
        self._graphs = untracked(
            **{
                graph: tf.function(function, input_signature=spec, autograph=False)
                for graph, function in self._graph_functions().items()
            },
            eager=None,  # the graphs eager calls run: see `_traced`
        )

    # ------------------------------------------------------------------ config
    @classmethod
    def from_config(cls, config):
        return cls(**config)

    @classmethod
    def from_pretrained(cls, path, **kwargs):
        """The tokenizer of a checkpoint, of the class its `config.json` names by `model_type`.

        Each tokenizer class reads its own files with its own
        `from_pretrained`; this one, on the base, picks the class first (see
        `tokenizer_class`): a Hugging Face folder of `model_type`
        "modernbert" gets a `ModernBertTokenizer`, "roberta" a
        `BytePairTokenizer`, "albert" a `SentencePieceTokenizer`, BERT,
        DistilBERT and ELECTRA a `BertTokenizer`. A keras-bert job's output
        folder that holds `SAVED_TOKENIZER_FILE` (`save_tokenizer_file`: its
        tokenizer was not WordPiece), or that file itself, gives the tokenizer
        saved there. A preset or `hf://` name is its folder in the Hugging
        Face cache (`modernbert_base_en`: a `ModernBertTokenizer`). Anything
        else without a `config.json` beside it (a Google TF1 folder, a
        `vocab.txt`, a `.keras` file) is BERT's.

        Args:
            path: a checkpoint folder or one of its files, or what
                `BertTokenizer.from_pretrained` reads.
            **kwargs: arguments of that class's `from_pretrained` (for a saved
                tokenizer file: constructor arguments that override its own).

        Returns:
            A tokenizer of the class the checkpoint needs.

        Raises:
            ValueError: a `model_type` with no tokenizer here (the message
                names the supported ones), or what the class's
                `from_pretrained` raises.
        """
        saved = _saved_tokenizer_file(os.fspath(path))
        if saved is not None:
            contents = read_saved_tokenizer(saved)
            return tokenizer_class(saved).from_config({**contents["config"], **kwargs})
        return tokenizer_class(path).from_pretrained(os.fspath(path), **kwargs)

    # -------------------------------------------------------------- vocabulary
    def vocabulary_size(self):
        """Number of ids: the largest id + 1 (the rows of the model's token embedding)."""
        return len(self._id_to_token)

    def get_vocabulary(self):
        """The tokens as a list of strings; a token's id is its index ("" where no token has that id)."""
        return ["" if token is None else token for token in self._id_to_token]

    def id_to_token(self, id):
        """The token string of an integer id."""
        if not 0 <= int(id) < len(self._id_to_token) or self._id_to_token[int(id)] is None:
            raise ValueError(f"`id` must be an id of the vocabulary, in [0, {len(self._id_to_token)}); received {id!r}")
        return self._id_to_token[int(id)]

    def token_to_id(self, token):
        """The integer id of a token string (a vocabulary entry)."""
        if token not in self._token_to_id:
            raise ValueError(f"`token` {token!r} is not in the vocabulary.")
        return self._token_to_id[token]

    # ------------------------------------------------------------- tokenizing
    @no_autograph
    def __call__(self, strings):
        return self.tokenize(strings)

    @no_autograph
    def tokenize(self, strings):
        """Text → ids.

        Args:
            strings: a string, a list of strings, or a string tensor of shape
                `()` or `(batch_size,)`.

        Returns:
            int32 ids: a `tf.Tensor` of shape `(num_tokens,)` for a scalar
            input, otherwise a `tf.RaggedTensor` of shape
            `(batch_size, None)`. No special tokens (`[CLS]`/`[SEP]`,
            `<s>`/`</s>`) are added.

        Raises:
            ValueError: `strings` is ragged or has more than one axis.
        """
        return self._on_batch(strings, self._tokenize_batch)

    @no_autograph
    def detokenize(self, ids, skip_special_tokens=True):
        """Ids → text, as transformers' `decode(..., clean_up_tokenization_spaces=False)`.

        How the tokens are joined is the subclass's (see its docstring).

        Args:
            ids: int ids of shape `(num_tokens,)` or `(batch_size, num_tokens)`:
                a list, a dense tensor (padding is dropped with the other
                special tokens) or a ragged one.
            skip_special_tokens: drop the special tokens (`special_tokens`).

        Returns:
            A string tensor of shape `()` or `(batch_size,)`.
        """
        pieces, scalar = _gather_pieces(
            ids, self._vocabulary_tensor, self.special_token_ids if skip_special_tokens else ()
        )
        text = self._join_pieces(pieces)
        return text[0] if scalar else text

    # -------------------------------------------------------------- internals
    def _graph_functions(self):
        """Name → method taking string `(batch_size,)`, each traced once (see `_traced`)."""
        return {"tokenize": self._tokenize_1d}

    def _tokenize_batch(self, text):
        """String `(batch_size,)` → int32 ragged ids `(batch_size, None)`."""
        return self._traced().tokenize(text)

    def _traced(self):
        """This tokenizer's graphs; in an eager call, those an equal tokenizer traced first (see _shared_graphs)."""
        return eager_graphs(self._graphs, lambda: (type(self), json.dumps(self.get_config(), sort_keys=True)))

    def _on_batch(self, strings, tokenize):
        """`tokenize` run on `strings` as a `(batch_size,)` tensor; for a scalar input, the one row of each output."""
        text, scalar = _as_batch(strings)
        outputs = tokenize(text)
        if not scalar:
            return outputs
        return tuple(x[0] for x in outputs) if isinstance(outputs, tuple) else outputs[0]

    def _offsets_on_batch(self, strings, unit):
        """`tokenize_with_offsets` of the tokenizers that trace an "offsets" graph (ids, byte starts, byte ends,
        char starts, char ends)."""
        if unit not in ("char", "byte"):
            raise ValueError(f'`unit` must be "char" or "byte"; received {unit!r}')

        def spans(text):
            ids, byte_starts, byte_ends, char_starts, char_ends = self._traced().offsets(text)
            return (ids, char_starts, char_ends) if unit == "char" else (ids, byte_starts, byte_ends)

        return self._on_batch(strings, spans)

    def _keep_plain(self, **values):
        """Sets attributes as plain Python values, not trackables.

        tf.Module would wrap lists, tuples and dicts in trackable structures,
        slow to build and to walk in a SavedModel.
        """
        self._setattr_tracking = False
        for attribute, value in values.items():
            setattr(self, attribute, value)
        self._setattr_tracking = True


def _as_batch(strings):
    """A string or batch of strings → `((batch_size,) string tensor, was_scalar)`."""
    if isinstance(strings, tf.RaggedTensor):
        raise ValueError(
            f"`strings` must be a string or a 1-D batch of strings; received a RaggedTensor of shape {strings.shape}"
        )
    text = tf.convert_to_tensor(strings, dtype=tf.string)
    if text.shape.rank == 0:
        return text[tf.newaxis], True
    if text.shape.rank == 1:
        return text, False
    raise ValueError(f"`strings` must be a string or a 1-D batch of strings; received shape {text.shape}")


def _gather_pieces(ids, vocabulary, skip_ids=()):
    """Ids → ragged `(batch_size, None)` token strings, without `skip_ids`.

    Args:
        ids: int ids of shape `(num_tokens,)` or `(batch_size, num_tokens)`,
            a list, a dense or a ragged tensor.
        vocabulary: 1-D string tensor, the token of each id.
        skip_ids: ids to leave out (special tokens).

    Returns:
        `(pieces, was_scalar)`.
    """
    if not isinstance(ids, (tf.Tensor, tf.RaggedTensor)):
        rows = [r for r in ids if isinstance(r, (list, tuple))]
        ragged = len({len(r) for r in rows}) > 1
        ids = tf.ragged.constant(ids) if ragged else tf.constant(ids)
    ids = tf.cast(ids, tf.int32)
    scalar = ids.shape.rank == 1
    if scalar:
        ids = ids[tf.newaxis]
    if isinstance(ids, tf.Tensor):
        ids = tf.RaggedTensor.from_tensor(ids)
    size = tf.shape(vocabulary)[0]
    tf.debugging.assert_less(ids.flat_values, size, message="ids must be smaller than the vocabulary size")
    if len(skip_ids):
        skip = tf.constant(list(skip_ids), tf.int32)
        keep = tf.reduce_all(ids.flat_values[:, None] != skip[None, :], axis=-1)
        ids = tf.ragged.boolean_mask(ids, ids.with_flat_values(keep))
    return ids.with_flat_values(tf.gather(vocabulary, ids.flat_values)), scalar
