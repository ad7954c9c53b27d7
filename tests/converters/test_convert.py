"""`convert` and format detection: TF1 / HF / hub cache -> .keras -> HF, and from_pretrained on each."""

import argparse
import os
import shutil

import keras
import numpy as np
import pytest

from harness import numpy_tree
from keras_bert import BertBackbone, BertMaskedLM, BertPretrainer
from keras_bert.cli.convert import add_convert_arguments, run_convert
from keras_bert.converters import read_do_lower_case
from keras_bert.jobs.convert import convert

tf = pytest.importorskip("tensorflow")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from test_hf_parity import batch_with_padding, hf_outputs, tiny_hf_model  # noqa: E402
from test_tf1_checkpoint import bert_config, tf1_variables, tiny_vocabulary, write_tf1_checkpoint  # noqa: E402


def same_outputs(a, b, inputs):
    for x, y in zip(keras.tree.flatten(numpy_tree(a(inputs))), keras.tree.flatten(numpy_tree(b(inputs)))):
        np.testing.assert_array_equal(x, y)


@pytest.fixture(scope="module")
def tf1_pretraining(tmp_path_factory):
    hf = tiny_hf_model("BertForPreTraining", seed=11)
    folder = tmp_path_factory.mktemp("tf1") / "cased_L-2_H-32_A-4"
    return write_tf1_checkpoint(folder, tf1_variables(hf.state_dict(), 2), bert_config(hf.config), tiny_vocabulary())


def test_tf1_to_keras_to_hf(tf1_pretraining, tmp_path):
    result = convert(tf1_pretraining, tmp_path / "bert.keras")
    assert (result.source_format, result.model_class, result.target) == ("tf1", "BertPretrainer", "keras")
    assert result.summary() == (
        f"Converted Google TF1 checkpoint -> .keras file: BertPretrainer, {result.num_params:,} parameters, "
        f"with vocab.txt -> {tmp_path / 'bert.keras'}"
    )
    assert sorted(os.listdir(tmp_path)) == ["bert.keras", "bert.tokenizer_config.json", "bert.vocab.txt"]
    model = keras.saving.load_model(tmp_path / "bert.keras")
    assert type(model) is BertPretrainer and model.count_params() == result.num_params
    same_outputs(model, BertPretrainer.from_pretrained(tf1_pretraining), batch_with_padding())
    assert read_do_lower_case(tmp_path / "bert.keras") is False  # from the "cased_" folder, via the sidecar

    # .keras -> HF takes the sidecar vocabulary and casing along.
    result = convert(tmp_path / "bert.keras", tmp_path / "hf", to="hf")
    assert (result.source_format, result.model_class, result.target) == ("keras", "BertPretrainer", "hf")
    assert (tmp_path / "hf" / "vocab.txt").read_text().split("\n")[:-1] == tiny_vocabulary()
    assert read_do_lower_case(tmp_path / "hf") is False
    reference, info = transformers.BertForPreTraining.from_pretrained(tmp_path / "hf", output_loading_info=True)
    assert not (info["missing_keys"] or info["unexpected_keys"] or info["mismatched_keys"])


@pytest.mark.parametrize(
    "cls_name, expected",
    [("BertModel", BertBackbone), ("BertForMaskedLM", BertMaskedLM), ("BertForPreTraining", BertPretrainer)],
)
def test_model_class_follows_the_heads(tmp_path, cls_name, expected):
    tiny_hf_model(cls_name, seed=12).save_pretrained(tmp_path / "hf")
    result = convert(tmp_path / "hf", tmp_path / "m.keras")
    assert result.model_class == expected.__name__
    assert type(keras.saving.load_model(tmp_path / "m.keras")) is expected
    assert not (tmp_path / "m.vocab.txt").exists()  # the source has no vocabulary
    if cls_name == "BertForPreTraining":
        assert convert(tmp_path / "hf", tmp_path / "b.keras", model="backbone").model_class == "BertBackbone"


def test_from_pretrained_reads_keras_files(tmp_path):
    tiny_hf_model("BertForPreTraining", seed=13).save_pretrained(tmp_path / "hf")
    convert(tmp_path / "hf", tmp_path / "pretrainer.keras")
    pretrainer = keras.saving.load_model(tmp_path / "pretrainer.keras")
    inputs = batch_with_padding()
    backbone_inputs = {k: v for k, v in inputs.items() if k != "mask_positions"}

    backbone = BertBackbone.from_pretrained(tmp_path / "pretrainer.keras")  # the task model's backbone
    assert type(backbone) is BertBackbone
    same_outputs(backbone, pretrainer.backbone, backbone_inputs)
    rebuilt = BertBackbone.from_pretrained(tmp_path / "pretrainer.keras", dropout=0.0)
    assert rebuilt.dropout == 0.0
    same_outputs(rebuilt, pretrainer.backbone, backbone_inputs)
    masked_lm = BertMaskedLM.from_pretrained(tmp_path / "pretrainer.keras")
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(masked_lm(inputs)), keras.ops.convert_to_numpy(pretrainer(inputs)["mlm"])
    )

    convert(tmp_path / "hf", tmp_path / "backbone.keras", model="backbone")
    with pytest.raises(ValueError, match=r"lacks tensors the model needs: cls\.predictions"):
        BertPretrainer.from_pretrained(tmp_path / "backbone.keras")


