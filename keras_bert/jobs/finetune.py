"""The fine-tuning job behind `keras-bert finetune`: a pretrained BERT and labelled files in, a task model out.

    keras-bert finetune --task classify --init path/to/hf_bert --train train.tsv --eval dev.tsv \\
        --text-column sentence --label-column label --out runs/sst

Tasks: `classify` (single texts, or pairs with `--pair-column`), `regress`
(one real-valued target), `ner` (CoNLL/BIO files), `qa` (SQuAD 1.1 / 2.0
JSON) and `multiple-choice` (SWAG-style CSV). `--init` is a Hugging Face
BERT folder, a `.keras` file holding a `BertBackbone` or any model with a
`.backbone` (a `BertPretrainer` from `keras-bert pretrain`, a fine-tuned
model), any other checkpoint `BertBackbone.from_pretrained` reads, or a size
name ("tiny", "mini", ...) for a randomly initialised BERT (needs `--vocab`).

Defaults follow the BERT paper's fine-tuning recipe: AdamW (weight decay
0.01, not on LayerNorm and biases), learning rate 3e-5 with linear warmup
over the first 10% of steps and linear decay to 0, 3 epochs, batch 32,
dropout 0.1, gradient norm clipped at 1.0.

Output folder:
    model.keras           the fine-tuned task model (written atomically)
    vocab.txt             the vocabulary it reads
    labels.json           label names in id order (classify, ner)
    metrics.json          held-out metrics (with --eval)
    eval_predictions.*    held-out predictions (.jsonl; predictions.json in SQuAD's format for qa)
    history.csv           per-epoch training (and validation) loss and metrics
    finetune.json         job arguments, backbone config, data counts, metrics, timings
    checkpoints/          a resumable checkpoint at every epoch end (`--resume` continues from it)
"""

import json
import os
import time
import warnings

import keras
import numpy as np

from keras_bert.jobs.checkpointing import (
    NonFiniteLossGuard,
    ResumableCheckpoint,
    has_checkpoint,
    load_checkpoint,
    save_model_atomic,
    write_atomic_json,
    write_atomic_text,
)
from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.bert_sizes import BERT_SIZES
from keras_bert.optimizers import create_optimizer

TASKS = ("classify", "regress", "ner", "qa", "multiple-choice")


# --------------------------------------------------------------------------- loading
def _keras_backbone(path):
    from keras_bert.converters.checkpoint import load_keras_backbone

    try:
        return load_keras_backbone(path)[1]
    except ValueError as error:
        raise ValueError(f"--init: {error}") from None


def _with_dropout(backbone, dropout):
    """`backbone` with `dropout`, and unpacked: task heads take one example per row."""
    packed = getattr(backbone, "packed_inputs", False)
    if (dropout is None or backbone.dropout == dropout) and not packed:
        return backbone
    config = {**backbone.get_config(), "packed_inputs": False}
    if dropout is not None:
        config["dropout"] = dropout
    rebuilt = BertBackbone.from_config(config)
    rebuilt.set_weights(backbone.get_weights())
    return rebuilt


def _job_lowercase(folder):
    """`lowercase` recorded by a keras-bert job next to a .keras file, if any."""
    for name in ("finetune.json", "config.json"):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as f:
                    job = json.load(f).get("job", {})
            except (OSError, json.JSONDecodeError, AttributeError):
                continue
            if isinstance(job, dict) and "lowercase" in job:
                return bool(job["lowercase"])
    return None


