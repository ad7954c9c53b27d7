"""The pretraining job behind `keras-bert pretrain`: text files in, a pretrained BERT out.

Everything here composes public pieces: `BertTokenizer`, `pretraining_dataset`,
`BertBackbone.from_size`, `BertPretrainer`, `create_optimizer`, and the
resumable checkpoints of `keras_bert.jobs.checkpointing`.

Output folder layout:
    model.keras          the final BertPretrainer (its `.backbone` is the encoder)
    vocab.txt            the vocabulary the model was trained with
    config.json          backbone config, job arguments, final metrics
    history.csv          per-epoch (= per-checkpoint) training and held-out metrics
    logs/                TensorBoard logs
    checkpoints/         the latest resumable checkpoint
"""

import json
import os
import shutil
import tempfile
import time

import keras

from keras_bert.jobs.checkpointing import (
    NonFiniteLossGuard,
    ResumableCheckpoint,
    has_checkpoint,
    load_checkpoint,
    save_model_atomic,
    write_atomic_json,
)
from keras_bert.distribution import data_parallel_size, is_chief, prepare_dataset, resolve_strategy, strategy_scope
from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.bert_pretrainer import BertPretrainer
from keras_bert.optimizers import create_optimizer


def default_checkpoint_every(steps):
    """The largest divisor of `steps` that is at most max(steps // 10, 1) and 1000."""
    limit = max(1, min(steps // 10, 1000))
    return max(d for d in range(1, limit + 1) if steps % d == 0)


def heldout_baselines(dataset):
    """Trivial held-out accuracies: always the most frequent masked token; always the majority NSP label.

    NSP labels count by their weight, so the empty slots of packed rows (weight 0) count for nothing.
    """
    token_counts, label_counts = {}, {}
    for _, y, w in dataset.as_numpy_iterator():
        for token, weight in zip(y["mlm"].ravel(), w["mlm"].ravel()):
            if weight > 0:
                token_counts[token] = token_counts.get(token, 0.0) + weight
        for label, weight in zip(y["nsp"].ravel(), w["nsp"].ravel()):
            if weight > 0:
                label_counts[label] = label_counts.get(label, 0) + weight
    return {
        "val_mlm_accuracy_most_frequent_token": float(max(token_counts.values()) / sum(token_counts.values())),
        "val_nsp_accuracy_majority_label": float(max(label_counts.values()) / sum(label_counts.values())),
    }


def pretrain(
    corpus,
    vocabulary,
    output_dir,
    size="mini",
    sequence_length=128,
    batch_size=32,
    steps=1000,
    masking="token",
    mode="dynamic",
    dupe_factor=5,
    optimizer="adamw",
    learning_rate=1e-4,
    weight_decay=0.01,
    warmup_steps=None,
    gradient_accumulation_steps=None,
    checkpoint_every=None,
    resume=False,
    seed=0,
    eval_corpus=None,
    eval_batches=20,
    lowercase=True,
    dropout=0.1,
    dtype=None,
    strategy=None,
    mesh_shape=None,
    tpu=None,
    steps_per_execution=1,
    tensorboard=True,
    verbose=1,
    callbacks=(),
    document_boundary="chapter",
    line_format="wrapped",
    pack_sequences=False,
    max_sequences_per_pack=3,
):
    """Pretrains a BERT with MLM + NSP from text files.

    Args:
        corpus: text files (a path, glob, folder, or list of them).
        vocabulary: path of a vocab.txt (see `keras-bert vocab`).
        output_dir: where the model, logs and checkpoints go.
        size: named BERT size ("tiny", "mini", ..., "large").
        sequence_length, batch_size: example shape; `batch_size` is the global
            batch, split evenly across the data-parallel replicas of `strategy`.
        steps: training batches in all (with gradient accumulation, every N of them make one update).
        masking: "token" or "whole-word".
        mode: "dynamic" (masks drawn anew every epoch) or "static" (TFRecords).
        dupe_factor: static mode only.
        optimizer: "adamw" or "lamb".
        learning_rate, weight_decay: peak rate and decoupled decay.
        warmup_steps: linear warmup (default 10% of `steps`), then linear decay to 0.
        gradient_accumulation_steps: optional; apply the update every N batches.
        checkpoint_every: steps between checkpoints and held-out evaluations;
            must divide `steps` (default: `default_checkpoint_every(steps)`).
        resume: continue from the checkpoint in `output_dir/checkpoints`.
        seed: seeds the model, dropout and the data; same seed, same run.
        eval_corpus: held-out text files, evaluated at every checkpoint.
        eval_batches: how many held-out batches to evaluate.
        lowercase: the vocabulary is uncased.
        dropout: dropout rate.
        dtype: e.g. "mixed_bfloat16", or "mixed_float16" (Keras then wraps the
            optimizer in a `LossScaleOptimizer`).
        strategy: None, a name from `keras_bert.distribution.STRATEGIES`
            ("mirrored", "multi-worker", "tpu" on TensorFlow; "data-parallel",
            "model-parallel" on JAX), or a strategy / distribution object.
            The model and optimizer are built, and `fit` runs, under it; in a
            multi-process run only the chief writes to `output_dir`.
        mesh_shape: (data, model) device mesh for "model-parallel".
        tpu: TPU to use with "tpu" (see `keras_bert.distribution.create_strategy`).
        steps_per_execution: training steps per call into the compiled
            function (raise it on TPUs, where each call has a host round trip).
        tensorboard: write TensorBoard logs.
        verbose: 1 for progress bars and summaries, 0 for silence.
        callbacks: extra Keras callbacks.
        document_boundary: how the corpus splits into documents (see `read_documents`).
        line_format: how lines make sentences (see `read_documents`).
        pack_sequences: pack up to `max_sequences_per_pack` short pairs into
            each row, training and held-out data alike (less compute spent on
            padding; see `pretraining_dataset`). The backbone is built with
            `packed_inputs=True`; its weights load unpacked for fine-tuning.
        max_sequences_per_pack: the most pairs in one packed row.

    Returns:
        dict with the final training and held-out metrics, the baselines, and the wall time.
    """
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
    from keras_bert.preprocessing.pretraining import pretraining_dataset
    from keras_bert.preprocessing.vocabulary import write_vocabulary

    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"`steps` must be a positive int. Received: steps={steps!r}")
    checkpoint_every = checkpoint_every or default_checkpoint_every(steps)
    if steps % checkpoint_every:
        raise ValueError(
            f"`checkpoint_every` must divide `steps` (checkpoints close epochs). Received: "
            f"checkpoint_every={checkpoint_every}, steps={steps}"
        )
    warmup_steps = int(0.1 * steps) if warmup_steps is None else warmup_steps
    # Before any other TensorFlow work: MultiWorkerMirroredStrategy configures
    # the runtime for the cluster when it is created.
    distributed = resolve_strategy(strategy, mesh_shape=mesh_shape, tpu=tpu)
    replicas = data_parallel_size(distributed)
    if batch_size % replicas:
        raise ValueError(
            f"`batch_size` is the global batch and must split evenly over the {replicas} data-parallel "
            f"replicas. Received: batch_size={batch_size}"
        )
    # Only the chief writes to output_dir. Saving runs collective ops under
    # MultiWorkerMirroredStrategy, so the other workers save too, into a
    # temporary folder deleted at the end (tf.distribute's pattern for this).
    chief = is_chief()
    write_dir = output_dir if chief else tempfile.mkdtemp(prefix="keras_bert_worker_")
    os.makedirs(write_dir, exist_ok=True)
    checkpoint_dir = os.path.join(output_dir, "checkpoints")
    started = time.time()

    keras.utils.set_random_seed(seed)
    tokenizer = BertTokenizer(vocabulary, lowercase=lowercase)
    data_options = dict(
        tokenizer=tokenizer,
        sequence_length=sequence_length,
        batch_size=batch_size,
        masking=masking,
        document_boundary=document_boundary,
        line_format=line_format,
        verbose=verbose,
    )
    if pack_sequences:
        data_options.update(pack_sequences=True, max_sequences_per_pack=max_sequences_per_pack)

    start_step = 0
    with strategy_scope(distributed):
        if resume and has_checkpoint(checkpoint_dir):
            model, state = load_checkpoint(checkpoint_dir)
            start_step = state["step"]
            if verbose:
                print(f"Resuming from step {start_step} of {steps} ({checkpoint_dir})")
        else:
            if resume and verbose:
                print(f"No checkpoint in {checkpoint_dir}: starting from scratch.")
            backbone = BertBackbone.from_size(
                size,
                vocabulary_size=tokenizer.vocabulary_size(),
                max_sequence_length=max(512, sequence_length),
                dropout=dropout,
                dtype=dtype,
                packed_inputs=pack_sequences,
            )
            model = BertPretrainer(backbone)
            model.compile(
                optimizer=create_optimizer(
                    optimizer,
                    learning_rate=learning_rate,
                    weight_decay=weight_decay,
                    warmup_steps=warmup_steps,
                    total_steps=steps,
                    gradient_accumulation_steps=gradient_accumulation_steps,
                ),
                steps_per_execution=steps_per_execution,
            )

    # The data position is part of the state: a resumed run skips the batches
    # already trained on, and the seeded pipeline yields the same ones again.
    train = pretraining_dataset(corpus, mode=mode, dupe_factor=dupe_factor, seed=seed, **data_options)
    train = prepare_dataset(train.repeat().skip(start_step).prefetch(4), distributed)
    validation, baselines = None, {}
    if eval_corpus:
        validation = pretraining_dataset(
            eval_corpus, mode="dynamic", seed=f"{seed}:eval", resample_pairs_each_epoch=False, shuffle=False,
            **data_options,
        )
        validation = prepare_dataset(validation.take(eval_batches).cache(), distributed)
        baselines = heldout_baselines(validation)

    job = dict(
        corpus=str(corpus), eval_corpus=str(eval_corpus) if eval_corpus else None, size=size,
        sequence_length=sequence_length, batch_size=batch_size, steps=steps, masking=masking, mode=mode,
        optimizer=optimizer, learning_rate=learning_rate, weight_decay=weight_decay, warmup_steps=warmup_steps,
        gradient_accumulation_steps=gradient_accumulation_steps, checkpoint_every=checkpoint_every, seed=seed,
        lowercase=lowercase, dropout=dropout, dtype=str(dtype) if dtype else None, backend=keras.backend.backend(),
        strategy=strategy if strategy is None or isinstance(strategy, str) else type(strategy).__name__,
        mesh_shape=list(mesh_shape) if mesh_shape else None, data_parallel_size=replicas,
    )
    if pack_sequences:
        job.update(pack_sequences=True, max_sequences_per_pack=max_sequences_per_pack)
    all_callbacks = [
        # The guard raises at the end of a non-finite step, before the epoch-end
        # checkpoint could save the broken weights.
        NonFiniteLossGuard(checkpoint_dir, checkpoint_every),
        ResumableCheckpoint(os.path.join(write_dir, "checkpoints"), checkpoint_every, extra={"job": job}),
        keras.callbacks.CSVLogger(os.path.join(write_dir, "history.csv"), append=start_step > 0),
        *callbacks,
    ]
    if tensorboard:
        all_callbacks.append(keras.callbacks.TensorBoard(os.path.join(write_dir, "logs")))

    history = {}
    epochs = steps // checkpoint_every
    if start_step < steps:
        with strategy_scope(distributed):
            result = model.fit(
                train,
                epochs=epochs,
                steps_per_epoch=checkpoint_every,
                initial_epoch=start_step // checkpoint_every,
                validation_data=validation,
                callbacks=all_callbacks,
                verbose=verbose,
            )
        history = {k: [float(v) for v in values] for k, values in result.history.items()}

    save_model_atomic(model, os.path.join(write_dir, "model.keras"))
    write_vocabulary(tokenizer.get_vocabulary(), os.path.join(write_dir, "vocab.txt"))
    final = {k: values[-1] for k, values in history.items()}
    summary = {
        "final_metrics": final,
        "baselines": baselines,
        "wall_seconds": round(time.time() - started, 1),
        "steps": steps,
        "resumed_from_step": start_step,
    }
    write_atomic_json(
        {"backbone": model.backbone.get_config(), "job": job, **summary},
        os.path.join(write_dir, "config.json"),
    )
    if not chief:
        shutil.rmtree(write_dir, ignore_errors=True)
    if verbose and chief:
        print(f"Saved {os.path.join(output_dir, 'model.keras')} after {summary['wall_seconds']} s")
        if "val_mlm_accuracy" in final:
            print(
                f"held-out MLM accuracy {final['val_mlm_accuracy']:.3f} (most-frequent-token baseline "
                f"{baselines['val_mlm_accuracy_most_frequent_token']:.3f}); held-out NSP accuracy "
                f"{final['val_nsp_accuracy']:.3f} (majority-label baseline {baselines['val_nsp_accuracy_majority_label']:.3f})"
            )
    return summary
