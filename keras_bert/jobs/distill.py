"""The distillation job behind `keras-bert distill`: a fine-tuned teacher and labelled files in, a smaller student out.

    keras-bert distill --teacher runs/sst --train train.tsv --eval dev.tsv --student-layers 3 \\
        --temperature 2 --alpha 0.5 --out runs/student

DistilBERT's recipe (Sanh et al., 2019) applied to a task model: the student
is the teacher with fewer transformer blocks, initialised from every other
one of the teacher's (`student_from_teacher`), and trained by `Distiller` on
`alpha * T^2 * KL(teacher_T || student_T) + (1 - alpha) * CE(labels, student)`,
optionally plus `hidden_loss_weight` times a cosine loss between each student
block and the teacher block it came from.

The teacher's logits are computed once, up front, over the training data
(one inference pass; the teacher then does not run during training) unless
the hidden-state loss is on, which needs the teacher's hidden states at every
step: then the teacher runs on the fly, in inference mode.

Tasks: the teacher's, a classifier (`BertClassifier` with 2+ classes) or a
token classifier (`BertTokenClassifier`); the files are read as `keras-bert
finetune` reads them for that task (the same options).

Output folder (as `keras-bert finetune`'s, so `export`, `predict` and
`load_pipeline` take it):
    model.keras           the student: a plain task model of the teacher's class (written atomically)
    vocab.txt, labels.json
    metrics.json          the student's held-out metrics (with --eval)
    eval_predictions.jsonl
    distill.json          job arguments, student config, the held-out metrics of student and teacher, timings
    history.csv, logs/    per-epoch training (and validation) loss and student accuracy
    checkpoints/          a resumable checkpoint (teacher and student) at every epoch end; `--resume`
"""

import json
import os
import time
import warnings

import keras
import numpy as np

from keras_bert.atomic_files import write_text_atomically
from keras_bert.jobs.distill_options import DistillOptions
from keras_bert.jobs.job_options import takes_options
from keras_bert.jobs.runner import JobRunner
from keras_bert.loading import find_model, load_keras_model, load_tokenizer, reported_as
from keras_bert.models.distiller import Distiller, check_distillation_arguments
from keras_bert.models.student_from_teacher import student_from_teacher, teacher_layer_indices
from keras_bert.optimizers import create_optimizer
from keras_bert.task_registry import task_for_model

_TASKS = ("classifier", "token_classifier")
# Job arguments a resumed run must share with its checkpoint's run.
_RESUME_KEYS = ("teacher", "train", "student_layers", "layer_indices", "temperature", "alpha", "hidden_loss_weight",
                "precompute_teacher_logits", "sequence_length", "batch_size", "epochs", "steps", "learning_rate",
                "warmup_steps", "weight_decay", "seed", "length_buckets")