def load_init(init, vocab=None, lowercase=None, dropout=0.1, max_sequence_length=512):
    """The backbone and tokenizer a fine-tuning run starts from.

    Args:
        init: a checkpoint folder or file (Hugging Face folder, `.keras`
            file, or whatever `BertBackbone.from_pretrained` reads), or a
            size name ("tiny", ..., "large") for random initialisation.
        vocab: a vocab.txt; default: the one in the checkpoint folder (or beside the `.keras` file).
        lowercase: the vocabulary is uncased; default: the checkpoint's
            tokenizer_config.json, the pretraining job's record, or True.
        dropout: backbone dropout during fine-tuning (None keeps the checkpoint's).
        max_sequence_length: positions of a randomly initialised backbone.

    Returns:
        `(backbone, tokenizer, description)`.
    """
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    init = os.fspath(init)
    if not os.path.exists(init) and init in BERT_SIZES:
        if vocab is None:
            raise ValueError(f"--init {init} starts from random weights and needs --vocab.")
        tokenizer = BertTokenizer(vocab, lowercase=True if lowercase is None else lowercase)
        backbone = BertBackbone.from_size(
            init, vocabulary_size=tokenizer.vocabulary_size(), max_sequence_length=max_sequence_length,
            dropout=0.1 if dropout is None else dropout,
        )
        return backbone, tokenizer, f"random {init} BERT"
    if not os.path.exists(init):
        raise FileNotFoundError(f"--init {init}: no such file or folder (nor a size name: {sorted(BERT_SIZES)})")
    folder = init if os.path.isdir(init) else os.path.dirname(os.path.abspath(init))
    if init.endswith(".keras") and os.path.isfile(init):
        backbone = _with_dropout(_keras_backbone(init), dropout)
        description = f".keras file {init}"
        if lowercase is None:
            lowercase = _job_lowercase(folder)
    else:
        kwargs = {} if dropout is None else {"dropout": dropout}
        backbone = BertBackbone.from_pretrained(init, **kwargs)
        description = f"checkpoint {init}"
    vocab = vocab or os.path.join(folder, "vocab.txt")
    if not os.path.isfile(vocab):
        raise FileNotFoundError(f"No vocab.txt for --init {init} (looked for {vocab}); pass --vocab.")
    options = {} if lowercase is None else {"lowercase": lowercase}
    tokenizer = BertTokenizer.from_pretrained(vocab, **options)
    if tokenizer.vocabulary_size() != backbone.vocabulary_size:
        raise ValueError(
            f"{vocab} has {tokenizer.vocabulary_size()} tokens but the model's embedding has "
            f"{backbone.vocabulary_size} rows: not the model's vocabulary."
        )
    return backbone, tokenizer, description


# --------------------------------------------------------------------------- tasks
class _Task:
    """Data, model and evaluation of one task kind."""

    def __init__(self, options):
        self.options = options
        self.label_names = None

    def counts(self, features):
        return {}


class _Classify(_Task):
    regression = False

    def read(self, path):
        from keras_bert.preprocessing.tasks.classification_data import read_classification_data

        o = self.options
        return read_classification_data(
            path, o["text_column"], o["label_column"], o.get("pair_column"), o.get("format"), o.get("header", True)
        )

    def features(self, examples, tokenizer, training):
        from keras_bert.preprocessing.tasks.classification_data import classification_features

        o = self.options
        features = classification_features(
            examples, tokenizer, label_names=self.label_names, regression=self.regression,
            sequence_length=o["sequence_length"], window_stride=o.get("window_stride"),
        )
        if training:
            self.label_names = features.info["label_names"]
        return features

    def model(self, backbone):
        from keras_bert.models.bert_classifier import BertClassifier

        if self.regression:
            return BertClassifier(backbone, num_classes=1, dropout=self.options["dropout"])
        return BertClassifier(
            backbone, num_classes=len(self.label_names), dropout=self.options["dropout"], label_names=self.label_names
        )

    def counts(self, features):
        return {"examples": features.info["num_examples"], "features": len(features),
                "truncated_or_windowed": features.info["num_truncated"]}

    def evaluate(self, model, features, examples, batch_size):
        from keras_bert.metrics.classification import classification_metrics, regression_metrics
        from keras_bert.preprocessing.tasks.classification_data import average_windows, encode_labels

        logits = average_windows(
            model.predict(features.dataset(batch_size, labels=False), verbose=0),
            features.info["document_index"], features.info["num_examples"],
        )
        if self.regression:
            targets, _ = encode_labels(examples, regression=True)
            values = logits[:, 0]
            metrics = regression_metrics(targets, values)
            predictions = [
                {"text": e.text, "label": float(t), "prediction": float(v)} for e, t, v in zip(examples, targets, values)
            ]
            return metrics, predictions
        targets, _ = encode_labels(examples, self.label_names)
        predicted = np.argmax(logits, axis=-1)
        metrics = classification_metrics(targets, predicted, num_classes=len(self.label_names))
        probabilities = keras.ops.convert_to_numpy(keras.ops.softmax(logits))
        predictions = [
            {"text": e.text, **({"pair": e.pair} if e.pair is not None else {}), "label": self.label_names[t],
             "prediction": self.label_names[p], "score": float(q[p])}
            for e, t, p, q in zip(examples, targets, predicted, probabilities)
        ]
        return metrics, predictions


