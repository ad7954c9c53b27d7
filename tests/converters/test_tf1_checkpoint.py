"""Google's original TF1 BERT checkpoints, written here with tf.compat.v1's Saver.

The tests write checkpoints the way google-research/bert did (original
variable names, `(in, out)` kernels, Adam slots and `global_step` beside the
weights, `bert_config.json` and `vocab.txt`), from the real all-MiniLM-L6-v2
weights and from random tiny models, then check our loads against
transformers on the same weights. The name table below is written out
independently of `keras_bert.converters.tf1_checkpoint`, so a mapping error
there cannot cancel itself out here.
"""

import json
import os
import shutil

import keras
import numpy as np
import pytest

from harness import numpy_tree
from keras_bert import BertBackbone, BertMaskedLM, BertPretrainer
from keras_bert.converters import load_weights, read_checkpoint, read_do_lower_case
from keras_bert.converters.tf1_checkpoint import canonical_to_tf1_name, tf1_to_canonical_name

tf = pytest.importorskip("tensorflow")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from test_hf_parity import TINY_HF, batch_with_padding, hf_outputs, read_sentences, tiny_hf_model  # noqa: E402

LAYER_PARTS = [  # (Hugging Face module, TF1 scope)
    ("attention.self.query", "attention/self/query"),
    ("attention.self.key", "attention/self/key"),
    ("attention.self.value", "attention/self/value"),
    ("attention.output.dense", "attention/output/dense"),
    ("intermediate.dense", "intermediate/dense"),
    ("output.dense", "output/dense"),
]
LAYER_NORMS = [("attention.output.LayerNorm", "attention/output/LayerNorm"), ("output.LayerNorm", "output/LayerNorm")]


def hf_to_tf1_names(num_layers):
    """Hugging Face name (without `bert.`) -> (TF1 name, transpose), as google-research/bert names them."""
    names = {
        "embeddings.word_embeddings.weight": ("bert/embeddings/word_embeddings", False),
        "embeddings.token_type_embeddings.weight": ("bert/embeddings/token_type_embeddings", False),
        "embeddings.position_embeddings.weight": ("bert/embeddings/position_embeddings", False),
        "embeddings.LayerNorm.weight": ("bert/embeddings/LayerNorm/gamma", False),
        "embeddings.LayerNorm.bias": ("bert/embeddings/LayerNorm/beta", False),
        "pooler.dense.weight": ("bert/pooler/dense/kernel", True),
        "pooler.dense.bias": ("bert/pooler/dense/bias", False),
        "cls.predictions.transform.dense.weight": ("cls/predictions/transform/dense/kernel", True),
        "cls.predictions.transform.dense.bias": ("cls/predictions/transform/dense/bias", False),
        "cls.predictions.transform.LayerNorm.weight": ("cls/predictions/transform/LayerNorm/gamma", False),
        "cls.predictions.transform.LayerNorm.bias": ("cls/predictions/transform/LayerNorm/beta", False),
        "cls.predictions.bias": ("cls/predictions/output_bias", False),
        "cls.seq_relationship.weight": ("cls/seq_relationship/output_weights", False),  # (2, hidden) in TF1 too
        "cls.seq_relationship.bias": ("cls/seq_relationship/output_bias", False),
    }
    for i in range(num_layers):
        for hf_part, tf1_part in LAYER_PARTS:
            names[f"encoder.layer.{i}.{hf_part}.weight"] = (f"bert/encoder/layer_{i}/{tf1_part}/kernel", True)
            names[f"encoder.layer.{i}.{hf_part}.bias"] = (f"bert/encoder/layer_{i}/{tf1_part}/bias", False)
        for hf_part, tf1_part in LAYER_NORMS:
            names[f"encoder.layer.{i}.{hf_part}.weight"] = (f"bert/encoder/layer_{i}/{tf1_part}/gamma", False)
            names[f"encoder.layer.{i}.{hf_part}.bias"] = (f"bert/encoder/layer_{i}/{tf1_part}/beta", False)
    return names


def tf1_variables(state_dict, num_layers):
    """TF1 name -> numpy array from a transformers state dict (tied decoder and buffers dropped)."""
    table = hf_to_tf1_names(num_layers)
    variables = {}
    for name, tensor in state_dict.items():
        name = name[len("bert.") :] if name.startswith("bert.") else name
        if name.startswith("cls.predictions.decoder") or name.endswith("position_ids"):
            continue
        tf1_name, transpose = table[name]
        array = np.asarray(tensor.detach().numpy() if hasattr(tensor, "detach") else tensor, dtype="float32")
        variables[tf1_name] = array.T.copy() if transpose else array
    return variables


