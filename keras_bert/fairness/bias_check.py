"""Counterfactual bias checks: does a classifier's answer change when only a pronoun or a name changes?

    report = keras_bert.check_counterfactual_bias("runs/sst", ["He was superb.", "Mary's script is dull."])
    print(report.summary())
    report.write("bias_report/")

    keras-bert bias-check runs/sst --pairs builtin --pairs my_pairs.tsv --file reviews.txt --out bias_report

Each text that holds a listed term is predicted twice, as it is and with every term swapped for its
counterpart (`CounterfactualSwapper`: both directions, whole words, case kept), and the two predictions are
compared (`BiasReport`: flip rate, mean and largest change, per pair, the worst texts). The model is a
`keras-bert finetune` run folder or a `.keras` file, found and loaded exactly as `keras-bert predict` does
(`keras_bert.loading`, then the task's pipeline), or a `TextClassifierPipeline` already built.

Classifiers (the probability of the predicted label, and flips) and regressors (the value) are checked; a
token classifier, question answerer, multiple-choice model or embedder is refused with a ValueError that says
so: their outputs are spans and choices whose positions move when a swapped term is longer or shorter.
"""

import os

from keras_bert.fairness.bias_report import BiasReport
from keras_bert.fairness.counterfactual_swapper import CounterfactualSwapper
from keras_bert.task_registry import task_for_model

# The tasks whose predictions a bias check compares.
CHECKED_TASKS = ("classifier", "regressor")


def check_counterfactual_bias(model, texts, pairs="builtin", *, tokenizer=None, sequence_length=None,
                              batch_size=32, worst=10):
    """Swaps term pairs in `texts` and measures how the model's predictions change.

    Args:
        model: a `keras-bert finetune` output folder or a `.keras` file holding a classifier or regressor
            (resolved as `keras-bert predict` resolves it), or a `TextClassifierPipeline`.
        texts: a text or a list of texts (single texts, not pairs).
        pairs: "builtin", a pairs file (term<TAB>term per line), a list of those, `[(term, term), ...]` or a
            `TermPairs` (see `TermPairs.resolve`).
        tokenizer: with a `.keras` file: a vocab.txt or checkpoint folder (default: the one beside the model).
        sequence_length: with a path: the packed length (default: the run's, else 128).
        batch_size: with a path: texts per forward pass.
        worst: how many of the most changed texts the report lists in `worst`.

    Returns:
        A `BiasReport`.

    Raises:
        ValueError: no texts, an empty text, no text holding any term, a malformed pairs file (its line
            named), or a model that is not a classifier or regressor; all before the model is loaded.
        FileNotFoundError: no such model or pairs file.
    """
    swapper = CounterfactualSwapper(pairs)
    texts = checked_texts(texts)
    swaps = [swapper.swap(text) for text in texts]
    compared = [i for i, swap in enumerate(swaps) if swap is not None]
    if not compared:
        raise ValueError(f"none of the {len(texts):,} texts holds a term of the pairs ({_some_terms(swapper)}): "
                         "nothing to compare")
    if not isinstance(worst, int) or isinstance(worst, bool) or worst < 0:
        raise ValueError(f"`worst` must be an int >= 0. Received: worst={worst!r}")
    pipeline, name = _pipeline(model, tokenizer, sequence_length, batch_size)
    task = "regressor" if pipeline.model.num_classes == 1 else "classifier"
    originals = [texts[i] for i in compared]
    predictions = pipeline(originals + [swaps[i].text for i in compared])
    examples = [
        _compared(index, texts[index], swaps[index], predictions[k], predictions[len(compared) + k], task)
        for k, index in enumerate(compared)
    ]
    return BiasReport.from_examples(examples, model=name, task=task, pairs=swapper.pairs.source,
                                    num_pairs=len(swapper.pairs), texts=len(texts), worst=worst)


