"""One Hugging Face model family as data, and the code that reads configs and maps weights through it.

A family's module (`hf_bert`, `hf_albert`, ...) states only what is its own,
as one `Family`: its `config.json` fields, its weight tables (our layers <->
its tensor names, see `weight_tables`), its heads and the tensors a
checkpoint may hold beside them. Everything else is here, once: reading a
config into constructor arguments, expanding the tables into `WeightEntry`s
for a backbone or a task model. `hf_families` lists the families by
`model_type`.
"""

import dataclasses

from keras_bert.converters.hf_config_fields import activation, constructor_arguments, position_embedding_type
from keras_bert.converters.weight_tables import table_entries

# What every transformers BERT-family checkpoint computes, where a keras_bert backbone may differ (the small-compute
# options of BertBackbone and ElectraBackbone): such a backbone is refused by name rather than written with weights
# missing.
CHECKPOINT_ARCHITECTURE = {
    "gated_feed_forward": False, "attention_bias": True, "feed_forward_bias": True, "layer_norm_bias": True,
}


@dataclasses.dataclass(frozen=True)
class Family:
    """What keras_bert knows of one Hugging Face `model_type`.

    Attributes:
        model_type: Hugging Face's `model_type` ("bert", "albert", ...).
        title: the family's name in messages ("ALBERT").
        backbone_class: the name of the keras_bert class that loads it ("AlbertBackbone").
        prefix: the prefix transformers' task models put before the backbone's tensors ("albert.").
        config_fields: dict, backbone constructor argument -> `(config.json key, convert)` for a
            required key, `(key, convert, default)` for an optional one.
        backbone: the backbone's weight table (attribute path -> piece; see `weight_tables`).
        activation_key: the config key that names the feed-forward activation.
        default_activation: its value when the config has none.
        position_embedding_type: the one `position_embedding_type` its configs may name
            (refused otherwise), or None when its configs have no such key.
        adjust_config: None, or function(arguments, config dict, config path) that checks what
            the fields cannot and completes `arguments` in place (ALBERT's block sharing, ...).
        heads: dict, task model attribute -> weight table of that head, for heads its checkpoints
            hold (`masked_lm_head`, ...); a model without the attribute has no such head.
        task_heads: dict, exact task model class name -> weight table on that model, for the heads
            of transformers' task classes (`classifier.*`, ...).
        normalize_first: whether its checkpoints' blocks are pre-LN (a backbone of the other form is refused).
        optional_names: tensors a checkpoint may lack (the pooler of `*ForMaskedLM`).
        head_names, head_prefixes: unused tensors that are known heads, by exact name or prefix.
        tied_names: {stored decoder tensor: the tensor it must equal}.
        mlm_name: the tensor whose use means the model has the tied MLM head, or None.
        model_class: the transformers class of the bare backbone that `save_hf_checkpoint` writes
            ("ModernBertModel"), or None where the writer has no form of the family's own (BERT's is
            `hf_writer`'s; the other families are not written yet).
        written_config: with `model_class`, function(backbone) -> the `config.json` entries a written
            checkpoint needs beyond the fields and the activation.

    Examples:
    ```python
    FAMILY = Family(
        model_type="bert", title="BERT", backbone_class="BertBackbone", prefix="bert.",
        config_fields={"vocabulary_size": ("vocab_size", int), ..., "dropout": ("hidden_dropout_prob", float, 0.1)},
        backbone={"embeddings.token_embedding.embeddings": tensor("embeddings.word_embeddings.weight"), ...},
    )
    FAMILY.read_config(config, "config.json")  # {"vocabulary_size": 30522, ...}
    FAMILY.model_entries(backbone)  # the WeightEntries of its weights, in table order
    ```
    """

    model_type: str
    title: str
    backbone_class: str
    prefix: str
    config_fields: dict
    backbone: dict
    activation_key: str = "hidden_act"
    default_activation: str = "gelu"
    position_embedding_type: object = None
    adjust_config: object = None
    heads: dict = dataclasses.field(default_factory=dict)
    task_heads: dict = dataclasses.field(default_factory=dict)
    normalize_first: bool = False
    optional_names: tuple = ()
    head_names: tuple = ()
    head_prefixes: tuple = ()
    tied_names: dict = dataclasses.field(default_factory=dict)
    mlm_name: object = None
    model_class: object = None
    written_config: object = None

    def read_config(self, hf, config_path):
        """Backbone constructor arguments from a `config.json` dict of this family.

        Args:
            hf: the parsed `config.json`.
            config_path: its path, for messages.

        Returns:
            A dict of constructor arguments of `backbone_class`.

        Raises:
            ValueError: a required key is missing, or the config names
                something the backbone cannot follow (the message says what).
        """
        if self.position_embedding_type is not None:
            position_embedding_type(hf, config_path, self.position_embedding_type)
        arguments = constructor_arguments(hf, config_path, self.config_fields)
        arguments["activation"] = activation(hf, self.activation_key, config_path, self.default_activation)
        if self.adjust_config is not None:
            self.adjust_config(arguments, hf, config_path)
        return arguments

    def config_values(self, backbone):
        """The inverse of the fields: `{config.json key: the backbone's argument}` for every field."""
        return {key: getattr(backbone, argument) for argument, (key, *_) in self.config_fields.items()}

    def backbone_entries(self, backbone):
        """`WeightEntry`s of every weight of `backbone` that its checkpoints hold, in table order."""
        normalize_first = bool(getattr(backbone, "normalize_first", False))
        if normalize_first != self.normalize_first:
            form = "Pre-LN" if normalize_first else "Post-LN"
            raise ValueError(
                f"{form} backbones (normalize_first={normalize_first}) have no counterpart in {self.title} checkpoints."
            )
        self.check_architecture(backbone)
        return table_entries(backbone, self.backbone)

    def check_architecture(self, backbone):
        """Raises ValueError where `backbone` has an option its family's checkpoints cannot hold.

        The small-compute options of BertBackbone and ElectraBackbone (a gated feed-forward, no biases) are fixed
        in every family but ModernBERT, whose bias options are config fields of its own.
        """
        refused = {
            name: getattr(backbone, name)
            for name, checkpoint_value in CHECKPOINT_ARCHITECTURE.items()
            if name not in self.config_fields and getattr(backbone, name, checkpoint_value) != checkpoint_value
        }
        if refused:
            options = ", ".join(f"{name}={value}" for name, value in refused.items())
            raise ValueError(f"A backbone with {options} has no counterpart in {self.title} checkpoints.")

    def model_entries(self, model):
        """`WeightEntry`s of a backbone, or of a task model's backbone and of the heads its checkpoints hold."""
        backbone = getattr(model, "backbone", model)
        entries = self.backbone_entries(backbone)
        if model is backbone:
            return entries
        for attribute, table in self.heads.items():
            head = getattr(model, attribute, None)
            if head is not None:
                entries += table_entries(head, table)
        # Exact class names: a subclass may change the head.
        return entries + table_entries(model, self.task_heads.get(type(model).__name__, {}))

    def is_head(self, name):
        """Whether `name` is a known head tensor that a model may leave unused."""
        return name in self.head_names or name.startswith(self.head_prefixes)