def test_cli_functions(tf1_pretraining, tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="keras-bert convert")
    add_convert_arguments(parser)
    args = parser.parse_args([tf1_pretraining, str(tmp_path / "out"), "--to", "hf", "--model", "masked_lm"])
    assert run_convert(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and "BertMaskedLM" in lines[0] and "Google TF1 checkpoint" in lines[0]
    assert lines[0].endswith(str(tmp_path / "out"))

    assert run_convert(parser.parse_args([tf1_pretraining, str(tmp_path / "out"), "--to", "hf"])) == 1
    assert "exists" in capsys.readouterr().err
    assert run_convert(parser.parse_args([str(tmp_path / "nowhere"), str(tmp_path / "x.keras")])) == 1
    assert "keras-bert convert: error: No checkpoint at" in capsys.readouterr().err


def test_failed_conversion_leaves_nothing(tf1_pretraining, tmp_path):
    source = tmp_path / "cased_broken"
    shutil.copytree(tf1_pretraining, source)
    hf = tiny_hf_model("BertForPreTraining", seed=11)
    variables = tf1_variables(hf.state_dict(), 2)
    del variables["cls/predictions/transform/LayerNorm/beta"]
    write_tf1_checkpoint(source, variables, bert_config(hf.config), tiny_vocabulary())
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ValueError, match="cls/predictions/transform/LayerNorm/beta"):
        convert(source, out / "bert.keras", model="pretrainer")
    with pytest.raises(ValueError, match="cls/predictions/transform/LayerNorm/beta"):
        convert(source, out / "hf", to="hf", model="pretrainer")
    assert os.listdir(out) == []

    # An existing destination is kept unless overwrite is asked for.
    convert(tf1_pretraining, out / "bert.keras")
    before = (out / "bert.keras").read_bytes()
    with pytest.raises(FileExistsError):
        convert(tf1_pretraining, out / "bert.keras", model="backbone")
    assert (out / "bert.keras").read_bytes() == before
    assert convert(tf1_pretraining, out / "bert.keras", model="backbone", overwrite=True).model_class == "BertBackbone"
    assert sorted(os.listdir(out)) == ["bert.keras", "bert.tokenizer_config.json", "bert.vocab.txt"]


def make_hub_cache(cache, repo_id, source, commit="0123456789abcdef0123456789abcdef01234567"):
    """The layout huggingface_hub's cache has after a snapshot download of `repo_id`."""
    storage = cache / f"models--{repo_id.replace('/', '--')}"
    (storage / "refs").mkdir(parents=True)
    (storage / "refs" / "main").write_text(commit)
    shutil.copytree(source, storage / "snapshots" / commit)
    return commit


def test_hub_names_from_the_local_cache(tmp_path, monkeypatch):
    hf = tiny_hf_model("BertModel", seed=14)
    hf.save_pretrained(tmp_path / "hf")
    (tmp_path / "hf" / "vocab.txt").write_text("".join(t + "\n" for t in tiny_vocabulary()))
    commit = make_hub_cache(tmp_path / "cache", "someone/bert-tiny-cased", tmp_path / "hf")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    backbone = BertBackbone.from_pretrained("hf://someone/bert-tiny-cased", cache_dir=tmp_path / "cache")
    inputs = batch_with_padding()
    del inputs["mask_positions"]
    np.testing.assert_allclose(
        numpy_tree(backbone(inputs))["pooled_output"], hf_outputs(hf, inputs).pooler_output.numpy(), atol=1e-5
    )
    result = convert(
        f"hf://someone/bert-tiny-cased@{commit}", tmp_path / "tiny.keras", cache_dir=tmp_path / "cache"
    )
    assert (result.source_format, result.model_class) == ("hf", "BertBackbone")
    assert read_do_lower_case(tmp_path / "tiny.keras") is False  # "-cased" in the repository name

    missing = r"hf://someone/missing is not in the Hugging Face cache.*HF_HUB_OFFLINE"
    with pytest.raises(FileNotFoundError, match=missing):
        BertBackbone.from_pretrained("hf://someone/missing", cache_dir=tmp_path / "cache")
    with pytest.raises(ValueError, match="hf://owner/name"):
        BertBackbone.from_pretrained("hf://just-a-name")


def test_unknown_folders_are_refused_with_what_they_hold(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ValueError, match=r"not a checkpoint keras_bert can read.*notes\.txt"):
        BertBackbone.from_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"`to` must be one of"):
        convert(tmp_path, tmp_path / "x", to="onnx")


def test_stored_decoder_must_be_tied(tmp_path):
    """Older checkpoints store the MLM decoder; a copy of the embeddings loads, an untied one is refused."""
    hf = tiny_hf_model("BertForMaskedLM", seed=15)
    hf.config.save_pretrained(tmp_path)
    state = {k: v.clone() for k, v in hf.state_dict().items()}
    assert "cls.predictions.decoder.weight" in state
    torch.save(state, tmp_path / "pytorch_model.bin")
    BertMaskedLM.from_pretrained(tmp_path)
    state["cls.predictions.decoder.weight"] += 1.0
    torch.save(state, tmp_path / "pytorch_model.bin")
    with pytest.raises(ValueError, match=r"cls\.predictions\.decoder\.weight` differs.*tied"):
        BertMaskedLM.from_pretrained(tmp_path)
    with pytest.warns(UserWarning, match="no pooler weights"):  # BertForMaskedLM has none
        BertBackbone.from_pretrained(tmp_path)  # the backbone does not use the decoder
