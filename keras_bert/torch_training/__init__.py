"""The torch backend's compiled steps: what `compile(jit_compile=True)` runs on torch for keras_bert models
(`fit`: `CompiledTrainStep`; `predict` and `evaluate`: `CompiledForward`, through `CompiledInferenceSteps`)."""

from keras_bert.torch_training.compiled_forward import CompiledForward
from keras_bert.torch_training.compiled_inference_steps import CompiledInferenceSteps
from keras_bert.torch_training.compiled_train_step import CompiledTrainStep
from keras_bert.torch_training.fused_adamw_update import FusedAdamWUpdate
from keras_bert.torch_training.torch_graph import TorchGraph

__all__ = ["CompiledForward", "CompiledInferenceSteps", "CompiledTrainStep", "FusedAdamWUpdate", "TorchGraph"]
