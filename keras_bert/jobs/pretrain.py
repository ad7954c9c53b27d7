"""The pretraining job behind `keras-bert pretrain`: text files in, a pretrained BERT out.

Everything here composes public pieces: `BertTokenizer`, `pretraining_dataset`
(shaped by a `PretrainingDataConfig`), `BertBackbone.from_size`,
`BertPretrainer`, `create_optimizer`, and the `JobRunner` that builds or
resumes, checkpoints and saves every job.

Output folder layout (one run per folder: `overwrite` deletes an earlier run's outputs before training
starts, and model.keras and config.json, written last, exist only once the run has finished; see
`keras_bert.jobs.runner`):
    model.keras          the final BertPretrainer (its `.backbone` is the encoder: a BertBackbone, or with
                         `family="modernbert"` a ModernBertBackbone), or with `objective="electra"` the
                         ElectraPretrainer (its `.backbone` is the discriminator); uncompiled, without optimizer
                         state (`compile()` it to train it further)
    vocab.txt            the vocabulary the model was trained with
    keras_bert_tokenizer.json  (`family="modernbert"`) the byte-level BPE tokenizer itself
    config.json          backbone config, job arguments, final metrics
    history.csv          per-epoch (= per-checkpoint) training and held-out metrics
    logs/                TensorBoard logs
    checkpoints/         the latest resumable checkpoint, with the optimizer state (`--resume` continues
                         from it); deleted when the run finishes with `keep_checkpoints=False`
"""

import os
import time
import zlib

import keras

from keras_bert.distribution import (
    data_parallel_size,
    prepare_dataset,
    resolve_strategy,
    skip_steps,
    worker_index_and_count,
)
from keras_bert.jobs.compiled_step_options import apply_jit_compile
from keras_bert.jobs.job_options import takes_options
from keras_bert.jobs.pretrain_options import PretrainOptions
from keras_bert.jobs.progress import CheckpointIntervalProgbar
from keras_bert.jobs.runner import JobRunner
from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.bert_pretrainer import BertPretrainer
from keras_bert.models.bert_sizes import BERT_SIZES
from keras_bert.models.electra_backbone import ElectraBackbone
from keras_bert.models.electra_pretrainer import ElectraPretrainer
from keras_bert.models.modern_bert_backbone import ModernBertBackbone
from keras_bert.optimizers import create_optimizer

# Job arguments a resumed run must share with its checkpoint (besides every
# data option but where static TFRecords go): anything else would silently
# continue a different training.
_RESUME_KEYS = ("corpus", "size", "steps", "optimizer", "learning_rate", "weight_decay", "warmup_steps",
                "gradient_accumulation_steps", "checkpoint_every", "lowercase", "dropout", "dtype",
                "objective", "generator_size", "rtd_weight", "family", "encoder")
# The models `objective` picks: BERT's masked LM (+ the sentence task of the data options) or ELECTRA's
# replaced-token detection (the data objectives, masking and sentence task, are `PretrainingDataConfig`'s).
MODEL_OBJECTIVES = ("bert", "electra")
# BertBackbone's encoder options as BERT has them (the job's `encoder` record when none is given).
ENCODER_DEFAULTS = {
    "normalize_first": False, "gated_feed_forward": False, "attention_bias": True, "feed_forward_bias": True,
    "layer_norm_bias": True,
}
# The backbone families `family` picks, and the data options each one's recipe sets where the caller gives none.
# ModernBERT (Warner et al., 2024): masked LM only at 30%, packed documents that do not attend to each other.
FAMILY_DATA_DEFAULTS = {
    "bert": {},
    "modernbert": {"sentence_task": "none", "masking_rate": 0.3, "pack_sequences": True},
}