class _Regress(_Classify):
    regression = True


class _Ner(_Task):
    def read(self, path):
        from keras_bert.preprocessing.tasks.ner_data import read_conll

        return read_conll(path, word_column=self.options["word_column"], tag_column=self.options["tag_column"])

    def features(self, examples, tokenizer, training):
        from keras_bert.preprocessing.tasks.ner_data import ner_features, ner_label_names

        if training:
            self.label_names = ner_label_names(examples)
        return ner_features(examples, tokenizer, self.label_names, self.options["sequence_length"])

    def model(self, backbone):
        from keras_bert.models.bert_token_classifier import BertTokenClassifier

        return BertTokenClassifier(
            backbone, num_classes=len(self.label_names), dropout=self.options["dropout"], label_names=self.label_names
        )

    def counts(self, features):
        info = features.info
        return {
            "sentences": len(features),
            "truncated_sentences": info["num_truncated_sentences"],
            "truncated_words": info["num_truncated_words"],
            "words_without_tokens": info["num_words_without_tokens"],
        }

    def evaluate(self, model, features, examples, batch_size):
        from keras_bert.metrics.entities import entity_metrics, token_accuracy
        from keras_bert.preprocessing.tasks.ner_data import word_predictions

        logits = model.predict(features.dataset(batch_size, labels=False), verbose=0)
        predicted = word_predictions(logits, features, self.label_names)
        true = [s.tags for s in examples]
        metrics = entity_metrics(true, predicted)
        metrics["word_accuracy"] = token_accuracy(true, predicted)
        predictions = [{"words": s.words, "tags": s.tags, "predicted": p} for s, p in zip(examples, predicted)]
        return metrics, predictions


class _Qa(_Task):
    def read(self, path):
        from keras_bert.preprocessing.tasks.squad_data import read_squad

        stats = {}
        examples = read_squad(path, on_mismatch=self.options.get("on_mismatch", "raise"), stats=stats)
        self.options.setdefault("read_stats", {})[os.fspath(path)] = stats
        return examples

    def features(self, examples, tokenizer, training):
        from keras_bert.preprocessing.tasks.squad_data import squad_features

        o = self.options
        if training and o.get("allow_no_answer") is None:
            o["allow_no_answer"] = any(e.is_impossible for e in examples)
        return squad_features(
            examples, tokenizer, o["sequence_length"], o["doc_stride"], o["max_query_length"]
        )

    def model(self, backbone):
        from keras_bert.models.bert_question_answerer import BertQuestionAnswerer

        return BertQuestionAnswerer(backbone)

    def counts(self, features):
        return {"questions": features.info["num_examples"], "windows": len(features),
                "answers_not_on_token_boundaries": features.info["answers_not_on_token_boundaries"]}

    def evaluate(self, model, features, examples, batch_size):
        from keras_bert.metrics.squad import squad_metrics
        from keras_bert.preprocessing.tasks.squad_data import decode_answers

        o = self.options
        logits = model.predict(features.dataset(batch_size, labels=False), verbose=0)
        decoded = decode_answers(
            logits, features, examples, n_best_size=o["n_best_size"], max_answer_length=o["max_answer_length"],
            allow_no_answer=o["allow_no_answer"], null_score_diff_threshold=o["null_score_diff_threshold"],
        )
        metrics = squad_metrics({k: v["text"] for k, v in decoded.items()}, {e.id: e.answer_texts for e in examples})
        predictions = [
            {"id": e.id, "question": e.question, "answers": e.answer_texts, "prediction": decoded[e.id]["text"],
             "start": decoded[e.id]["start"], "score": decoded[e.id]["score"]}
            for e in examples
        ]
        return metrics, predictions


