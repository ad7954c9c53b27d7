"""The correspondence between keras_bert weights and BERT's canonical tensor names.

Canonical names are Hugging Face's (`embeddings.word_embeddings.weight`,
`encoder.layer.0.attention.self.query.weight`, `cls.predictions.bias`, ...)
with Hugging Face's layouts (dense weights as `(out, in)`). Every converter
reads its format into a dict of numpy arrays under these names, or writes one
from it; this module is the only place that knows how our layers hold them.

The mapping needs numpy and keras only. Models are recognised by their
attributes and class names, not by `isinstance`: `keras_bert.models` builds on
this package, so this package does not import it.
"""

import warnings

import keras
import numpy as np


def is_backbone(model):
    """Whether `model` is a keras_bert `BertBackbone` (or a subclass of it)."""
    return any(cls.__name__ == "BertBackbone" for cls in type(model).__mro__)


class WeightEntry:
    """One of our variables and the canonical tensor(s) it is made of.

    Args:
        variable: the keras variable.
        names: canonical tensor names that make up the variable.
        to_keras: function(list of arrays) -> array shaped like `variable`.
        to_canonical: function(array) -> list of arrays, one per name.
    """

    def __init__(self, variable, names, to_keras=None, to_canonical=None):
        self.variable = variable
        self.names = list(names)
        self.to_keras = to_keras or (lambda arrays: arrays[0])
        self.to_canonical = to_canonical or (lambda array: [array])


def dense_entries(layer, prefix):
    """A Dense layer against `prefix.weight` (out, in) and `prefix.bias`."""
    return [
        WeightEntry(layer.kernel, [f"{prefix}.weight"], lambda a: a[0].T, lambda k: [k.T]),
        WeightEntry(layer.bias, [f"{prefix}.bias"]),
    ]


def layer_norm_entries(layer, prefix):
    return [WeightEntry(layer.gamma, [f"{prefix}.weight"]), WeightEntry(layer.beta, [f"{prefix}.bias"])]


def _attention(attention, prefix):
    num_heads, head_dim = attention.num_heads, attention.head_dim
    hidden = num_heads * head_dim
    qkv_names = [f"{prefix}.self.{part}" for part in ("query", "key", "value")]

    def qkv_kernel_to_keras(arrays):
        # Each (out, in) -> (in, heads, head_dim); stacked on a new axis 1.
        return np.stack([w.T.reshape(hidden, num_heads, head_dim) for w in arrays], axis=1)

    def qkv_kernel_to_canonical(kernel):
        return [kernel[:, i].reshape(hidden, hidden).T for i in range(3)]

    def qkv_bias_to_keras(arrays):
        return np.stack([b.reshape(num_heads, head_dim) for b in arrays], axis=0)

    def qkv_bias_to_canonical(bias):
        return [bias[i].reshape(hidden) for i in range(3)]

    output = attention.output_dense
    return [
        WeightEntry(
            attention.qkv_dense.kernel, [f"{n}.weight" for n in qkv_names], qkv_kernel_to_keras, qkv_kernel_to_canonical
        ),
        WeightEntry(attention.qkv_dense.bias, [f"{n}.bias" for n in qkv_names], qkv_bias_to_keras, qkv_bias_to_canonical),
        WeightEntry(
            output.kernel,
            [f"{prefix}.output.dense.weight"],
            lambda a: a[0].T.reshape(num_heads, head_dim, hidden),
            lambda k: [k.reshape(hidden, hidden).T],
        ),
        WeightEntry(output.bias, [f"{prefix}.output.dense.bias"]),
    ]


def backbone_entries(backbone):
    """WeightEntries for every weight of a `BertBackbone`."""
    if backbone.normalize_first:
        raise ValueError("Pre-LN backbones (normalize_first=True) have no counterpart in BERT checkpoints.")
    embeddings = backbone.embeddings
    entries = [
        WeightEntry(embeddings.token_embedding.embeddings, ["embeddings.word_embeddings.weight"]),
        WeightEntry(embeddings.position_embeddings, ["embeddings.position_embeddings.weight"]),
        WeightEntry(embeddings.segment_embedding.embeddings, ["embeddings.token_type_embeddings.weight"]),
        *layer_norm_entries(embeddings.layer_norm, "embeddings.LayerNorm"),
    ]
    for i, block in enumerate(backbone.transformer_layers):
        prefix = f"encoder.layer.{i}"
        entries += _attention(block.attention, f"{prefix}.attention")
        entries += layer_norm_entries(block.attention_layer_norm, f"{prefix}.attention.output.LayerNorm")
        entries += dense_entries(block.intermediate_dense, f"{prefix}.intermediate.dense")
        entries += dense_entries(block.output_dense, f"{prefix}.output.dense")
        entries += layer_norm_entries(block.output_layer_norm, f"{prefix}.output.LayerNorm")
    entries += dense_entries(backbone.pooler.dense, "pooler.dense")
    return entries


