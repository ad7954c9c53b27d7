"""Building models from checkpoints: a `Checkpoint`'s config and tensors become a model.

`keras_bert.converters` reads every checkpoint format into a `Checkpoint`
(a backbone config and canonical tensors); this module builds the model and
loads them into it, all or nothing. `BertBackbone.from_pretrained` and
`BertTask.from_pretrained` come here, as does `keras-bert convert`.

The classes to build are passed in (`cls`, `backbone_cls`), so this module
sits below the model classes that call it.
"""

from keras_bert.converters.hf_families import FAMILIES

# Constructor arguments a caller may change without changing weight shapes.
# (`packed_inputs` too: a backbone pretrained on packed sequences has the same weights as an unpacked one.)
FREE_ARGUMENTS = {"dropout", "dtype", "output_hidden_states", "output_attentions", "packed_inputs", "name", "trainable"}


def _reused_keras_model(model, cls):
    """A loaded `.keras` model (or its backbone) when it already is a `cls`, else None."""
    if isinstance(model, cls):
        return model
    backbone = getattr(model, "backbone", None)
    if isinstance(backbone, cls):
        return backbone
    return None


def check_family(checkpoint, backbone_cls, cls):
    """Raises ValueError when `checkpoint` is of another family than `backbone_cls` builds, naming the class to use."""
    expected = getattr(backbone_cls, "model_type", "bert")
    if checkpoint.model_type == expected:
        return
    found = FAMILIES[checkpoint.model_type]
    raise ValueError(
        f"{checkpoint.description} is a checkpoint of {found.title} (model_type {checkpoint.model_type!r}), and "
        f"{cls.__name__} builds {FAMILIES[expected].title}. Load it with keras_bert.{found.backbone_class}.from_pretrained."
    )


def task_head_arguments(checkpoint, cls, kwargs):
    """`kwargs` for `cls`'s constructor, completed with what the checkpoint's task head decides.

    For a Hugging Face task checkpoint (`BertForSequenceClassification`, ...):
    its number of labels, `id2label` as `label_names` and the head's dropout,
    after checking that the head is one for `cls`. A caller's argument that
    keeps the head's shape (`label_names`, `dropout`) wins; one that changes it
    (another `num_classes`) is refused.

    Returns:
        `(kwargs, whether the checkpoint holds cls's head)`.

    Raises:
        ValueError: the checkpoint holds another task's head (the message says
            which), or `num_classes` differs from the checkpoint's.
    """
    head = checkpoint.task_head
    if head is None:
        return dict(kwargs), False
    head.check_model_class(cls.__name__, checkpoint.description)
    decided = head.constructor_arguments(cls.__name__)
    backbone = cls.backbone_class.__name__
    if "num_classes" in kwargs and kwargs["num_classes"] != decided.get("num_classes"):
        raise ValueError(
            f"{checkpoint.description} is {head.what}: num_classes={decided.get('num_classes')}. Received: "
            f"num_classes={kwargs['num_classes']!r}. For a new head of another size, build "
            f"{cls.__name__}({backbone}.from_pretrained(path), num_classes=...)."
        )
    # BERT's heads read the pooler's [CLS] vector; ModernBERT's config.json says which (`classifier_pooling`).
    trained_on = decided.get("pooling", "cls")
    if kwargs.get("pooling", trained_on) != trained_on:
        # The head was trained on one pooled vector: on another it would answer wrongly.
        raise ValueError(
            f"{checkpoint.description} is {head.what}, trained on pooling={trained_on!r}; its head cannot "
            f"read pooling={kwargs['pooling']!r}. For a new head on that pooling, build "
            f"{cls.__name__}({backbone}.from_pretrained(path), num_classes=..., pooling={kwargs['pooling']!r})."
        )
    return {**decided, **kwargs}, True


def build_from_checkpoint(checkpoint, cls, backbone_cls=None, head_kwargs=None, **kwargs):
    """A new model of class `cls` with the weights of `checkpoint`, all or nothing.

    Args:
        checkpoint: a `keras_bert.converters.checkpoint.Checkpoint`.
        cls: the class to build: a backbone class, or a task class built as
            `cls(backbone)` whose weights the checkpoint holds (its heads included).
        backbone_cls: the backbone class when `cls` is a task class; None when
            `cls` is the backbone class.
        head_kwargs: dict of `cls`'s own constructor arguments (`num_classes`, ...).
        **kwargs: backbone constructor arguments that keep the weights' shapes
            (`dropout`, `dtype`, `output_attentions`, ...; see `FREE_ARGUMENTS`).

    Returns:
        The model. A `.keras` checkpoint that already holds a `cls` (or a
        model whose backbone is one) gives that model, when no `kwargs` ask
        for a different one.
    """
    unknown = set(kwargs) - FREE_ARGUMENTS
    if unknown:
        raise ValueError(
            "from_pretrained takes only arguments that keep the weights' shapes "
            f"({sorted(FREE_ARGUMENTS)}). Received: {sorted(unknown)}"
        )
    check_family(checkpoint, backbone_cls or cls, cls)
    # Before reusing a loaded .keras model too: a wrong vocabulary must not pass there either.
    checkpoint.check_vocabulary()
    if checkpoint.keras_model is not None and not kwargs:
        reused = _reused_keras_model(checkpoint.keras_model, cls)
        if reused is not None:
            return reused
    config = {**checkpoint.config, **kwargs}
    if backbone_cls is None:
        model = cls.from_config(config)
    else:
        model = cls(backbone_cls.from_config(config), **(head_kwargs or {}))
    return checkpoint.load_into(model)
