"""`--jit-compile` on the jobs: `finetune` and `pretrain` train with the compiled torch step, a resumed run too.

The step itself (same losses as eager, resume, dropout) is tested in test_compiled_train_step.py and
test_compiled_resume.py; here only that the one switch of the command line reaches it.
"""

import json
import shutil

import keras
import pytest

from harness import tiny_backbone
from keras_bert.jobs.finetune import finetune
from keras_bert.torch_training import CompiledTrainStep
from task_helpers import FIXTURES

pytestmark = pytest.mark.only_backend(
    "torch", reason="the compiled step is the torch backend's `jit_compile=True`; TensorFlow and JAX compile with XLA"
)


class TrainFunctionSeen(keras.callbacks.Callback):
    """Records the type of the train function of each `fit`, at its first epoch's end."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_begin(self, logs=None):
        self.recorded = False

    def on_epoch_end(self, epoch, logs=None):
        if not self.recorded:
            self.seen.append(type(self.model.train_function))
            self.recorded = True


class Stopped(Exception):
    pass


class StopAfterFirstEpoch(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        raise Stopped


def test_finetune_with_jit_compile_trains_with_the_compiled_step_and_resumes_with_it(tmp_path, capsys, monkeypatch):
    from keras_bert.cli.finetune import add_finetune_arguments  # the switch parses as documented
    from keras_bert.torch_training import compiled_forward, compiled_train_step

    # What is checked here is that the switch reaches the compiled step, not inductor's code (tested in
    # test_compiled_train_step.py and test_compiled_forward.py): the same graphs, run op by op. Measured with an
    # empty inductor cache (2026-12-01): 45 s with inductor, most of it building C++ kernels.
    monkeypatch.setattr(compiled_train_step, "COMPILER", "aot_eager")
    monkeypatch.setattr(compiled_forward, "COMPILE_MODE", None)

    import argparse

    parser = argparse.ArgumentParser()
    add_finetune_arguments(parser)
    assert parser.parse_args(["--task", "classify", "--init", "x", "--train", "t", "--out", "o",
                              "--jit-compile"]).jit_compile is True

    keras.utils.set_random_seed(0)
    tiny_backbone(max_sequence_length=32, num_layers=1).save(tmp_path / "backbone.keras")
    shutil.copy(FIXTURES / "vocab.txt", tmp_path / "vocab.txt")
    recorder = TrainFunctionSeen()
    arguments = dict(task="classify", init=str(tmp_path / "backbone.keras"), train=str(FIXTURES / "pairs_train.tsv"),
                     text_column="sentence1", pair_column="sentence2", label_column="label", sequence_length=24,
                     epochs=2, learning_rate=3e-3, output_dir=str(tmp_path / "run"), verbose=0, tensorboard=False,
                     jit_compile=True)
    # Stopped after the first epoch's checkpoint (the job's callbacks run before these)...
    with pytest.raises(Stopped):
        finetune(**arguments, callbacks=[recorder, StopAfterFirstEpoch()])
    assert recorder.seen == [CompiledTrainStep]
    # ...and resumed: the checkpoint's `.keras` file compiles back with Keras' "auto"; the switch still holds.
    finetune(**arguments, resume=True, callbacks=[recorder])
    assert recorder.seen == [CompiledTrainStep, CompiledTrainStep]
    assert json.loads((tmp_path / "run" / "finetune.json").read_text())["job"]["jit_compile"] is True


def test_jit_compile_is_refused_on_torch_where_the_compiled_step_does_not_apply(tmp_path):
    from keras_bert.jobs.compiled_step_options import apply_jit_compile
    from keras_bert.models.electra_backbone import ElectraBackbone
    from keras_bert.models.electra_pretrainer import ElectraPretrainer

    electra = ElectraPretrainer(ElectraBackbone(vocabulary_size=60, num_layers=1, num_heads=2, hidden_dim=16,
                                                intermediate_dim=32, max_sequence_length=16))
    with pytest.raises(ValueError, match="ElectraPretrainer trains eagerly"):
        apply_jit_compile(electra, True)
    assert apply_jit_compile(electra, False).jit_compile is False
