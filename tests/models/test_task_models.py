"""The task heads through the shared harness, plus their losses, checks and options."""

import keras
import numpy as np
import pytest

from harness import random_bert_inputs, run_layer_test, run_model_test, run_saving_test, tiny_backbone
from keras_bert.layers import SpanHead
from keras_bert.models import (
    BertClassifier,
    BertMaskedLM,
    BertMultipleChoice,
    BertPretrainer,
    BertQuestionAnswerer,
    BertTask,
    BertTokenClassifier,
)

VOCAB, BATCH, SEQ = 40, 4, 10


def inputs():
    return random_bert_inputs(BATCH, SEQ, VOCAB)


def test_span_head_layer(tmp_path):
    rng = np.random.default_rng(0)
    mask = np.ones((2, 6), "int32")
    mask[1, -2:] = 0
    layer = run_layer_test(
        SpanHead,
        {},
        {"sequence_output": rng.normal(size=(2, 6, 16)).astype("float32"), "padding_mask": mask},
        expected_output_shape=((2, 6), (2, 6)),
        expected_num_trainable_weights=2,
        expected_num_params=16 * 2 + 2,
        expected_output_dtype=("float32", "float32"),
        tmp_path=tmp_path,
    )
    # Hand-computed: one projection, column 0 = start, column 1 = end; padding at -1e9.
    x = rng.normal(size=(2, 6, 16)).astype("float32")
    start, end = (keras.ops.convert_to_numpy(t) for t in layer(x, padding_mask=mask))
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in layer.dense.weights)
    expected = x @ kernel + bias
    np.testing.assert_allclose(start[0], expected[0, :, 0], atol=1e-5)
    np.testing.assert_allclose(end[1, :4], expected[1, :4, 1], atol=1e-5)
    assert np.all(start[1, 4:] == -1e9) and np.all(end[1, 4:] == -1e9)


def test_classifier_harness(tmp_path):
    model = run_model_test(
        lambda: BertClassifier(tiny_backbone(), num_classes=3, label_names=["a", "b", "c"]),
        inputs(),
        (BATCH, 3),
        tmp_path,
        targets=np.array([0, 1, 2, 1]),
    )
    hidden = 16
    assert model.count_params() == model.backbone.count_params() + hidden * 3 + 3
    assert keras.saving.load_model(str(tmp_path / "model.keras")).label_names == ["a", "b", "c"]


def test_regressor_harness_uses_mse(tmp_path):
    model = run_model_test(
        lambda: BertClassifier(tiny_backbone(), num_classes=1),
        inputs(),
        (BATCH, 1),
        tmp_path,
        targets=np.array([0.5, -1.0, 2.0, 0.0], "float32"),
    )
    assert model.is_regression
    assert isinstance(model.loss, keras.losses.MeanSquaredError)


def test_token_classifier_harness(tmp_path):
    labels = np.random.default_rng(0).integers(0, 5, (BATCH, SEQ))
    labels[:, 0] = -100
    run_model_test(
        lambda: BertTokenClassifier(tiny_backbone(), num_classes=5, label_names=["O", "B-X", "I-X", "B-Y", "I-Y"]),
        inputs(),
        (BATCH, SEQ, 5),
        tmp_path,
        targets=labels,
    )


def test_question_answerer_harness(tmp_path):
    run_model_test(
        lambda: BertQuestionAnswerer(tiny_backbone()),
        inputs(),
        {"start": (BATCH, SEQ), "end": (BATCH, SEQ)},
        tmp_path,
        targets={"start": np.array([0, 3, 4, 5]), "end": np.array([0, 3, 6, 5])},
    )


def choice_inputs(num_choices=3):
    flat = random_bert_inputs(BATCH * num_choices, SEQ, VOCAB)
    return {k: v.reshape(BATCH, num_choices, SEQ) for k, v in flat.items()}


def test_multiple_choice_harness(tmp_path):
    model = run_model_test(
        lambda: BertMultipleChoice(tiny_backbone()),
        choice_inputs(),
        (BATCH, 3),
        tmp_path,
        targets=np.array([0, 1, 2, 1]),
    )
    # Another number of choices goes through the same model.
    assert tuple(model(choice_inputs(num_choices=5)).shape) == (BATCH, 5)


def test_multiple_choice_scores_each_choice_on_its_own():
    model = BertMultipleChoice(tiny_backbone())
    x = choice_inputs()
    scores = keras.ops.convert_to_numpy(model(x, training=False))
    # Choice 1 alone, as an example with one choice, gets the same score.
    single = {k: v[:, 1:2] for k, v in x.items()}
    np.testing.assert_allclose(keras.ops.convert_to_numpy(model(single, training=False))[:, 0], scores[:, 1], atol=1e-5)


