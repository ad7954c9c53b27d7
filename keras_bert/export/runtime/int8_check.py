"""`check_int8_accuracy`: a classifier's held-out accuracy through its fp32 and int8 ONNX graphs.

    report = check_int8_accuracy("saved_models/sst_onnx", "heldout.tsv")
    # {"examples": 1054, "fp32_accuracy": 0.8643, "int8_accuracy": 0.8615, "drop_points": 0.28, ...}

Dynamic int8 quantization changes every matmul's rounding; on some models it
costs accuracy. `keras-bert export --quantize int8 --eval-file` runs this and
warns (with the figures) when the drop exceeds the tolerance.
"""

import warnings

from keras_bert.option_values import INT8_ACCURACY_TOLERANCE as DEFAULT_TOLERANCE  # accuracy points


def accuracy_drop_message(fp32_accuracy, int8_accuracy, tolerance=DEFAULT_TOLERANCE):
    """The warning text when int8 loses more than `tolerance` points of accuracy, else None."""
    drop = (fp32_accuracy - int8_accuracy) * 100
    if drop <= tolerance:
        return None
    return (
        f"int8 accuracy {int8_accuracy:.4f} is {drop:.2f} points below fp32 {fp32_accuracy:.4f} "
        f"(tolerance {tolerance} points): serve model.onnx (fp32), or check the eval data"
    )


def check_int8_accuracy(directory, eval_file, text_column="sentence", label_column="label", pair_column=None,
                        tolerance=DEFAULT_TOLERANCE, batch_size=64, warn=True):
    """Held-out accuracy of an ONNX classifier export's fp32 and int8 graphs on a labelled file.

    Args:
        directory: an `export_onnx(..., quantize="int8")` directory of a classifier.
        eval_file: TSV / CSV / JSON Lines read as `keras-bert finetune` reads
            it (`read_classification_data`), labels named as the model's.
        text_column, label_column, pair_column: its columns.
        tolerance: accuracy points int8 may lose before a warning (>= 0).
        batch_size: texts per forward pass.
        warn: issue the warning with `warnings.warn` (the CLI prints it instead).

    Returns:
        `{"examples", "fp32_accuracy", "int8_accuracy", "drop_points", "tolerance", "warning"}`
        (`warning` is None or the text, also issued with `warnings.warn` when `warn`).

    Raises:
        ValueError: not an int8 classifier export, a bad tolerance, or a label the model does not know.
    """
    # defers TensorFlow (the readers and the tokenizer use it): `import keras_bert.export` must not import it
    from keras_bert.export.runtime.exported_model import ExportedModel
    from keras_bert.preprocessing.task_data.classification_data import read_classification_data  # TensorFlow, as above

    if not isinstance(tolerance, (int, float)) or tolerance < 0:
        raise ValueError(f"`tolerance` must be a number of accuracy points >= 0; received {tolerance!r}")
    fp32 = ExportedModel(directory, precision="fp32")
    # One tokenizer for both: tracing its TensorFlow functions costs seconds per instance.
    models = {"fp32": fp32, "int8": ExportedModel(directory, precision="int8", tokenizer=fp32.tokenizer)}
    if models["fp32"].task != "classifier":
        raise ValueError(f"{directory}: accuracy applies to classifiers; this export is a {models['fp32'].task}.")
    examples = read_classification_data(eval_file, text_column, label_column, pair_column)
    names = models["fp32"].label_names or [str(i) for i in range(models["fp32"].metadata["num_classes"])]
    for example in examples:
        if str(example.label) not in names:
            raise ValueError(f"{example.source}: label {example.label!r} is not one of the model's {names}")
    columns = [[e.text for e in examples]] + ([[e.pair for e in examples]] if pair_column is not None else [])
    accuracy = {}
    for precision, model in models.items():
        predicted = model.predict(*columns, batch_size=batch_size)
        accuracy[precision] = sum(str(r["label"]) == str(e.label) for r, e in zip(predicted, examples)) / len(examples)
    message = accuracy_drop_message(accuracy["fp32"], accuracy["int8"], tolerance)
    if message and warn:
        warnings.warn(message, stacklevel=2)
    return {
        "examples": len(examples),
        "fp32_accuracy": accuracy["fp32"],
        "int8_accuracy": accuracy["int8"],
        "drop_points": (accuracy["fp32"] - accuracy["int8"]) * 100,
        "tolerance": tolerance,
        "warning": message,
    }
