"""The fine-tuning job behind `keras-bert finetune`: a pretrained BERT and labelled files in, a task model out.

    keras-bert finetune --task classify --init path/to/hf_bert --train train.tsv --eval dev.tsv \\
        --test test.tsv --text-column sentence --label-column label --out runs/sst

Which file does what: `--eval` is the validation file (scored every epoch; it
chooses the epoch model.keras keeps and drives early stopping, so its metrics
are optimistic), `--test` the test file (evaluated once, after training, on
model.keras's weights; it chooses nothing: the figure to report).

Tasks (by their registry name or CLI word, see `keras_bert.task_registry`):
`classifier` / `classify` (single texts, or pairs with `--pair-column`),
`regressor` / `regress` (one real-valued target), `token_classifier` / `ner`
(CoNLL/BIO files), `question_answerer` / `qa` (SQuAD 1.1 / 2.0 JSON) and
`multiple_choice` / `multiple-choice` (SWAG-style CSV); what each does with
its files is in `keras_bert.jobs.finetune_handlers`. `--init` is a Hugging Face
BERT folder, a `.keras` file holding a `BertBackbone` or any model with a
`.backbone` (a `BertPretrainer` from `keras-bert pretrain`, a fine-tuned
model), any other checkpoint `BertBackbone.from_pretrained` reads, or a size
name ("tiny", "mini", ...) for a randomly initialised BERT (needs `--vocab`);
see `keras_bert.loading.initial_backbone`.

Every option, its default (the BERT paper's recipe: AdamW, 3e-5 with linear
warmup and decay, 3 epochs, batch 32, dropout 0.1) and its range are in
`keras_bert.jobs.finetune_options.FinetuneOptions`, which is also the command's
argparse; gradient norms are clipped at 1.0.

Output folder (one run per folder: `overwrite` deletes an earlier run's outputs before training starts, and
model.keras and finetune.json, written last, exist only once the run has finished; see `keras_bert.jobs.runner`):
    model.keras           the fine-tuned task model, for predicting: no optimizer state (written atomically)
    adapter.npz           with --lora-rank: the LoRA adapters and the head alone (model.keras has them merged)
    vocab.txt             the vocabulary it reads
    labels.json           label names in id order (classifier, token_classifier)
    metrics.json          {"validation": metrics on --eval, "test": metrics on --test, "selection": which epoch
                          model.keras holds and what chose it, "counterfactual_augmentation": with
                          --counterfactual-augmentation, the copies it added to the training set}; a section only
                          for a file (or option) given
    eval_predictions.*    validation predictions (.jsonl; predictions.json in SQuAD's format for qa)
    test_predictions.*    test predictions (.jsonl; test_predictions.json in SQuAD's format for qa)
    history.csv           per-epoch training (and validation) loss and metrics
    logs/                 TensorBoard logs (unless tensorboard=False)
    finetune.json         job arguments (the task by its registry name), backbone config, data counts,
                          metrics, timings
    checkpoints/          a resumable checkpoint at every epoch end (`--resume` continues from it): the
                          last epoch's weights with the optimizer state (AdamW: twice the weights' size); with
                          --eval also the best epoch's weights (best.weights.h5, best.json). Only `resume` reads
                          them: `keep_checkpoints=False` (--no-keep-checkpoints) deletes them when the run finishes

With a validation file (`eval`), every epoch is scored on it; `model.keras` holds the
best epoch by `monitor` (val_loss by default), `early_stopping_patience` ends
the run after that many epochs without a better one, and finetune.json and the
printout name the best epoch, its value, and whether the run stopped early.

Task options (every task's are accepted and each task reads its own, see
`keras_bert.jobs.finetune_handlers`; how, in `read_classification_data`,
`read_conll`, `read_squad`, `squad_features`, `decode_answers` and
`read_multiple_choice`) are `FinetuneOptions` fields too.
"""

import collections
import json
import os
import time
import warnings

import keras

