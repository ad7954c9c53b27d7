"""`compile(jit_compile=True)` on torch: `fit` runs `CompiledTrainStep` and trains as the eager step does.

Each test trains two copies of a tiny model from the same weights, one eager
(`jit_compile=False`, Keras' torch train step) and one compiled, and compares
what `fit` reports and what it leaves: per-step losses, weights, optimizer
state. Most tests compile with torch's "aot_eager" backend (the same export,
dropout rewrite and autograd graphs, run op by op: seconds); the two loss
tests compile with inductor, as users run it (its C++ kernels take tens of
seconds to build on two cores).
"""

import keras
import numpy as np
import pytest

from harness import FIXTURE_VOCABULARY_SIZE, random_bert_inputs, tiny_backbone
from keras_bert import BertClassifier, BertPretrainer
from keras_bert.optimizers import create_optimizer
from keras_bert.torch_training import CompiledTrainStep, FusedAdamWUpdate, compiled_train_step, random_ops

pytestmark = pytest.mark.only_backend(
    "torch", reason="the compiled step is the torch backend's `jit_compile=True`; TensorFlow and JAX compile with XLA"
)

LENGTH = 12


@pytest.fixture
def aot_eager(monkeypatch):
    monkeypatch.setattr(compiled_train_step, "COMPILER", "aot_eager")


class StepLosses(keras.callbacks.Callback):
    """The `loss` each training step reports (Keras' running mean over the epoch)."""

    def __init__(self):
        super().__init__()
        self.values = []

    def on_train_batch_end(self, batch, logs=None):
        self.values.append(float(logs["loss"]))


def optimizer(**overrides):
    # A large rate and a small clipping norm, so that the schedule, the decay and the clipping all move the weights.
    settings = {"learning_rate": 1e-2, "warmup_steps": 2, "total_steps": 20, "global_clipnorm": 0.1}
    return create_optimizer(**{**settings, **overrides})


def classifier(jit, dropout=0.0, make_optimizer=optimizer, pooling="cls"):
    keras.utils.set_random_seed(0)
    model = BertClassifier(tiny_backbone(dropout=dropout, max_sequence_length=LENGTH), num_classes=3,
                           dropout=dropout, pooling=pooling)
    model.compile(optimizer=make_optimizer(), jit_compile=jit)
    return model


def classification_data(n=8, seed=0):
    x = random_bert_inputs(n, LENGTH, FIXTURE_VOCABULARY_SIZE, seed=seed)
    y = np.random.default_rng(seed).integers(0, 3, (n,)).astype("int32")
    return x, y


def fit_both(build, x, y, **fit_arguments):
    """{jit_compile: (model, per-step losses, history)} after the same `fit` of an eager and a compiled copy."""
    runs = {}
    for jit in (False, True):
        model = build(jit)
        losses = StepLosses()
        keras.utils.set_random_seed(1)
        history = model.fit(x, y, callbacks=[losses], verbose=0, shuffle=False, **fit_arguments)
        runs[jit] = (model, losses.values, history.history)
    return runs


def weights(model):
    return [keras.ops.convert_to_numpy(w) for w in model.weights]


def assert_same_training(runs, rtol=1e-5, atol=1e-6, weight_atol=1e-5):
    (eager, eager_losses, eager_history), (compiled, compiled_losses, compiled_history) = runs[False], runs[True]
    assert isinstance(compiled.train_function, CompiledTrainStep)
    assert compiled.train_function.fallback_reason is None
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=rtol, atol=atol)
    assert sorted(compiled_history) == sorted(eager_history)
    for key in eager_history:
        np.testing.assert_allclose(compiled_history[key], eager_history[key], rtol=rtol, atol=atol, err_msg=key)
    # Weights and moments within 1e-3 of one update (learning rate 1e-2): Adam divides by sqrt(v), so an entry
    # whose gradient nearly cancels out carries float rounding at epsilon's scale (seen: 1 entry of 2,352 off by
    # 3.3e-6 after 6 steps, the others within 1e-6).
    for a, b in zip(weights(compiled), weights(eager)):
        np.testing.assert_allclose(a, b, rtol=10 * rtol, atol=weight_atol)
    assert int(compiled.optimizer.iterations) == int(eager.optimizer.iterations)
    for a, b in zip(compiled.optimizer.variables, eager.optimizer.variables):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b), rtol=10 * rtol,
                                   atol=weight_atol, err_msg=a.path)