def test_multiple_choice_input_checks():
    model = BertMultipleChoice(tiny_backbone(vocabulary_size=VOCAB))
    flat = inputs()
    with pytest.raises(ValueError, match=r"`token_ids` must have rank 3 \(batch_size, num_choices, length\)"):
        model.predict(flat, verbose=0)
    x = choice_inputs()
    x["token_ids"][0, 1, 2] = VOCAB
    with pytest.raises(ValueError, match=r"`token_ids` must be in \[0, 40\)"):
        model(x)


def test_multiple_choice_fit_and_evaluate_check_labels_against_the_number_of_choices():
    model = BertMultipleChoice(tiny_backbone(vocabulary_size=VOCAB))
    model.compile()
    # 3 choices: label 3 names no choice. BertTask's label check refuses it before any step runs.
    with pytest.raises(ValueError, match=r"class labels must be in \[0, 3\) \(num_classes=3\)\. Received 3"):
        model.fit(choice_inputs(), np.array([0, 1, 3, 2]), epochs=1, verbose=0)
    with pytest.raises(ValueError, match=r"class labels must be in \[0, 5\)"):
        model.evaluate(choice_inputs(num_choices=5), y=np.array([0, -1, 2, 4]), verbose=0)
    with pytest.raises(ValueError, match="class labels must be integer ids"):
        model.fit(choice_inputs(), np.array([0.5, 1, 2, 0]), epochs=1, verbose=0)
    with pytest.raises(ValueError, match="the inputs hold 0 examples"):
        model.predict({k: v[:0] for k, v in choice_inputs().items()}, verbose=0)
    model.fit(choice_inputs(), np.array([0, 1, 2, 2]), epochs=1, verbose=0)  # labels in range pass


def test_token_classifier_loss_ignores_minus_100_and_zero_weights():
    model = BertTokenClassifier(tiny_backbone(), num_classes=3)
    model.compile()
    x = inputs()
    labels = np.random.default_rng(1).integers(0, 3, (BATCH, SEQ))
    labels[:, :3] = -100
    weights = np.ones((BATCH, SEQ), "float32")
    weights[:, -2:] = 0.0
    logits = keras.ops.convert_to_numpy(model(x, training=False))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    counted = (labels != -100) & (weights > 0)
    nll = -np.take_along_axis(log_probs, np.maximum(labels, 0)[..., None], axis=-1)[..., 0]
    expected = nll[counted].mean()
    results = model.evaluate(x, labels, sample_weight=weights, batch_size=BATCH, verbose=0, return_dict=True)
    np.testing.assert_allclose(results["loss"], expected, rtol=1e-4)
    accuracy = (np.argmax(logits, -1) == labels)[counted].mean()
    np.testing.assert_allclose(results["accuracy"], accuracy, rtol=1e-5)


def test_question_answerer_loss_is_mean_of_start_and_end():
    model = BertQuestionAnswerer(tiny_backbone())
    model.compile()
    x = inputs()
    y = {"start": np.array([0, 1, 2, 3]), "end": np.array([0, 2, 2, 5])}
    out = {k: keras.ops.convert_to_numpy(v) for k, v in model(x, training=False).items()}

    def cross_entropy(logits, labels):
        shifted = logits - logits.max(-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        return -log_probs[np.arange(len(labels)), labels].mean()

    expected = (cross_entropy(out["start"], y["start"]) + cross_entropy(out["end"], y["end"])) / 2
    results = model.evaluate(x, y, batch_size=BATCH, verbose=0, return_dict=True)
    np.testing.assert_allclose(results["loss"], expected, rtol=1e-4)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="`num_classes` must be a positive int. Received: num_classes=0"):
        BertClassifier(tiny_backbone(), num_classes=0)
    with pytest.raises(ValueError, match="`label_names` has 2 names but num_classes=3"):
        BertClassifier(tiny_backbone(), num_classes=3, label_names=["a", "b"])
    with pytest.raises(ValueError, match="`label_names` must be distinct"):
        BertTokenClassifier(tiny_backbone(), num_classes=2, label_names=["O", "O"])
    with pytest.raises(ValueError, match="`label_names` must be a list of strings"):
        BertClassifier(tiny_backbone(), num_classes=2, label_names=[0, 1])
    with pytest.raises(ValueError, match="`dropout` must be a float in"):
        BertMultipleChoice(tiny_backbone(), dropout=1.5)


def test_frozen_backbone_trains_the_head_only(tmp_path):
    model = BertClassifier(tiny_backbone(), num_classes=2)
    model.backbone.trainable = False
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    assert len(model.trainable_weights) == 2  # the output kernel and bias
    before = [keras.ops.convert_to_numpy(w).copy() for w in model.backbone.weights]
    model.fit(inputs(), np.array([0, 1, 0, 1]), epochs=1, verbose=0)
    after = [keras.ops.convert_to_numpy(w) for w in model.backbone.weights]
    assert all(np.array_equal(b, a) for b, a in zip(before, after))
    restored = run_saving_test(model, inputs(), tmp_path)
    assert not restored.backbone.trainable


