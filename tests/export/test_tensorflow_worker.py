"""The TensorFlow worker: every export target's writing step, in a TensorFlow child process on JAX and torch.

The export tests cover each target through it on every backend; here, what
the worker itself promises: the writer's return value comes back from the
child, and a writer's error comes back naming the export and the reason,
with the target left as it was.
"""

import os

import keras
import pytest

from export_helpers import tokenizer
from harness import tiny_backbone
from keras_bert.export import export_saved_model, read_metadata
from keras_bert.export.saved_model.hub_export import write_hub_encoder
from keras_bert.export.tensorflow_worker import run_in_tensorflow


# The child starts and answers the same way from JAX and from torch (run_in_tensorflow is backend-blind code around
# a subprocess): each test runs from one of them, and on TensorFlow where the writer needs none.
@pytest.mark.only_backend("torch", reason="on TensorFlow the writer runs in this process; the child is started the same "
                          "way from JAX and torch, checked once from torch")
def test_the_writers_return_value_comes_back_from_the_child(tmp_path):
    metadata = export_saved_model(tiny_backbone(), tmp_path / "backbone", tokenizer(), sequence_length=8, verbose=False)
    assert metadata == read_metadata(tmp_path / "backbone")
    assert metadata["training_backend"] == keras.backend.backend()
    assert metadata["export_backend"] == "tensorflow"


@pytest.mark.not_backend("jax", reason="the child is started the same way from JAX and torch, checked once from torch")
def test_a_failed_writer_says_why_and_leaves_the_target_as_it_was(tmp_path):
    # A folder that appears between the checks and the writing: the writer refuses to replace it.
    target = tmp_path / "taken"
    target.mkdir()
    arguments = {"directory": str(target), "seq_length": 8, "overwrite": False, "verbose": False}
    in_a_child = keras.backend.backend() != "tensorflow"
    with pytest.raises(RuntimeError if in_a_child else ValueError, match="taken already exists") as caught:
        run_in_tensorflow(write_hub_encoder, tiny_backbone(), tokenizer(), arguments, "Hub SavedModel export", False)
    if in_a_child:
        assert str(caught.value).startswith("Hub SavedModel export in the TensorFlow process failed: ValueError: ")
    assert os.listdir(tmp_path) == ["taken"] and os.listdir(target) == []