from keras_bert.atomic_files import write_text_atomically
from keras_bert.distribution import data_parallel_size, prepare_dataset, resolve_strategy, strategy_scope
from keras_bert.fairness.counterfactual_augmentation import CounterfactualAugmentation
from keras_bert.jobs.best_epoch import ADAPTER_FILE as BEST_ADAPTER_FILE
from keras_bert.jobs.best_epoch import WEIGHTS_FILE as BEST_WEIGHTS_FILE
from keras_bert.jobs.best_epoch import BestEpoch, read_best_record
from keras_bert.jobs.compiled_step_options import apply_jit_compile
from keras_bert.jobs.finetune_options import FinetuneOptions
from keras_bert.jobs.job_options import takes_options
from keras_bert.jobs.lora_job import lora_job
from keras_bert.jobs.runner import JobRunner
from keras_bert.loading import load_init, pooler_never_trained
from keras_bert.models.bert_classifier import BertClassifier
from keras_bert.models.lora import load_adapter, lora_info
from keras_bert.optimizers import create_optimizer
from keras_bert.task_registry import TASKS, get_task

# Job arguments a resumed run must share with the checkpoint's run: anything
# else would silently continue a different training.
_RESUME_KEYS = ("task", "train", "batch_size", "epochs", "steps", "learning_rate", "warmup_steps", "weight_decay",
                "seed", "sequence_length", "length_buckets", "freeze_backbone", "monitor", "lora_rank", "lora_alpha",
                "pooling", "counterfactual_augmentation", "layer_decay")
# Evaluation reports of an earlier run in the same folder, removed when this run does not write them.
_VALIDATION_FILES = ("eval_predictions.jsonl", "predictions.json")
_TEST_FILES = ("test_predictions.jsonl", "test_predictions.json")