def test_classifier_without_dropout_trains_as_the_eager_step():
    """Inductor's compiled step and the fused AdamW (schedule, decay exclusions, clipping): the eager losses."""
    x, y = classification_data()
    runs = fit_both(classifier, x, y, batch_size=4, epochs=3)
    assert_same_training(runs)
    step = runs[True][0].train_function
    assert isinstance(step.update, FusedAdamWUpdate) and step.update_reason is None
    assert len(step.graphs) == 1


def pretraining_data(n=8, predictions=3, seed=0):
    rng = np.random.default_rng(seed)
    x = random_bert_inputs(n, LENGTH, FIXTURE_VOCABULARY_SIZE, seed=seed, pad_last=0)
    x["mask_positions"] = np.sort(np.stack([rng.choice(np.arange(1, LENGTH), predictions, replace=False)
                                            for _ in range(n)]), axis=1).astype("int32")
    y = {"mlm": rng.integers(5, FIXTURE_VOCABULARY_SIZE, (n, predictions)).astype("int32"),
         "nsp": rng.integers(0, 2, (n,)).astype("int32")}
    w = {"mlm": (rng.random((n, predictions)) > 0.2).astype("float32"), "nsp": np.ones((n,), "float32")}
    return x, y, w


def pretrainer(jit, dropout=0.1):
    keras.utils.set_random_seed(0)
    model = BertPretrainer(tiny_backbone(dropout=dropout, max_sequence_length=LENGTH))
    model.compile(optimizer=optimizer(), jit_compile=jit)
    return model


def test_pretrainer_with_dropout_trains_as_the_eager_step_when_both_draw_masks_alike(monkeypatch):
    """Dropout on, with inductor: the compiled step's masks (`rand >= p`, torch's default generator) are what the
    eager step draws when its dropout is written the same way, so the two train alike, step for step.

    Eager Keras draws with `bernoulli_`, which gives other masks from the same seed; here the eager run's
    `F.dropout` and attention are swapped for `random_ops`' forms (not the compiled run's: its graph has
    `aten.dropout` nodes, which the step rewrites). Also covers dict outputs, labels and sample weights, the
    loss weights and the per-output loss metrics.
    """
    import torch

    x, y, w = pretraining_data()
    runs = {}
    for jit in (False, True):
        with monkeypatch.context() as patch:
            if not jit:
                patch.setattr(torch.nn.functional, "dropout",
                              lambda x, p=0.5, training=True, inplace=False: random_ops.dropout(x, p, training))
                patch.setattr(torch.nn.functional, "scaled_dot_product_attention", random_ops.attention)
            model = pretrainer(jit)
            losses = StepLosses()
            keras.utils.set_random_seed(1)
            history = model.fit(x, y, sample_weight=w, batch_size=4, epochs=3, callbacks=[losses], verbose=0,
                                shuffle=False)
            runs[jit] = (model, losses.values, history.history)
    assert {"mlm_loss", "nsp_loss", "loss"} <= set(runs[True][2])
    assert_same_training(runs, rtol=2e-5, atol=2e-6)


def test_dropout_masks_differ_from_eager_bernoulli_but_keep_its_rate():
    """What the test above leaves out: without the swap, the masks are other draws of the same keep probability."""
    import torch

    x = torch.ones(200_000)
    torch.manual_seed(0)
    ours = random_ops.dropout(x, 0.1, True)
    torch.manual_seed(0)
    eager = torch.nn.functional.dropout(x, 0.1, training=True)
    assert not torch.equal(ours, eager)
    for dropped in (ours, eager):
        assert abs(float((dropped == 0).float().mean()) - 0.1) < 3e-3
        assert float(dropped.max()) == pytest.approx(1 / 0.9)