def bert_config(hf_config):
    return {
        "attention_probs_dropout_prob": 0.1,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": hf_config.hidden_size,
        "initializer_range": 0.02,
        "intermediate_size": hf_config.intermediate_size,
        "max_position_embeddings": hf_config.max_position_embeddings,
        "num_attention_heads": hf_config.num_attention_heads,
        "num_hidden_layers": hf_config.num_hidden_layers,
        "type_vocab_size": hf_config.type_vocab_size,
        "vocab_size": hf_config.vocab_size,
    }


def write_tf1_checkpoint(folder, variables, config, vocabulary=None, prefix="bert_model.ckpt", training_state=True):
    """Writes `variables` with tf.compat.v1.train.Saver under their own names, as Google's scripts did."""
    os.makedirs(folder, exist_ok=True)
    with tf.Graph().as_default():
        graph_variables = {name: tf.compat.v1.Variable(value, name=name) for name, value in variables.items()}
        if training_state:
            # What run_pretraining.py saves beside the weights: Adam slots and the step.
            some = next(iter(variables))
            for slot, value in (("adam_m", np.zeros_like(variables[some])), ("adam_v", np.ones_like(variables[some]))):
                graph_variables[f"{some}/{slot}"] = tf.compat.v1.Variable(value, name=f"{some}/{slot}")
            graph_variables["global_step"] = tf.compat.v1.Variable(np.int64(1000), name="global_step")
        saver = tf.compat.v1.train.Saver(var_list=graph_variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, os.path.join(folder, prefix), write_meta_graph=False)
    with open(os.path.join(folder, "bert_config.json"), "w") as f:
        json.dump(config, f, indent=2)
    if vocabulary is not None:
        with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("".join(token + "\n" for token in vocabulary))
    return str(folder)


def tiny_vocabulary(size=TINY_HF["vocab_size"]):
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return special + [f"tok{i}" for i in range(size - len(special))]


@pytest.fixture(scope="module")
def minilm_tf1(minilm_path, tmp_path_factory):
    from safetensors.numpy import load_file

    hf_config = transformers.BertConfig.from_pretrained(minilm_path)
    variables = tf1_variables(load_file(os.path.join(minilm_path, "model.safetensors")), hf_config.num_hidden_layers)
    with open(os.path.join(minilm_path, "vocab.txt"), encoding="utf-8") as f:
        vocabulary = [line.rstrip("\n") for line in f]
    folder = tmp_path_factory.mktemp("tf1") / "uncased_L-6_H-384_A-12"
    return write_tf1_checkpoint(folder, variables, bert_config(hf_config), vocabulary)


@pytest.fixture(scope="module")
def tiny_tf1(tmp_path_factory):
    """A random tiny BertForPreTraining as a TF1 checkpoint: (folder, transformers model)."""
    hf = tiny_hf_model("BertForPreTraining", seed=7)
    folder = tmp_path_factory.mktemp("tf1") / "tiny_cased_L-2_H-32"
    write_tf1_checkpoint(folder, tf1_variables(hf.state_dict(), 2), bert_config(hf.config), tiny_vocabulary())
    return str(folder), hf


def test_name_mapping_inverts():
    for hf_name, (tf1_name, transpose) in hf_to_tf1_names(3).items():
        assert tf1_to_canonical_name(tf1_name) == (hf_name, transpose)
        assert canonical_to_tf1_name(hf_name) == tf1_name


# Writing and reading a TF1 checkpoint is TensorFlow / NumPy code, and the loader runs on every backend
# with the tiny checkpoints below; real MiniLM weights through our backbone are compared with
# transformers on every backend in test_hf_parity.py. So the real checkpoint (its writing alone
# took 5-15 s a pass) is read once, in torch's pass, the shortest.
@pytest.mark.only_backend("torch", reason="the real TF1 checkpoint is read once: the loader is checked on every "
                          "backend with tiny checkpoints, real MiniLM weights by test_hf_parity.py")
