"""Loading canonical tensors into keras_bert models, and reading them back, for every family.

Canonical names are Hugging Face's without the family's prefix
(`embeddings.word_embeddings.weight`, `encoder.layer.0.attention.self.query.weight`,
`cls.predictions.bias`, ...) with Hugging Face's layouts (dense weights as
`(out, in)`). Every converter reads its format into a dict of numpy arrays
under these names, or writes one from it. Which of our variables each name
fills is the family's business (its weight tables in `hf_bert`, `hf_albert`,
... through the `hf_families` table); this module loads all or nothing
through the entries of those tables.

The mapping needs numpy and keras only. Models are recognised by their
attributes and class names, not by `isinstance`: `keras_bert.models` builds on
this package, so this package does not import it.
"""

import warnings

import keras
import numpy as np

# The BERT names, kept importable from here.
from keras_bert.converters.hf_bert import HEAD_NAMES, OPTIONAL_NAMES, TIED_NAMES  # noqa: F401
from keras_bert.converters.hf_families import FAMILIES
from keras_bert.converters.weight_entries import WeightEntry, dense_entries, layer_norm_entries  # noqa: F401

# Buffers that transformers may store beside the weights, in every family.
BUFFER_NAMES = ("embeddings.position_ids", "embeddings.token_type_ids")


def is_backbone(model):
    """Whether `model` is a keras_bert `BertBackbone` (or a subclass of it)."""
    return any(cls.__name__ == "BertBackbone" for cls in type(model).__mro__)


def is_encoder_backbone(model):
    """Whether `model` is any keras_bert backbone (`BertBackbone`, `AlbertBackbone`, ...: an `EncoderBackbone`)."""
    return any(cls.__name__ == "EncoderBackbone" for cls in type(model).__mro__)


def model_family(model):
    """The `hf_family.Family` of a backbone, or of a task model's backbone."""
    backbone = model if is_encoder_backbone(model) else getattr(model, "backbone", model)
    return FAMILIES[getattr(backbone, "model_type", "bert")]


# Models whose outputs do not depend on the pooler (their Hugging Face classes have none).
_WITHOUT_POOLER = ("BertMaskedLM", "BertTokenClassifier", "BertQuestionAnswerer")


def backbone_entries(backbone):
    """WeightEntries for every weight of a backbone of any family, under its family's names."""
    return model_family(backbone).backbone_entries(backbone)


def model_entries(model):
    """WeightEntries for a backbone, or a task model's backbone and the heads its family's checkpoints hold.

    For BERT these include the heads of Hugging Face's task classes
    (`classifier.*`, `qa_outputs.*`; see `hf_bert.TASK_HEADS`); the other
    families' task heads are not mapped.
    """
    return model_family(model).model_entries(model)


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


def check_unused(tensors, used, source="checkpoint", describe=None, family=None):
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
        family: the checkpoint's `hf_families.Family` (default BERT's).
    """
    describe = describe or (lambda name: name)
    family = family or FAMILIES["bert"]
    known = set(used) | set(BUFFER_NAMES) | set(family.optional_names)
    extra = sorted(name for name in tensors if name not in known and not family.is_head(name))
    if extra:
        raise ValueError(
            f"{source} has tensors the model does not use: {_shown([describe(n) for n in extra])}. "
            f"The weights do not match the config (or are not {family.title}'s). Nothing was loaded."
        )
    if family.mlm_name not in used:
        return  # no MLM head: a stored decoder is just unused
    for name, tied_to in family.tied_names.items():
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
    family = model_family(model)
    entries = model_entries(model)
    optional = set(family.optional_names)
    if optional and not any(name in tensors for name in optional):
        entries = [entry for entry in entries if not set(entry.names) & optional]
        # A model with the MLM head alone (`BertMaskedLM`), a tagger or a span head does not use the pooler.
        masked_lm_only = getattr(model, "masked_lm_head", None) is not None and not getattr(
            model, "next_sentence_head", None
        )
        if not masked_lm_only and type(model).__name__ not in _WITHOUT_POOLER:
            warnings.warn(f"{source} has no pooler weights: `pooled_output` comes from a randomly initialised pooler.")
    if strict:
        check_unused(tensors, [name for entry in entries for name in entry.names], source, describe, family)
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