@takes_options(DistillOptions, more_keywords="task_options")
def distill(options, **task_options):
    """Distils a fine-tuned teacher into a student with `student_layers` of its blocks, and evaluates both.

    Args:
        options: given as keywords, the fields of `DistillOptions` (each
            documented there; `teacher`, `train` and `output_dir` by position
            too): the teacher, the files, the student's depth and the teacher
            blocks it starts from (`student_from_teacher`), the loss
            (`Distiller`), and the recipe (as `finetune`'s: AdamW, linear
            warmup and decay; lr 1e-4 by default).
        **task_options: how the files are read (`text_column`, `label_column`,
            `pair_column`, `format`, `header`, `window_stride`; `word_column`,
            `tag_column` for a tagger), as `finetune` takes them; default: as
            the teacher's run read them.

    Returns:
        dict with `student` and `teacher` held-out metrics (empty without `eval`),
        `history`, `counts`, `train_seconds`, `teacher_logits_seconds`,
        `wall_seconds`, `output_dir`, `resumed_from_step`.

    Raises:
        ValueError: a teacher that is not a classifier or tagger, a student
            deeper than the teacher, bad loss arguments, labels the teacher does not know.
    """
    started, o = time.time(), options
    _validate(o.train, o.eval)
    train, eval, output_dir = os.fspath(o.train), o.eval and os.fspath(o.eval), os.fspath(o.output_dir)
    keras.utils.set_random_seed(o.seed)
    teacher_model, tokenizer, recorded, source = _load_teacher(os.fspath(o.teacher), o.vocab, o.lowercase)
    spec = task_for_model(teacher_model)
    # Checked now, before reading any data: the student's shape and the loss's arguments.
    check_distillation_arguments(o.temperature, o.alpha, o.hidden_loss_weight)
    student_from_teacher(teacher_model, o.student_layers, o.layer_indices)
    indices = list(o.layer_indices) if o.layer_indices else teacher_layer_indices(
        teacher_model.backbone.num_layers, o.student_layers
    )
    sequence_length = o.sequence_length or min(recorded.get("sequence_length") or 128,
                                               teacher_model.backbone.max_sequence_length)
    handler, file_options = _task_job(spec, recorded, task_options, sequence_length, teacher_model)
    if o.verbose:
        print(f"keras-bert distill {spec.name}: teacher {source} ({teacher_model.backbone.num_layers} layers) -> "
              f"student of {o.student_layers} layers (teacher blocks {indices}) on the {keras.backend.backend()} "
              "backend")
    train_features, eval_examples, eval_features, counts = _read_data(
        spec, handler, tokenizer, train, eval, teacher_model
    )
    steps_per_epoch = len(train_features) // min(o.batch_size, len(train_features))
    job = dict(
        task=spec.name, teacher=os.fspath(o.teacher), train=train, eval=eval, lowercase=tokenizer.lowercase,
        student_layers=o.student_layers, layer_indices=indices, temperature=o.temperature, alpha=o.alpha,
        hidden_loss_weight=o.hidden_loss_weight, precompute_teacher_logits=o.hidden_loss_weight == 0,
        sequence_length=sequence_length, batch_size=o.batch_size, epochs=o.epochs, steps=o.epochs * steps_per_epoch,
        learning_rate=o.learning_rate, warmup_ratio=o.warmup_ratio,
        warmup_steps=int(o.warmup_ratio * o.epochs * steps_per_epoch), weight_decay=o.weight_decay, seed=o.seed,
        length_buckets=list(o.length_buckets) if o.length_buckets else None, backend=keras.backend.backend(),
        **{k: v for k, v in file_options.items() if k not in ("sequence_length", "dropout")},
    )
    runner = JobRunner(output_dir, job, _RESUME_KEYS, resume=o.resume, overwrite=o.overwrite,
                       keep_checkpoints=o.keep_checkpoints, tensorboard=o.tensorboard, callbacks=o.callbacks,
                       verbose=o.verbose)
    distiller = runner.build_or_resume(lambda: _new_distiller(teacher_model, job))

    logits_started = time.time()
    data, validation = _with_teacher_logits(runner, distiller, train_features, eval_features, job, o.verbose)
    logits_seconds = time.time() - logits_started
    fit_started = time.time()
    history = _fit(runner, distiller, data, validation, job, steps_per_epoch)
    train_seconds = time.time() - fit_started

    student, metrics = distiller.student, {}
    if eval_features is not None:
        metrics["student"], predictions = handler.evaluate(student, eval_features, eval_examples, o.batch_size)
        metrics["teacher"], _ = handler.evaluate(distiller.teacher, eval_features, eval_examples, o.batch_size)
        runner.write_json("metrics.json", metrics["student"])
        rows = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in predictions)
        write_text_atomically(rows, runner.path("eval_predictions.jsonl"))
    runner.save(student, tokenizer.get_vocabulary())
    if handler.label_names is not None:
        runner.write_json("labels.json", handler.label_names)
    summary = dict(
        student=metrics.get("student", {}), teacher=metrics.get("teacher", {}), history=history, counts=counts,
        teacher_logits_seconds=round(logits_seconds, 1), train_seconds=round(train_seconds, 1),
        wall_seconds=round(time.time() - started, 1), output_dir=output_dir, resumed_from_step=runner.start_step,
    )
    runner.write_json("distill.json", {"job": job, "backbone": student.backbone.get_config(),
                                       "label_names": handler.label_names, **summary})
    runner.finish()
    if o.verbose:
        _report(summary, os.path.join(output_dir, "model.keras"), o.student_layers, teacher_model.backbone.num_layers)
    return summary


# --------------------------------------------------------------------------- phases
def _validate(train, eval):
    """Raises on files that are not there, before any work is done (each option's range: `DistillOptions`)."""
    for path, flag in ((train, "--train"), (eval, "--eval")):
        if path is not None and not os.path.isfile(path):
            raise FileNotFoundError(f"{flag}: no such file: {path}")