def test_real_minilm_from_tf1_matches_transformers(minilm_tf1, minilm_path, shared_data):
    sentences = read_sentences(shared_data, 16)
    tokenizer = transformers.BertTokenizerFast.from_pretrained(minilm_path)
    encoded = tokenizer(sentences, padding=True, truncation=True, max_length=64, return_tensors="np")
    inputs = {
        "token_ids": encoded["input_ids"].astype("int32"),
        "segment_ids": encoded["token_type_ids"].astype("int32"),
        "padding_mask": encoded["attention_mask"].astype("int32"),
    }
    assert inputs["padding_mask"].min() == 0  # the batch really has padding

    backbone = BertBackbone.from_pretrained(minilm_tf1)
    assert (backbone.num_layers, backbone.hidden_dim, backbone.num_heads) == (6, 384, 12)
    ours = numpy_tree(backbone.predict(inputs, verbose=0))
    reference = transformers.BertModel.from_pretrained(minilm_path, attn_implementation="eager").eval()
    out = hf_outputs(reference, inputs)
    real = inputs["padding_mask"].astype(bool)
    delta_sequence = np.abs(ours["sequence_output"][real] - out.last_hidden_state.numpy()[real]).max()
    delta_pooled = np.abs(ours["pooled_output"] - out.pooler_output.numpy()).max()
    print(f"MiniLM via TF1: max |delta| sequence {delta_sequence:.2e}, pooled {delta_pooled:.2e}")
    assert delta_sequence <= 1e-4 and delta_pooled <= 1e-4

    # The same folder through a checkpoint prefix; the tokenizer's facts come along.
    checkpoint = read_checkpoint(os.path.join(minilm_tf1, "bert_model.ckpt"))
    assert checkpoint.format == "tf1" and checkpoint.do_lower_case is True
    assert checkpoint.vocabulary_file == os.path.join(minilm_tf1, "vocab.txt")


def test_tiny_tf1_heads_match_bert_for_pretraining(tiny_tf1):
    folder, hf = tiny_tf1
    inputs = batch_with_padding()
    model = BertPretrainer.from_pretrained(folder)
    ours = numpy_tree(model(inputs, training=False))
    reference = hf_outputs(hf, inputs)
    mlm = np.take_along_axis(reference.prediction_logits.numpy(), inputs["mask_positions"][..., None], axis=1)
    np.testing.assert_allclose(ours["mlm"], mlm, atol=1e-5)
    np.testing.assert_allclose(ours["nsp"], reference.seq_relationship_logits.numpy(), atol=1e-5)

    # MLM alone, and the backbone alone, from the same pretraining checkpoint.
    masked_lm = BertMaskedLM.from_pretrained(folder)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(masked_lm(inputs)), mlm, atol=1e-5)
    backbone = BertBackbone.from_pretrained(folder, dropout=0.0)
    del inputs["mask_positions"]
    real = inputs["padding_mask"].astype(bool)
    sequence = numpy_tree(backbone(inputs))["sequence_output"]
    np.testing.assert_allclose(sequence[real], reference.hidden_states[-1].numpy()[real], atol=1e-5)
    assert read_do_lower_case(folder) is False  # "..._cased_..." folder name


def test_fine_tuning_run_folder(tmp_path):
    """run_classifier.py's output: model.ckpt-N named by a `checkpoint` file, with its classifier head."""
    hf = tiny_hf_model("BertModel", seed=8)
    variables = tf1_variables(hf.state_dict(), 2)
    variables["output_weights"] = np.zeros((3, 32), "float32")  # (num_labels, hidden)
    variables["output_bias"] = np.zeros((3,), "float32")
    folder = write_tf1_checkpoint(tmp_path / "run", variables, bert_config(hf.config), prefix="model.ckpt-1000")
    backbone = BertBackbone.from_pretrained(folder)  # found through the `checkpoint` file; the head is not needed
    inputs = batch_with_padding()
    del inputs["mask_positions"]
    np.testing.assert_allclose(
        numpy_tree(backbone(inputs))["pooled_output"], hf_outputs(hf, inputs).pooler_output.numpy(), atol=1e-5
    )
    assert read_checkpoint(os.path.join(folder, "model.ckpt-1000.index")).format == "tf1"


def test_do_lower_case_sources(tmp_path):
    for name, expected in [("uncased_L-12_H-768_A-12", True), ("multi_cased_L-12_H-768_A-12", False),
                           ("wwm_cased_L-24", False), ("my_bert", True)]:
        (tmp_path / name).mkdir()
        assert read_do_lower_case(tmp_path / name) is expected, name
    (tmp_path / "uncased_L-12_H-768_A-12" / "bert_config.json").write_text(json.dumps({"do_lower_case": False}))
    assert read_do_lower_case(tmp_path / "uncased_L-12_H-768_A-12") is False  # the field wins over the name


