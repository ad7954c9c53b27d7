"""The TensorFlow worker: runs an export's writing step in a TensorFlow process, whatever backend the caller runs.

SavedModels, TF Hub SavedModels, ONNX and LiteRT files are all written from
TensorFlow graphs: torch cannot write them, and jax2tf cannot export the
dynamic sequence length (see ARCHITECTURE.md). Every export target therefore
ends with `run_in_tensorflow(write, model, tokenizer, arguments, ...)`: on
the TensorFlow backend it calls `write` here; on JAX or torch it saves the
model as `.keras` and the tokenizer's Keras serialisation, and starts

    KERAS_BACKEND=tensorflow python -m keras_bert.export.tensorflow_worker spec.json

which loads both, calls the same `write` and hands back what it returned
(`__main__.py` is that child). Errors end the child with a non-zero code and
the reason on the last line of its stderr; the parent raises them as
`RuntimeError`.
"""

import json
import os
import subprocess
import sys
import tempfile

import keras


def run_in_tensorflow(write, model, tokenizer, arguments, description, verbose=True):
    """`write(model, tokenizer, **arguments)` in a TensorFlow process; returns what it returned.

    Args:
        write: a module-level function of keras_bert that writes the export
            (the child finds it by its module and name).
        model: the Keras model to export (on any backend).
        tokenizer: the tokenizer that goes with it (any keras_bert tokenizer).
        arguments: the rest of `write`'s arguments, as keywords; JSON values.
        description: what is exported, for the error ("SavedModel export").
        verbose: say that a child process exports, and let it print.

    Returns:
        `write`'s return value; from a child process as JSON gives it back
        (lists for tuples), so `write` returns JSON values.

    Raises:
        RuntimeError: the child process failed, with the last line of its stderr.
    """
    if keras.backend.backend() == "tensorflow":
        return write(model, tokenizer, **arguments)
    with tempfile.TemporaryDirectory(prefix="keras_bert_export-") as scratch:
        spec = {
            "write": f"{write.__module__}:{write.__name__}",
            "model": os.path.join(scratch, "model.keras"),
            # The whole tokenizer (any of the three classes), as keras serialises it.
            "tokenizer": keras.saving.serialize_keras_object(tokenizer),
            "arguments": arguments,
            "result": os.path.join(scratch, "result.json"),
        }
        model.save(spec["model"])
        spec_path = os.path.join(scratch, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        env = dict(os.environ, KERAS_BACKEND="tensorflow")
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        if verbose:
            print(f"exporting in a TensorFlow process (this process runs {keras.backend.backend()}) ...", flush=True)
        result = subprocess.run(
            [sys.executable, "-m", __name__, spec_path],
            env=env, stdout=None if verbose else subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        if result.returncode != 0:
            lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
            reason = lines[-1] if lines else f"exit code {result.returncode}"
            raise RuntimeError(f"{description} in the TensorFlow process failed: {reason}")
        with open(spec["result"], encoding="utf-8") as f:
            return json.load(f)
