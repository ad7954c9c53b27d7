"""create_optimizer: BERT's schedule and weight-decay exclusions (also after a .keras round trip); LAMB as the paper has it."""

import keras
import numpy as np
import pytest

from harness import FIXTURE_VOCABULARY_SIZE, random_bert_inputs, tiny_backbone
from keras_bert import BertClassifier, BertPretrainer, create_optimizer
from keras_bert.optimizers import NO_DECAY_NAMES, BertAdamW, WarmupSchedule, _dense


def test_linear_warmup_then_linear_decay_as_transformers_schedules_it():
    """Every step's rate is the one transformers' `get_linear_schedule_with_warmup` gives torch's AdamW (the first 0)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    schedule = create_optimizer(learning_rate=1e-3, warmup_steps=10, total_steps=110)._learning_rate
    reference = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1e-3)
    scheduler = transformers.get_linear_schedule_with_warmup(reference, num_warmup_steps=10, num_training_steps=110)
    expected = []
    for _ in range(110):
        expected.append(scheduler.get_last_lr()[0])
        reference.step()
        scheduler.step()
    values = [float(keras.ops.convert_to_numpy(schedule(step))) for step in range(110)]
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-12)
    assert values[0] == 0.0 and values[10] == pytest.approx(1e-3)


def test_schedule_round_trips_through_config():
    schedule = create_optimizer(learning_rate=2e-4, warmup_steps=5, total_steps=50)._learning_rate
    restored = WarmupSchedule.from_config(schedule.get_config())
    for step in (0, 3, 5, 20, 49):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(restored(step)), keras.ops.convert_to_numpy(schedule(step)), rtol=1e-6
        )


@pytest.mark.parametrize("name", ["adamw", "lamb"])
def test_no_weight_decay_on_layer_norm_and_bias_even_after_reload(name, tmp_path):
    model = BertPretrainer(tiny_backbone())
    model.compile(optimizer=create_optimizer(name, weight_decay=0.1))
    path = str(tmp_path / "m.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    for optimizer, variables in ((model.optimizer, model.trainable_variables), (restored.optimizer, restored.trainable_variables)):
        decayed = {v.path.split("/")[-1] for v in variables if optimizer._use_weight_decay(v)}
        excluded = {v.path.split("/")[-1] for v in variables if not optimizer._use_weight_decay(v)}
        assert decayed == {"kernel", "embeddings", "position_embeddings"}, decayed
        assert excluded == {"gamma", "beta", "bias", "output_bias"}, excluded


def test_rejects_unknown_optimizer_and_bad_steps():
    with pytest.raises(ValueError, match="'sgd'"):
        create_optimizer("sgd")
    with pytest.raises(ValueError, match="total_steps=5, warmup_steps=10"):
        create_optimizer(warmup_steps=10, total_steps=5)


# ----------------------------------------------------------------------------- LAMB
def _paper_lamb(weights, gradient_steps, excluded, peak, warmup_steps, total_steps, weight_decay, clipnorm, epsilon):
    """LAMB (You et al. 2019, Algorithm 2) in float64 numpy, step by step, as the paper writes it.

    Per step t (from 1): the gradients are clipped to a global norm of
    `clipnorm`; Adam's moments with bias correction give r = m_hat /
    (sqrt(v_hat) + epsilon); a decayed variable adds weight_decay * w to r
    and scales it by the trust ratio ||w|| / ||r|| (1 where a norm is 0); the
    `excluded` variables take r as it is. The rate rises linearly over
    `warmup_steps` (step s, from 0: peak * s / warmup_steps), then falls
    linearly to 0 at `total_steps`.
    """
    beta_1, beta_2 = 0.9, 0.999
    w = {name: np.asarray(value, np.float64) for name, value in weights.items()}
    m = {name: np.zeros_like(value) for name, value in w.items()}
    v = {name: np.zeros_like(value) for name, value in w.items()}
    for s, gradients in enumerate(gradient_steps):
        t = s + 1
        if s < warmup_steps:
            rate = peak * s / warmup_steps
        else:
            rate = peak * (1 - (s - warmup_steps) / (total_steps - warmup_steps))
        norm = np.sqrt(sum(np.sum(np.square(g)) for g in gradients.values()))
        scale = min(1.0, clipnorm / norm) if norm > 0 else 1.0
        for name, g in gradients.items():
            g = np.asarray(g, np.float64) * scale
            m[name] = beta_1 * m[name] + (1 - beta_1) * g
            v[name] = beta_2 * v[name] + (1 - beta_2) * g * g
            r = (m[name] / (1 - beta_1**t)) / (np.sqrt(v[name] / (1 - beta_2**t)) + epsilon)
            if name not in excluded:
                r = r + weight_decay * w[name]
                w_norm, r_norm = np.linalg.norm(w[name]), np.linalg.norm(r)
                r = r * (w_norm / r_norm if w_norm > 0 and r_norm > 0 else 1.0)
            w[name] = w[name] - rate * r
    return w


def _run_lamb(optimizer, weights, gradient_steps):
    variables = {name: keras.Variable(value, name=name) for name, value in weights.items()}
    order = list(weights)
    for gradients in gradient_steps:
        optimizer.apply([keras.ops.convert_to_tensor(gradients[n]) for n in order], [variables[n] for n in order])
    return {name: keras.ops.convert_to_numpy(variable) for name, variable in variables.items()}


def test_lamb_steps_equal_the_paper_computed_in_numpy():
    """Four steps with warmup, decay and clipping; a decayed kernel, excluded bias/gamma/beta, and a zero kernel.

    The zero kernel (||w|| = 0 at the first step) takes the unscaled step.
    `keras.optimizers.Lamb` (what BertLamb was before) decays the weights
    outside the update and gives every variable a trust ratio: with the same
    exclusions, in this setting its kernel ends 9.2e-3 and its bias 9.4e-2
    away from the paper's (measured on all three backends); this
    implementation, 1.6e-7.
    """
    rng = np.random.default_rng(0)
    weights = {"kernel": rng.normal(size=(4, 3)), "bias": rng.normal(size=(3,)) * 0.1,
               "gamma": 1 + rng.normal(size=(3,)) * 0.1, "beta": np.zeros(3), "zero_kernel": np.zeros((3, 2))}
    weights = {name: value.astype("float32") for name, value in weights.items()}
    # Gradients of norm ~4 (clipped to 1) and ~0.04 (not clipped), with signs that change between steps.
    gradient_steps = [{name: (rng.normal(size=value.shape) * scale).astype("float32") for name, value in weights.items()}
                      for scale in (1.0, 0.01, 1.0, 0.01)]
    settings = dict(peak=0.05, warmup_steps=2, total_steps=6, weight_decay=0.1)
    optimizer = create_optimizer("lamb", learning_rate=settings["peak"], warmup_steps=2, total_steps=6, weight_decay=0.1)
    actual = _run_lamb(optimizer, weights, gradient_steps)
    expected = _paper_lamb(
        weights, gradient_steps, excluded={"bias", "gamma", "beta"}, clipnorm=1.0, epsilon=1e-6, **settings
    )
    for name in weights:
        assert not np.allclose(expected[name], weights[name], atol=1e-3), f"{name} hardly moved: the test shows nothing"
        np.testing.assert_allclose(actual[name], expected[name], atol=1e-6, rtol=1e-5, err_msg=name)


def test_lamb_without_weight_decay_leaves_a_variable_with_zero_gradients_unchanged():
    """||w|| > 0 but ||r|| = 0: the trust ratio is 1 (not w/0 = inf, which would make inf * 0 = NaN)."""
    weights = {"kernel": np.ones((2, 2), "float32"), "other_kernel": np.full((3,), 0.5, "float32")}
    gradients = {"kernel": np.zeros((2, 2), "float32"), "other_kernel": np.array([0.3, -0.2, 0.1], "float32")}
    optimizer = create_optimizer("lamb", learning_rate=0.1, weight_decay=0.0, global_clipnorm=None)
    actual = _run_lamb(optimizer, weights, [gradients, gradients])
    np.testing.assert_array_equal(actual["kernel"], weights["kernel"])
    expected = _paper_lamb(weights, [gradients, gradients], excluded=(), peak=0.1, warmup_steps=0, total_steps=np.inf,
                           weight_decay=0.0, clipnorm=np.inf, epsilon=1e-6)
    np.testing.assert_allclose(actual["other_kernel"], expected["other_kernel"], atol=1e-6)


def test_lamb_trains_a_tiny_classifier():
    """LAMB fits a task that needs the tokens: the label says whether the second token is in the vocabulary's lower half.

    60 full-batch steps on 32 examples (train_on_batch); the embedding gradient is sparse on
    TensorFlow (IndexedSlices), dense elsewhere. Measured loss of the last step (from
    0.69), 2026-11-29: 0.157 TensorFlow, 0.118 JAX, 0.115 torch.
    """
    from keras_bert import BertClassifier

    vocabulary_size = 40
    x = random_bert_inputs(32, 8, vocabulary_size, seed=1, pad_last=0)
    y = (x["token_ids"][:, 1] < vocabulary_size // 2).astype("int32")
    model = BertClassifier(tiny_backbone(vocabulary_size=vocabulary_size, max_sequence_length=8), num_classes=2, dropout=0.0)
    model.compile(optimizer=create_optimizer("lamb", learning_rate=0.05, warmup_steps=5, total_steps=80))
    # train_on_batch, not fit(epochs=60): on TensorFlow each epoch of fit builds a tf.data iterator,
    # which late in a long process (thousands of traced functions) cost 0.7 s an epoch (44 s here).
    logs = [model.train_on_batch(x, y, return_dict=True) for _ in range(60)]
    print(f"LAMB on {keras.backend.backend()}: loss {logs[0]['loss']:.3f} -> {logs[-1]['loss']:.3f}, "
          f"accuracy {logs[-1]['accuracy']:.3f}")
    assert logs[-1]["loss"] < 0.3 * logs[0]["loss"]
    assert logs[-1]["accuracy"] >= 0.9


def _fit_counting_traces(fit, seed=3):
    """(Python calls of `train_step` during a 3-step fit, the trained weights) of a fresh tiny classifier."""
    keras.utils.set_random_seed(seed)
    model = BertClassifier(tiny_backbone(vocabulary_size=40, max_sequence_length=8), num_classes=2)
    model.compile(optimizer=create_optimizer(learning_rate=1e-3, warmup_steps=1, total_steps=10))
    calls = [0]
    train_step = model.train_step

    def counting_train_step(*args):  # (data) on TensorFlow and torch, (state, data) on JAX
        calls[0] += 1  # runs when the step is traced (compiled backends) or run (eager torch)
        return train_step(*args)

    model.train_step = counting_train_step
    x = random_bert_inputs(24, 8, 40, seed=seed)
    y = (x["token_ids"][:, 1] < 20).astype("int32")
    fit(model, x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    return calls[0], [keras.ops.convert_to_numpy(w) for w in model.weights]


@pytest.mark.only_backend("tensorflow", reason="only TensorFlow traces a train step twice when the step creates the "
                          "optimizer's variables; JAX and torch build them in Keras' fit before anything runs")
def test_fit_traces_the_train_step_once_and_trains_the_same_numbers():
    ours_calls, ours = _fit_counting_traces(lambda model, *a, **k: model.fit(*a, **k))
    # Keras' own fit, without our models' override: the optimizer is built inside the first trace.
    keras_calls, theirs = _fit_counting_traces(lambda model, *a, **k: keras.Model.fit(model, *a, **k))
    assert (ours_calls, keras_calls) == (1, 2)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def keras_form_adamw(**kwargs):
    """BertAdamW with Keras' epsilon: it trains what `keras.optimizers.AdamW` trains (checked bit for bit below)."""
    return BertAdamW(epsilon_after_bias_correction=False, **kwargs)