class _MultipleChoice(_Task):
    def read(self, path):
        from keras_bert.preprocessing.tasks.multiple_choice_data import read_multiple_choice

        o = self.options
        return read_multiple_choice(
            path, context_column=o["context_column"], question_column=o["question_column"],
            choice_columns=o.get("choice_columns"), label_column=o["label_column"], format=o.get("format"),
            header=o.get("header", True),
        )

    def features(self, examples, tokenizer, training):
        from keras_bert.preprocessing.tasks.multiple_choice_data import multiple_choice_features

        return multiple_choice_features(examples, tokenizer, self.options["sequence_length"])

    def model(self, backbone):
        from keras_bert.models.bert_multiple_choice import BertMultipleChoice

        return BertMultipleChoice(backbone, dropout=self.options["dropout"])

    def counts(self, features):
        return {"examples": len(features), "choices": features.info["num_choices"],
                "truncated_sequences": features.info["num_truncated"]}

    def evaluate(self, model, features, examples, batch_size):
        from keras_bert.metrics.classification import accuracy

        logits = model.predict(features.dataset(batch_size, labels=False), verbose=0)
        predicted = np.argmax(logits, axis=-1)
        metrics = {"accuracy": accuracy(features.y, predicted)}
        predictions = [
            {"context": e.context, "label": e.label, "prediction": int(p)} for e, p in zip(examples, predicted)
        ]
        return metrics, predictions


_TASK_CLASSES = {"classify": _Classify, "regress": _Regress, "ner": _Ner, "qa": _Qa, "multiple-choice": _MultipleChoice}


# --------------------------------------------------------------------------- the job
def _write_jsonl(rows, path):
    write_atomic_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), path)


# Job arguments a resumed run must share with the checkpoint's run: anything
# else would silently continue a different training.
_RESUME_KEYS = ("task", "train", "batch_size", "epochs", "steps", "learning_rate", "warmup_steps", "weight_decay",
                "seed", "sequence_length", "length_buckets", "freeze_backbone")


def _check_resumable(state, job, checkpoint_dir):
    recorded = state.get("job", {})
    different = {k: (recorded.get(k), job[k]) for k in _RESUME_KEYS if recorded.get(k) != job[k]}
    if different:
        shown = ", ".join(f"{k}: checkpoint {a!r} vs now {b!r}" for k, (a, b) in different.items())
        raise ValueError(
            f"--resume: the checkpoint in {checkpoint_dir} is from a different job ({shown}); use the same "
            "arguments, or another --out folder."
        )