@takes_options(FinetuneOptions)
def finetune(options):
    """Fine-tunes a BERT task model on labelled files and evaluates it.

    Args:
        options: given as keywords, the fields of `FinetuneOptions` (each
            documented there; `task`, `init`, `train` and `output_dir` by
            position too): the task (a registry name or CLI word of
            `keras_bert.task_registry`), where the backbone comes from (`load_init`),
            the files, the recipe, resuming, distribution, best-epoch
            selection, LoRA, and how each task reads its files.

    Where the state goes: `output_dir/model.keras` holds the task model
    without its optimizer state (what predicting, export and a later
    `init` need); `output_dir/checkpoints/` holds the last epoch's
    checkpoint with it (AdamW's moments: twice the weights' size), which only
    `resume` reads (`keep_checkpoints=False` deletes it when the run finishes).

    Returns:
        dict with `metrics` (metrics.json's: `validation` on `eval`, `test` on `test`, `selection`; each
        section only when its file is given), `history`, data `counts`,
        `best_epoch` (with `eval`: epoch, step, monitor, value, epochs_run,
        stopped_early; else None), `train_seconds`, `wall_seconds`,
        `output_dir`, `resumed_from_step`; with LoRA `lora` (rank, alpha, targets, parameter counts).

    Raises:
        TypeError: a keyword that is no option.
        ValueError: an option out of its range, or options that do not go together.
        FileExistsError: `output_dir` holds an earlier run, and neither `resume` (with a checkpoint) nor
            `overwrite` says what to do with it.
    """
    started, o = time.time(), options
    spec = get_task(o.task)
    lora = lora_job(o.lora_rank, o.lora_alpha, o.freeze_backbone, o.verbose)  # None without a rank
    train, output_dir = os.fspath(o.train), os.fspath(o.output_dir)
    eval, test = (o.eval and os.fspath(o.eval)), (o.test and os.fspath(o.test))
    _validate(spec, train, eval, test, o)
    augmentation = _counterfactual_augmentation(spec, o.counterfactual_augmentation)  # reads the pairs now
    # Before any other TensorFlow work: MultiWorkerMirroredStrategy configures the runtime when it is created.
    distributed = resolve_strategy(o.strategy, mesh_shape=o.mesh_shape, tpu=o.tpu)
    task_options = _task_options(spec, o)
    keras.utils.set_random_seed(o.seed)
    with strategy_scope(distributed):  # the backbone's variables become the model's: made distributed
        backbone, tokenizer, source = load_init(o.init, vocab=o.vocab, lowercase=o.lowercase, dropout=o.dropout)
    sequence_length = _sequence_length(spec, o.sequence_length, backbone)
    handler = _task_job(spec, task_options, sequence_length, o.dropout, o.init)
    if o.verbose:
        print(f"keras-bert finetune {spec.name}: {source} on the {keras.backend.backend()} backend")

    data = _read_data(handler, tokenizer, train, eval, test, o.verbose, augmentation)
    train_features, counts = data["train"][1], data["counts"]
    schedule = _schedule(len(train_features), o.batch_size, o.epochs, o.warmup_ratio)
    job = dict(
        task=spec.name, init=os.fspath(o.init), train=train, eval=eval, test=test,
        lowercase=getattr(tokenizer, "lowercase", None),  # byte-level BPE (ModernBERT's) has no casing
        sequence_length=sequence_length, batch_size=o.batch_size, epochs=o.epochs, learning_rate=o.learning_rate,
        warmup_ratio=o.warmup_ratio, warmup_steps=schedule.warmup_steps, steps=schedule.steps,
        weight_decay=o.weight_decay, layer_decay=o.layer_decay, dropout=o.dropout, freeze_backbone=o.freeze_backbone,
        seed=o.seed,
        jit_compile=o.jit_compile,
        length_buckets=list(o.length_buckets) if o.length_buckets else None, backend=keras.backend.backend(),
        **_distribution_record(o.strategy, o.mesh_shape, schedule.batch_size, distributed),
        monitor=o.monitor if eval else None, early_stopping_patience=o.early_stopping_patience,
        select_best=bool(o.select_best and eval), lora_rank=o.lora_rank, lora_alpha=o.lora_alpha,
        counterfactual_augmentation=augmentation.pairs.source if augmentation else None,
        **{k: v for k, v in task_options.items() if k not in ("sequence_length", "dropout", "read_stats")},
    )
    runner = JobRunner(
        output_dir, job, _RESUME_KEYS, resume=o.resume, overwrite=o.overwrite, keep_checkpoints=o.keep_checkpoints,
        strategy=distributed, verbose=o.verbose, upgrade_record=_upgrade_record, tensorboard=o.tensorboard,
        callbacks=o.callbacks, model_format=lora and lora.format,
    )
    optimizer = dict(learning_rate=o.learning_rate, weight_decay=o.weight_decay, warmup_steps=schedule.warmup_steps,
                     total_steps=schedule.steps, layer_decay=o.layer_decay)
    model = runner.build_or_resume(lambda: _new_model(handler, backbone, o.freeze_backbone, optimizer, lora))
    apply_jit_compile(model, o.jit_compile)

    fit_started = time.time()
    best = _best_epoch_callback(runner, job, schedule)
    history = _fit(runner, model, train_features, data["validation"][1], schedule, o.batch_size, best,
                   o.length_buckets)
    train_seconds = time.time() - fit_started
    best_epoch = _select_best(runner, model, best, job)
    metrics = _evaluate(runner, spec, handler, model, data, best_epoch, o.batch_size)
    lora_record = lora.save(runner, model, tokenizer) if lora else runner.save(model, tokenizer.get_vocabulary(), tokenizer)
    if handler.label_names is not None:
        runner.write_json("labels.json", handler.label_names)
    summary = dict(
        metrics=metrics, history=history, counts=counts, best_epoch=best_epoch, train_seconds=round(train_seconds, 1),
        wall_seconds=round(time.time() - started, 1), output_dir=output_dir, resumed_from_step=runner.start_step,
    )
    summary.update({k: v for k, v in (("read_stats", task_options.get("read_stats")), ("lora", lora_record)) if v})
    runner.write_json(
        "finetune.json",
        {"job": job, "backbone": model.backbone.get_config(), "label_names": handler.label_names, **summary},
    )
    runner.finish()
    if o.verbose and runner.chief:
        _report(summary, os.path.join(output_dir, "model.keras"), o.epochs, o.keep_checkpoints)
    return summary