class DenseGradientAdamW(keras.optimizers.AdamW):
    """`keras.optimizers.AdamW` given dense gradients, as BertAdamW takes them on TensorFlow (`optimizers._dense`)."""

    def _clip_gradients(self, grads):
        return super()._clip_gradients(_dense(grads))


def keras_adamw(**kwargs):
    """`keras.optimizers.AdamW` with BertAdamW's decay exclusions: what Keras itself trains, on each backend (on
    TensorFlow from dense gradients: its IndexedSlices path mis-sums a token seen twice, see `optimizers._dense`)."""
    # Only on TensorFlow: on torch Keras runs exactly `keras.optimizers.AdamW` (not a subclass) as its foreach update.
    dense = keras.backend.backend() == "tensorflow"
    optimizer = (DenseGradientAdamW if dense else keras.optimizers.AdamW)(**kwargs)
    optimizer.exclude_from_weight_decay(var_names=NO_DECAY_NAMES)
    return optimizer


class _CountingSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """BERT's schedule (warmup, then linear decay), counting the times it is evaluated (traced or run)."""

    def __init__(self):
        self.calls = 0
        self.schedule = WarmupSchedule(keras.optimizers.schedules.PolynomialDecay(2e-3, 8, 0.0), warmup_steps=2)

    def __call__(self, step):
        self.calls += 1
        return self.schedule(step)


