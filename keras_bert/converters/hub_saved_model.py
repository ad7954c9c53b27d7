"""Reading back the encoder SavedModels that `export_hub_encoder` writes (TF Hub's BERT conventions).

    saved_models/minilm_hub/encoder/
        saved_model.pb, variables/variables.{index,data-*}, assets/keras_bert_export.json

The metadata asset gives the backbone config; the variables are read from the
SavedModel's checkpoint files with `tf.train.load_checkpoint`, by the Keras
path the encoder object files them under (its `keras_bert_variables` dict:
`embeddings/token_embedding/embeddings`, `transformer_layer_0/self_attention/qkv/kernel`, ...).
No graph is loaded, so this reads the weights the same way on every backend;
TensorFlow is needed only for the checkpoint reader (imported inside
`read_hub_encoder_weights`, as for TF1 checkpoints).
"""

import json
import os

import numpy as np

from keras_bert.json_files import read_json

METADATA_FILE = "keras_bert_export.json"
ENCODER_FORMAT = "keras_bert.hub_encoder"
SERVING_FORMAT = "keras_bert.saved_model"
VARIABLES_ATTRIBUTE = "keras_bert_variables"


def hub_encoder_dir(path):
    """The encoder SavedModel folder of `path` (the folder itself, or its `encoder/`), or None."""
    path = os.fspath(path)
    if not os.path.isdir(path):
        return None
    for folder in (path, os.path.join(path, "encoder")):
        if _metadata_format(folder) == ENCODER_FORMAT:
            return folder
    return None


def is_serving_saved_model(path):
    """Whether `path` is a keras_bert serving SavedModel (`export_saved_model`), which holds no weights by name."""
    return _metadata_format(os.fspath(path)) == SERVING_FORMAT


def _metadata_format(folder):
    metadata = os.path.join(folder, "assets", METADATA_FILE)
    if not (os.path.isfile(os.path.join(folder, "saved_model.pb")) and os.path.isfile(metadata)):
        return None
    try:
        with open(metadata, encoding="utf-8") as f:
            return json.load(f).get("format")
    except (OSError, ValueError, AttributeError):
        return None


def read_hub_encoder_config(path):
    """`BertBackbone` constructor arguments from the encoder's metadata."""
    folder = hub_encoder_dir(path)
    if folder is None:
        raise ValueError(f"{path} is not an encoder SavedModel written by keras_bert's export_hub_encoder.")
    metadata = read_json(os.path.join(folder, "assets", METADATA_FILE), "encoder metadata")
    if metadata.get("backbone_class") != "BertBackbone":
        raise ValueError(f"{folder} holds a {metadata.get('backbone_class')}, not a BertBackbone.")
    return dict(metadata["backbone_config"])


def read_hub_encoder_lowercase(path):
    """Whether the exported tokenizer lowercases (its recorded `lowercase`), or None when not recorded."""
    metadata = read_json(os.path.join(hub_encoder_dir(path), "assets", METADATA_FILE), "encoder metadata")
    value = metadata.get("tokenizer", {}).get("lowercase")
    return value if isinstance(value, bool) else None


def read_hub_encoder_weights(path):
    """Keras variable path → numpy array, for every weight of the exported backbone.

    Raises:
        ValueError: the checkpoint files are missing, truncated, or do not
            file the weights under `keras_bert_variables`.
    """
    folder = hub_encoder_dir(path)
    if folder is None:
        raise ValueError(f"{path} is not an encoder SavedModel written by keras_bert's export_hub_encoder.")
    prefix = os.path.join(folder, "variables", "variables")
    try:
        import tensorflow as tf  # defers TensorFlow: only the checkpoint reader needs it

        # defers TensorFlow, as above: the proto that maps saved objects to checkpoint keys
        from tensorflow.core.protobuf import trackable_object_graph_pb2
    except ImportError:
        raise ImportError(f"Reading the SavedModel {folder} needs TensorFlow (pip install tensorflow).") from None
    try:
        reader = tf.train.load_checkpoint(prefix)
        graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(
            reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH")
        )
        keys = _variable_keys(graph)
        return {name: np.asarray(reader.get_tensor(key)) for name, key in keys.items()}
    # The reader turns C++ status codes into many Python types (OpError subclasses, ValueError, ...).
    except Exception as error:
        raise ValueError(
            f"Cannot read the variables of the SavedModel {folder} (missing or truncated variables/?): "
            f"{type(error).__name__}: {error}"
        ) from None


def _variable_keys(graph):
    """Keras path → checkpoint key, following the root's `keras_bert_variables` dict in the object graph."""
    root = graph.nodes[0]
    holder = next((child.node_id for child in root.children if child.local_name == VARIABLES_ATTRIBUTE), None)
    if holder is None:
        raise ValueError(f"the SavedModel's root has no `{VARIABLES_ATTRIBUTE}`")
    keys = {}
    for child in graph.nodes[holder].children:
        attributes = {a.name: a.checkpoint_key for a in graph.nodes[child.node_id].attributes}
        if "VARIABLE_VALUE" not in attributes:
            raise ValueError(f"`{VARIABLES_ATTRIBUTE}/{child.local_name}` is not a variable")
        keys[child.local_name] = attributes["VARIABLE_VALUE"]
    if not keys:
        raise ValueError(f"`{VARIABLES_ATTRIBUTE}` is empty")
    return keys


def assign_by_path(variables, arrays, source):
    """Loads `arrays` (Keras path → array) into `variables`, all or nothing.

    Args:
        variables: the Keras variables to fill (a backbone's weights).
        arrays: dict of Keras variable path → numpy array.
        source: what the arrays came from, for messages.

    Raises:
        ValueError: a variable without an array, an array without a variable
            (the config does not match the weights), or a shape mismatch,
            before any variable is written.
    """
    wanted = {v.path: v for v in variables}
    missing = sorted(set(wanted) - set(arrays))
    extra = sorted(set(arrays) - set(wanted))
    if missing or extra:
        raise ValueError(
            f"{source} does not match the model: missing {missing[:8]}, unused {extra[:8]}"
            f"{' (and more)' if len(missing) > 8 or len(extra) > 8 else ''}. Nothing was loaded."
        )
    for path, variable in wanted.items():
        if tuple(arrays[path].shape) != tuple(variable.shape):
            raise ValueError(
                f"{source}: `{path}` has shape {tuple(arrays[path].shape)}, the model's {tuple(variable.shape)}. "
                "Nothing was loaded."
            )
    for path, variable in wanted.items():
        variable.assign(arrays[path].astype(variable.dtype))