def test_mixed_precision_logits_are_float32():
    model = BertClassifier(tiny_backbone(dtype="mixed_bfloat16"), num_classes=2)
    assert keras.backend.standardize_dtype(model(inputs()).dtype) == "float32"
    qa = BertQuestionAnswerer(tiny_backbone(dtype="mixed_bfloat16"))
    assert keras.backend.standardize_dtype(qa(inputs())["start"].dtype) == "float32"


TASKS_WITH_NEW_HEADS = [
    (BertClassifier, dict(num_classes=2, label_names=["no", "yes"], dropout=0.2)),
    (BertTokenClassifier, dict(num_classes=3)),
    (BertQuestionAnswerer, {}),
    (BertMultipleChoice, dict(dropout=0.0)),
]


@pytest.mark.parametrize("cls", [c for c, _ in TASKS_WITH_NEW_HEADS] + [BertPretrainer, BertMaskedLM])
def test_every_task_model_has_from_pretrained_and_its_checks_from_bert_task(cls):
    assert cls.from_pretrained.__func__ is BertTask.from_pretrained.__func__
    for method in ("fit", "predict", "evaluate", "__call__", "compile", "get_config"):
        assert getattr(cls, method) is getattr(BertTask, method), f"{cls.__name__}.{method} overrides BertTask's"


@pytest.mark.parametrize("cls, kwargs", TASKS_WITH_NEW_HEADS)
def test_from_pretrained_puts_a_new_head_on_a_pretrained_backbone(monkeypatch, cls, kwargs):
    import types

    from keras_bert import BertBackbone
    from keras_bert.models import bert_task

    calls = []

    def fake_read_checkpoint(path, cache_dir):
        calls.append(("read", path, cache_dir))
        return types.SimpleNamespace(task_head=None)  # a checkpoint without a task head (a BertModel)

    def fake_build(checkpoint, model_cls, **backbone_kwargs):
        calls.append(("build", model_cls, backbone_kwargs))
        return tiny_backbone(**backbone_kwargs)

    monkeypatch.setattr(bert_task, "read_checkpoint", fake_read_checkpoint)
    monkeypatch.setattr(bert_task, "build_from_checkpoint", fake_build)
    model = cls.from_pretrained("some/checkpoint", backbone_kwargs={"dropout": 0.05}, **kwargs)
    assert calls == [("read", "some/checkpoint", None), ("build", BertBackbone, {"dropout": 0.05})]
    assert isinstance(model, cls) and model.backbone.dropout == 0.05
    for name, value in kwargs.items():
        assert getattr(model, name) == value


@pytest.mark.parametrize("cls, kwargs", TASKS_WITH_NEW_HEADS)
def test_from_pretrained_reads_a_saved_backbone(tmp_path, cls, kwargs):
    pretrained = tiny_backbone(vocabulary_size=VOCAB)
    pretrained.save(tmp_path / "backbone.keras")
    model = cls.from_pretrained(tmp_path / "backbone.keras", backbone_kwargs={"dropout": 0.05}, **kwargs)
    assert type(model) is cls and model.backbone.dropout == 0.05
    for ours, theirs in zip(model.backbone.get_weights(), pretrained.get_weights()):
        np.testing.assert_array_equal(ours, theirs)


def test_from_pretrained_takes_the_constructor_arguments_positionally(tmp_path):
    tiny_backbone(vocabulary_size=VOCAB).save(tmp_path / "backbone.keras")
    model = BertClassifier.from_pretrained(tmp_path / "backbone.keras", 3)
    assert model.num_classes == 3


def test_pretraining_models_load_their_heads_from_pretrained(tmp_path):
    pretrainer = BertPretrainer(tiny_backbone(vocabulary_size=VOCAB))
    pretrainer.save(tmp_path / "pretrainer.keras")
    # A new pretrainer built from the file's tensors (dropout changed) holds the same heads.
    again = BertPretrainer.from_pretrained(tmp_path / "pretrainer.keras", dropout=0.05)
    assert again is not pretrainer and again.backbone.dropout == 0.05
    for ours, theirs in zip(again.get_weights(), pretrainer.get_weights()):
        np.testing.assert_array_equal(ours, theirs)
    masked_lm = BertMaskedLM.from_pretrained(tmp_path / "pretrainer.keras", backbone_kwargs={"dropout": 0.05})
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(masked_lm.masked_lm_head.output_bias),
        keras.ops.convert_to_numpy(pretrainer.masked_lm_head.output_bias),
    )
    tiny_backbone(vocabulary_size=VOCAB).save(tmp_path / "backbone.keras")
    with pytest.raises(ValueError, match="lacks tensors the model needs: cls.predictions"):
        BertMaskedLM.from_pretrained(tmp_path / "backbone.keras")
