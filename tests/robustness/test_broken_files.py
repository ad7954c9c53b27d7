"""Broken files are refused with a message that names the problem, and nothing is half-loaded into a model.

Every load into an existing model is checked for "all or nothing": after a
refusal the model's weights are exactly what they were before. (A SavedModel
folder with a missing asset is tests/export's.)
"""

import json
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

from harness import FIXTURE_VOCABULARY_SIZE, tiny_backbone
from keras_bert import BertBackbone
from keras_bert.jobs.checkpointing import load_checkpoint, save_checkpoint
from keras_bert.converters import load_weights, save_hf_checkpoint
from keras_bert.converters.hf_writer import hf_config
from keras_bert.converters.tf1_checkpoint import canonical_to_tf1_name
from keras_bert.converters.weight_map import canonical_weights
from keras_bert.jobs.convert import convert
from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
from robustness_helpers import FIXTURE_VOCAB

def snapshot(model):
    return [keras.ops.convert_to_numpy(w).copy() for w in model.weights]


def assert_untouched(model, before):
    after = snapshot(model)
    assert all(np.array_equal(a, b) for a, b in zip(before, after)), "a refused load changed the model's weights"


def refuse_load(model, path, *words):
    before = snapshot(model)
    with pytest.raises(ValueError) as error:
        load_weights(model, path)
    for word in words:
        assert word in str(error.value), str(error.value)
    assert_untouched(model, before)


def write_tf1_checkpoint(folder, backbone, drop=()):
    """A Google-style TF1 folder (bert_model.ckpt + bert_config.json + vocab.txt) of `backbone`'s weights."""
    folder.mkdir()
    names, tensors = [], []
    for canonical, array in canonical_weights(backbone).items():
        name = canonical_to_tf1_name(canonical)
        if name in drop:
            continue
        names.append(name)
        tensors.append(tf.constant(array.T if name.endswith("/kernel") else array))  # TF1 kernels are (in, out)
    tf.raw_ops.SaveV2(prefix=str(folder / "bert_model.ckpt"), tensor_names=names,
                      shape_and_slices=[""] * len(names), tensors=tensors)
    (folder / "bert_config.json").write_text(json.dumps(hf_config(backbone)))
    shutil.copy(FIXTURE_VOCAB, folder / "vocab.txt")
    return folder


def test_a_truncated_safetensors_file_is_refused(tmp_path):
    folder = save_hf_checkpoint(tiny_backbone(), tmp_path / "hf", vocabulary=str(FIXTURE_VOCAB))
    weights = tmp_path / "hf" / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    refuse_load(tiny_backbone(), folder, "model.safetensors", "truncated")
    with pytest.raises(ValueError, match="truncated"):
        BertBackbone.from_pretrained(folder)


def test_a_tf1_checkpoint_missing_a_variable_is_refused_naming_it(tmp_path):
    missing = "bert/encoder/layer_0/attention/self/query/kernel"
    folder = write_tf1_checkpoint(tmp_path / "uncased_tiny", tiny_backbone(), drop={missing})
    refuse_load(tiny_backbone(), folder, missing, "Nothing was loaded")
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=missing):
        convert(folder, out / "bert.keras")
    assert not out.exists() or not any(out.iterdir())


def test_the_complete_tf1_checkpoint_loads(tmp_path):
    """The control for the test above: the same writer without the drop gives a loadable checkpoint."""
    source = tiny_backbone()
    folder = write_tf1_checkpoint(tmp_path / "uncased_tiny", source)
    target = load_weights(tiny_backbone(), folder)
    assert all(np.array_equal(a, b) for a, b in zip(snapshot(source), snapshot(target)))


def test_a_keras_file_of_a_different_architecture_is_refused(tmp_path):
    tiny_backbone(hidden_dim=8).save(tmp_path / "small.keras")
    refuse_load(tiny_backbone(hidden_dim=16), tmp_path / "small.keras", "do not fit", "Nothing was loaded")
    keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)]).save(tmp_path / "other.keras")
    refuse_load(tiny_backbone(), tmp_path / "other.keras", "neither a keras_bert BertBackbone")


def test_a_truncated_keras_file_is_refused(tmp_path):
    tiny_backbone().save(tmp_path / "model.keras")
    data = (tmp_path / "model.keras").read_bytes()
    (tmp_path / "model.keras").write_bytes(data[: len(data) // 2])
    refuse_load(tiny_backbone(), tmp_path / "model.keras", "not a zip archive")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda tokens: tokens + ["the"], r"duplicated token.*'the' on lines \d+ and 148"),
        (lambda tokens: [t for t in tokens if t != "[MASK]"] + ["extra"], r"lacks the special token\(s\) \['\[MASK\]'\]"),
    ],
    ids=["duplicates", "no_mask_token"],
)
def test_a_vocab_with_duplicates_or_without_special_tokens_is_refused(tmp_path, change, message):
    tokens = change(FIXTURE_VOCAB.read_text(encoding="utf-8").splitlines())
    assert len(tokens) == FIXTURE_VOCABULARY_SIZE + 1 or len(tokens) == FIXTURE_VOCABULARY_SIZE
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=str(vocab)):
        BertTokenizer(str(vocab))
    # The converters refuse it too (before looking at sizes), and write nothing.
    source = tmp_path / "backbone.keras"
    keras.utils.set_random_seed(0)
    tiny_backbone(vocabulary_size=len(tokens)).save(source)
    with pytest.raises(ValueError, match=message):
        convert(source, tmp_path / "hf", vocabulary=vocab)
    assert not (tmp_path / "hf").exists()


def test_a_vocab_that_is_not_utf8_is_refused_naming_its_line(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes(FIXTURE_VOCAB.read_bytes() + "caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=rf"{vocab}:148: not UTF-8"):
        BertTokenizer(str(vocab))


def test_a_corrupt_checkpoint_record_or_model_file_is_refused(tmp_path):
    save_checkpoint(tiny_backbone(), tmp_path, 5)
    record = tmp_path / "checkpoint.json"
    text = record.read_text()
    record.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=r"Cannot read the checkpoint record .*checkpoint\.json"):
        load_checkpoint(tmp_path)
    record.write_text(text)
    model_file = tmp_path / "checkpoint-00000005.keras"
    data = model_file.read_bytes()
    model_file.unlink()  # checkpoint.keras is a hard link to it: write a new file, not through the link
    model_file.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a zip archive"):
        load_checkpoint(tmp_path)