def finetune(
    task,
    init,
    train,
    output_dir,
    eval=None,
    vocab=None,
    lowercase=None,
    sequence_length=None,
    batch_size=32,
    epochs=3,
    learning_rate=3e-5,
    warmup_ratio=0.1,
    weight_decay=0.01,
    dropout=0.1,
    freeze_backbone=False,
    seed=0,
    verbose=1,
    callbacks=(),
    text_column="sentence",
    pair_column=None,
    label_column="label",
    format=None,
    header=True,
    window_stride=None,
    word_column=0,
    tag_column=-1,
    doc_stride=128,
    max_query_length=64,
    max_answer_length=30,
    n_best_size=20,
    allow_no_answer=None,
    null_score_diff_threshold=0.0,
    on_mismatch="raise",
    context_column="sent1",
    question_column="sent2",
    choice_columns=None,
    length_buckets=None,
    resume=False,
):
    """Fine-tunes a BERT task model on labelled files and evaluates it.

    Args:
        task: "classify", "regress", "ner", "qa" or "multiple-choice".
        init: where the backbone comes from (see `load_init`).
        train: the training file.
        output_dir: where the model and reports go (see the module docstring).
        eval: optional held-out file, evaluated after training (and its loss every epoch).
        vocab, lowercase: the vocabulary (default: the checkpoint's) and its casing.
        sequence_length: packed length (default 384 for qa, 128 otherwise, or
            the backbone's `max_sequence_length` if shorter).
        batch_size, epochs: as in `fit` (BERT: 32, 2-4). Training uses full
            batches only; the shuffle differs every epoch, so a left-out remainder
            differs too.
        learning_rate: peak rate (BERT: 2e-5 .. 5e-5).
        warmup_ratio: fraction of the steps with linear warmup; then linear decay to 0.
        weight_decay: AdamW's decoupled decay.
        dropout: dropout of the backbone and the head (BERT: 0.1).
        freeze_backbone: train the head only.
        seed: seeds weights, dropout and shuffling.
        verbose: 1 for a progress bar and a summary, 0 for silence.
        callbacks: extra Keras callbacks.
        text_column, pair_column, label_column, format, header: classify / regress columns
            (see `read_classification_data`); `label_column` is also multiple choice's.
        window_stride: classify / regress: single texts longer than the
            sequence are split into windows starting every `window_stride`
            tokens (eval: logits averaged per text); default half a window; 0 truncates.
        word_column, tag_column: ner columns (see `read_conll`).
        doc_stride, max_query_length, max_answer_length, n_best_size,
            allow_no_answer, null_score_diff_threshold, on_mismatch: qa options
            (see `squad_features`, `decode_answers`, `read_squad`); `allow_no_answer`
            defaults to whether the training data has unanswerable questions.
        context_column, question_column, choice_columns: multiple-choice
            columns (see `read_multiple_choice`; SWAG's by default).
        length_buckets: optional sequence lengths, e.g. `[16, 32, 48]`: training
            batches group texts of similar length and drop the padding beyond
            them (see `TaskFeatures.dataset`); not for multiple choice.
        resume: continue from the checkpoint in `output_dir/checkpoints` (one is
            written at every epoch end); the run then ends with the weights an
            uninterrupted run would have. Without a checkpoint it starts afresh.

    Returns:
        dict with `metrics` (held-out, when `eval`), `history`, data `counts`,
        `train_seconds`, `wall_seconds`, `output_dir`.
    """
    if task not in TASKS:
        raise ValueError(f"`task` must be one of {TASKS}. Received: task={task!r}")
    train, eval, output_dir = os.fspath(train), eval and os.fspath(eval), os.fspath(output_dir)
    for name, value in (("epochs", epochs), ("batch_size", batch_size)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"`{name}` must be a positive int. Received: {name}={value!r}")
    if not 0.0 <= warmup_ratio < 1.0:
        raise ValueError(f"`warmup_ratio` must be in [0, 1). Received: warmup_ratio={warmup_ratio!r}")
    if length_buckets and task == "multiple-choice":
        raise ValueError("--length-buckets does not apply to multiple choice (one length for all choices).")
    if length_buckets and not all(isinstance(b, int) and b > 0 for b in length_buckets):
        raise ValueError(f"`length_buckets` must be positive ints. Received: length_buckets={length_buckets!r}")
    for path, flag in ((train, "--train"), (eval, "--eval")):
        if path is not None and not os.path.isfile(path):
            raise FileNotFoundError(f"{flag}: no such file: {path}")
    started = time.time()
    keras.utils.set_random_seed(seed)
    backbone, tokenizer, source = load_init(init, vocab=vocab, lowercase=lowercase, dropout=dropout)
    if sequence_length is None:
        sequence_length = min(384 if task == "qa" else 128, backbone.max_sequence_length)
    if sequence_length > backbone.max_sequence_length:
        raise ValueError(
            f"--sequence-length {sequence_length} is longer than the model's max_sequence_length="
            f"{backbone.max_sequence_length}."
        )
    if window_stride is None:
        window_stride = (sequence_length - 2) // 2
    options = dict(
        sequence_length=sequence_length, dropout=dropout, text_column=text_column, pair_column=pair_column,
        label_column=label_column, format=format, header=header, window_stride=window_stride or None,
        word_column=word_column, tag_column=tag_column, doc_stride=doc_stride, max_query_length=max_query_length,
        max_answer_length=max_answer_length, n_best_size=n_best_size, allow_no_answer=allow_no_answer,
        null_score_diff_threshold=null_score_diff_threshold, on_mismatch=on_mismatch,
        context_column=context_column, question_column=question_column, choice_columns=choice_columns,
    )
    handler = _TASK_CLASSES[task](options)

    if verbose:
        print(f"keras-bert finetune {task}: {source} on the {keras.backend.backend()} backend")

    train_examples = handler.read(train)
    train_features = handler.features(train_examples, tokenizer, training=True)
    eval_examples = eval_features = None
    if eval:
        eval_examples = handler.read(eval)
        eval_features = handler.features(eval_examples, tokenizer, training=False)
    counts = {"train": handler.counts(train_features)}
    if eval_features is not None:
        counts["eval"] = handler.counts(eval_features)
    if verbose:
        print(f"data: {counts}")

    # Full batches only (a partial last batch would cost XLA a second compiled
    # step): the data repeats (reshuffled every pass) and an epoch is
    # len // batch_size batches, so no example is ever left out. Fewer examples
    # than a batch make one batch of all of them per epoch.
    train_batch_size = min(batch_size, len(train_features))
    steps_per_epoch = len(train_features) // train_batch_size
    steps = epochs * steps_per_epoch
    warmup_steps = int(warmup_ratio * steps)
    checkpoint_dir = os.path.join(output_dir, "checkpoints")
    resumable = dict(
        task=task, train=train, batch_size=batch_size, epochs=epochs, steps=steps, learning_rate=learning_rate,
        warmup_steps=warmup_steps, weight_decay=weight_decay, seed=seed, sequence_length=sequence_length,
        length_buckets=list(length_buckets) if length_buckets else None, freeze_backbone=freeze_backbone,
    )
    start_step = 0
    if resume and has_checkpoint(checkpoint_dir):
        model, state = load_checkpoint(checkpoint_dir)
        _check_resumable(state, resumable, checkpoint_dir)
        start_step = state["step"]
        if verbose:
            print(f"resuming from step {start_step} of {steps} ({checkpoint_dir})")
    else:
        if resume and verbose:
            print(f"no checkpoint in {checkpoint_dir}: starting from scratch")
        model = handler.model(backbone)
        if freeze_backbone:
            model.backbone.trainable = False
        model.compile(
            optimizer=create_optimizer(
                learning_rate=learning_rate, weight_decay=weight_decay, warmup_steps=warmup_steps, total_steps=steps
            )
        )
    os.makedirs(output_dir, exist_ok=True)
    # One seeded stream of batches for the whole run: a resumed run skips the
    # batches already trained on and sees the same ones after them.
    train_data = train_features.dataset(
        train_batch_size, shuffle=True, seed=seed, drop_remainder=True, length_buckets=length_buckets, repeat=True,
    ).skip(start_step)
    # On JAX and torch, `fit` builds an unbuilt compiled loss and metrics from
    # a batch it takes off its own iterator, and with `steps_per_epoch` that
    # batch is never trained on; a fresh model has them unbuilt, a resumed one
    # not, so the two runs would be a batch apart. Building them here, from a
    # batch outside the training stream, keeps both on the same batches.
    model._symbolic_build(data_batch=next(iter(train_features.dataset(train_batch_size).take(1))))
    validation = eval_features.dataset(batch_size) if eval_features is not None else None
    fit_started = time.time()
    with warnings.catch_warnings():
        # The pooler is unused by the token classifier and question answerer
        # (as in BERT); Keras warns that it gets no gradient.
        warnings.filterwarnings("ignore", message="Gradients do not exist for variables")
        history = {}
        if start_step < steps:
            history = model.fit(
                train_data,
                epochs=epochs,
                initial_epoch=start_step // steps_per_epoch,
                steps_per_epoch=steps_per_epoch,
                validation_data=validation,
                shuffle=False,  # the dataset reshuffles itself every pass
                callbacks=[
                    # Raises at the end of a non-finite step, before the epoch's checkpoint.
                    NonFiniteLossGuard(checkpoint_dir, steps_per_epoch),
                    ResumableCheckpoint(checkpoint_dir, steps_per_epoch, extra={"job": resumable}),
                    keras.callbacks.CSVLogger(os.path.join(output_dir, "history.csv"), append=start_step > 0),
                    *callbacks,
                ],
                verbose=verbose,
            ).history
    train_seconds = time.time() - fit_started

    metrics = {}
    if eval_features is None:
        # No held-out file this time: leave no reports of an earlier run in the folder.
        for name in ("metrics.json", "eval_predictions.jsonl", "predictions.json"):
            if os.path.exists(os.path.join(output_dir, name)):
                os.remove(os.path.join(output_dir, name))
    else:
        metrics, predictions = handler.evaluate(model, eval_features, eval_examples, batch_size)
        if task == "qa":
            official = {p["id"]: p["prediction"] for p in predictions}  # the official eval script's input
            write_atomic_json(official, os.path.join(output_dir, "predictions.json"))
        _write_jsonl(predictions, os.path.join(output_dir, "eval_predictions.jsonl"))
        write_atomic_json(metrics, os.path.join(output_dir, "metrics.json"))

    save_model_atomic(model, os.path.join(output_dir, "model.keras"))
    vocab_path = os.path.join(output_dir, "vocab.txt")
    write_atomic_text("".join(token + "\n" for token in tokenizer.get_vocabulary()), vocab_path)
    if handler.label_names is not None:
        write_atomic_json(handler.label_names, os.path.join(output_dir, "labels.json"))
    history = {k: [float(v) for v in values] for k, values in history.items()}
    job = dict(
        task=task, init=os.fspath(init), train=os.fspath(train), eval=os.fspath(eval) if eval else None,
        lowercase=tokenizer.lowercase, sequence_length=sequence_length, batch_size=batch_size, epochs=epochs,
        learning_rate=learning_rate, warmup_ratio=warmup_ratio, warmup_steps=warmup_steps, steps=steps,
        weight_decay=weight_decay, dropout=dropout, freeze_backbone=freeze_backbone, seed=seed,
        length_buckets=list(length_buckets) if length_buckets else None,
        backend=keras.backend.backend(),
        **{k: v for k, v in options.items() if k not in ("sequence_length", "dropout", "read_stats")},
    )
    summary = {
        "metrics": metrics,
        "history": history,
        "counts": counts,
        "train_seconds": round(train_seconds, 1),
        "wall_seconds": round(time.time() - started, 1),
        "output_dir": os.fspath(output_dir),
        "resumed_from_step": start_step,
    }
    if options.get("read_stats"):
        summary["read_stats"] = options["read_stats"]
    write_atomic_json(
        {"job": job, "backbone": model.backbone.get_config(), "label_names": handler.label_names, **summary},
        os.path.join(output_dir, "finetune.json"),
    )
    if verbose:
        shown = {k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items() if k != "per_type"}
        print(f"held-out {shown}" if metrics else "no --eval file: no held-out metrics")
        print(f"saved {os.path.join(output_dir, 'model.keras')} ({summary['train_seconds']} s training)")
    return summary


