"""Finding the pipeline of a model or of a fine-tuning run, through the task registry.

    keras_bert.predict_text(tagger, tokenizer, "Ada Lovelace was born in London.")
    keras_bert.load_pipeline("runs/sst")(["..."])  # a `keras-bert finetune` output folder
"""

import os

from keras_bert.loading import load_keras_model, load_tokenizer, resolve_model
from keras_bert.task_registry import get_task, task_for_model


def pipeline_for(model, tokenizer, **kwargs):
    """The pipeline that fits `model` (classifier, regressor, tagger, question answerer, multiple choice).

    Raises:
        ValueError: `model` is not a keras_bert task model.
    """
    task = task_for_model(model)
    if task is None:
        raise ValueError(f"No text pipeline for a {type(model).__name__}; expected one of the keras_bert task models.")
    return task.load("pipeline")(model, tokenizer, **kwargs)


def predict_text(model, tokenizer, *inputs, **kwargs):
    """Runs `pipeline_for(model, tokenizer, **kwargs)` on `inputs` once.

    Examples:
    ```python
    predict_text(classifier, tokenizer, ["great film", "dull"])
    predict_text(qa_model, tokenizer, "Who wrote it?", "It was written by Ada.")
    predict_text(choice_model, tokenizer, "She opened the umbrella", ["because it rained.", "to eat it."])
    ```
    """
    return pipeline_for(model, tokenizer, **kwargs)(*inputs)


# Question-answering options a fine-tuning run records and its pipeline takes (older records lack some).
_QA_DECODING = ("max_query_length", "max_answer_length", "null_score_diff_threshold")


def load_pipeline(folder, **kwargs):
    """The pipeline of a `keras-bert finetune` output folder (model.keras, vocab.txt, finetune.json).

    Args:
        folder: the `--out` folder of a fine-tuning run.
        **kwargs: pipeline arguments overriding the run's (e.g. `batch_size`).

    Raises:
        FileNotFoundError: `folder` is not a fine-tuning run's folder.
    """
    files = resolve_model(folder) if os.path.exists(folder) else None
    # A `keras-bert distill` folder holds a fine-tuned student with the same record fields.
    if files is None or files.run is None or files.run.kind not in ("finetune", "distill") or files.vocabulary is None:
        raise FileNotFoundError(
            f"{folder}: not a `keras-bert finetune` output folder (it needs model.keras, vocab.txt and finetune.json)"
        )
    job = files.job
    task = get_task(job["task"])  # "qa" in older records, "question_answerer" in newer ones
    model = load_keras_model(files, compile=True)
    tokenizer = load_tokenizer(files, lowercase=job["lowercase"])
    options = {"sequence_length": job["sequence_length"]}
    if task.name == "question_answerer":
        options.update(doc_stride=job["doc_stride"], allow_no_answer=job["allow_no_answer"])
        options.update({k: job[k] for k in _QA_DECODING if job.get(k) is not None})
    elif job.get("window_stride") is not None:
        options["window_stride"] = job["window_stride"]  # read long texts as the run evaluated them
    options.update(kwargs)
    return task.load("pipeline")(model, tokenizer, **options)
