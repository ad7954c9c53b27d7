"""The child process of `run_in_tensorflow`: one export's writing step, in TensorFlow.

    KERAS_BACKEND=tensorflow python -m keras_bert.export.tensorflow_worker spec.json

`spec.json` (written by the parent) names the `.keras` file, the tokenizer's
Keras serialisation, the writer (`module:function`) and its arguments, and
where the writer's return value goes (JSON).
"""

import importlib
import json
import sys

import keras


def main(spec_path):
    """The child: loads the model and tokenizer of `spec_path`, calls its `write`, saves the result as JSON."""
    if keras.backend.backend() != "tensorflow":
        raise SystemExit("the TensorFlow worker must run with KERAS_BACKEND=tensorflow")
    # defers the model classes and TensorFlow until the backend is known to be TensorFlow (a clear error
    # otherwise); importing the packages registers every model and tokenizer class for deserialisation
    import keras_bert.models  # noqa: F401
    import keras_bert.preprocessing  # noqa: F401

    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    module_name, name = spec["write"].split(":")
    if module_name.split(".")[0] != "keras_bert":
        raise ValueError(f"the TensorFlow worker runs keras_bert's writers only; received {spec['write']}")
    write = getattr(importlib.import_module(module_name), name)
    model = keras.saving.load_model(spec["model"], compile=False)
    tokenizer = keras.saving.deserialize_keras_object(spec["tokenizer"])
    result = write(model, tokenizer, **spec["arguments"])
    with open(spec["result"], "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Exception as error:  # the parent reports the last stderr line
        print(f"{type(error).__name__}: {' '.join(str(error).split())}", file=sys.stderr)
        sys.exit(1)
