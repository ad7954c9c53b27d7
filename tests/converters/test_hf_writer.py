"""Writing Hugging Face checkpoints: transformers loads them cleanly and computes our outputs.

Keras -> HF -> transformers matches our outputs to 1e-5 for the backbone
(`BertModel`), the pretrainer (`BertForPreTraining`) and the masked LM
(`BertForMaskedLM`), with no missing or unexpected keys; HF -> Keras -> HF
gives back the same tensors, byte for byte.
"""

import json
import os

import keras
import numpy as np
import pytest

from harness import numpy_tree
from keras_bert import BertBackbone, BertMaskedLM, BertPretrainer
from keras_bert.converters import save_hf_checkpoint
from keras_bert.jobs.convert import convert

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from safetensors.numpy import load_file  # noqa: E402
from test_hf_parity import TINY_HF, batch_with_padding, hf_outputs, read_sentences, tiny_hf_model  # noqa: E402

BACKBONE_ARGS = dict(
    vocabulary_size=TINY_HF["vocab_size"],
    num_layers=2,
    num_heads=4,
    hidden_dim=32,
    intermediate_dim=37,
    max_sequence_length=24,
)


def perturbed(model, seed=0):
    """`model` with every weight moved off its initial value (zero biases, unit LayerNorms hide mapping errors)."""
    rng = np.random.default_rng(seed)
    model.set_weights([w + 0.05 * rng.standard_normal(w.shape).astype(w.dtype) for w in model.get_weights()])
    return model


def load_clean(cls_name, folder, kinds=("missing_keys", "unexpected_keys", "mismatched_keys")):
    """transformers' `from_pretrained`, asserting that no key was missing, unexpected or mis-shaped."""
    model, info = getattr(transformers, cls_name).from_pretrained(
        folder, attn_implementation="eager", output_loading_info=True
    )
    problems = {k: v for k, v in info.items() if v and k in kinds}
    assert not problems, f"{cls_name}.from_pretrained({folder}): {problems}"
    return model.eval()


def max_delta(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max())


def test_backbone_to_bert_model(tmp_path):
    backbone = perturbed(BertBackbone(**BACKBONE_ARGS))
    folder = save_hf_checkpoint(backbone, tmp_path / "hf")
    assert sorted(os.listdir(folder)) == ["config.json", "model.safetensors", "tokenizer_config.json"]
    assert not any(name.startswith("bert.") for name in load_file(os.path.join(folder, "model.safetensors")))
    reference = load_clean("BertModel", folder)

    inputs = batch_with_padding()
    del inputs["mask_positions"]
    ours = numpy_tree(backbone(inputs))
    out = hf_outputs(reference, inputs)
    real = inputs["padding_mask"].astype(bool)
    delta = max(
        max_delta(ours["sequence_output"][real], out.last_hidden_state.numpy()[real]),
        max_delta(ours["pooled_output"], out.pooler_output.numpy()),
    )
    print(f"BertBackbone -> BertModel: max |delta| {delta:.2e}")
    assert delta <= 1e-5


def test_pretrainer_to_bert_for_pretraining(tmp_path):
    model = perturbed(BertPretrainer(BertBackbone(**BACKBONE_ARGS)), seed=1)
    folder = save_hf_checkpoint(model, tmp_path / "hf")
    names = set(load_file(os.path.join(folder, "model.safetensors")))
    # Tied decoder: stored as transformers stores it, i.e. not at all.
    assert "cls.predictions.decoder.weight" not in names and "bert.pooler.dense.weight" in names
    reference = load_clean("BertForPreTraining", folder)

    inputs = batch_with_padding()
    ours = numpy_tree(model(inputs))
    out = hf_outputs(reference, inputs)
    mlm = np.take_along_axis(out.prediction_logits.numpy(), inputs["mask_positions"][..., None], axis=1)
    delta = max(max_delta(ours["mlm"], mlm), max_delta(ours["nsp"], out.seq_relationship_logits.numpy()))
    print(f"BertPretrainer -> BertForPreTraining: max |delta| {delta:.2e}")
    assert delta <= 1e-5
    # The encoder of a pretraining checkpoint loads as a BertModel too (the
    # heads are "unexpected" there, as with transformers' own checkpoints).
    load_clean("BertModel", folder, kinds=("missing_keys", "mismatched_keys"))


def test_masked_lm_to_bert_for_masked_lm(tmp_path):
    model = perturbed(BertMaskedLM(BertBackbone(**BACKBONE_ARGS)), seed=2)
    folder = save_hf_checkpoint(model, tmp_path / "hf")
    assert not any("pooler" in name for name in load_file(os.path.join(folder, "model.safetensors")))
    reference = load_clean("BertForMaskedLM", folder)
    inputs = batch_with_padding()
    with torch.no_grad():
        logits = reference(
            input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long),
        ).logits.numpy()
    expected = np.take_along_axis(logits, inputs["mask_positions"][..., None], axis=1)
    delta = max_delta(keras.ops.convert_to_numpy(model(inputs)), expected)
    print(f"BertMaskedLM -> BertForMaskedLM: max |delta| {delta:.2e}")
    assert delta <= 1e-5