# --------------------------------------------------------------------------- phases
def _validate(spec, train, eval, test, options):
    """Raises on options that would fail later, before any work is done (each one's range: `FinetuneOptions`)."""
    if options.length_buckets and spec.name == "multiple_choice":
        raise ValueError("--length-buckets does not apply to multiple choice (one length for all choices).")
    if options.early_stopping_patience is not None and not eval:
        raise ValueError("--early-stopping-patience watches a validation metric: it needs an --eval file.")
    if options.layer_decay is not None and options.freeze_backbone:
        raise ValueError("--layer-decay sets the rates of the backbone's layers, and --freeze-backbone trains none.")
    monitor = options.monitor
    if not (isinstance(monitor, str) and monitor.startswith("val_")):
        raise ValueError(
            f"`monitor` must be a validation metric such as 'val_loss' or 'val_accuracy'. Received: {monitor!r}"
        )
    for path, flag in ((train, "--train"), (eval, "--eval"), (test, "--test")):
        if path is not None and not os.path.isfile(path):
            raise FileNotFoundError(f"{flag}: no such file: {path}")
    # A test file that trains or chooses would report a figure selected on itself.
    for path, flag in ((train, "--train"), (eval, "--eval")):
        if test is not None and path is not None and os.path.samefile(test, path):
            raise ValueError(f"--test {test} is also the {flag} file: the test set must be one that neither trains "
                             "nor chooses anything.")


def _distribution_record(strategy, mesh_shape, train_batch_size, distributed):
    """What the job record says of the distribution, after checking that the training batch splits evenly."""
    replicas = data_parallel_size(distributed)
    if train_batch_size % replicas:
        raise ValueError(
            f"`batch_size` is the global batch and must split evenly over the {replicas} data-parallel replicas. "
            f"Received: a training batch of {train_batch_size}"
        )
    return dict(
        strategy=strategy if strategy is None or isinstance(strategy, str) else type(strategy).__name__,
        mesh_shape=list(mesh_shape) if mesh_shape else None, data_parallel_size=replicas,
    )


def _task_options(spec, options):
    """Every task's file options (`FinetuneTaskJob.OPTIONS` names them), as `options` has them.

    Raises:
        ValueError: a classifier head's `pooling` that is no choice, or given for a task without that head.
    """
    names = dict.fromkeys(name for task in TASKS.values() for name in task.load("finetune").OPTIONS)
    task_options = {name: getattr(options, name) for name in names}
    # Checked before the backbone loads: the head is built only after the data are read.
    if task_options["pooling"] not in BertClassifier.POOLING_MODES:
        raise ValueError(
            f"--pooling must be one of {BertClassifier.POOLING_MODES}. Received: {task_options['pooling']!r}"
        )
    if task_options["pooling"] != "cls" and spec.name not in ("classifier", "regressor"):
        raise ValueError(
            f"--pooling {task_options['pooling']}: the pooling choice is the classifier's and regressor's; the "
            f"{spec.name} head has none (it takes the default, 'cls')."
        )
    return task_options


def _task_job(spec, options, sequence_length, dropout, init):
    """The task's `FinetuneTaskJob` on `options` completed with the run's values (a warning first if its head
    would read a pooler that `init`'s pretraining never trained)."""
    stride = (sequence_length - 2) // 2 if options["window_stride"] is None else options["window_stride"]
    options.update(sequence_length=sequence_length, dropout=dropout, window_stride=stride or None)
    _warn_if_the_head_reads_an_untrained_pooler(spec, options, init)
    return spec.load("finetune")(options)