def default_checkpoint_every(steps):
    """The largest divisor of `steps` that is at most max(steps // 10, 1) and 1000."""
    limit = max(1, min(steps // 10, 1000))
    return max(d for d in range(1, limit + 1) if steps % d == 0)


def heldout_baselines(dataset):
    """Trivial held-out accuracies: always the most frequent masked token; always the majority NSP label.

    NSP labels count by their weight, so the empty slots of packed rows (weight 0) count for nothing.
    Without a sentence task (`sentence_task="none"`) there is no label baseline.
    """
    token_counts, label_counts = {}, {}
    for _, y, w in dataset.as_numpy_iterator():
        for token, weight in zip(y["mlm"].ravel(), w["mlm"].ravel()):
            if weight > 0:
                token_counts[token] = token_counts.get(token, 0.0) + weight
        for label, weight in zip(y["nsp"].ravel(), w["nsp"].ravel()) if "nsp" in y else ():
            if weight > 0:
                label_counts[label] = label_counts.get(label, 0) + weight
    baselines = {"val_mlm_accuracy_most_frequent_token": float(max(token_counts.values()) / sum(token_counts.values()))}
    if label_counts:
        baselines["val_nsp_accuracy_majority_label"] = float(max(label_counts.values()) / sum(label_counts.values()))
    return baselines


def heldout_metrics(final_metrics, sentence_task):
    """The held-out accuracies under the objective's names: `mlm_accuracy`, and `nsp_accuracy` or `sop_accuracy`.

    SOP trains the NSP head and label slot, so Keras logs it as `val_nsp_accuracy`;
    a model with the MLM output alone (`sentence_task="none"`) has it logged
    without the output's name, as `val_accuracy`.
    """
    if sentence_task == "none":
        names = {"val_accuracy": "mlm_accuracy"}
    else:
        names = {"val_mlm_accuracy": "mlm_accuracy", "val_nsp_accuracy": f"{sentence_task}_accuracy"}
    return {name: final_metrics[key] for key, name in names.items() if key in final_metrics}


@takes_options(PretrainOptions, more_keywords="data_options")
def pretrain(options, **data_options):
    """Pretrains a BERT with MLM + NSP (or SOP, or MLM alone: `sentence_task`) from text files.

    Args:
        options: given as keywords, the fields of `PretrainOptions` (each
            documented there; `corpus`, `vocabulary`, `output_dir` and `data`
            by position too). A resumed run (`resume`) must have the
            checkpoint's arguments (anything that changes the training: size,
            data options, steps, optimizer, learning rate, seed, ...), else
            ValueError names the differences; `seed` defaults to `data.seed`.
        **data_options: `PretrainingDataConfig` fields, replacing those of
            `data`: `sequence_length`, `batch_size` (the global batch, split
            evenly across the data-parallel replicas of `strategy`),
            `masking` ("token", "whole-word", "span", "ngram"), `sentence_task`
            ("nsp", "sop", "none"), `mode` ("dynamic": masks
            drawn anew every epoch; "static": TFRecords), `dupe_factor`,
            `document_boundary`, `line_format`, `pack_sequences` (pack up to
            `max_sequences_per_pack` short pairs into each row, training and
            held-out data alike; the backbone is then built with
            `packed_inputs=True` and its weights load unpacked for
            fine-tuning), `max_sequences_per_pack`, `streaming` (see README), ...

    Where the state goes: `output_dir/model.keras` holds the pretrained model
    without its optimizer state (what fine-tuning's `init` and export need);
    `output_dir/checkpoints/` holds the last checkpoint with it, which only
    `resume` reads (`keep_checkpoints=False` deletes it when the run finishes).

    Returns:
        dict: final and held-out metrics (`heldout`: named by objective), baselines, wall time.

    Raises:
        ValueError: an option out of its range (`PretrainOptions`), before anything is read.
        FileExistsError: `output_dir` holds an earlier run, and neither `resume` (with a checkpoint) nor
            `overwrite` says what to do with it.
    """
    started, o = time.time(), options
    checkpoint_every = _validate_steps(o.steps, o.checkpoint_every)
    warmup_steps = int(0.1 * o.steps) if o.warmup_steps is None else o.warmup_steps
    config = _data_config(o.data, data_options, o.seed, o.family)
    objective = objective_options(o.objective, o.size, config, o.generator_size, o.rtd_weight, o.family)
    encoder = encoder_options(o.normalize_first, o.gated_feed_forward, o.biases, o.family, o.objective)
    # Before any other TensorFlow work: MultiWorkerMirroredStrategy configures
    # the runtime for the cluster when it is created.
    distributed = resolve_strategy(o.strategy, mesh_shape=o.mesh_shape, tpu=o.tpu)
    replicas = _check_batch_split(config.batch_size, distributed)
    updates = dict(
        learning_rate=o.learning_rate, weight_decay=o.weight_decay, warmup_steps=warmup_steps,
        gradient_accumulation_steps=o.gradient_accumulation_steps,
    )
    job = dict(
        corpus=str(o.corpus), eval_corpus=str(o.eval_corpus) if o.eval_corpus else None, size=o.size, steps=o.steps,
        optimizer=o.optimizer, **updates, checkpoint_every=checkpoint_every, lowercase=o.lowercase, dropout=o.dropout,
        family=o.family, encoder=encoder, jit_compile=o.jit_compile,
        dtype=str(o.dtype) if o.dtype else None, backend=keras.backend.backend(),
        strategy=o.strategy if o.strategy is None or isinstance(o.strategy, str) else type(o.strategy).__name__,
        mesh_shape=list(o.mesh_shape) if o.mesh_shape else None, data_parallel_size=replicas,
        **_recorded_data_options(config), **objective,
    )
    data_keys = tuple(k for k in _recorded_data_options(config) if k != "tfrecords_dir")
    runner = JobRunner(
        o.output_dir, job, _RESUME_KEYS + data_keys, resume=o.resume, overwrite=o.overwrite,
        keep_checkpoints=o.keep_checkpoints, strategy=distributed, tensorboard=o.tensorboard,
        verbose=o.verbose,  # progress as "Steps 1-20 of 200", not "Epoch 1/10":
        callbacks=[*o.callbacks, *([CheckpointIntervalProgbar()] if o.verbose else [])], epoch_name="checkpoint",
    )

    keras.utils.set_random_seed(config.seed)
    tokenizer = _tokenizer(o.vocabulary, o.lowercase, o.family)
    model = runner.build_or_resume(
        lambda: _build_pretrainer(
            o.size, tokenizer.vocabulary_size(), config, o.dropout, o.dtype,
            create_optimizer(o.optimizer, total_steps=o.steps, **updates), o.steps_per_execution, **objective,
            family=o.family, padding_id=tokenizer.pad_token_id, encoder=encoder,
        )
    )
    apply_jit_compile(model, o.jit_compile)
    train, validation, baselines = _datasets(
        o.corpus, o.eval_corpus, o.eval_batches, tokenizer, config, runner.start_step, distributed, o.verbose
    )
    history = runner.fit(
        model, train, epochs=o.steps // checkpoint_every, steps_per_epoch=checkpoint_every, validation_data=validation
    )
    runner.save(model, tokenizer.get_vocabulary(), tokenizer)
    summary = _summary(history, baselines, started, o.steps, runner.start_step, config.sentence_task, objective)
    runner.write_json("config.json", {"backbone": model.backbone.get_config(), "job": job, **summary})
    runner.finish()
    if o.verbose and runner.chief:
        _report(summary, os.path.join(o.output_dir, "model.keras"))
    return summary


# --------------------------------------------------------------------------- phases
def _validate_steps(steps, checkpoint_every):
    """`checkpoint_every` (defaulted), after checking that it divides `steps` (positive: `PretrainOptions`)."""
    checkpoint_every = checkpoint_every or default_checkpoint_every(steps)
    if steps % checkpoint_every:
        raise ValueError(
            f"`checkpoint_every` must divide `steps` (checkpoints close epochs). Received: "
            f"checkpoint_every={checkpoint_every}, steps={steps}"
        )
    return checkpoint_every


def _data_config(data, data_options, seed, family="bert"):
    """`data` (or the default `PretrainingDataConfig` with the family's recipe) with `data_options` and `seed` applied."""
    # defers TensorFlow: importing keras_bert.preprocessing imports the tokenizer's tensorflow_text.
    from keras_bert.preprocessing.pretraining.config import PretrainingDataConfig

    if family not in FAMILY_DATA_DEFAULTS:
        raise ValueError(f"`family` must be one of {list(FAMILY_DATA_DEFAULTS)}. Received: family={family!r}")
    if data is None:
        data = PretrainingDataConfig(**FAMILY_DATA_DEFAULTS[family])
    config = data.replace(**data_options)
    if family == "modernbert" and config.sentence_task != "none":
        raise ValueError(
            "family='modernbert' pretrains the masked LM alone: a ModernBertBackbone has no pooler for a sentence "
            f"task. Received: sentence_task={config.sentence_task!r}"
        )
    return config if seed is None else config.replace(seed=seed)


def _recorded_data_options(config):
    """The data options as config.json records them; `output_dir` is where static TFRecords go."""
    options = config.to_dict()
    options["tfrecords_dir"] = options.pop("output_dir")
    return options


def _check_batch_split(batch_size, distributed):
    """The number of data-parallel replicas, after checking that they split `batch_size` evenly."""
    replicas = data_parallel_size(distributed)
    if batch_size % replicas:
        raise ValueError(
            f"`batch_size` is the global batch and must split evenly over the {replicas} data-parallel "
            f"replicas. Received: batch_size={batch_size}"
        )
    return replicas


def _tokenizer(vocabulary, lowercase, family="bert"):
    """BERT's WordPiece tokenizer of `vocab.txt`, or ModernBERT's byte-level BPE of a folder's `tokenizer.json`."""
    if family == "modernbert":
        # defers TensorFlow, as below
        from keras_bert.preprocessing.modern_bert_tokenizer import ModernBertTokenizer

        folder = vocabulary if os.path.isdir(vocabulary) else os.path.dirname(os.path.abspath(vocabulary))
        return ModernBertTokenizer.from_pretrained(folder)
    # defers TensorFlow: the tokenizer is tensorflow_text's.
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    return BertTokenizer(vocabulary, lowercase=lowercase)


def objective_options(objective, size, config, generator_size=0.25, rtd_weight=50.0, family="bert"):
    """The job record's entries of the objective, after checking what ELECTRA cannot do.

    "bert": a `BertPretrainer` (masked LM and the sentence task). "electra": an
    `ElectraPretrainer` whose discriminator, the model to fine-tune, is an
    `ElectraBackbone` of `size`; a generator `generator_size` as wide fills the
    masked positions with samples, and the RTD loss weighs `rtd_weight`. The
    batches are the same (their sentence labels unused), not packed; the
    summary then also has `heldout`: the held-out generator MLM and RTD accuracies.

    Returns:
        `{"objective": "bert"}`, or for "electra" also `generator_size` and `rtd_weight`.
    """
    if objective not in MODEL_OBJECTIVES:
        raise ValueError(f"`objective` must be one of {list(MODEL_OBJECTIVES)}. Received: objective={objective!r}")
    if objective == "electra" and family != "bert":
        raise ValueError(f"objective='electra' trains ELECTRA's own backbones. Received: family={family!r}")
    if objective == "electra" and config.pack_sequences:
        raise ValueError(
            "objective='electra' takes one example per row: ElectraBackbone has no packed inputs. "
            "Received: pack_sequences=True"
        )
    if objective == "electra" and size not in BERT_SIZES:
        raise ValueError(f"`size` must be one of {list(BERT_SIZES)}. Received: size={size!r}")
    if objective == "bert":
        return {"objective": objective}
    return {"objective": objective, "generator_size": generator_size, "rtd_weight": rtd_weight}


def encoder_options(normalize_first, gated_feed_forward, biases, family="bert", objective="bert"):
    """The block arguments of the encoder options (the job records them as `encoder`), after checking that the
    family takes them: BertBackbone and ElectraBackbone (discriminator and generator) take them; ModernBERT's
    encoder is fixed (pre-LN, gated, bias-free)."""
    encoder = {"normalize_first": bool(normalize_first), "gated_feed_forward": bool(gated_feed_forward)}
    encoder.update(attention_bias=bool(biases), feed_forward_bias=bool(biases), layer_norm_bias=bool(biases))
    changed = [name for name, value in encoder.items() if value != ENCODER_DEFAULTS[name]]
    if changed and family != "bert":
        raise ValueError(
            f"The encoder options ({', '.join(changed)}) are BertBackbone's and ElectraBackbone's (family='bert'); "
            f"ModernBERT's encoder is fixed. Received: family={family!r}, objective={objective!r}"
        )
    return encoder


def electra_heldout_metrics(final_metrics):
    """The held-out accuracies of an ELECTRA run: the generator's MLM, replaced-token detection (all tokens,
    replaced tokens, and the all-original baseline)."""
    names = {
        "val_generator_accuracy": "generator_mlm_accuracy",
        "val_rtd_accuracy": "rtd_accuracy",
        "val_rtd_replaced_accuracy": "rtd_replaced_accuracy",
        "val_rtd_all_original_accuracy": "rtd_all_original_accuracy",
    }
    return {name: final_metrics[key] for key, name in names.items() if key in final_metrics}


def _build_electra_pretrainer(
    size, vocabulary_size, config, dropout, dtype, optimizer, steps_per_execution, generator_size, rtd_weight,
    encoder=None,
):
    """A new, compiled `ElectraPretrainer` whose discriminator is an `ElectraBackbone` of the BERT `size`."""
    backbone = ElectraBackbone(
        vocabulary_size=vocabulary_size,
        max_sequence_length=max(512, config.sequence_length),
        dropout=dropout,
        dtype=dtype,
        **BERT_SIZES[size],
        **(encoder or {}),
    )
    # The replacements' sampling is seeded from the data seed (an int or a str; Keras' seeds are ints).
    seed = config.seed if isinstance(config.seed, int) else zlib.crc32(str(config.seed).encode())
    model = ElectraPretrainer(backbone, generator_size=generator_size, rtd_weight=rtd_weight, seed=seed % 2**31)
    model.compile(optimizer=optimizer, steps_per_execution=steps_per_execution)
    return model


def _build_pretrainer(size, vocabulary_size, config, dropout, dtype, optimizer, steps_per_execution, objective="bert",
                      family="bert", padding_id=0, encoder=None, **electra_options):
    """A new, compiled `BertPretrainer` of `size` for batches shaped by `config` (or the `ElectraPretrainer`)."""
    if objective == "electra":
        return _build_electra_pretrainer(
            size, vocabulary_size, config, dropout, dtype, optimizer, steps_per_execution, **electra_options,
            encoder=encoder,
        )
    if family == "modernbert":
        # Rotary positions have no table: the model's longest input is ModernBERT's 8,192 tokens whatever the data.
        backbone = ModernBertBackbone.from_size(
            size, vocabulary_size=vocabulary_size, padding_id=padding_id, dropout=dropout, dtype=dtype,
            packed_inputs=config.pack_sequences,
        )
        model = BertPretrainer(backbone, sentence_head=False)  # ModernBERT's MLM head (`masked_lm_head_for`)
        model.compile(optimizer=optimizer, steps_per_execution=steps_per_execution)
        return model
    backbone = BertBackbone.from_size(
        size,
        vocabulary_size=vocabulary_size,
        max_sequence_length=max(512, config.sequence_length),
        dropout=dropout,
        dtype=dtype,
        packed_inputs=config.pack_sequences,
        **(encoder or {}),
    )
    model = BertPretrainer(backbone, sentence_head=config.sentence_task != "none")
    model.compile(optimizer=optimizer, steps_per_execution=steps_per_execution)
    return model


def _datasets(corpus, eval_corpus, eval_batches, tokenizer, config, start_step, distributed, verbose):
    """`(train, validation or None, held-out baselines)`, ready for `fit` under `distributed`."""
    # The data position is part of the state: a resumed run skips the batches
    # already trained on, and the seeded pipeline yields the same ones again.
    # defers TensorFlow: the pretraining data pipeline is tf.data.
    from keras_bert.preprocessing.pretraining.dataset import pretraining_dataset

    train_config = config
    worker_index, num_workers = worker_index_and_count(distributed)
    if config.streaming and num_workers > 1:
        # Each worker streams its own share of the files (or documents).
        train_config = config.replace(num_workers=num_workers, worker_index=worker_index)
    train = pretraining_dataset(corpus, tokenizer, train_config, verbose=verbose)
    per_worker = train_config.num_workers > 1
    train = skip_steps(train.repeat(), start_step, config.batch_size, distributed, per_worker=per_worker)
    train = prepare_dataset(train.prefetch(4), distributed, per_worker=per_worker)
    if not eval_corpus:
        return train, None, {}
    heldout = config.replace(mode="dynamic", resample_pairs_each_epoch=False, shuffle=False, seed=f"{config.seed}:eval")
    validation = pretraining_dataset(eval_corpus, tokenizer, heldout, verbose=verbose)
    validation = prepare_dataset(validation.take(eval_batches).cache(), distributed)
    return train, validation, heldout_baselines(validation)


def _summary(history, baselines, started, steps, start_step, sentence_task, options):
    """What `pretrain` returns and config.json records: final and held-out metrics, baselines, wall time."""
    final = {k: values[-1] for k, values in history.items()}
    electra = options["objective"] == "electra"
    return {
        "final_metrics": final,
        "baselines": baselines,
        "heldout": electra_heldout_metrics(final) if electra else heldout_metrics(final, sentence_task),
        "wall_seconds": round(time.time() - started, 1),
        "steps": steps,
        "resumed_from_step": start_step,
    }


def _report(summary, model_path):
    heldout, baselines = summary["heldout"], summary["baselines"]
    print(f"Saved {model_path} after {summary['wall_seconds']} s")
    if "rtd_accuracy" in heldout:  # objective="electra"
        print(
            f"held-out generator MLM accuracy {heldout['generator_mlm_accuracy']:.3f} (most-frequent-token baseline "
            f"{baselines['val_mlm_accuracy_most_frequent_token']:.3f}); held-out RTD accuracy "
            f"{heldout['rtd_accuracy']:.3f} (all-original baseline {heldout['rtd_all_original_accuracy']:.3f}), on "
            f"replaced tokens {heldout['rtd_replaced_accuracy']:.3f}"
        )
        return
    if "mlm_accuracy" in heldout:
        line = (
            f"held-out MLM accuracy {heldout['mlm_accuracy']:.3f} (most-frequent-token baseline "
            f"{baselines['val_mlm_accuracy_most_frequent_token']:.3f})"
        )
        for name, value in heldout.items():
            if name != "mlm_accuracy":  # nsp_accuracy or sop_accuracy
                line += (
                    f"; held-out {name.split('_')[0].upper()} accuracy {value:.3f} "
                    f"(majority-label baseline {baselines['val_nsp_accuracy_majority_label']:.3f})"
                )
        print(line)