# --- bad input: refused with a message that names the problem, and nothing loaded.


@pytest.fixture
def broken_folder(tmp_path):
    """(writer of a tiny BertModel TF1 checkpoint with edits, a backbone to load into)."""
    hf = tiny_hf_model("BertModel", seed=9)
    variables = tf1_variables(hf.state_dict(), 2)
    config = bert_config(hf.config)

    def write(edit=lambda v: v, vocabulary=None, name="broken"):
        return write_tf1_checkpoint(tmp_path / name, edit(dict(variables)), config, vocabulary)

    backbone = BertBackbone(
        vocabulary_size=99, num_layers=2, num_heads=4, hidden_dim=32, intermediate_dim=37, max_sequence_length=24
    )
    return write, backbone


def assert_refused(backbone, folder, pattern):
    before = [w.copy() for w in backbone.get_weights()]
    with pytest.raises(ValueError, match=pattern):
        load_weights(backbone, folder)
    for a, b in zip(before, backbone.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=pattern):
        BertBackbone.from_pretrained(folder)


def test_missing_variable_is_refused(broken_folder):
    write, backbone = broken_folder

    def drop(v):
        del v["bert/encoder/layer_1/attention/self/key/bias"]
        return v

    assert_refused(backbone, write(drop), r"lacks tensors.*bert/encoder/layer_1/attention/self/key/bias.*Nothing")


def test_extra_variables_are_refused(broken_folder):
    write, backbone = broken_folder
    stray = "bert/encoder/layer_2/output/dense/kernel"  # a third layer under a 2-layer config
    folder = write(lambda v: {**v, stray: np.zeros((37, 32), "float32")}, name="extra_layer")
    assert_refused(backbone, folder, rf"does not use: {stray}.*do not match the config")
    folder = write(lambda v: {**v, "bert/adapter/kernel": np.zeros((3, 3), "float32")}, name="extra_other")
    assert_refused(backbone, folder, r"does not use: bert/adapter/kernel")


def test_misshaped_variable_is_refused(broken_folder):
    write, backbone = broken_folder
    name = "bert/encoder/layer_1/intermediate/dense/kernel"
    folder = write(lambda v: {**v, name: v[name][:, :-1].copy()})
    assert_refused(backbone, folder, rf"{name} \(stored shape \(32, 36\)\).*\(36, 32\).*Nothing was loaded")


def test_vocabulary_of_wrong_size_is_refused(broken_folder):
    write, backbone = broken_folder
    folder = write(vocabulary=tiny_vocabulary(98))
    assert_refused(backbone, folder, r"vocab\.txt has 98 tokens.*bert/embeddings/word_embeddings` has 99 rows")


def test_truncated_checkpoint_is_refused(broken_folder):
    write, backbone = broken_folder
    folder = write()
    data = os.path.join(folder, "bert_model.ckpt.data-00000-of-00001")
    with open(data, "rb") as f:
        content = f.read()
    with open(data, "wb") as f:
        f.write(content[: len(content) // 2])
    assert_refused(backbone, folder, r"TF1 checkpoint .*bert_model\.ckpt.*truncated")

    index = os.path.join(folder, "bert_model.ckpt.index")
    with open(index, "rb") as f:
        content = f.read()
    with open(index, "wb") as f:
        f.write(content[:20])
    assert_refused(backbone, folder, r"Cannot read the TF1 checkpoint .*bert_model\.ckpt")


def test_config_and_folder_problems_are_refused(broken_folder, tmp_path):
    write, _ = broken_folder
    folder = write()
    config_path = os.path.join(folder, "bert_config.json")
    with open(config_path) as f:
        config = json.load(f)
    with open(config_path, "w") as f:
        json.dump({**config, "hidden_act": "silu"}, f)
    with pytest.raises(ValueError, match="hidden_act='silu'"):
        BertBackbone.from_pretrained(folder)

    # A folder with the config but without the checkpoint files says what is missing.
    lonely = tmp_path / "only_config"
    lonely.mkdir()
    shutil.copy(config_path, lonely / "bert_config.json")
    with pytest.raises(ValueError, match=r"bert_model\.ckpt\.index"):
        BertBackbone.from_pretrained(str(lonely))
