"""student_from_teacher: a shallower BERT initialised from layers of a deeper one (the DistilBERT recipe).

DistilBERT (Sanh et al., 2019) starts its 6-layer student from the 12-layer
teacher by taking one layer out of two: embeddings, blocks 0, 2, 4, 7, 9, 11,
and (for a task model) the pooler and the head. `teacher_layer_indices` picks
layers the same way for any depth: evenly spaced, the first and the last
always included (12 -> 6 gives DistilBERT's indices; 6 -> 3 gives 0, 2, 5;
6 -> 2 gives 0, 5).
"""

import keras

from keras_bert.models.bert_backbone import BertBackbone


def teacher_layer_indices(teacher_layers, student_layers):
    """The teacher's blocks a `student_layers`-deep student starts from: evenly spaced, first and last included.

    Args:
        teacher_layers: int, the teacher's `num_layers`.
        student_layers: int, the student's, in `[1, teacher_layers]`.

    Returns:
        A list of `student_layers` increasing block indices into the teacher.

    Raises:
        ValueError: `student_layers` is not a positive int or exceeds `teacher_layers`.
    """
    _check_student_layers(student_layers, teacher_layers)
    if student_layers == 1:
        return [teacher_layers - 1]
    step = (teacher_layers - 1) / (student_layers - 1)
    # round-half-even as numpy does: 12 -> 6 gives DistilBERT's 0, 2, 4, 7, 9, 11.
    return [int(round(i * step)) for i in range(student_layers)]


def _check_student_layers(student_layers, teacher_layers):
    if not isinstance(student_layers, int) or isinstance(student_layers, bool) or student_layers < 1:
        raise ValueError(f"`num_layers` of the student must be a positive int. Received: num_layers={student_layers!r}")
    if student_layers > teacher_layers:
        raise ValueError(
            f"A student initialised from its teacher's layers cannot be deeper than the teacher: the student asks "
            f"for num_layers={student_layers}, the teacher has num_layers={teacher_layers}."
        )


def _check_indices(indices, num_layers, teacher_layers):
    indices = list(indices)
    if len(indices) != num_layers:
        raise ValueError(
            f"`layer_indices` must name one teacher block per student layer ({num_layers}). Received: {indices!r}"
        )
    if any(not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < teacher_layers for i in indices):
        raise ValueError(
            f"`layer_indices` must be teacher block indices in [0, {teacher_layers}). Received: {indices!r}"
        )
    if len(set(indices)) != len(indices):
        raise ValueError(f"`layer_indices` must be distinct. Received: {indices!r}")
    return indices


def student_from_teacher(teacher, num_layers=3, layer_indices=None, hidden_dim=None, name=None):
    """A copy of `teacher` with `num_layers` of its transformer blocks, every weight taken from the teacher.

    The student has the teacher's class and configuration (vocabulary, width,
    heads, dropout, labels) except its depth. Its embeddings, pooler (and final
    LayerNorm of a pre-LN model) and task head are the teacher's; its block `j`
    is the teacher's block `layer_indices[j]`.

    Args:
        teacher: a `BertBackbone`, or a task model on one (`BertClassifier`,
            `BertTokenClassifier`, ...: any model with a `.backbone` whose
            config rebuilds it).
        num_layers: int, the student's depth, at most the teacher's.
        layer_indices: optional list of `num_layers` distinct teacher block
            indices; default `teacher_layer_indices(teacher_layers, num_layers)`
            (every other layer, first and last included).
        hidden_dim: optional; the width the caller expects. Initialising from
            the teacher's weights needs the teacher's width, so any other value
            is refused (a narrower student has to be initialised otherwise).
        name: optional name of the student model (default: the teacher's class default).

    Returns:
        A new model of the teacher's class (uncompiled).

    Raises:
        ValueError: `num_layers` above the teacher's, `hidden_dim` other than the
            teacher's, bad `layer_indices`, or a teacher that is not a BERT
            backbone or a task model on one; each message names the values.

    Examples:
    ```python
    teacher = keras.saving.load_model("runs/sst/model.keras")   # a 6-layer BertClassifier
    student = keras_bert.student_from_teacher(teacher, num_layers=3)   # blocks 0, 2, 5
    ```
    """
    backbone = teacher if isinstance(teacher, BertBackbone) else getattr(teacher, "backbone", None)
    if not isinstance(backbone, BertBackbone):
        raise ValueError(
            "`teacher` must be a BertBackbone or a task model on one (with a `.backbone`). "
            f"Received: {type(teacher).__name__}"
        )
    teacher_layers = backbone.num_layers
    _check_student_layers(num_layers, teacher_layers)
    if hidden_dim is not None and hidden_dim != backbone.hidden_dim:
        raise ValueError(
            f"A student initialised from its teacher's weights has the teacher's width: the student asks for "
            f"hidden_dim={hidden_dim!r}, the teacher has hidden_dim={backbone.hidden_dim}."
        )
    indices = (
        teacher_layer_indices(teacher_layers, num_layers)
        if layer_indices is None
        else _check_indices(layer_indices, num_layers, teacher_layers)
    )
    student = _build_like(teacher, backbone, num_layers, name)
    student_backbone = student if isinstance(teacher, BertBackbone) else student.backbone
    _copy_backbone(backbone, student_backbone, indices)
    if student is not student_backbone:
        _copy_head(teacher, student)
    return student


def _build_like(teacher, backbone, num_layers, name):
    """A new, randomly initialised model of the teacher's class and config with `num_layers` blocks."""
    # A trainable student even from a teacher frozen for distillation (its config says trainable=False).
    config = backbone.get_config()
    config.update(num_layers=num_layers, name=backbone.name, trainable=True)
    if isinstance(teacher, BertBackbone):
        if name is not None:
            config["name"] = name
        return BertBackbone.from_config(config)
    task_config = teacher.get_config()
    task_config["backbone"] = keras.layers.serialize(BertBackbone.from_config(config))
    task_config.pop("name", None)
    task_config["trainable"] = True
    if name is not None:
        task_config["name"] = name
    return type(teacher).from_config(task_config)


def _copy_backbone(source, target, indices):
    """Embeddings, blocks `indices` (in order), pooler and final LayerNorm of `source` into `target`."""
    target.embeddings.set_weights(source.embeddings.get_weights())
    for student_block, teacher_index in zip(target.transformer_layers, indices):
        student_block.set_weights(source.transformer_layers[teacher_index].get_weights())
    target.pooler.set_weights(source.pooler.get_weights())
    if source.final_layer_norm is not None:
        target.final_layer_norm.set_weights(source.final_layer_norm.get_weights())


def _copy_head(teacher, student):
    """Every weight of the task model outside its backbone, matched by layer name."""
    student_layers = {layer.name: layer for layer in student.layers}
    for layer in teacher.layers:
        if layer is teacher.backbone or isinstance(layer, keras.layers.InputLayer) or not layer.weights:
            continue
        student_layers[layer.name].set_weights(layer.get_weights())
