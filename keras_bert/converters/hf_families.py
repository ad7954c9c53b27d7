"""The BERT family, one dispatch table keyed by Hugging Face's `model_type`.

Each family's names live in its own module (`hf_bert`, `hf_albert`,
`hf_distilbert`, `hf_electra`, `hf_roberta`); reading the files
(safetensors, `.bin`, shards) is shared (`hf_checkpoint`). A `Family` says
how to read a family's `config.json`, which backbone class it builds, and
how its tensors map to that backbone's weights.
"""

from dataclasses import dataclass
from types import ModuleType

from keras_bert.converters import hf_albert, hf_bert, hf_distilbert, hf_electra, hf_roberta


@dataclass(frozen=True)
class Family:
    """What keras_bert knows of one `model_type`.

    Attributes:
        model_type: Hugging Face's `model_type` ("bert", "albert", ...).
        title: the family's name in messages ("ALBERT").
        backbone_class: the name of the keras_bert class that loads it ("AlbertBackbone").
        prefix: the prefix transformers' task models put before the backbone's tensors ("albert.").
        read_config: function(config dict, config path) -> backbone constructor arguments.
        model_entries: function(model) -> `WeightEntry` list of a backbone or a task model.
        optional_names: tensors a checkpoint may lack (the pooler of `*ForMaskedLM`).
        head_names, head_prefixes: unused tensors that are known heads, by exact name or prefix.
        tied_names: {stored decoder tensor: the tensor it must equal}.
        mlm_name: the tensor whose use means the model has the tied MLM head.
    """

    model_type: str
    title: str
    backbone_class: str
    prefix: str
    read_config: object
    model_entries: object
    optional_names: tuple
    head_names: tuple
    head_prefixes: tuple
    tied_names: dict
    mlm_name: object

    @classmethod
    def from_module(cls, module: ModuleType):
        return cls(
            model_type=module.MODEL_TYPE,
            title=module.TITLE,
            backbone_class=module.BACKBONE_CLASS,
            prefix=module.PREFIX,
            read_config=module.read_config,
            model_entries=module.model_entries,
            optional_names=module.OPTIONAL_NAMES,
            head_names=getattr(module, "HEAD_NAMES", ()),
            head_prefixes=module.HEAD_PREFIXES,
            tied_names=module.TIED_NAMES,
            mlm_name=module.MLM_NAME,
        )

    def is_head(self, name):
        """Whether `name` is a known head tensor that a model may leave unused."""
        return name in self.head_names or name.startswith(self.head_prefixes)


FAMILIES = {
    module.MODEL_TYPE: Family.from_module(module) for module in (hf_bert, hf_albert, hf_distilbert, hf_electra, hf_roberta)
}


def family(model_type, where="checkpoint"):
    """The `Family` of `model_type`; ValueError naming the supported ones otherwise."""
    if model_type not in FAMILIES:
        supported = ", ".join(f"{name!r} ({f.backbone_class})" for name, f in FAMILIES.items())
        raise ValueError(f"{where}: model_type {model_type!r} is not supported. Supported model types: {supported}.")
    return FAMILIES[model_type]