def _fit_with(make_optimizer, accumulation=None, seed=5):
    """(the schedule's evaluations, the trained weights) of a tiny classifier fitted 4 steps with the optimizer that
    `make_optimizer` (a class or a function) makes."""
    keras.utils.set_random_seed(seed)
    model = BertClassifier(tiny_backbone(vocabulary_size=40, max_sequence_length=8), num_classes=2, dropout=0.0)
    schedule = _CountingSchedule()
    model.compile(optimizer=make_optimizer(learning_rate=schedule, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0,
                                           gradient_accumulation_steps=accumulation))
    x = random_bert_inputs(32, 8, 40, seed=seed)
    y = (x["token_ids"][:, 1] < 20).astype("int32")
    model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    return schedule.calls, [keras.ops.convert_to_numpy(w) for w in model.weights]


@pytest.mark.parametrize("accumulation", [None, 2])
def test_adamw_in_keras_form_trains_bit_for_bit_as_keras_adamw(accumulation):
    """BertAdamW with Keras' epsilon trains the weights `keras.optimizers.AdamW` trains on this backend, bit for bit,
    with weight decay, a schedule, clipping and gradient accumulation: its scalars computed once per step
    (TensorFlow, where the accumulating update runs in a `tf.cond` branch) and its update in `torch._foreach` calls
    (torch) change nothing."""
    _, ours = _fit_with(keras_form_adamw, accumulation)
    _, keras_own = _fit_with(keras_adamw, accumulation)
    for a, b in zip(ours, keras_own):
        np.testing.assert_array_equal(a, b)


