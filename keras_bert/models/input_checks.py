"""Checks on the inputs of BERT models, so bad input fails loudly and early.

Shapes, names and dtypes are checked on every call, symbolic ones included.
Values (token ids inside the vocabulary, segment ids inside `num_segments`)
can only be checked on concrete arrays: numpy inputs to `fit`/`predict`/
`evaluate` and eager calls. Inside a compiled step the embedding gather is
the last line of defence (TensorFlow raises, JAX fills NaN, torch raises).
"""

from collections.abc import Mapping

import keras
import numpy as np

BACKBONE_INPUTS = ("token_ids", "segment_ids", "padding_mask")
# The extra inputs of a backbone built with `packed_inputs=True`.
PACKED_INPUTS = ("sequence_ids", "position_ids")
# Inputs of shape (batch_size, sequence_length), which must agree.
_TOKEN_LEVEL_INPUTS = BACKBONE_INPUTS + PACKED_INPUTS


def _concrete(value):
    """`value` as a numpy array if it holds concrete numbers, else None."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (list, tuple)):
        return np.asarray(value)
    if isinstance(value, keras.KerasTensor):
        return None
    backend = keras.backend.backend()
    if backend == "torch":
        import torch  # defers torch: imported only when it is the backend

        # Keras infers a model's output shapes on torch by running it on "meta" tensors, which hold no values;
        # torch.export and torch.compile trace with tensor subclasses (fake / functional tensors), which hold none
        # either, so only a plain tensor counts as concrete.
        if type(value) is torch.Tensor and not value.is_meta and not torch.compiler.is_compiling():
            return value.detach().cpu().numpy()
    elif backend == "jax":
        import jax  # defers JAX: imported only when it is the backend

        if isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer):
            return np.asarray(value)
    elif backend == "tensorflow" and type(value).__name__ == "EagerTensor":
        return value.numpy()
    return None


def _folded_choices(value):
    """A rank-2 stand-in `(batch_size * num_choices, length)` of a rank-3 input, for the checks below."""
    concrete = _concrete(value)
    if concrete is not None:
        return concrete.reshape((-1,) + concrete.shape[2:]) if concrete.ndim == 3 else concrete
    if not hasattr(value, "shape"):
        value = np.asarray(value)
    shape = tuple(value.shape)
    if len(shape) != 3:
        return value
    return keras.KerasTensor((None, shape[2]), dtype=keras.backend.standardize_dtype(value.dtype))


def _fold_choices(inputs, names, where):
    """Checks that the inputs in `names` have rank 3, and folds their choices axis into the batch."""
    for name, value in inputs.items():
        shape = tuple(value.shape) if hasattr(value, "shape") else np.asarray(value).shape
        if name in names and len(shape) != 3:
            raise ValueError(
                f"{where}: `{name}` must have rank 3 (batch_size, num_choices, length). Received shape {shape}"
            )
    return {name: _folded_choices(value) for name, value in inputs.items()}


def check_inputs(inputs, config, names=BACKBONE_INPUTS, where="BertBackbone", choices=False):
    """Raises ValueError when `inputs` do not fit a model with `config`.

    Args:
        inputs: the dict a model is called or fit with.
        config: dict with `vocabulary_size`, `max_sequence_length`, `num_segments`.
        names: the input names the model takes.
        where: the model's name, for messages.
        choices: bool. The inputs have a choices axis, `(batch_size,
            num_choices, length)` (multiple choice), instead of `(batch_size, length)`.
    """
    if not isinstance(inputs, Mapping):
        raise ValueError(
            f"{where} takes a dict of tensors with keys {list(names)}. Received: {type(inputs).__name__}"
        )
    if choices:
        inputs = _fold_choices(inputs, names, where)
    missing = [n for n in names if n not in inputs]
    unknown = [k for k in inputs if k not in names]
    if missing or unknown:
        packed_names = PACKED_INPUTS + ("nsp_positions",)
        hint = ""
        if any(n in packed_names for n in missing):
            hint = (
                ". The model was built for packed sequences (`packed_inputs=True`): feed what "
                "`pretraining_dataset(pack_sequences=True)` yields, or use a backbone built with packed_inputs=False."
            )
        elif any(k in packed_names for k in unknown):
            hint = ". The model takes unpacked inputs: build its backbone with `packed_inputs=True` for packed sequences."
        raise ValueError(
            f"{where} takes inputs named {list(names)}. Missing: {missing}; unexpected: {unknown}. "
            f"Received keys: {list(inputs)}{hint}"
        )
    shape = None
    for name in names:
        value = inputs[name]
        if not hasattr(value, "shape"):
            value = np.asarray(value)
        value_shape = tuple(value.shape)
        if len(value_shape) != 2:
            raise ValueError(
                f"{where}: `{name}` must have rank 2 (batch_size, length). Received shape {value_shape}"
            )
        dtype = keras.backend.standardize_dtype(value.dtype)
        # Traced inputs are cast to the model's int32 Inputs by Keras (and
        # MirroredStrategy builds the model from a float replica average of the
        # first batch), so the dtype is checked on concrete values, which a
        # cast would silently truncate.
        symbolic = _concrete(value) is None
        integer = dtype.startswith("int") or dtype.startswith("uint") or (name == "padding_mask" and dtype == "bool")
        if not symbolic and not integer:
            raise ValueError(f"{where}: `{name}` must be an integer tensor. Received dtype {dtype}")
        if name in _TOKEN_LEVEL_INPUTS:
            if shape is not None and None not in value_shape + shape and value_shape != shape:
                token_level = [n for n in names if n in _TOKEN_LEVEL_INPUTS]
                raise ValueError(
                    f"{where}: {token_level} must have the same shape. "
                    f"Received `{name}` with shape {value_shape}, expected {shape}"
                )
            shape = value_shape
    length = shape[1] if shape else None
    if length is not None and length > config["max_sequence_length"]:
        raise ValueError(
            f"{where}: sequence length {length} is longer than max_sequence_length="
            f"{config['max_sequence_length']}. Truncate or window the input (the tokenizer's packer does this)."
        )
    _check_range(inputs, "token_ids", config["vocabulary_size"], "vocabulary_size", where)
    if "segment_ids" in names:  # DistilBERT takes none
        _check_range(inputs, "segment_ids", config["num_segments"], "num_segments", where)
    if "mask_positions" in names and length is not None:
        _check_range(inputs, "mask_positions", length, "sequence length", where)
    if "position_ids" in names:
        _check_range(inputs, "position_ids", config["max_sequence_length"], "max_sequence_length", where)
    if "sequence_ids" in names and length is not None:
        # At most one packed example per token: ids 1..length, 0 for padding.
        _check_range(inputs, "sequence_ids", length + 1, "sequence length + 1", where)
    if "nsp_positions" in names and length is not None:
        _check_range(inputs, "nsp_positions", length, "sequence length", where)


def _check_range(inputs, name, limit, limit_name, where):
    values = _concrete(inputs[name])
    if values is None or values.size == 0:
        return
    low, high = int(values.min()), int(values.max())
    if low < 0 or high >= limit:
        bad = low if low < 0 else high
        raise ValueError(f"{where}: `{name}` must be in [0, {limit}) ({limit_name}={limit}). Received a value of {bad}")


def check_fit_data(x, config, names, where, choices=False):
    """Checks `x` of `fit`/`predict`/`evaluate` when it is a dict of arrays (see `check_inputs`)."""
    if isinstance(x, Mapping):
        check_inputs(x, config, names=names, where=where, choices=choices)
        first = x.get(names[0])
        # Keras's predict loop crashes on zero examples (and on JAX leaves the
        # model unable to predict again): say so instead.
        if _concrete(first) is not None and np.shape(first)[0] == 0:
            raise ValueError(f"{where}: the inputs hold 0 examples (`{names[0]}` has shape {tuple(np.shape(first))}).")


def check_labels(y, num_classes, where, ignored_label=None):
    """Raises ValueError for concrete labels a `num_classes`-way head cannot learn from.

    Class ids must be integers in `[0, num_classes)` (or `ignored_label`); a
    float label like 0.5 would be truncated and an out-of-range id silently
    trains on garbage on JAX (its gather does not raise). With
    `num_classes=1` (regression) targets must be finite numbers. Labels
    inside a `tf.data.Dataset` cannot be seen here; the readers check those.

    Args:
        y: the labels given to `fit`/`evaluate` (checked when concrete).
        num_classes: the head's output size.
        where: the model's name, for messages.
        ignored_label: an id that marks positions to ignore (e.g. -100), or None.
    """
    values = None if isinstance(y, Mapping) else _concrete(y)
    if values is None or values.size == 0:
        return
    if values.dtype.kind not in "biuf":
        raise ValueError(f"{where}: labels must be numbers. Received dtype {values.dtype}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{where}: labels must be finite. Received {values[~np.isfinite(values)][0]}")
    if num_classes == 1:
        return
    if values.dtype.kind == "f" and not np.all(values == np.round(values)):
        bad = values[values != np.round(values)][0]
        raise ValueError(f"{where}: class labels must be integer ids. Received {bad} (dtype {values.dtype})")
    valid = (values >= 0) & (values < num_classes)
    if ignored_label is not None:
        valid |= values == ignored_label
    if not np.all(valid):
        extra = f" or {ignored_label}" if ignored_label is not None else ""
        raise ValueError(
            f"{where}: class labels must be in [0, {num_classes}){extra} (num_classes={num_classes}). "
            f"Received {values[~valid][0]}"
        )