def masked_lm_head_entries(head):
    """WeightEntries of a `MaskedLMHead` (its decoder is tied to the token embedding)."""
    entries = dense_entries(head.transform_dense, "cls.predictions.transform.dense")
    entries += layer_norm_entries(head.transform_layer_norm, "cls.predictions.transform.LayerNorm")
    entries.append(WeightEntry(head.output_bias, ["cls.predictions.bias"]))
    return entries


def next_sentence_head_entries(head):
    return dense_entries(head.dense, "cls.seq_relationship")


# Our task models whose head Hugging Face's task classes hold (see `hf_tasks`), and its tensor prefix.
TASK_HEAD_PREFIXES = {
    "BertClassifier": "classifier",
    "BertTokenClassifier": "classifier",
    "BertMultipleChoice": "classifier",
    "BertQuestionAnswerer": "qa_outputs",
}
# Models whose outputs do not depend on the pooler (their Hugging Face classes have none).
_WITHOUT_POOLER = ("BertMaskedLM", "BertTokenClassifier", "BertQuestionAnswerer")


def task_head_entries(model):
    """WeightEntries of a task model's head (`classifier.*` or `qa_outputs.*`); [] for other models.

    Exact class names: a subclass may change the head.
    """
    prefix = TASK_HEAD_PREFIXES.get(type(model).__name__)
    if prefix is None:
        return []
    # The span head's dense layer gives (start, end) as HF's qa_outputs rows 0 and 1.
    layer = model.span_head.dense if prefix == "qa_outputs" else model.output_dense
    return dense_entries(layer, prefix)


def model_entries(model):
    """WeightEntries for a backbone, or a task model's backbone and heads (pretraining or task)."""
    if is_backbone(model):
        return backbone_entries(model)
    entries = backbone_entries(model.backbone)
    entries += task_head_entries(model)
    if getattr(model, "masked_lm_head", None) is not None:
        entries += masked_lm_head_entries(model.masked_lm_head)
    if getattr(model, "next_sentence_head", None) is not None:
        entries += next_sentence_head_entries(model.next_sentence_head)
    return entries


# Checkpoints of `BertForMaskedLM` have no pooler (transformers builds it
# without one). Such a pooler keeps its initial weights, with a warning where
# the model's outputs depend on it.
OPTIONAL_NAMES = ("pooler.dense.weight", "pooler.dense.bias")

# Parts of BERT checkpoints that a model may legitimately not use: the
# pretraining heads (a backbone loaded from `BertForPreTraining`), the heads
# of Hugging Face's fine-tuned task models, and buffers that are not weights.
# Any other unused tensor means the checkpoint does not match its config.
HEAD_NAMES = (
    "cls.predictions.transform.dense.weight",
    "cls.predictions.transform.dense.bias",
    "cls.predictions.transform.LayerNorm.weight",
    "cls.predictions.transform.LayerNorm.bias",
    "cls.predictions.bias",
    "cls.predictions.decoder.weight",
    "cls.predictions.decoder.bias",
    "cls.seq_relationship.weight",
    "cls.seq_relationship.bias",
    "classifier.weight",
    "classifier.bias",
    "qa_outputs.weight",
    "qa_outputs.bias",
)
BUFFER_NAMES = ("embeddings.position_ids", "embeddings.token_type_ids")