def test_gradient_accumulation_schedule_and_a_partial_last_batch(aot_eager):
    """Accumulating over 2 steps (the mean of the two, clipped, then one update), with 10 examples in batches of 4:
    the last batch of each epoch (2 examples) gets its own graph."""
    x, y = classification_data(n=10)
    runs = fit_both(lambda jit: classifier(jit, make_optimizer=lambda: optimizer(gradient_accumulation_steps=2)),
                    x, y, batch_size=4, epochs=2)
    assert_same_training(runs)
    step = runs[True][0].train_function
    assert isinstance(step.update, FusedAdamWUpdate) and len(step.graphs) == 2


def test_other_optimizers_update_through_keras(aot_eager):
    """LAMB (or any optimizer the fused kernel does not compute) takes Keras' own `optimizer.apply`."""
    x, y = classification_data()
    runs = fit_both(lambda jit: classifier(jit, make_optimizer=lambda: optimizer(name="lamb")), x, y, batch_size=4,
                    epochs=2)
    assert_same_training(runs)
    step = runs[True][0].train_function
    assert not isinstance(step.update, FusedAdamWUpdate) and "BertLamb" in step.update_reason


def test_mixed_bfloat16_trains_as_the_eager_step(aot_eager):
    keras.config.set_dtype_policy("mixed_bfloat16")  # the suite's fixture sets float32 back
    x, y = classification_data()
    runs = fit_both(classifier, x, y, batch_size=4, epochs=2)
    compiled = runs[True][0]
    assert compiled.backbone.dtype_policy.name == "mixed_bfloat16"
    assert all(w.dtype == "float32" for w in compiled.trainable_weights)
    # bfloat16 rounds gradients at ~4e-3: the same near-cancelling entries move up to 6e-5 (seen) apart.
    assert_same_training(runs, rtol=1e-3, atol=1e-4, weight_atol=2e-4)


def test_saved_keras_file_loads_and_predicts_the_same(tmp_path, aot_eager):
    """After compiled training: `.keras` with the optimizer state; predict and evaluate run eagerly."""
    x, y = classification_data()
    model = classifier(True, dropout=0.1, pooling="mean")
    model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    assert model.train_function.fallback_reason is None
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)
    assert int(loaded.optimizer.iterations) == int(model.optimizer.iterations) == 4
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))
    # Keras' torch.compile of the predict step is not used: `predict_function` is Keras' eager function.
    assert not hasattr(model.predict_function, "_torchdynamo_orig_callable")
    assert model.evaluate(x, y, verbose=0, return_dict=True).keys() == {"loss", "accuracy"}


def test_a_step_that_cannot_be_traced_trains_eagerly_and_says_why(aot_eager):
    """A seeded Keras `Dropout` draws its seed as a Python int from a state variable: export cannot trace that."""
    import torch

    def build(jit):
        keras.utils.set_random_seed(0)
        inputs = keras.Input((4,))
        outputs = keras.layers.Dense(2)(keras.layers.Dropout(0.5, seed=3)(keras.layers.Dense(8)(inputs)))
        model = keras.Model(inputs, outputs)
        model.compile(optimizer="sgd", loss="mse")
        if jit:
            model.train_function = CompiledTrainStep(model)
        return model

    x = np.random.default_rng(0).random((8, 4)).astype("float32")
    y = np.random.default_rng(1).random((8, 2)).astype("float32")
    eager = build(False)
    eager.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    compiled = build(True)
    step = compiled.train_function
    with pytest.warns(UserWarning, match="the compiled torch train step does not apply .*; training eagerly"):
        compiled.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    # The reason names the error and where in the model's code it arose.
    assert "data-dependent" in step.fallback_reason and "dropout.py" in step.fallback_reason
    assert not step.graphs and compiled.train_function is step
    for a, b in zip(weights(compiled), weights(eager)):
        np.testing.assert_array_equal(a, b)
    assert torch.is_tensor(compiled.weights[0].value)


def test_out_of_range_ids_fail_as_in_the_eager_step(aot_eager):
    x, y = classification_data()
    x["token_ids"][0, 0] = FIXTURE_VOCABULARY_SIZE
    model = classifier(True)
    with pytest.raises(ValueError, match="token_ids"):
        model.train_on_batch(x, y)