@pytest.mark.only_backend("tensorflow", reason="the scalars are computed once per step on TensorFlow only, where every "
                          "traced op costs time; JAX merges the repeats in XLA and torch computes them once in its foreach update")
def test_adamw_evaluates_the_schedule_once_per_traced_step_on_tensorflow():
    ours, _ = _fit_with(keras_form_adamw)
    keras_own, _ = _fit_with(keras_adamw)
    # One trace of the train step; Keras evaluates the schedule for the update and again for every decayed variable.
    model = BertClassifier(tiny_backbone(vocabulary_size=40, max_sequence_length=8), num_classes=2)
    optimizer = BertAdamW()
    decayed = sum(optimizer._use_weight_decay(v) for v in model.trainable_variables)
    assert decayed > 10
    assert (ours, keras_own) == (1, 1 + decayed)


def test_adamw_epsilon_form_round_trips_and_older_configs_keep_keras_form():
    optimizer = create_optimizer()
    assert optimizer.epsilon_after_bias_correction and optimizer.epsilon == 1e-6
    assert BertAdamW.from_config(optimizer.get_config()).epsilon_after_bias_correction is True
    older = {k: v for k, v in optimizer.get_config().items() if k != "epsilon_after_bias_correction"}
    assert BertAdamW.from_config(older).epsilon_after_bias_correction is False  # the form it trained with
    assert create_optimizer(epsilon_after_bias_correction=False).epsilon_after_bias_correction is False
    with pytest.raises(ValueError, match="amsgrad=True"):
        BertAdamW(amsgrad=True)