def _warn_if_the_head_reads_an_untrained_pooler(spec, options, init):
    """A classifier on BERT's pooled [CLS] vector from a pretraining run that never trained the pooler: warns,
    naming `--pooling mean` (README, "Pretraining under a wall-clock budget": what each head scored)."""
    if spec.name not in ("classifier", "regressor") or options.get("pooling") != "cls":
        return
    reason = pooler_never_trained(os.fspath(init))
    if reason:
        warnings.warn(
            f"--init {init}: its backbone's pooler (the tanh layer on [CLS]) never trained: {reason}. The "
            f"{spec.name}'s head reads it; --pooling mean (finetune(..., pooling='mean')) reads the mean of the "
            "token vectors instead.",
            stacklevel=4,
        )


def _sequence_length(spec, sequence_length, backbone):
    """`sequence_length`, defaulted for the task and checked against the backbone's positions."""
    if sequence_length is None:
        sequence_length = min(384 if spec.name == "question_answerer" else 128, backbone.max_sequence_length)
    if sequence_length > backbone.max_sequence_length:
        raise ValueError(
            f"--sequence-length {sequence_length} is longer than the model's max_sequence_length="
            f"{backbone.max_sequence_length}."
        )
    return sequence_length


def _counterfactual_augmentation(spec, pairs):
    """The run's `CounterfactualAugmentation` (its pairs read and checked now, before any model loads), or None."""
    if pairs is None:
        return None
    if spec.name not in ("classifier", "regressor"):
        raise ValueError(f"--counterfactual-augmentation swaps terms in the texts of classify and regress data; the "
                         f"{spec.name} task's examples are not single texts or text pairs.")
    return CounterfactualAugmentation(pairs)


def _read_data(handler, tokenizer, train, eval, test, verbose, augmentation=None):
    """{"train", "validation", "test": (examples, features) or (None, None) without the file; "counts": ...;
    with `augmentation`, "counterfactual_augmentation": its record (the copies go into the training set only)}."""
    examples = handler.read(train)
    if augmentation is not None:
        examples, record = augmentation.apply(examples)
    data = {"train": (examples, handler.features(examples, tokenizer, training=True))}
    for split, path in (("validation", eval), ("test", test)):
        examples = handler.read(path) if path else None
        data[split] = (examples, None if examples is None else handler.features(examples, tokenizer, training=False))
    # "eval" is the validation file's count under the option's name (finetune.json readers know it by that).
    data["counts"] = {name: handler.counts(data[split][1]) for name, split in
                      (("train", "train"), ("eval", "validation"), ("test", "test")) if data[split][1] is not None}
    if augmentation is not None:
        data["counts"]["train"]["counterfactual_copies"] = record["copies_added"]
        data["counterfactual_augmentation"] = record
    if verbose:
        print(f"data: {data['counts']}")
    return data


class _Schedule(collections.namedtuple("_Schedule", "batch_size steps_per_epoch steps warmup_steps")):
    """The training batch size and step counts of a run."""


def _schedule(num_features, batch_size, epochs, warmup_ratio):
    # Full batches only (a partial last batch would cost XLA a second compiled
    # step): the data repeats (reshuffled every pass) and an epoch is
    # len // batch_size batches, so no example is ever left out. Fewer examples
    # than a batch make one batch of all of them per epoch.
    train_batch_size = min(batch_size, num_features)
    steps_per_epoch = num_features // train_batch_size
    steps = epochs * steps_per_epoch
    return _Schedule(train_batch_size, steps_per_epoch, steps, int(warmup_ratio * steps))


def _upgrade_record(recorded):
    """A checkpoint's job with its task by registry name (older ones recorded the CLI word), the classifier
    head's pooling (older ones had only BERT's [CLS] pooler) and no layer-wise rate decay (added later)."""
    if "task" not in recorded:
        return recorded
    return {"pooling": "cls", "layer_decay": None, **recorded, "task": get_task(recorded["task"]).name}


def _new_model(handler, backbone, freeze_backbone, optimizer, lora=None):
    model = handler.model(backbone)
    if freeze_backbone:
        model.backbone.trainable = False
    if lora:
        lora.enable(model)
    model.compile(optimizer=create_optimizer(**optimizer))
    return model


