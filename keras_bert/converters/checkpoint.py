"""Loading BERT models from checkpoint folders, whatever their format."""

import os

from keras_bert.converters.hf_checkpoint import is_hf_checkpoint, read_hf_config, read_hf_weights
from keras_bert.converters.weight_map import assign_canonical_weights

# Constructor arguments a caller may change without changing weight shapes.
_FREE_ARGUMENTS = {"dropout", "dtype", "output_hidden_states", "output_attentions", "name", "trainable"}


def _read(path):
    """(backbone config, canonical tensors, description) of a checkpoint folder."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No checkpoint at {path}")
    if is_hf_checkpoint(path):
        return read_hf_config(path), read_hf_weights(path), f"Hugging Face checkpoint {path}"
    raise ValueError(
        f"{path} is not a checkpoint keras_bert can read: expected a Hugging Face folder with config.json "
        "and model.safetensors or pytorch_model.bin."
    )


def _config(config, kwargs):
    unknown = set(kwargs) - _FREE_ARGUMENTS
    if unknown:
        raise ValueError(
            f"from_pretrained takes only arguments that keep the weights' shapes ({sorted(_FREE_ARGUMENTS)}). "
            f"Received: {sorted(unknown)}"
        )
    return {**config, **kwargs}


def load_backbone(path, **kwargs):
    """A `BertBackbone` with the weights of the checkpoint at `path`."""
    from keras_bert.models.bert_backbone import BertBackbone

    config, tensors, source = _read(path)
    backbone = BertBackbone(**_config(config, kwargs))
    assign_canonical_weights(backbone, tensors, source)
    return backbone


def load_task(cls, path, **kwargs):
    """A `BertPretrainer` or `BertMaskedLM` (`cls`) with backbone and head weights from `path`.

    Raises ValueError, naming the missing tensors, when the checkpoint lacks
    a head the model has (e.g. a `BertModel` checkpoint has no MLM head).
    """
    from keras_bert.models.bert_backbone import BertBackbone

    config, tensors, source = _read(path)
    model = cls(BertBackbone(**_config(config, kwargs)))
    assign_canonical_weights(model, tensors, source)
    return model