def _load_teacher(teacher, vocab, lowercase):
    """`(teacher model, tokenizer, the teacher run's job record or {}, description)`.

    Raises:
        FileNotFoundError: no such folder or file, or no vocabulary for it.
        ValueError: not a classifier or token classifier.
    """
    with reported_as("--teacher"):
        files = find_model(teacher)
        model = load_keras_model(files)
    task = task_for_model(model)
    if task is None or task.name not in _TASKS:
        raise ValueError(
            f"--teacher {teacher}: distillation needs a classifier (2+ classes) or a token classifier. Received: a "
            f"{type(model).__name__}" + (f" ({task.name})" if task is not None else "")
        )
    return model, load_tokenizer(files, vocab, lowercase), files.job, f"{type(model).__name__} {files.path}"


def _task_job(spec, recorded, given, sequence_length, teacher):
    """The task's `FinetuneTaskJob` with the teacher run's file options, overridden by `given`."""
    job_class = spec.load("finetune")
    unknown = sorted(set(given) - set(job_class.OPTIONS))
    if unknown:
        raise TypeError(f"distill() got unexpected keyword arguments {unknown}; {spec.name} options: "
                        f"{sorted(job_class.OPTIONS)}")
    options = {**job_class.OPTIONS, **{k: recorded[k] for k in job_class.OPTIONS if k in recorded},
               **{k: v for k, v in given.items() if v is not None}}
    if "window_stride" in options and "window_stride" not in given and "window_stride" not in recorded:
        options["window_stride"] = (sequence_length - 2) // 2
    options.update(sequence_length=sequence_length, dropout=teacher.dropout)
    return job_class(options), options


def _read_data(spec, handler, tokenizer, train, eval, teacher):
    """`(train features, eval examples, eval features, counts)`, labels encoded with the teacher's names."""
    handler.label_names = list(teacher.label_names) if teacher.label_names is not None else None
    # The classifier's training features keep given label names (and count the majority class); the
    # tagger's would take the file's tags instead, so they are read as held-out data when the teacher names its tags.
    training = handler.label_names is None or spec.name == "classifier"
    train_features = handler.features(handler.read(train), tokenizer, training=training)
    names = handler.label_names
    if (teacher.label_names is not None and names != teacher.label_names) or len(names) != teacher.num_classes:
        raise ValueError(
            f"{train}: its labels {names} are not the teacher's "
            f"{teacher.label_names if teacher.label_names is not None else f'{teacher.num_classes} classes'}"
        )
    eval_examples = eval_features = None
    counts = {"train": handler.counts(train_features)}
    if eval:
        eval_examples = handler.read(eval)
        eval_features = handler.features(eval_examples, tokenizer, training=False)
        counts["eval"] = handler.counts(eval_features)
    return train_features, eval_examples, eval_features, counts


def _new_distiller(teacher, job):
    student = student_from_teacher(teacher, job["student_layers"], job["layer_indices"])
    distiller = Distiller(
        teacher, student, job["temperature"], job["alpha"], job["hidden_loss_weight"], layer_map=job["layer_indices"],
        precomputed_teacher_logits=job["precompute_teacher_logits"],
    )
    distiller.compile(optimizer=create_optimizer(
        learning_rate=job["learning_rate"], weight_decay=job["weight_decay"], warmup_steps=job["warmup_steps"],
        total_steps=job["steps"],
    ))
    return distiller


def _with_teacher_logits(runner, distiller, train_features, eval_features, job, verbose):
    """`(train, eval)` features with the teacher's logits beside the labels, when they are computed up front."""
    # defers TensorFlow (features build tf.data datasets), as the tokenizer above
    from keras_bert.preprocessing.task_data.task_features import TaskFeatures

    if not job["precompute_teacher_logits"] or runner.start_step >= job["steps"]:
        return train_features, eval_features
    out = []
    for name, features in (("training", train_features), ("held-out", eval_features)):
        if features is None:
            out.append(None)
            continue
        if verbose:
            print(f"teacher logits: one inference pass over the {len(features)} {name} features")
        y = {"labels": features.y, "teacher_logits": _teacher_logits(distiller.teacher, features.x, job["batch_size"])}
        out.append(TaskFeatures(features.x, y, features.sample_weight, features.info))
    return tuple(out)


