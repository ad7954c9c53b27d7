"""Preset names and hub paths, read from a fake Hugging Face cache (never the network).

The cache in tmp_path has huggingface_hub's own layout (models--owner--name/
refs/main, snapshots/<commit>/...) and holds a tiny random BERT written by
transformers; HF_HUB_CACHE points at it and HF_HUB_OFFLINE=1 keeps every test
off the network.
"""

import importlib.util
import os
import runpy
import shutil

import numpy as np
import pytest

from harness import numpy_tree, random_bert_inputs
from keras_bert import BertBackbone, BertClassifier, list_presets
from keras_bert.cli.main import main
from keras_bert.converters.checkpoint import read_checkpoint
from keras_bert.converters.presets import PRESETS
from keras_bert.jobs.convert import convert
from keras_bert.loading.initial_backbone import load_init
from task_helpers import FIXTURES

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

COMMIT = "0123456789abcdef0123456789abcdef01234567"
TINY_ID = "google/bert_uncased_L-2_H-128_A-2"  # what the keras-hub name bert_tiny_en_uncased stands for
CASED_ID = "google-bert/bert-base-cased"  # bert_base_en


def add_to_cache(cache, repo_id, source):
    """The layout huggingface_hub's cache has after a snapshot download of `repo_id`."""
    storage = cache / f"models--{repo_id.replace('/', '--')}"
    (storage / "refs").mkdir(parents=True)
    (storage / "refs" / "main").write_text(COMMIT)
    shutil.copytree(source, storage / "snapshots" / COMMIT)


@pytest.fixture(scope="module")
def tiny_hf(tmp_path_factory):
    """(transformers BertModel, its folder): random, tiny, on the fixtures' vocabulary, without tokenizer_config.json."""
    folder = tmp_path_factory.mktemp("tiny_hf")
    torch.manual_seed(3)
    vocabulary = (FIXTURES / "vocab.txt").read_text(encoding="utf-8").splitlines()
    config = transformers.BertConfig(
        vocab_size=len(vocabulary), hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=32, attn_implementation="eager",
    )
    model = transformers.BertModel(config).eval()
    with torch.no_grad():  # off the initial zeros and ones, so that a mapping error shows
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    model.save_pretrained(folder)
    shutil.copy(FIXTURES / "vocab.txt", folder / "vocab.txt")
    return model, folder


