"""BertBackbone.from_pretrained reads an export_hub_encoder SavedModel back, on TensorFlow and torch.

The export runs in a TensorFlow process (a child process on JAX and torch);
the weights are read from the SavedModel's checkpoint files by Keras path.
"""

import json

import keras
import numpy as np
import pytest

from harness import REPO_ROOT, numpy_tree, random_bert_inputs, tiny_backbone
from keras_bert import BertBackbone, BertClassifier, BertPretrainer
from keras_bert.converters.checkpoint import read_checkpoint

VOCAB_FILE = REPO_ROOT / "tests" / "fixtures" / "tasks" / "vocab.txt"

# The export is TensorFlow's own on TensorFlow and a TensorFlow child elsewhere; the reading is numpy into
# `assign`. From JAX both go exactly as from torch, so the JAX pass leaves them to the torch one.
pytestmark = pytest.mark.not_backend("jax", reason="export through the TensorFlow child and reading the checkpoint "
                                     "back run the same from JAX as from torch, checked there")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from keras_bert.export import export_hub_encoder
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    keras.utils.set_random_seed(11)
    backbone = tiny_backbone(dropout=0.1)
    folder = tmp_path_factory.mktemp("hub") / "tiny_hub"
    export_hub_encoder(backbone, folder, BertTokenizer(str(VOCAB_FILE), lowercase=False), seq_length=8, verbose=False)
    return backbone, folder


def test_from_pretrained_reads_the_encoder_back(exported):
    backbone, folder = exported
    inputs = random_bert_inputs(2, 9, backbone.vocabulary_size)
    expected = numpy_tree(backbone(inputs, training=False))
    for path in (folder, folder / "encoder"):  # the export folder, or its encoder SavedModel
        restored = BertBackbone.from_pretrained(path)
        unnamed = [{k: v for k, v in m.get_config().items() if k != "name"} for m in (restored, backbone)]
        assert unnamed[0] == unnamed[1]
        actual = numpy_tree(restored(inputs, training=False))
        for name in ("sequence_output", "pooled_output"):
            np.testing.assert_allclose(actual[name], expected[name], atol=1e-6)
    checkpoint = read_checkpoint(folder)
    assert (checkpoint.format, checkpoint.format_name) == ("hub", "TF Hub-style encoder SavedModel")
    assert checkpoint.vocabulary_file.endswith("assets/vocab.txt") and checkpoint.do_lower_case is False


def test_task_models_take_the_encoder_and_pretrainers_are_refused(exported):
    backbone, folder = exported
    classifier = BertClassifier.from_pretrained(folder, num_classes=3)
    for ours, theirs in zip(classifier.backbone.weights, backbone.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(ours), keras.ops.convert_to_numpy(theirs))
    with pytest.raises(ValueError, match="encoder without pretraining heads; BertPretrainer needs"):
        BertPretrainer.from_pretrained(folder)


def test_mismatched_or_damaged_encoders_fail_clearly(exported, tmp_path):
    _, folder = exported
    with pytest.raises(ValueError, match="does not match the model: missing .*transformer_layer_2"):
        read_checkpoint(folder).load_into(tiny_backbone(num_layers=3))
    damaged = tmp_path / "damaged"
    (damaged / "assets").mkdir(parents=True)
    (damaged / "variables").mkdir()
    for name in ("saved_model.pb", "assets/keras_bert_export.json"):
        (damaged / name).write_bytes((folder / "encoder" / name).read_bytes())
    (damaged / "variables" / "variables.index").write_bytes(b"not an index")
    with pytest.raises(ValueError, match="Cannot read the variables of the SavedModel"):
        BertBackbone.from_pretrained(damaged)


def test_a_serving_saved_model_is_named_as_such(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "saved_model.pb").write_bytes(b"")
    (tmp_path / "assets" / "keras_bert_export.json").write_text(json.dumps({"format": "keras_bert.saved_model"}))
    with pytest.raises(ValueError, match="serving SavedModel of export_saved_model.*--format hub-encoder"):
        BertBackbone.from_pretrained(tmp_path)