@pytest.mark.parametrize("cls_name", ["BertModel", "BertForPreTraining", "BertForMaskedLM"])
def test_hf_keras_hf_round_trip_is_byte_identical(tmp_path, cls_name):
    tiny_hf_model(cls_name, seed=3).save_pretrained(tmp_path / "source")
    convert(tmp_path / "source", tmp_path / "model.keras")
    convert(tmp_path / "model.keras", tmp_path / "back", to="hf")
    source = load_file(tmp_path / "source" / "model.safetensors")
    back = load_file(tmp_path / "back" / "model.safetensors")
    assert sorted(back) == sorted(source)
    for name in source:
        assert back[name].dtype == source[name].dtype and back[name].shape == source[name].shape, name
        assert back[name].tobytes() == source[name].tobytes(), name
    # Even the files are identical: same header, metadata and tensor order as transformers writes.
    written = (tmp_path / "back" / "model.safetensors").read_bytes()
    assert written == (tmp_path / "source" / "model.safetensors").read_bytes()
    config = json.loads((tmp_path / "back" / "config.json").read_text())
    assert config["architectures"] == [cls_name]


def test_vocabulary_and_tokenizer_files(tmp_path, minilm_path, shared_data):
    """With MiniLM's vocabulary, transformers' tokenizer built from our files gives the original ids."""
    backbone = BertBackbone(**{**BACKBONE_ARGS, "vocabulary_size": 30522, "max_sequence_length": 512})
    folder = save_hf_checkpoint(backbone, tmp_path / "hf", vocabulary=os.path.join(minilm_path, "vocab.txt"))
    assert (tmp_path / "hf" / "vocab.txt").read_bytes() == open(os.path.join(minilm_path, "vocab.txt"), "rb").read()
    tokenizer_config = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())
    assert tokenizer_config["do_lower_case"] is True and tokenizer_config["tokenizer_class"] == "BertTokenizer"
    ours = transformers.AutoTokenizer.from_pretrained(folder)
    original = transformers.AutoTokenizer.from_pretrained(minilm_path)
    sentences = read_sentences(shared_data, 32)
    assert ours(sentences)["input_ids"] == original(sentences)["input_ids"]

    # A tokenizer object hands over its vocabulary and casing.
    class Tokenizer:
        lowercase, strip_accents, tokenize_chinese_chars = False, False, True

        def get_vocabulary(self):
            return original.convert_ids_to_tokens(list(range(30522)))

    save_hf_checkpoint(backbone, tmp_path / "cased", vocabulary=Tokenizer())
    tokenizer_config = json.loads((tmp_path / "cased" / "tokenizer_config.json").read_text())
    assert (tokenizer_config["do_lower_case"], tokenizer_config["strip_accents"]) == (False, False)
    assert (tmp_path / "cased" / "vocab.txt").read_bytes() == (tmp_path / "hf" / "vocab.txt").read_bytes()

    with pytest.raises(ValueError, match=r"vocabulary has 5 tokens.*30522 rows"):
        save_hf_checkpoint(backbone, tmp_path / "bad", vocabulary=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    assert not (tmp_path / "bad").exists()


def test_writes_are_atomic(tmp_path, monkeypatch):
    backbone = BertBackbone(**BACKBONE_ARGS)
    destination = tmp_path / "out" / "hf"
    save_hf_checkpoint(backbone, destination)
    with pytest.raises(FileExistsError, match="overwrite"):
        save_hf_checkpoint(backbone, destination)

    # A failure half-way leaves neither a partial folder nor temporary files.
    import safetensors.numpy

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(safetensors.numpy, "save_file", fail)
    with pytest.raises(OSError, match="disk full"):
        save_hf_checkpoint(backbone, tmp_path / "out" / "other")
    with pytest.raises(OSError, match="disk full"):
        save_hf_checkpoint(backbone, destination, overwrite=True)
    assert sorted(os.listdir(tmp_path / "out")) == ["hf"]  # the old folder, intact
    assert sorted(os.listdir(destination)) == ["config.json", "model.safetensors", "tokenizer_config.json"]
    monkeypatch.undo()

    bigger = BertBackbone(**{**BACKBONE_ARGS, "num_layers": 3})
    save_hf_checkpoint(bigger, destination, overwrite=True)
    assert json.loads((destination / "config.json").read_text())["num_hidden_layers"] == 3
    assert sorted(os.listdir(tmp_path / "out")) == ["hf"]


def test_unsupported_models_are_refused(tmp_path):
    with pytest.raises(ValueError, match="normalize_first"):
        save_hf_checkpoint(BertBackbone(**BACKBONE_ARGS, normalize_first=True), tmp_path / "pre_ln")
    assert not (tmp_path / "pre_ln").exists()