@pytest.fixture
def hub_cache(tiny_hf, tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    add_to_cache(cache, TINY_ID, tiny_hf[1])
    add_to_cache(cache, CASED_ID, tiny_hf[1])
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def test_the_table_covers_keras_hub_and_the_small_berts():
    origin = importlib.util.find_spec("keras_hub").submodule_search_locations[0]
    keras_hub_presets = runpy.run_path(os.path.join(origin, "src", "models", "bert", "bert_presets.py"))
    # keras-hub's fine-tune has no Hugging Face original; the other two do not use BERT's vocab.txt.
    left_out = {"bert_tiny_en_uncased_sst2", "multilingual_e5_small", "mxbai_embed_xsmall_v1_en"}
    assert set(keras_hub_presets["backbone_presets"]) - set(PRESETS) == left_out
    presets = list_presets()
    small = [name for name in presets if name.startswith("google/bert_uncased_L-")]
    assert len(small) == 24 and "google/bert_uncased_L-12_H-768_A-12" in small
    assert presets["bert_base_en_uncased"]["hub_id"] == "google-bert/bert-base-uncased"
    assert presets["bert_base_en"]["lowercase"] is False
    assert presets["sentence-transformers/all-MiniLM-L6-v2"]["hidden_dim"] == 384
    assert list(presets) == sorted(presets)


def test_presets_and_hub_paths_load_from_the_cache(tiny_hf, hub_cache):
    model, _ = tiny_hf
    inputs = random_bert_inputs(2, 12, 147)
    with torch.no_grad():
        expected = model(
            input_ids=torch.tensor(inputs["token_ids"]), token_type_ids=torch.tensor(inputs["segment_ids"]),
            attention_mask=torch.tensor(inputs["padding_mask"]),
        ).last_hidden_state.numpy()
    for name in ("bert_tiny_en_uncased", TINY_ID, f"hf://{TINY_ID}"):
        backbone = BertBackbone.from_preset(name)
        np.testing.assert_allclose(numpy_tree(backbone(inputs))["sequence_output"], expected, atol=1e-5)
    classifier = BertClassifier.from_preset("bert_tiny_en_uncased", num_classes=3)  # a BertModel: a new head
    assert classifier.num_classes == 3

    from keras_bert import BertTokenizer  # imports TensorFlow (tensorflow-text): only where a tokenizer is needed

    tokenizer = BertTokenizer.from_preset("bert_tiny_en_uncased")
    assert tokenizer.vocabulary_size() == 147 and tokenizer.lowercase is True
    # Neither snapshot has tokenizer_config.json: the casing comes from the repository's name, not the commit's.
    assert BertTokenizer.from_pretrained("bert_base_en").lowercase is False
    checkpoint = read_checkpoint("bert_base_en")
    assert checkpoint.do_lower_case is False and checkpoint.format_name == f"preset (hf://{CASED_ID})"


def test_convert_and_finetune_init_take_presets(hub_cache, tmp_path, capsys):
    assert main(["convert", "bert_tiny_en_uncased", str(tmp_path / "tiny.keras")]) == 0
    assert f"preset (hf://{TINY_ID})" in capsys.readouterr().out
    assert (tmp_path / "tiny.vocab.txt").read_text() == (FIXTURES / "vocab.txt").read_text()
    result = convert(TINY_ID, tmp_path / "hf_copy", to="hf")
    assert result.model_class == "BertBackbone" and (tmp_path / "hf_copy" / "vocab.txt").exists()

    backbone, tokenizer, description = load_init("bert_base_en", dropout=0.0)
    assert description == f"preset bert_base_en (hf://{CASED_ID})"
    assert tokenizer.lowercase is False and backbone.vocabulary_size == tokenizer.vocabulary_size() == 147
    with pytest.raises(ValueError, match=r"--init: 'bert_tiny_uncased' is not a file.*bert_tiny_en_uncased.*tiny"):
        load_init("bert_tiny_uncased")


def test_unknown_and_uncached_presets_say_what_to_do(hub_cache, tmp_path, capsys):
    with pytest.raises(ValueError, match=r"not a file or folder, nor a preset name\. Closest preset names: "
                                         r"bert_base_en_uncased.*list_presets\(\).*hf://owner/name"):
        BertBackbone.from_pretrained("bert_base_uncased")
    with pytest.raises(ValueError, match=r"Closest preset names: google-bert/bert-base-uncased"):
        BertBackbone.from_pretrained("google-bert/bert-base-uncasd")
    with pytest.raises(FileNotFoundError, match="No checkpoint at"):  # a path, not a name: no preset hunt
        BertBackbone.from_pretrained(str(tmp_path / "nowhere" / "model.keras"))

    # Offline and not cached: one error naming the preset, the cache folder and the command that fetches it.
    expected = (
        rf"preset 'bert_base_en_uncased' \(hf://google-bert/bert-base-uncased\) is not in the Hugging Face cache "
        rf"{hub_cache} and downloads are off \(HF_HUB_OFFLINE=1\)\. Fetch it once with network access: "
        r"HF_HUB_OFFLINE=0 python -c 'import keras_bert; keras_bert\.BertBackbone\.from_preset\(\"bert_base_en_uncased\"\)'"
    )
    with pytest.raises(FileNotFoundError, match=expected):
        BertBackbone.from_preset("bert_base_en_uncased")
    # The command line prints the same, on one line.
    assert main(["convert", "bert_large_en", str(tmp_path / "large.keras")]) == 1
    error = capsys.readouterr().err
    assert "preset 'bert_large_en' (hf://google-bert/bert-large-cased) is not in the Hugging Face cache" in error
    assert len(error.strip().splitlines()) == 1


@pytest.fixture
def modernbert_cache(tmp_path, monkeypatch):
    """(transformers ModernBertForMaskedLM, cache): a tiny one stored as both answerdotai/ModernBERT-base and -large.

    The snapshot holds what the real repositories hold: config.json (model_type "modernbert", architecture
    ModernBertForMaskedLM), model.safetensors, tokenizer.json and tokenizer_config.json.
    """
    from family_helpers import hf_model
    from keras_bert import ModernBertTokenizer
    from preprocessing_helpers import write_modernbert_tokenizer_folder

    folder = write_modernbert_tokenizer_folder(tmp_path / "modernbert", vocab_size=400)
    tokenizer = ModernBertTokenizer.from_pretrained(folder)
    config = transformers.ModernBertConfig(
        vocab_size=tokenizer.vocabulary_size(), hidden_size=32, num_attention_heads=4, intermediate_size=48,
        num_hidden_layers=3, local_attention=8, global_attn_every_n_layers=3, max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id, cls_token_id=tokenizer.cls_token_id, sep_token_id=tokenizer.sep_token_id,
        bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id,
    )  # fmt: skip
    model = hf_model("ModernBertForMaskedLM", config, seed=5)
    model.save_pretrained(folder)
    cache = tmp_path / "hub"
    for hub_id in ("answerdotai/ModernBERT-base", "answerdotai/ModernBERT-large"):
        add_to_cache(cache, hub_id, folder)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return model, cache


def test_modernbert_presets_load_backbone_heads_and_tokenizer_from_the_cache(modernbert_cache):
    from family_helpers import hf_forward
    from keras_bert import ModernBertBackbone, ModernBertClassifier, ModernBertMaskedLM, ModernBertTokenizer
    from keras_bert.preprocessing import BertInputPacker, Tokenizer

    model, _ = modernbert_cache
    presets = list_presets()
    assert presets["modernbert_base_en"]["hub_id"] == "answerdotai/ModernBERT-base"
    assert (presets["modernbert_large_en"]["num_layers"], presets["answerdotai/ModernBERT-large"]["hidden_dim"]) == (28, 1024)
    # Tokenizer.from_pretrained picks the class from the cached config.json, as it does for a local folder.
    tokenizer = Tokenizer.from_pretrained("modernbert_base_en")
    assert isinstance(tokenizer, ModernBertTokenizer)
    assert ModernBertTokenizer.from_preset("answerdotai/ModernBERT-large").get_config() == tokenizer.get_config()
    texts = ["Emma", "Emma Woodhouse, handsome, clever, and rich, with a comfortable "
             "home and happy disposition, seemed to unite some of the best blessings"]
    inputs = {k: v.numpy() for k, v in BertInputPacker.from_tokenizer(tokenizer, 24)(texts).items() if k != "segment_ids"}
    assert inputs["padding_mask"][0].sum() < 24 == inputs["padding_mask"][1].sum()  # a padded row; the 8-token window is shorter than the input
    expected = hf_forward(model, inputs, output_hidden_states=True)
    for name in ("modernbert_base_en", "answerdotai/ModernBERT-base", "hf://answerdotai/ModernBERT-large"):
        backbone = ModernBertBackbone.from_preset(name)
        ours = numpy_tree(backbone(inputs))["sequence_output"]
        real = inputs["padding_mask"].astype(bool)
        np.testing.assert_allclose(ours[real], expected.hidden_states[-1].numpy()[real], atol=1e-5)
    logits = numpy_tree(ModernBertMaskedLM.from_preset("modernbert_large_en")({**inputs, "mask_positions": np.array([[1, 3]] * 2)}))
    np.testing.assert_allclose(logits, expected.logits.numpy()[:, [1, 3]], atol=1e-5)
    classifier = ModernBertClassifier.from_preset("modernbert_large_en", num_classes=2)  # a new head on the encoder
    assert classifier.num_classes == 2 and classifier.backbone.num_layers == 3

    backbone, tokenizer, description = load_init("modernbert_base_en", dropout=0.0)  # keras-bert finetune --init
    assert isinstance(backbone, ModernBertBackbone) and isinstance(tokenizer, ModernBertTokenizer)
    assert description == "preset modernbert_base_en (hf://answerdotai/ModernBERT-base)"
    with pytest.raises(ValueError, match="modernbert"):  # the preset's family names the class to use
        BertBackbone.from_preset("modernbert_base_en")
