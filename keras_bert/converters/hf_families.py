"""The BERT family, one dispatch table keyed by Hugging Face's `model_type`.

Each family's names live in its own module (`hf_bert`, `hf_albert`,
`hf_distilbert`, `hf_electra`, `hf_roberta`, `hf_modernbert`) as one `hf_family.Family`: how
to read its `config.json`, which backbone class it builds, and which of that
backbone's layers hold which tensors. Reading the files (safetensors, `.bin`,
shards) is shared (`hf_checkpoint`). A new family is one such module and one
entry here.
"""

from keras_bert.converters import hf_albert, hf_bert, hf_distilbert, hf_electra, hf_modernbert, hf_roberta
from keras_bert.converters.hf_family import Family  # noqa: F401 (importable from here, as before)

FAMILIES = {
    module.FAMILY.model_type: module.FAMILY
    for module in (hf_bert, hf_albert, hf_distilbert, hf_electra, hf_roberta, hf_modernbert)
}


def family(model_type, where="checkpoint"):
    """The `Family` of `model_type`; ValueError naming the supported ones otherwise."""
    if model_type not in FAMILIES:
        supported = ", ".join(f"{name!r} ({f.backbone_class})" for name, f in FAMILIES.items())
        raise ValueError(f"{where}: model_type {model_type!r} is not supported. Supported model types: {supported}.")
    return FAMILIES[model_type]
