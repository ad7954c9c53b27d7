"""Child process of `export_saved_model` when the caller runs JAX or torch.

    KERAS_BACKEND=tensorflow python -m keras_bert.export.export_worker spec.json

Loads the `.keras` file and the tokenizer settings the parent wrote, then runs
the export in this TensorFlow process. Errors end the process with a non-zero
code and the reason on the last line of stderr (the parent raises it).
"""

import json
import sys

import keras

import keras_bert.models  # noqa: F401  (registers the classes for load_model)
from keras_bert.export.hub_export import export_hub_encoder
from keras_bert.export.runtime_export import export_here
from keras_bert.export.saved_model_export import export_saved_model


def main(spec_path):
    if keras.backend.backend() != "tensorflow":
        raise SystemExit("the export worker must run with KERAS_BACKEND=tensorflow")
    # defers TensorFlow until the backend is known to be TensorFlow (a clear error otherwise);
    # importing the package registers every tokenizer class for deserialisation
    import keras_bert.preprocessing  # noqa: F401

    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    model = keras.saving.load_model(spec["model"], compile=False)
    tokenizer = keras.saving.deserialize_keras_object(spec["tokenizer"])
    if spec.get("format") in ("onnx", "litert"):
        export_here(spec["format"], model, tokenizer, spec["directory"], spec["overwrite"], spec["options"], spec["verbose"])
        return
    if spec.get("format") == "hub-encoder":
        export_hub_encoder(
            model, spec["directory"], tokenizer, overwrite=spec["overwrite"], verbose=spec["verbose"], **spec["options"]
        )
        return
    export_saved_model(
        model, spec["directory"], tokenizer, overwrite=spec["overwrite"], verbose=spec["verbose"], **spec["options"]
    )


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except Exception as error:  # the parent reports the last stderr line
        print(f"{type(error).__name__}: {' '.join(str(error).split())}", file=sys.stderr)
        sys.exit(1)
