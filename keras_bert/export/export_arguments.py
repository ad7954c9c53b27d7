"""The checks every export target makes on its arguments, before anything is written.

`export_saved_model`, `export_hub_encoder`, `export_onnx` and `export_litert`
refuse a model they cannot serve, a tokenizer that does not belong to it, a
length it cannot take, label names that do not fit, or a target folder that
exists (without `overwrite`) with the same errors, here. Each raises
`ValueError` naming the argument and the value received; none imports
TensorFlow.
"""

import os

# The tasks whose answers carry no label names.
_UNLABELLED_TASKS = ("backbone", "regressor", "question_answerer", "multiple_choice", "text_embedder")


def check_tokenizer(tokenizer, backbone, task="backbone", role="`serve_text` tokenizes raw strings inside the graph"):
    """Raises ValueError for a missing tokenizer, one that cannot serve `task`, or one of another vocabulary.

    Args:
        tokenizer: the tokenizer given to the export (None: missing).
        backbone: the model's backbone (its `vocabulary_size` must match).
        task: the task kind (`task_outputs.task_kind`); taggers and question
            answerers map tokens back to characters, which needs offsets.
        role: what the export does with the tokenizer, said when it is missing.
    """
    if tokenizer is None:
        raise ValueError(
            f"`tokenizer` is required: {role}. Pass the BertTokenizer the model was trained with, "
            "e.g. BertTokenizer.from_pretrained(path)."
        )
    if task == "question_answerer":
        # Here, not at the top: the export's arguments are checked before TensorFlow's task data loads.
        from keras_bert.preprocessing.task_data.squad_data import check_question_answering_tokenizer

        check_question_answering_tokenizer(tokenizer)
    if task == "token_classifier":
        from keras_bert.postprocessing.entity_spans import check_tagging_tokenizer  # as above: TensorFlow

        check_tagging_tokenizer(tokenizer, "A token_classifier's serve_text")
    if tokenizer.vocabulary_size() != backbone.vocabulary_size:
        raise ValueError(
            f"The tokenizer has {tokenizer.vocabulary_size()} tokens but the model's vocabulary_size is "
            f"{backbone.vocabulary_size}: they do not belong together."
        )


def default_sequence_length(model, task, backbone):
    """What texts are packed to when the caller names no length.

    A text embedder's own `sequence_length` (its checkpoint's max_seq_length),
    else 384 for question answering and 128 for the rest, at most the
    model's `max_sequence_length`.
    """
    length = model.sequence_length if task == "text_embedder" else None
    return length or min(384 if task == "question_answerer" else 128, backbone.max_sequence_length)


def check_sequence_length(value, backbone, name="sequence_length"):
    """Raises ValueError unless `value` is an int in `[3, backbone.max_sequence_length]` ([CLS], a token, [SEP])."""
    if not isinstance(value, int) or not 3 <= value <= backbone.max_sequence_length:
        raise ValueError(
            f"`{name}` must be an int in [3, {backbone.max_sequence_length}] (the model's "
            f"max_sequence_length); received {value!r}"
        )


def check_label_names(model, task, label_names):
    """The label names to export (a list of str, or None), or ValueError for names that do not fit `model`.

    Args:
        model: the task model (its `num_classes` must match).
        task: the task kind; tasks without labels export none.
        label_names: the names given, or the model's own (None: none).

    Raises:
        ValueError: a token classifier without names (it decodes BIO tags
            by name), a count other than `num_classes`, or a name that is
            empty, padded or more than one line (the asset holds one a line).
    """
    if task in _UNLABELLED_TASKS:
        return None
    if label_names is None:
        if task == "token_classifier":
            raise ValueError(
                "A token classifier needs `label_names` (its BIO tags, e.g. ['O', 'B-PER', 'I-PER']) to "
                "decode entities; pass label_names=... or set them on the model."
            )
        return None
    label_names = [str(n) for n in label_names]
    if len(label_names) != model.num_classes:
        raise ValueError(f"{len(label_names)} label names for a model with {model.num_classes} classes.")
    for name in label_names:
        if not name or "\n" in name or "\r" in name or name != name.strip():
            raise ValueError(f"Label name {name!r} cannot be exported: names must be non-empty single lines.")
    return label_names


def check_target(directory, overwrite):
    """Raises ValueError when `directory` exists and `overwrite` is False, or its parent is not a folder."""
    if os.path.exists(directory) and not overwrite:
        raise ValueError(f"{directory} already exists; pass overwrite=True (--overwrite) to replace it.")
    parent = os.path.dirname(directory)
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise ValueError(f"{parent} is not a directory (the export's parent must be a folder).")
