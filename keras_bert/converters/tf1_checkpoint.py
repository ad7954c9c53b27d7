"""Reading Google's original TF1 BERT checkpoints.

A release folder such as `uncased_L-12_H-768_A-12/` holds `bert_config.json`,
`vocab.txt` and `bert_model.ckpt.{index,data-00000-of-00001}`, whose
variables keep the names of google-research/bert's `modeling.py`:

    bert/embeddings/word_embeddings                          (vocab, hidden)
    bert/encoder/layer_3/attention/self/query/kernel         (in, out)
    bert/encoder/layer_3/output/LayerNorm/gamma              (hidden,)
    cls/predictions/output_bias                              (vocab,)
    cls/seq_relationship/output_weights                      (2, hidden)

This module translates those names and layouts to the canonical (Hugging
Face) ones of `weight_map`, so loading goes through the same all-or-nothing
`assign_canonical_weights` as every other format. Reading the checkpoint
files needs TensorFlow, imported inside `read_tf1_weights` only; the name
mapping is plain Python and numpy.
"""

import os
import re

import numpy as np

from keras_bert.converters.hf_checkpoint import read_bert_json

CONFIG_FILE = "bert_config.json"
DEFAULT_PREFIX = "bert_model.ckpt"

# Variables a training run saves beside the weights: Google's
# AdamWeightDecayOptimizer slots (adam_m/adam_v), tf.train.AdamOptimizer's
# (Adam/Adam_1, beta*_power), the step counter and mixed-precision loss scaling.
_OPTIMIZER_SUFFIXES = ("/adam_m", "/adam_v", "/Adam", "/Adam_1")
_OPTIMIZER_NAMES = ("global_step", "beta1_power", "beta2_power", "good_steps", "loss_scale", "current_loss_scale")

# Names that the general rule in `tf1_to_canonical_name` does not cover.
_SPECIAL_NAMES = {
    "cls/predictions/output_bias": "cls.predictions.bias",
    # Already (out, in), as Hugging Face stores it: no transpose.
    "cls/seq_relationship/output_weights": "cls.seq_relationship.weight",
    "cls/seq_relationship/output_bias": "cls.seq_relationship.bias",
    # The heads of Google's fine-tuning scripts, (out, in) as well:
    # run_classifier.py's and run_squad.py's, which Hugging Face calls
    # `classifier` and `qa_outputs`. Loading a backbone leaves them unused.
    "output_weights": "classifier.weight",
    "output_bias": "classifier.bias",
    "cls/squad/output_weights": "qa_outputs.weight",
    "cls/squad/output_bias": "qa_outputs.bias",
}
_SPECIAL_CANONICAL = {canonical: name for name, canonical in _SPECIAL_NAMES.items()}


def is_optimizer_state(name):
    """Whether a TF1 variable is optimizer or training state rather than a weight."""
    return name in _OPTIMIZER_NAMES or name.endswith(_OPTIMIZER_SUFFIXES)


def tf1_to_canonical_name(name):
    """The canonical name of a TF1 BERT variable, and whether its layout needs a transpose.

    `bert/encoder/layer_3/attention/self/query/kernel` becomes
    `encoder.layer.3.attention.self.query.weight` (transposed: TF1 kernels are
    `(in, out)`, canonical ones `(out, in)`). Names outside `bert/` and `cls/`
    come back unchanged; they then match no canonical name and are reported
    as unused.

    Args:
        name: str, a TF1 variable name.

    Returns:
        (canonical name, transpose) with `transpose` a bool.
    """
    if name in _SPECIAL_NAMES:
        return _SPECIAL_NAMES[name], False
    parts = name.split("/")
    if parts[0] not in ("bert", "cls") or len(parts) < 2:
        return name, False
    if parts[0] == "bert":
        parts = parts[1:]
    canonical = []
    for part in parts:
        layer = re.fullmatch(r"layer_(\d+)", part)
        canonical += ["layer", layer.group(1)] if layer else [part]
    last = canonical[-1]
    transpose = last == "kernel"
    if last in ("kernel", "gamma"):
        canonical[-1] = "weight"
    elif last == "beta":
        canonical[-1] = "bias"
    elif last.endswith("_embeddings"):
        canonical.append("weight")
    return ".".join(canonical), transpose


def canonical_to_tf1_name(canonical):
    """The inverse of `tf1_to_canonical_name`: the TF1 variable that holds a canonical tensor."""
    if canonical in _SPECIAL_CANONICAL:
        return _SPECIAL_CANONICAL[canonical]
    parts = canonical.split(".")
    tf1 = []
    i = 0
    while i < len(parts):
        if parts[i] == "layer" and i + 1 < len(parts) and parts[i + 1].isdigit():
            tf1.append(f"layer_{parts[i + 1]}")
            i += 2
        else:
            tf1.append(parts[i])
            i += 1
    owner = tf1[-2] if len(tf1) > 1 else ""
    if tf1[-1] == "weight":
        if owner == "LayerNorm":
            tf1[-1] = "gamma"
        elif owner.endswith("_embeddings"):
            tf1.pop()
        else:
            tf1[-1] = "kernel"
    elif tf1[-1] == "bias" and owner == "LayerNorm":
        tf1[-1] = "beta"
    return "/".join(tf1 if tf1[0] == "cls" else ["bert"] + tf1)


