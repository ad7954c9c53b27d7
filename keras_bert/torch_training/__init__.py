"""The torch backend's compiled training step: what `compile(jit_compile=True)` runs on torch for keras_bert models."""

from keras_bert.torch_training.compiled_train_step import CompiledTrainStep
from keras_bert.torch_training.fused_adamw_update import FusedAdamWUpdate

__all__ = ["CompiledTrainStep", "FusedAdamWUpdate"]