def _teacher_logits(teacher, x, batch_size, multiple=16):
    """The teacher's logits of every row of `x`, in order, computing on rows of similar length.

    Each row is cut to its number of real tokens rounded up to a multiple of `multiple`: most texts are
    much shorter than the sequence length, and padding changes no logit. One `predict` per cut length,
    over a dataset of input dicts as the held-out evaluation feeds the teacher (`FinetuneTaskJob.evaluate`).
    A tagger's logits are padded back to the full length with zeros.
    """
    # defers TensorFlow (the batches are a tf.data pipeline, as every dataset the job feeds)
    import tensorflow as tf

    _trace_for_any_shape(teacher, x)
    lengths = np.asarray(x["padding_mask"]).sum(axis=1)
    full = x["token_ids"].shape[1]
    cuts = np.minimum(full, np.maximum(multiple, -(-lengths // multiple) * multiple))
    out = None
    for cut in np.unique(cuts):
        rows = np.flatnonzero(cuts == cut)
        inputs = tf.data.Dataset.from_tensor_slices({k: v[rows, :cut] for k, v in x.items()}).batch(batch_size)
        logits = np.asarray(teacher.predict(inputs, verbose=0), "float32")
        if out is None:
            out = np.zeros((len(lengths), full, logits.shape[-1]) if logits.ndim == 3 else (len(lengths),) + logits.shape[1:],
                           "float32")
        if logits.ndim == 3:
            out[rows, :cut] = logits
        else:
            out[rows] = logits
    return out


def _trace_for_any_shape(model, x):
    """On TensorFlow, traces `model`'s predict function once for inputs of any batch size and length.

    Keras' predict function is a `tf.function` that traces each new input shape it meets (relaxing the
    shape from the second on). The teacher predicts on batches cut to several lengths, each with a smaller
    last batch, and then on the held-out set: five traces or more, and TensorFlow warned about retracing
    (its count is per function code, so every model's predict function adds to it). Traced first with
    `(None, None)` inputs, the function serves every later batch from that one trace. JAX and torch trace
    no `tf.function`.
    """
    if keras.backend.backend() != "tensorflow" or model.run_eagerly:
        return
    # defers TensorFlow, as above
    import tensorflow as tf

    model.make_predict_function()
    spec = {k: tf.TensorSpec((None, None), tf.as_dtype(v.dtype)) for k, v in model.drop_unused_features(x).items()}
    model.predict_function.get_concrete_function([spec])  # the structure `predict` calls it with: [batch]


def _fit(runner, distiller, features, validation, job, steps_per_epoch):
    """Trains the student from `runner.start_step` to the end; returns the history of the epochs run now."""
    batch = min(job["batch_size"], len(features))
    buckets = job["length_buckets"]
    if buckets and isinstance(features.y, dict) and job["task"] == "classifier" and (
        np.shape(features.y["teacher_logits"])[1] == job["sequence_length"]
    ):
        buckets = None  # as many classes as tokens: bucketing would cut the logits as if they were per token
    train_data = features.dataset(
        batch, shuffle=True, seed=job["seed"], drop_remainder=True, length_buckets=buckets, repeat=True,
    ).skip(runner.start_step)
    # As in `finetune`: build the compiled metrics from a batch outside the training stream, so a fresh and a
    # resumed run train on the same batches on JAX and torch.
    distiller._symbolic_build(data_batch=next(iter(features.dataset(batch).take(1))))
    with warnings.catch_warnings():
        # As in `finetune`: a tagger's loss does not read the pooler (as in BERT); Keras warns that it gets no gradient.
        warnings.filterwarnings("ignore", message="Gradients do not exist for variables")
        return runner.fit(distiller, train_data, epochs=job["epochs"], steps_per_epoch=steps_per_epoch,
                          validation_data=None if validation is None else validation.dataset(job["batch_size"]))


def _report(summary, model_path, student_layers, teacher_layers):
    student, teacher = summary["student"], summary["teacher"]
    if student:
        key = "accuracy" if "accuracy" in student else ("f1" if "f1" in student else "word_accuracy")
        print(f"held-out {key}: student ({student_layers} layers) {student[key]:.4f}, "
              f"teacher ({teacher_layers} layers) {teacher[key]:.4f}")
    else:
        print("no --eval file: no held-out metrics")
    print(f"saved the student {model_path} ({summary['train_seconds']} s training, "
          f"{summary['teacher_logits_seconds']} s teacher logits)")