def _best_epoch_callback(runner, job, schedule):
    """The `BestEpoch` of a run with a validation file (run before each epoch's checkpoint), else None."""
    if not job["eval"]:
        return None
    best = BestEpoch(
        runner.path("checkpoints"), job["monitor"], schedule.steps_per_epoch, patience=job["early_stopping_patience"],
        resume=runner.start_step > 0,
    )
    runner.before_checkpoint.append(best)
    return best


def _stopped_before(runner, best, schedule):
    """Whether the checkpoint resumed from is where the run stopped early (with today's patience)."""
    if best is None or best.patience is None or runner.start_step == 0:
        return False
    record = read_best_record(best.directory)
    return (
        record is not None and record["last_epoch"] * schedule.steps_per_epoch == runner.start_step
        and record["last_epoch"] - record["epoch"] >= best.patience
    )


def _fit(runner, model, train_features, eval_features, schedule, batch_size, best, length_buckets):
    """Trains `model` from `runner.start_step` to the end; returns the history of the epochs run now."""
    if _stopped_before(runner, best, schedule):
        if runner.verbose:
            print(f"The checkpoint's run stopped early (no better {best.monitor} for {best.patience} epochs): "
                  "nothing left to train.")
        return {}
    # One seeded stream of batches for the whole run: a resumed run skips the
    # batches already trained on and sees the same ones after them.
    train_data = train_features.dataset(
        schedule.batch_size, shuffle=True, seed=runner.job["seed"], drop_remainder=True, length_buckets=length_buckets,
        repeat=True,
    ).skip(runner.start_step)
    validation = eval_features.dataset(batch_size) if eval_features is not None else None
    # On JAX and torch, `fit` builds an unbuilt compiled loss and metrics from
    # a batch it takes off its own iterator, and with `steps_per_epoch` that
    # batch is never trained on; a fresh model has them unbuilt, a resumed one
    # not, so the two runs would be a batch apart. Building them here, from a
    # batch outside the training stream, keeps both on the same batches.
    with strategy_scope(runner.strategy):
        model._symbolic_build(data_batch=next(iter(train_features.dataset(schedule.batch_size).take(1))))
    if runner.strategy is not None and keras.backend.backend() == "tensorflow":
        # Under a tf.distribute strategy Keras' `fit` builds once more, from a batch of a first iterator of the
        # training data; that iterator shares the reshuffling shuffle's seed state with the one that trains, and its
        # prefetching advances it by a timing-dependent amount (seen with two workers: another first batch on every
        # run, the workers' halves of a global batch overlapping). The model is built: skip that build.
        model._maybe_symbolic_build = lambda iterator=None, data_batch=None: None
    with warnings.catch_warnings():
        # The pooler is unused by the token classifier and question answerer
        # (as in BERT); Keras warns that it gets no gradient.
        warnings.filterwarnings("ignore", message="Gradients do not exist for variables")
        return runner.fit(
            model, prepare_dataset(train_data, runner.strategy), epochs=runner.job["epochs"],
            steps_per_epoch=schedule.steps_per_epoch, shuffle=False,  # the dataset reshuffles itself every pass
            validation_data=None if validation is None else prepare_dataset(validation, runner.strategy),
        )


def _select_best(runner, model, best, job):
    """The best epoch's record (None without a validation file); with `select_best`, its weights go into `model`."""
    record = read_best_record(best.directory) if best is not None else None
    if record is None:
        return None
    if job["select_best"] and record["epoch"] != record["last_epoch"]:
        with strategy_scope(runner.strategy):
            if lora_info(model):  # a .weights.h5 holds merged kernels, no adapters: the adapter file has them
                load_adapter(model, os.path.join(best.directory, BEST_ADAPTER_FILE))
            else:
                model.load_weights(os.path.join(best.directory, BEST_WEIGHTS_FILE))
    return {
        "epoch": record["epoch"], "step": record["step"], "monitor": record["monitor"], "value": record["value"],
        "epochs_run": record["last_epoch"], "stopped_early": record["stopped_early"],
        "model_keras": "best epoch" if job["select_best"] else "last epoch",
    }


