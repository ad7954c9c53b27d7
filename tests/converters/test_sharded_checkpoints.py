"""Sharded Hugging Face checkpoints: an `*.index.json` and several shards, written by the Hugging Face libraries.

transformers' own `save_pretrained(max_shard_size=...)` writes the sharded
safetensors; transformers 5 writes no `.bin` files any more, so the sharded
`pytorch_model.bin` layout comes from huggingface_hub's
`save_torch_state_dict(safe_serialization=False)`, the writer transformers 4
used for it. Loaded with `from_pretrained` and `keras-bert convert`, the
outputs must equal transformers' to 1e-5.
"""

import json

import keras
import numpy as np
import pytest

from harness import numpy_tree
from keras_bert import BertBackbone, BertPretrainer
from keras_bert.cli import main as cli

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
huggingface_hub = pytest.importorskip("huggingface_hub")
from test_hf_parity import batch_with_padding, hf_outputs, tiny_hf_model  # noqa: E402

# The tiny models hold ~100 KB of float32 tensors: 20 KB shards make five or more.
SHARD_SIZE = "20KB"


def assert_pretrainer_matches(model, hf, inputs):
    """Sequence output (real tokens), pooled output, MLM and NSP logits equal transformers' to 1e-5."""
    reference = hf_outputs(hf, inputs)
    features = numpy_tree(model.backbone({k: inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")}))
    real = inputs["padding_mask"].astype(bool)
    np.testing.assert_allclose(features["sequence_output"][real], reference.hidden_states[-1].numpy()[real], atol=1e-5)
    with torch.no_grad():
        pooled = hf.bert.pooler(reference.hidden_states[-1]).numpy()
    np.testing.assert_allclose(features["pooled_output"], pooled, atol=1e-5)
    ours = numpy_tree(model(inputs, training=False))
    mlm = np.take_along_axis(reference.prediction_logits.numpy(), inputs["mask_positions"][..., None], axis=1)
    np.testing.assert_allclose(ours["mlm"], mlm, atol=1e-5)
    np.testing.assert_allclose(ours["nsp"], reference.seq_relationship_logits.numpy(), atol=1e-5)


def shards_of(folder, index_name):
    weight_map = json.loads((folder / index_name).read_text())["weight_map"]
    return sorted(set(weight_map.values()))


@pytest.fixture(scope="module")
def sharded_safetensors(tmp_path_factory):
    """A tiny random BertForPreTraining saved by transformers in 20 KB safetensors shards."""
    hf = tiny_hf_model("BertForPreTraining", seed=21)
    folder = tmp_path_factory.mktemp("sharded_safetensors")
    hf.save_pretrained(folder, max_shard_size=SHARD_SIZE)
    assert not (folder / "model.safetensors").exists()
    assert len(shards_of(folder, "model.safetensors.index.json")) >= 3
    return hf, folder


@pytest.fixture(scope="module")
def sharded_bin(tmp_path_factory):
    """The same kind of model as pytorch_model-0000N-of-0000M.bin shards with pytorch_model.bin.index.json."""
    hf = tiny_hf_model("BertForPreTraining", seed=22)
    folder = tmp_path_factory.mktemp("sharded_bin")
    hf.config.save_pretrained(folder)
    huggingface_hub.save_torch_state_dict(hf.state_dict(), folder, max_shard_size=SHARD_SIZE, safe_serialization=False)
    assert not (folder / "pytorch_model.bin").exists()
    assert len(shards_of(folder, "pytorch_model.bin.index.json")) >= 3
    return hf, folder


@pytest.mark.parametrize("layout", ["sharded_safetensors", "sharded_bin"])
def test_sharded_checkpoint_loads_with_from_pretrained(layout, request):
    hf, folder = request.getfixturevalue(layout)
    assert_pretrainer_matches(BertPretrainer.from_pretrained(str(folder)), hf, batch_with_padding())


def test_sharded_bert_model_loads_as_a_backbone(tmp_path):
    """A BertModel (names without the `bert.` prefix), sharded by transformers."""
    hf = tiny_hf_model("BertModel", seed=23)
    hf.save_pretrained(tmp_path, max_shard_size=SHARD_SIZE)
    assert len(shards_of(tmp_path, "model.safetensors.index.json")) >= 3
    inputs = batch_with_padding()
    del inputs["mask_positions"]
    ours = numpy_tree(BertBackbone.from_pretrained(str(tmp_path))(inputs))
    reference = hf_outputs(hf, inputs)
    real = inputs["padding_mask"].astype(bool)
    np.testing.assert_allclose(ours["sequence_output"][real], reference.last_hidden_state.numpy()[real], atol=1e-5)
    np.testing.assert_allclose(ours["pooled_output"], reference.pooler_output.numpy(), atol=1e-5)


@pytest.mark.parametrize("layout", ["sharded_safetensors", "sharded_bin"])
def test_cli_convert_reads_a_sharded_checkpoint(layout, request, tmp_path, capsys):
    hf, folder = request.getfixturevalue(layout)
    assert cli(["convert", str(folder), str(tmp_path / "bert.keras")]) == 0
    assert "BertPretrainer" in capsys.readouterr().out
    model = keras.saving.load_model(tmp_path / "bert.keras")
    assert_pretrainer_matches(model, hf, batch_with_padding())


@pytest.mark.parametrize(
    "layout, index_name", [("sharded_safetensors", "model.safetensors.index.json"),
                           ("sharded_bin", "pytorch_model.bin.index.json")],
)
def test_a_missing_shard_is_named_and_nothing_is_written(layout, index_name, request, tmp_path, capsys):
    _, source = request.getfixturevalue(layout)
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    shards = shards_of(source, index_name)
    for path in source.iterdir():
        if path.name != shards[1]:
            (folder / path.name).write_bytes(path.read_bytes())
    with pytest.raises(FileNotFoundError, match=rf"names {len(shards)} shards; missing: {shards[1]} \("):
        BertPretrainer.from_pretrained(str(folder))
    assert cli(["convert", str(folder), str(tmp_path / "bert.keras")]) == 1  # convert: 1 for a refused source
    assert f"missing: {shards[1]}" in capsys.readouterr().err
    assert not (tmp_path / "bert.keras").exists()


def test_a_shard_that_lacks_what_its_index_places_there_is_refused(sharded_safetensors, tmp_path):
    """Shards of two different saves in one folder: the index says which tensors each holds."""
    _, source = sharded_safetensors
    for path in source.iterdir():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    shards = shards_of(tmp_path, "model.safetensors.index.json")
    (tmp_path / shards[0]).write_bytes((tmp_path / shards[1]).read_bytes())
    with pytest.raises(ValueError, match=rf"{shards[0]} lacks \d+ tensors that model.safetensors.index.json places there"):
        BertPretrainer.from_pretrained(str(tmp_path))


def test_hub_downloads_fetch_every_shard(sharded_safetensors, sharded_bin):
    """The file patterns of an `hf://` download, filtered by huggingface_hub itself, take every shard along."""
    from huggingface_hub.utils import filter_repo_objects

    from keras_bert.converters.checkpoint import _HUB_FALLBACK_PATTERNS, _HUB_PATTERNS

    for (_, folder), patterns in ((sharded_safetensors, _HUB_PATTERNS), (sharded_bin, _HUB_FALLBACK_PATTERNS)):
        files = sorted(p.name for p in folder.iterdir())
        assert sorted(filter_repo_objects(files, allow_patterns=patterns)) == files, folder
