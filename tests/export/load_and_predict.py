"""Child of the cross-backend `.keras` test: load every model file, predict, save the outputs.

    KERAS_BACKEND=jax python load_and_predict.py FOLDER

FOLDER holds `<name>.keras` files and `inputs.npz`; the outputs go to
`FOLDER/outputs_<backend>.npz` as `<name>/<output key>` arrays. The parent
imports `model_inputs` and `flat_outputs` from here, so both sides feed and
read the models the same way.
"""

import os
import sys

import numpy as np

VOCABULARY_SIZE = 60
BATCH, LENGTH = 3, 12


def model_inputs():
    rng = np.random.default_rng(3)
    token_ids = rng.integers(5, VOCABULARY_SIZE, size=(BATCH, LENGTH)).astype("int32")
    padding_mask = np.ones((BATCH, LENGTH), "int32")
    padding_mask[1, -4:] = 0
    segment_ids = np.zeros((BATCH, LENGTH), "int32")
    segment_ids[:, 6:] = 1
    x = {"token_ids": token_ids * padding_mask, "segment_ids": segment_ids * padding_mask, "padding_mask": padding_mask}
    choices = {k: np.stack([v, v[::-1]], axis=1) for k, v in x.items()}  # (batch, 2 choices, length)
    masked = {**x, "mask_positions": np.array([[1, 3], [2, 5], [4, 0]], "int32")}
    without_segments = {k: v for k, v in x.items() if k != "segment_ids"}
    return {"plain": x, "choices": choices, "masked": masked, "without_segments": without_segments}


INPUTS_OF = {
    "multiple_choice": "choices", "pretrainer": "masked", "masked_lm": "masked",
    "modern_bert_backbone": "without_segments",
}


def call(model, inputs):
    """A direct call (no `predict`: compiling a step per tiny model would dominate the test's time)."""
    import keras

    outputs = model(inputs, training=False)
    return keras.tree.map_structure(keras.ops.convert_to_numpy, outputs)


def flat_outputs(name, outputs):
    if isinstance(outputs, dict):
        return {f"{name}/{k}": np.asarray(v) for k, v in outputs.items() if not isinstance(v, (list, tuple))}
    return {f"{name}/output": np.asarray(outputs)}


def main(folder):
    import keras

    import keras_bert.models  # noqa: F401  (registers the classes)

    with np.load(os.path.join(folder, "inputs.npz")) as data:
        arrays = {k: data[k] for k in data.files}
    inputs = {}
    for key, value in arrays.items():
        group, name = key.split("/")
        inputs.setdefault(group, {})[name] = value
    results = {}
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".keras"):
            continue
        name = file[: -len(".keras")]
        model = keras.saving.load_model(os.path.join(folder, file))
        results.update(flat_outputs(name, call(model, inputs[INPUTS_OF.get(name, "plain")])))
    np.savez(os.path.join(folder, f"outputs_{keras.backend.backend()}.npz"), **results)


if __name__ == "__main__":
    main(sys.argv[1])