def _latest_in_state_file(folder):
    """The checkpoint named by a `checkpoint` state file (Google's run_pretraining.py output), or None."""
    state = os.path.join(folder, "checkpoint")
    if not os.path.isfile(state):
        return None
    with open(state, encoding="utf-8") as f:
        match = re.search(r'^model_checkpoint_path:\s*"([^"]+)"', f.read(), re.MULTILINE)
    if not match:
        return None
    prefix = match.group(1)
    return prefix if os.path.isabs(prefix) else os.path.join(folder, prefix)


def tf1_checkpoint_prefix(path):
    """The checkpoint prefix of a TF1 BERT checkpoint, or None when `path` is not one.

    Args:
        path: a folder with `bert_config.json` and `bert_model.ckpt.index`
            (or a `checkpoint` state file naming another prefix); or a
            checkpoint prefix such as `folder/model.ckpt-100000` (or its
            `.index` file) whose folder holds `bert_config.json`.

    Returns:
        The prefix (str), or None.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        if not os.path.isfile(os.path.join(path, CONFIG_FILE)):
            return None
        prefix = os.path.join(path, DEFAULT_PREFIX)
        if not os.path.isfile(prefix + ".index"):
            prefix = _latest_in_state_file(path)
        return prefix if prefix and os.path.isfile(prefix + ".index") else None
    if path.endswith(".index"):
        path = path[: -len(".index")]
    if os.path.isfile(path + ".index") and os.path.isfile(os.path.join(os.path.dirname(path), CONFIG_FILE)):
        return path
    return None


def is_tf1_checkpoint(path):
    return tf1_checkpoint_prefix(path) is not None


def read_tf1_config(path):
    """BertBackbone constructor arguments from the checkpoint's `bert_config.json`.

    Args:
        path: a TF1 checkpoint folder or prefix.
    """
    prefix = tf1_checkpoint_prefix(path)
    if prefix is None:
        raise ValueError(f"{path} is not a TF1 BERT checkpoint (bert_config.json + bert_model.ckpt.index).")
    return read_bert_json(os.path.join(os.path.dirname(prefix), CONFIG_FILE))


def read_tf1_weights(path):
    """Every weight of a TF1 BERT checkpoint, under canonical names and layouts.

    Optimizer slots and training state are skipped. Needs TensorFlow.

    Args:
        path: a TF1 checkpoint folder or prefix.

    Returns:
        (tensors, names): `tensors` maps canonical name -> numpy array;
        `names` maps canonical name -> the TF1 variable it came from.
    """
    prefix = tf1_checkpoint_prefix(path)
    if prefix is None:
        raise ValueError(f"{path} is not a TF1 BERT checkpoint (bert_config.json + bert_model.ckpt.index).")
    try:
        import tensorflow as tf  # defers TensorFlow: only TF1 checkpoint files need it
    except ImportError:
        raise ImportError(f"Reading the TF1 checkpoint {prefix} needs TensorFlow (pip install tensorflow).") from None
    try:
        reader = tf.train.load_checkpoint(prefix)
        shapes = reader.get_variable_to_shape_map()
    # The reader translates C++ status codes into many Python types
    # (OpError subclasses, ValueError, IndexError for short reads, ...).
    except Exception as error:
        raise ValueError(
            f"Cannot read the TF1 checkpoint {prefix} (truncated or not a TensorFlow checkpoint?): "
            f"{type(error).__name__}: {error}"
        ) from None
    tensors, names = {}, {}
    for name in sorted(shapes):
        if is_optimizer_state(name):
            continue
        canonical, transpose = tf1_to_canonical_name(name)
        if canonical in names:
            raise ValueError(f"{prefix}: `{name}` and `{names[canonical]}` both map to `{canonical}`.")
        try:
            array = np.asarray(reader.get_tensor(name))
        except Exception as error:  # as above
            raise ValueError(
                f"Cannot read `{name}` from the TF1 checkpoint {prefix} (truncated data file?): "
                f"{type(error).__name__}: {error}"
            ) from None
        tensors[canonical] = array.T if transpose and array.ndim == 2 else array
        names[canonical] = name
    if not tensors:
        raise ValueError(f"The TF1 checkpoint {prefix} holds no weights (only {sorted(shapes)}).")
    return tensors, names
