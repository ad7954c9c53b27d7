"""TracedTorchModel: the torch.export graph of a Keras model gives the Keras model's outputs, checks its inputs as
the model does, follows the model's weights, and refuses other backends."""

import keras
import numpy as np
import pytest

from export_helpers import SHORT_TEXTS, tokenizer
from harness import FIXTURE_VOCABULARY_SIZE, random_bert_inputs, tiny_backbone
from keras_bert.export import TracedTorchModel

ON_TORCH_ONLY = pytest.mark.only_backend(
    "torch", reason="TracedTorchModel traces with torch.export: a torch-backend feature (others get a RuntimeError)"
)


def inputs(batch, length, seed=0):
    return random_bert_inputs(batch, length, FIXTURE_VOCABULARY_SIZE, seed=seed)


def assert_same_outputs(traced, model, x, atol=1e-6):
    expected = model.predict_on_batch(x)
    actual = traced.predict_on_batch(x)
    assert type(actual) is type(expected)
    for want, got in zip(keras.tree.flatten(expected), keras.tree.flatten(actual)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, np.asarray(want, "float32"), atol=atol)


@ON_TORCH_ONLY
def test_backbone_outputs_equal_keras_at_every_batch_and_length():
    keras.utils.set_random_seed(0)
    backbone = tiny_backbone()
    traced = TracedTorchModel(backbone)
    for batch, length in [(3, 16), (1, 5), (7, 32)]:  # one trace, dynamic batch and length (1 and 32 = the limits)
        assert_same_outputs(traced, backbone, inputs(batch, length))


@ON_TORCH_ONLY
def test_graph_holds_no_no_op_casts_asserts_or_reshapes():
    traced = TracedTorchModel(tiny_backbone())
    raw = traced.exported_program.module()
    kept = [str(n.target) for n in traced.graph_module.graph.nodes if n.op == "call_function"]
    assert "aten._assert_tensor_metadata.default" not in kept
    raw_ops = [n for n in raw.graph.nodes if n.op == "call_function"]
    assert len(kept) < 0.6 * len(raw_ops), (len(kept), len(raw_ops))
    for node in traced.graph_module.graph.nodes:
        if str(node.target) in ("aten.to.dtype", "aten.to.dtype_layout"):
            assert node.args[0].meta["val"].dtype != node.meta["val"].dtype, node.format_node()


@ON_TORCH_ONLY
def test_every_task_model_with_masked_positions_and_choices():
    from keras_bert import (BertClassifier, BertMaskedLM, BertMultipleChoice, BertQuestionAnswerer, BertTextEmbedder,
                            BertTokenClassifier)

    keras.utils.set_random_seed(1)
    backbone = tiny_backbone()
    x = inputs(4, 12)
    for task in (BertClassifier(backbone, num_classes=3), BertTokenClassifier(backbone, num_classes=3),
                 BertQuestionAnswerer(backbone), BertTextEmbedder(backbone)):
        assert_same_outputs(TracedTorchModel(task), task, x)
    masked_lm = BertMaskedLM(backbone)
    traced_lm = TracedTorchModel(masked_lm)
    positions = np.array([[1, 3, 5], [2, 4, 6], [0, 1, 2], [7, 8, 9]], "int32")
    assert_same_outputs(traced_lm, masked_lm, {**x, "mask_positions": positions})
    assert_same_outputs(traced_lm, masked_lm, {**inputs(2, 20), "mask_positions": positions[:2, :1]})
    choice = BertMultipleChoice(backbone)
    three = {k: np.stack([v, v[::-1], np.roll(v, 1, axis=0)], axis=1) for k, v in x.items()}  # (4, 3, 12)
    assert_same_outputs(TracedTorchModel(choice), choice, three)


@ON_TORCH_ONLY
def test_bfloat16_model():
    keras.utils.set_random_seed(2)
    backbone = tiny_backbone(dtype="bfloat16")
    assert_same_outputs(TracedTorchModel(backbone), backbone, inputs(3, 10), atol=0.0)


@ON_TORCH_ONLY
def test_the_graph_follows_the_models_weights():
    """The graph reads the Keras variables themselves: weights changed after tracing change its outputs."""
    keras.utils.set_random_seed(3)
    backbone = tiny_backbone()
    traced = TracedTorchModel(backbone)
    x = inputs(2, 8)
    before = traced.predict_on_batch(x)["sequence_output"]
    backbone.set_weights([w * 1.5 for w in backbone.get_weights()])
    assert not np.allclose(traced.predict_on_batch(x)["sequence_output"], before, atol=1e-3)
    assert_same_outputs(traced, backbone, x)


@ON_TORCH_ONLY
def test_compiled_graph_equals_keras():
    keras.utils.set_random_seed(4)
    backbone = tiny_backbone()
    traced = TracedTorchModel(backbone, compile_mode="default")
    assert_same_outputs(traced, backbone, inputs(2, 16), atol=1e-5)


@ON_TORCH_ONLY
def test_pipeline_takes_the_traced_model():
    from keras_bert import BertClassifier
    from keras_bert.pipelines import TextClassifierPipeline

    keras.utils.set_random_seed(5)
    classifier = BertClassifier(tiny_backbone(), num_classes=3, label_names=["neg", "mid", "pos"])
    tok = tokenizer()
    expected = TextClassifierPipeline(classifier, tok, sequence_length=16)(SHORT_TEXTS)
    actual = TextClassifierPipeline(TracedTorchModel(classifier), tok, sequence_length=16)(SHORT_TEXTS)
    assert [r["label"] for r in actual] == [r["label"] for r in expected]
    np.testing.assert_allclose([r["score"] for r in actual], [r["score"] for r in expected], atol=1e-6)


@ON_TORCH_ONLY
def test_bad_inputs_fail_as_the_keras_model_fails():
    backbone = tiny_backbone()
    traced = TracedTorchModel(backbone)
    x = inputs(2, 8)
    too_big = {**x, "token_ids": np.full((2, 8), FIXTURE_VOCABULARY_SIZE, "int32")}
    with pytest.raises(ValueError, match="vocabulary_size") as from_keras:
        backbone(too_big)
    with pytest.raises(ValueError, match="vocabulary_size") as from_traced:
        traced(too_big)
    assert str(from_traced.value) == str(from_keras.value)
    with pytest.raises(ValueError, match="Missing: \\['padding_mask'\\]"):
        traced({k: v for k, v in x.items() if k != "padding_mask"})
    with pytest.raises(ValueError, match="integer"):
        traced({**x, "token_ids": x["token_ids"].astype("float32")})
    with pytest.raises(ValueError, match="max_sequence_length"):
        traced(inputs(1, 33))
    with pytest.raises(ValueError, match="rank 2"):
        traced({k: v[:, None] for k, v in x.items()})
    with pytest.raises(ValueError, match="compile_mode"):
        TracedTorchModel(backbone, compile_mode="fastest")


@pytest.mark.not_backend("torch", reason="checks the refusal that every backend but torch gives")
def test_other_backends_are_refused_with_the_reason():
    with pytest.raises(RuntimeError, match="KERAS_BACKEND=torch"):
        TracedTorchModel(tiny_backbone())
