"""A checkpoint model file of raw variable values, for models whose `.keras` file would lose state.

Keras saves a LoRA layer as its merged kernel, without the adapter matrices
(see `keras_bert.models.lora`): a `.keras` checkpoint of a LoRA run could not
continue it. This format stores every model weight as it is (base kernels and
adapters apart) and the optimizer's variables, in one `.npz` file; reading it
builds a new model with the job's own `build` and assigns them.
"""


import keras
import numpy as np


class RawVariablesFormat:
    """Writes and reads a checkpoint's model file as raw variables (`JobRunner(model_format=...)`).

    Attributes:
        suffix: the ending of the checkpoint's model files.
    """

    suffix = ".variables.npz"

    def write(self, model, path):
        """Writes `model.weights` (by path) and its optimizer's variables (in order) to `path` (an `.npz`)."""
        arrays = {f"model/{v.path}": keras.ops.convert_to_numpy(v) for v in model.weights}
        if model.optimizer is not None:
            optimizer_variables = enumerate(model.optimizer.variables)
            arrays.update({f"optimizer/{i}": keras.ops.convert_to_numpy(v) for i, v in optimizer_variables})
        # np.savez would append ".npz" to a name without it; the caller's temporary names end otherwise.
        with open(path, "wb") as f:
            np.savez(f, **arrays)

    def read(self, path, build):
        """`build()` (a new compiled model) with the variables of `path` assigned.

        Raises:
            ValueError: the file and the new model disagree on a weight or on the optimizer's variables.
        """
        model = build()
        with np.load(path, allow_pickle=False) as data:
            for variable in model.weights:
                key = f"model/{variable.path}"
                if key not in data.files or tuple(data[key].shape) != tuple(variable.shape):
                    raise ValueError(f"The checkpoint {path} does not fit this model: {variable.path!r} differs.")
                variable.assign(data[key])
            saved = sorted((k for k in data.files if k.startswith("optimizer/")), key=lambda k: int(k.split("/")[1]))
            if saved:
                model.optimizer.build(model.trainable_variables)
                if len(saved) != len(model.optimizer.variables):
                    raise ValueError(
                        f"The checkpoint {path} has {len(saved)} optimizer variables, the new model's optimizer "
                        f"{len(model.optimizer.variables)}: it is not this job's checkpoint."
                    )
                for key, variable in zip(saved, model.optimizer.variables):
                    variable.assign(data[key])
        return model