# --------------------------------------------------------------------------- CLI
def add_finetune_arguments(parser):
    """Adds the `keras-bert finetune` arguments to an argparse parser."""
    parser.add_argument("--task", required=True, choices=TASKS)
    parser.add_argument("--init", required=True,
                        help="Hugging Face BERT folder, .keras file (backbone, pretrainer or task model), "
                             "or a size name (tiny, mini, ...) for random weights")
    parser.add_argument("--train", required=True, help="training file")
    parser.add_argument("--eval", help="held-out file, evaluated after training")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--vocab", help="vocab.txt (default: the one of --init)")
    case = parser.add_mutually_exclusive_group()
    case.add_argument("--lowercase", dest="lowercase", action="store_true", default=None, help="uncased vocabulary")
    case.add_argument("--cased", dest="lowercase", action="store_false", help="cased vocabulary")
    parser.add_argument("--sequence-length", type=int, help="default 128 (384 for qa)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=3e-5)
    parser.add_argument("--warmup-ratio", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--freeze-backbone", action="store_true", help="train the task head only")
    parser.add_argument("--length-buckets", type=int, nargs="+",
                        help="train on batches of similar length, cut to these lengths (e.g. 16 32 48): "
                             "less compute on padding")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--resume", action="store_true",
                        help="continue from the last checkpoint in --out (one is written at every epoch end)")
    group = parser.add_argument_group("classify / regress / multiple-choice files")
    group.add_argument("--format", choices=["tsv", "csv", "jsonl"], help="default: from the file extension")
    group.add_argument("--no-header", action="store_true",
                       help="TSV/CSV without a header row: columns are 0-based numbers")
    group.add_argument("--text-column", default="sentence")
    group.add_argument("--pair-column", help="second text of sentence pairs")
    group.add_argument("--label-column", default="label")
    group.add_argument("--window-stride", type=int,
                       help="split long single texts into windows every N tokens (default half a window; 0 truncates)")
    group = parser.add_argument_group("ner (CoNLL files)")
    group.add_argument("--word-column", type=int, default=0)
    group.add_argument("--tag-column", type=int, default=-1)
    group = parser.add_argument_group("qa (SQuAD JSON)")
    group.add_argument("--doc-stride", type=int, default=128)
    group.add_argument("--max-query-length", type=int, default=64)
    group.add_argument("--max-answer-length", type=int, default=30)
    group.add_argument("--n-best-size", type=int, default=20)
    group.add_argument("--null-score-diff-threshold", type=float, default=0.0)
    group.add_argument("--skip-mismatched-answers", action="store_true",
                       help="skip (and count) questions whose answer offsets do not match the context")
    group = parser.add_argument_group("multiple-choice (SWAG-style)")
    group.add_argument("--context-column", default="sent1")
    group.add_argument("--question-column", default="sent2", help="text put before every choice ('' for none)")
    group.add_argument("--choice-columns", nargs="+", help="default: the columns named ending0, ending1, ...")


def _column(value, header):
    if value is None or header:
        return value
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"With --no-header, columns are 0-based numbers. Received: {value!r}") from None