def checked_texts(texts, where=None):
    """`texts` as a list, after refusing no texts and empty ones.

    Args:
        texts: a text or a list of texts.
        where: for each text, where it came from ("reviews.txt:3"), for the messages; default "text N".

    Raises:
        ValueError: no texts, or an empty (blank) one, named by `where`.
        TypeError: a text that is not a string.
    """
    texts = [texts] if isinstance(texts, str) else list(texts)
    if not texts:
        raise ValueError("no texts to check")
    for i, text in enumerate(texts):
        place = where[i] if where is not None else f"text {i + 1}"
        if not isinstance(text, str):
            raise TypeError(f"{place}: expected a string, got {type(text).__name__} {text!r}")
        if not text.strip():
            raise ValueError(f"{place}: empty text: nothing to swap or predict")
    return texts


def classifier_pipeline(reference, tokenizer=None, sequence_length=None, batch_size=32):
    """The `TextClassifierPipeline` of a run folder or `.keras` file, found and loaded as `keras-bert predict` does.

    Raises:
        FileNotFoundError: no such model, or no tokenizer beside it (pass `tokenizer`).
        ValueError: not a `.keras` model, or a model that is not a classifier or regressor of single texts.
    """
    # defers keras (the loaders build models): the command line reads this module before keras loads
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer
    # defers TensorFlow (the pipelines tokenize with tensorflow-text), as above
    from keras_bert.pipelines.loading import pipeline_for

    files = find_model(reference)
    loaded_tokenizer = load_tokenizer(files, tokenizer, flag="--tokenizer")
    model = load_keras_model(files)
    _check_task(model, files.path)
    job = files.job
    if job.get("pair_column") is not None:
        raise ValueError(f"{files.path}: the model classifies text pairs (--pair-column {job['pair_column']!r}); a "
                         "bias check swaps terms in single texts")
    options = {"sequence_length": sequence_length or job.get("sequence_length"), "batch_size": batch_size}
    if job.get("window_stride") is not None:
        options["window_stride"] = job["window_stride"]  # read long texts as the run evaluated them
    return pipeline_for(model, loaded_tokenizer, **options)


def _pipeline(model, tokenizer, sequence_length, batch_size):
    """`(pipeline, the model in words)` of what `check_counterfactual_bias` was given."""
    if isinstance(model, (str, os.PathLike)):
        return classifier_pipeline(model, tokenizer, sequence_length, batch_size), os.fspath(model)
    task_model = getattr(model, "model", None)  # a pipeline holds its task model
    if task_model is None or not callable(model):
        raise ValueError(f"expected a run folder, a .keras file or a TextClassifierPipeline(model, tokenizer); got a "
                         f"{type(model).__name__} (a bias check needs the tokenizer as well as the model)")
    _check_task(task_model, f"the pipeline's {type(task_model).__name__}")
    return model, f"a {type(task_model).__name__} pipeline"


def _check_task(model, where):
    """Raises a ValueError unless `model` is a classifier or regressor (the tasks a bias check compares)."""
    task = task_for_model(model)
    if task is None or task.name not in CHECKED_TASKS:
        kind = task.name if task is not None else type(model).__name__
        raise ValueError(
            f"{where}: a {kind} model; a bias check compares a classifier's labels and probabilities or a "
            "regressor's values (token classifiers, question answerers, multiple choice and embedders are not "
            "supported: their answers are spans or choices, not one score per text)"
        )


def _compared(index, text, swap, prediction, swapped_prediction, task):
    """One compared text: both predictions, the change and whether the label flipped."""
    if task == "regressor":
        change, flipped = abs(swapped_prediction["value"] - prediction["value"]), None
    else:
        label = prediction["label"]
        change = abs(swapped_prediction["probabilities"][label] - prediction["probabilities"][label])
        flipped = swapped_prediction["label"] != label
    return {"index": index, "original": text, "swapped": swap.text, "pairs": list(swap.pairs),
            "prediction": prediction, "swapped_prediction": swapped_prediction, "change": round(change, 6),
            "flipped": flipped}


def _some_terms(swapper):
    names = swapper.pairs.names()
    return f"{swapper.pairs.source}: {', '.join(names[:6])}{', ...' if len(names) > 6 else ''}"
