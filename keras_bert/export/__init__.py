"""Export to a TensorFlow SavedModel with the tokenizer inside, and use exported models.

`export_saved_model` writes the SavedModel; `ExportedModel` loads one and
predicts on raw strings (what `keras-bert predict` uses). `export_hub_encoder`
writes TF Hub-style encoder + preprocessor SavedModels for further training.
`export_onnx` / `export_litert` write the token-id graph for ONNX Runtime /
LiteRT (with the tokenizer beside it); `ExportedModel` runs those too.
`TracedTorchModel` runs a Keras model on the torch backend as one
`torch.export` graph, without Keras' per-layer Python (and optionally under
`torch.compile`).

One folder per target, and the runtime above them:

    runtime/         ExportedModel, RuntimeModel, check_int8_accuracy: run any export
    saved_model/     export_saved_model, export_hub_encoder, TrainableTFSMLayer
    onnx_litert/     export_onnx, export_litert: conversion and ONNX rewrites
    torch_tracing/   TracedTorchModel
    tensorflow_worker/   run_in_tensorflow: a target's writing step in a TensorFlow (child) process
    export_arguments.py, export_files.py, batched_predict.py: what the targets share
"""

from keras_bert.export.onnx_litert.onnx_litert_export import export_litert, export_onnx
from keras_bert.export.runtime.exported_model import ExportedModel
from keras_bert.export.runtime.runtime_model import RuntimeModel
from keras_bert.export.saved_model.hub_export import export_hub_encoder
from keras_bert.export.saved_model.saved_model_export import export_saved_model, read_metadata
from keras_bert.export.torch_tracing.traced_torch_model import TracedTorchModel


def __getattr__(name):
    # TFSMLayer imports TensorFlow: `import keras_bert.export` must not (resolved on first use).
    if name == "TrainableTFSMLayer":
        # defers TensorFlow until the layer is asked for
        from keras_bert.export.saved_model.trainable_tfsm_layer import TrainableTFSMLayer

        return TrainableTFSMLayer
    raise AttributeError(f"module 'keras_bert.export' has no attribute {name!r}")

__all__ = [
    "ExportedModel", "RuntimeModel", "TrainableTFSMLayer", "export_hub_encoder", "export_litert", "export_onnx",
    "export_saved_model", "read_metadata", "TracedTorchModel",
]