def test_adamw_steps_equal_torch_adamw():
    """Four steps of BertAdamW on fixed gradients against `torch.optim.AdamW` (epsilon 1e-6, decay on the kernel
    only, the first step's rate 0 as in warmup): within float32 rounding, while Keras' form is visibly elsewhere."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    weights = {"kernel": rng.normal(size=(4, 3)).astype("float32"), "bias": rng.normal(size=(3,)).astype("float32")}
    # Small gradients: where sqrt(v) is near epsilon, the two epsilon forms differ most.
    steps = [{n: (rng.normal(size=w.shape) * 1e-5).astype("float32") for n, w in weights.items()} for _ in range(4)]
    rates = [0.0, 0.01, 0.02, 0.01]

    def ours(form_after):
        optimizer = BertAdamW(learning_rate=lambda: rates[int(keras.ops.convert_to_numpy(optimizer.iterations))],
                              weight_decay=0.1, epsilon=1e-6, epsilon_after_bias_correction=form_after)
        variables = {n: keras.Variable(w, name=n) for n, w in weights.items()}
        for gradients in steps:
            optimizer.apply([keras.ops.convert_to_tensor(gradients[n]) for n in weights], list(variables.values()))
        return {n: keras.ops.convert_to_numpy(v) for n, v in variables.items()}

    parameters = {n: torch.nn.Parameter(torch.tensor(w)) for n, w in weights.items()}
    reference = torch.optim.AdamW([{"params": [parameters["kernel"]], "weight_decay": 0.1},
                                   {"params": [parameters["bias"]], "weight_decay": 0.0}], lr=0.0, eps=1e-6)
    for rate, gradients in zip(rates, steps):
        for group in reference.param_groups:
            group["lr"] = rate
        for n, p in parameters.items():
            p.grad = torch.tensor(gradients[n])
        reference.step()
    expected = {n: p.detach().numpy() for n, p in parameters.items()}
    actual, keras_form = ours(True), ours(False)
    for n in weights:
        np.testing.assert_allclose(actual[n], expected[n], rtol=1e-5, atol=1e-6, err_msg=n)
        assert np.max(np.abs(keras_form[n] - expected[n])) > 1e-3, f"{n}: the two forms should differ here"


# ----------------------------------------------------------------------------- layer-wise rate decay
@pytest.mark.only_backend("torch", reason="the rates come from variable paths and the config, the same on every "
                          "backend; each backend's update at those rates is checked against transformers in "
                          "tests/test_optimizer_parity.py")
def test_layer_decay_rates_by_depth_refusals_and_a_reload_that_keeps_them(tmp_path):
    """Each variable's factor by where it sits (embeddings, layer i, above the encoder), what is refused, and a
    `.keras` file whose restored optimizer trains at the same rates (its next step equals the original's)."""
    from keras_bert import AlbertBackbone
    from keras_bert.optimizers import layer_rate_multipliers

    keras.utils.set_random_seed(0)
    model = BertClassifier(tiny_backbone(num_layers=2), num_classes=2, dropout=0.0)  # the same step twice
    model.compile(optimizer=create_optimizer(learning_rate=1e-2, layer_decay=0.5),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    factors = dict(zip([v.path for v in model.trainable_variables],
                       layer_rate_multipliers(model.trainable_variables, 0.5)))
    by_part = {path.split("/")[0]: factor for path, factor in factors.items()}
    assert by_part == {"embeddings": 0.125, "transformer_layer_0": 0.25, "transformer_layer_1": 0.5,
                       "pooler": 1.0, "logits": 1.0}, by_part

    x, y = random_bert_inputs(batch_size=4, sequence_length=8, vocabulary_size=FIXTURE_VOCABULARY_SIZE), np.array([0, 1, 0, 1])
    model.train_on_batch(x, y)
    path = tmp_path / "decayed.keras"
    model.save(path)
    restored = keras.saving.load_model(path)
    assert restored.optimizer.layer_decay == 0.5
    model.train_on_batch(x, y)
    restored.train_on_batch(x, y)
    for a, b in zip(model.trainable_variables, restored.trainable_variables):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b), atol=1e-6, err_msg=a.path)

    with pytest.raises(ValueError, match="ALBERT shares a single layer"):
        layer_rate_multipliers(AlbertBackbone(vocabulary_size=30, num_layers=2, num_heads=2, hidden_dim=8,
                                              intermediate_dim=16, embedding_dim=4).trainable_variables, 0.8)
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match=r"`layer_decay` must be in \(0, 1\]"):
            create_optimizer(layer_decay=bad)
    with pytest.raises(ValueError, match="option of AdamW"):
        create_optimizer("lamb", layer_decay=0.8)