def _evaluate(runner, spec, handler, model, data, best_epoch, batch_size):
    """metrics.json's sections: `validation` and `test` metrics of the final model, for the files given, and
    `selection` (which epoch model.keras holds, chosen on what); written with the predictions to the output folder.

    Both sets are scored on the same weights, those of model.keras, after training: the test set's only use.
    """
    metrics = {}
    for split, files in (("validation", _VALIDATION_FILES), ("test", _TEST_FILES)):
        examples, features = data[split]
        if features is None:  # no such file this time: leave no report of an earlier run in the folder
            for name in files:
                if os.path.exists(runner.path(name)):
                    os.remove(runner.path(name))
            continue
        with strategy_scope(runner.strategy):  # keras.distribution (JAX) predicts on the model's devices in its scope
            metrics[split], predictions = handler.evaluate(model, features, examples, batch_size)
        if spec.name == "question_answerer":
            official = {p["id"]: p["prediction"] for p in predictions}  # the official eval script's input
            runner.write_json(files[1], official)
        rows = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in predictions)
        write_text_atomically(rows, runner.path(files[0]))
    if best_epoch is not None:
        metrics["selection"] = dict(best_epoch, chosen_on="validation")
    if data.get("counterfactual_augmentation"):  # what the training set held, beside the figures it led to
        metrics["counterfactual_augmentation"] = data["counterfactual_augmentation"]
    if metrics:
        runner.write_json("metrics.json", metrics)
    elif os.path.exists(runner.path("metrics.json")):
        os.remove(runner.path("metrics.json"))
    return metrics


def _report(summary, model_path, epochs, keep_checkpoints=True):
    for line in _evaluation_lines(summary["metrics"]):
        print(line)
    best = summary["best_epoch"]
    if best is not None:
        waited = best["epochs_run"] - best["epoch"]
        stopped = (f"; stopped early after epoch {best['epochs_run']} of {epochs} ({waited} epochs without a better "
                   f"{best['monitor']})" if best["stopped_early"] else "")
        print(f"best epoch {best['epoch']} by {best['monitor']} {best['value']:.4f}{stopped}")
    which = ""
    if best is not None and best["model_keras"] == "best epoch":
        kept = "; the last epoch's weights are in checkpoints/ for --resume" if keep_checkpoints else ""
        which = f" (epoch {best['epoch']}, the best{kept})"
    print(f"saved {model_path}{which} ({summary['train_seconds']} s training)")


# How the printed summary names each set: what it is, and what it did in the run.
SET_NAMES = {"validation": "validation (--eval, chose the epoch)", "test": "test (--test, chose nothing)"}


def _evaluation_lines(metrics):
    """One line per evaluated set, named by what it did (nothing is called test without a --test file)."""
    if "validation" not in metrics and "test" not in metrics:
        return ["no --eval or --test file: no evaluation"]
    return [f"{SET_NAMES[split]}: {_metrics_text(metrics[split])}" for split in ("validation", "test")
            if split in metrics]


def _metrics_text(metrics):
    """A set's metrics: for a classifier, accuracy against the majority-class baseline and which F1 it is."""
    if "majority_class_accuracy" not in metrics:
        shown = {k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items() if k != "per_type"}
        return str(shown)
    parts = [
        f"accuracy {metrics['accuracy']:.4f} (majority-class baseline {metrics['majority_class_accuracy']:.4f}: "
        f"always {metrics['majority_class']!r}, the training labels' most frequent)"
    ]
    if "f1" in metrics:
        parts.append(f"F1 of the positive class {metrics['f1_class']!r} {metrics['f1']:.4f}")
    parts.append(f"macro F1 (unweighted mean over the classes) {metrics['macro_f1']:.4f}")
    return ", ".join(parts)