def run_finetune(args):
    """Runs `finetune` with parsed `keras-bert finetune` arguments; returns the exit status (0).

    The results are in the output folder (metrics.json, finetune.json) and,
    unless `--quiet`, on stdout.
    """
    header = not args.no_header
    finetune(
        task=args.task,
        init=args.init,
        train=args.train,
        output_dir=args.out,
        eval=args.eval,
        vocab=args.vocab,
        lowercase=args.lowercase,
        sequence_length=args.sequence_length,
        batch_size=args.batch_size,
        epochs=args.epochs,
        learning_rate=args.learning_rate,
        warmup_ratio=args.warmup_ratio,
        weight_decay=args.weight_decay,
        dropout=args.dropout,
        freeze_backbone=args.freeze_backbone,
        seed=args.seed,
        verbose=0 if args.quiet else 1,
        text_column=_column(args.text_column, header),
        pair_column=_column(args.pair_column, header),
        label_column=_column(args.label_column, header),
        format=args.format,
        header=header,
        window_stride=args.window_stride,
        word_column=args.word_column,
        tag_column=args.tag_column,
        doc_stride=args.doc_stride,
        max_query_length=args.max_query_length,
        max_answer_length=args.max_answer_length,
        n_best_size=args.n_best_size,
        null_score_diff_threshold=args.null_score_diff_threshold,
        on_mismatch="skip" if args.skip_mismatched_answers else "raise",
        context_column=_column(args.context_column, header),
        question_column=_column(args.question_column, header) if args.question_column != "" else None,
        choice_columns=[_column(c, header) for c in args.choice_columns] if args.choice_columns else None,
        length_buckets=args.length_buckets,
        resume=args.resume,
    )
    return 0