# The MLM decoder is tied: checkpoints that store it must hold a copy of
# the tensor it is tied to, or our tied head cannot represent them.
TIED_NAMES = {
    "cls.predictions.decoder.weight": "embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}


def _shown(names, limit=8):
    return ", ".join(names[:limit]) + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def assign_entries(entries, tensors, source="checkpoint", describe=None):
    """Loads canonical-named arrays into the variables of `entries`, all or nothing.

    Every needed tensor is looked up, converted and shape-checked before any
    variable is written.

    Args:
        entries: list of `WeightEntry`.
        tensors: dict of canonical name -> numpy array.
        source: what the tensors came from, for messages.
        describe: optional function(canonical name) -> how the source names
            that tensor (e.g. its TF1 variable name), for messages.

    Returns:
        The list of canonical names that were used.
    """
    describe = describe or (lambda name: name)
    missing = [name for entry in entries for name in entry.names if name not in tensors]
    if missing:
        raise ValueError(
            f"{source} lacks tensors the model needs: {_shown([describe(n) for n in missing])}. Nothing was loaded."
        )
    values = []
    for entry in entries:
        arrays = [np.asarray(tensors[name]) for name in entry.names]
        described = [describe(name) for name in entry.names]
        problem = f"tensor(s) {described} with shapes {[a.shape for a in arrays]} (in Hugging Face layout)"
        try:
            value = entry.to_keras(arrays)
        except ValueError as error:
            raise ValueError(
                f"{source}: {problem} do not fit `{entry.variable.path}` of shape "
                f"{tuple(entry.variable.shape)}: {error}. Nothing was loaded."
            ) from None
        if tuple(value.shape) != tuple(entry.variable.shape):
            raise ValueError(
                f"{source}: {problem} do not fit `{entry.variable.path}` of shape "
                f"{tuple(entry.variable.shape)}. Nothing was loaded."
            )
        values.append(value)
    for entry, value in zip(entries, values):
        entry.variable.assign(value.astype(entry.variable.dtype))
    return [name for entry in entries for name in entry.names]


def check_unused(tensors, used, source="checkpoint", describe=None):
    """Raises ValueError for tensors that are neither used nor a known optional part.

    A tensor the model does not use is fine when it is a pretraining or task
    head, a buffer, or the pooler of a model that has none; anything else
    (e.g. `encoder.layer.12.*` under a 12-layer config) means the weights do
    not match the config. Where the model has an MLM head, a stored decoder
    (`cls.predictions.decoder.*`) must equal the tensor it is tied to.

    Args:
        tensors: dict of canonical name -> numpy array.
        used: canonical names the model used.
        source: what the tensors came from, for messages.
        describe: optional function(canonical name) -> the source's own name.
    """
    describe = describe or (lambda name: name)
    known = set(used) | set(HEAD_NAMES) | set(BUFFER_NAMES) | set(OPTIONAL_NAMES)
    extra = sorted(name for name in tensors if name not in known)
    if extra:
        raise ValueError(
            f"{source} has tensors the model does not use: {_shown([describe(n) for n in extra])}. "
            "The weights do not match the config (or are not BERT's). Nothing was loaded."
        )
    if "cls.predictions.bias" not in used:
        return  # no MLM head: a stored decoder is just unused
    for name, tied_to in TIED_NAMES.items():
        if name in tensors and tied_to in tensors and not np.array_equal(tensors[name], tensors[tied_to]):
            raise ValueError(
                f"{source}: `{describe(name)}` differs from `{describe(tied_to)}`; keras_bert's MLM decoder is "
                "tied to the token embedding and cannot hold an untied decoder. Nothing was loaded."
            )


def assign_canonical_weights(model, tensors, source="checkpoint", strict=False, describe=None):
    """Loads canonical-named arrays into `model`, all or nothing.

    Every needed tensor is looked up and shape-checked before any variable
    is written, so a checkpoint with missing or mis-shaped tensors leaves the
    model untouched. The one exception is a checkpoint with no pooler at all
    (`BertForMaskedLM`): the pooler then keeps its initial weights, and a
    warning says so unless the model does not use the pooler.

    Args:
        model: a backbone, `BertPretrainer` or `BertMaskedLM`.
        tensors: dict of canonical name -> numpy array.
        source: what the tensors came from, for messages.
        strict: bool. Also refuse tensors that the model does not use and
            that are no known optional part of a BERT checkpoint (see
            `check_unused`), and stored MLM decoders that are not tied.
        describe: optional function(canonical name) -> how the source names
            that tensor, for messages.

    Returns:
        The list of canonical names that were used.
    """
    entries = model_entries(model)
    if not any(name in tensors for name in OPTIONAL_NAMES):
        entries = [entry for entry in entries if not set(entry.names) & set(OPTIONAL_NAMES)]
        # A model with the MLM head alone (`BertMaskedLM`), a tagger or a span head does not use the pooler.
        masked_lm_only = getattr(model, "masked_lm_head", None) is not None and not getattr(
            model, "next_sentence_head", None
        )
        if not masked_lm_only and type(model).__name__ not in _WITHOUT_POOLER:
            warnings.warn(f"{source} has no pooler weights: `pooled_output` comes from a randomly initialised pooler.")
    if strict:
        check_unused(tensors, [name for entry in entries for name in entry.names], source, describe)
    return assign_entries(entries, tensors, source, describe)


def entries_to_canonical(entries):
    """Canonical name -> numpy array for the variables of `entries`."""
    tensors = {}
    for entry in entries:
        for name, array in zip(entry.names, entry.to_canonical(keras.ops.convert_to_numpy(entry.variable))):
            tensors[name] = np.ascontiguousarray(array)
    return tensors


def canonical_weights(model):
    """The inverse: canonical name -> numpy array for every weight of `model`."""
    return entries_to_canonical(model_entries(model))
