"""The study's compiled steps: keras_bert models run through Keras' stateless API inside `jax.jit`.

Why not `model.fit`: the study fine-tunes dozens of times (label budgets x initialisations x seeds x
rates). `fit` traces and compiles a new train function for every new model and every `compile()`, and
a learning-rate schedule is part of what it traces. Here each model kind is traced and compiled once:
its train step is a pure function of (weights, optimizer state, batch indices, learning rate), so a
new seed, a reloaded checkpoint or another rate is new input values, never a new program. The same
holds for pretraining, where the batch (rows drawn, masks, 80/10/10 replacement) is made on the
device inside the step from a PRNG key: the host sends nothing per step.

Candidates for keras_bert itself (the study implements them here instead of adding options while
the package is being refactored): dynamic MLM masking as a jittable function, a one-cycle
(warmup + linear decay) rate fed as a step input, and a compiled-once fine-tuning loop that reloads
weights between runs.
"""

import time

import jax
import jax.numpy as jnp
import numpy as np


def one_cycle(step, total, peak, warmup_share):
    """Linear warmup to `peak` over `warmup_share` of `total` steps, then linear decay to 0 at `total`."""
    warmup = max(1, int(round(total * warmup_share)))
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * max(0.0, (total - step) / max(1, total - warmup))


def masked_cross_entropy(logits, labels, weights):
    """`(mean loss over weighted positions, number right, weight sum)`; logits `(..., classes)` float32."""
    logits = logits.astype(jnp.float32)
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    picked = jnp.take_along_axis(log_probs, labels[..., None], axis=-1)[..., 0]
    weights = weights.astype(jnp.float32)
    total = jnp.maximum(weights.sum(), 1.0)
    right = ((jnp.argmax(logits, axis=-1) == labels) * weights).sum()
    return -(picked * weights).sum() / total, right, weights.sum()


def mask_rows(rows, key, rate, num_predictions, special, vocabulary_size, first_regular_id):
    """Dynamic masking of pretraining rows `(batch, length)` int32 (BERT's 80/10/10 replacement).

    In each row, `round(rate x maskable tokens)` positions (not [PAD]/[CLS]/[SEP]) are drawn uniformly;
    `num_predictions` slots are decoded, the unused ones weigh 0. Returns `(inputs, labels, weights)`.
    """
    batch = rows.shape[0]
    maskable = (rows != special["pad"]) & (rows != special["cls"]) & (rows != special["sep"])
    draw, replace, random_ids = jax.random.split(key, 3)
    scores = jnp.where(maskable, jax.random.uniform(draw, rows.shape), -1.0)
    _, positions = jax.lax.top_k(scores, num_predictions)  # (batch, num_predictions), maskable ones first
    count = jnp.round(maskable.sum(axis=1) * rate).astype(jnp.int32)
    weights = (jnp.arange(num_predictions)[None, :] < count[:, None]) & jnp.take_along_axis(maskable, positions, 1)
    labels = jnp.take_along_axis(rows, positions, axis=1)
    u = jax.random.uniform(replace, labels.shape)
    random_tokens = jax.random.randint(random_ids, labels.shape, first_regular_id, vocabulary_size)
    replacement = jnp.where(u < 0.8, special["mask"], jnp.where(u < 0.9, random_tokens, labels))
    replacement = jnp.where(weights, replacement, labels)
    token_ids = rows.at[jnp.arange(batch)[:, None], positions].set(replacement)
    inputs = {"token_ids": token_ids, "segment_ids": jnp.zeros_like(rows),
              "padding_mask": (rows != special["pad"]).astype(jnp.int32), "mask_positions": positions}
    return inputs, labels, weights


def learning_rate_index(optimizer):
    """Where the optimizer's learning-rate variable sits in `optimizer.variables` (fed per step)."""
    matches = [i for i, v in enumerate(optimizer.variables) if v is optimizer._learning_rate]
    if len(matches) != 1:
        raise ValueError("the optimizer needs a float learning rate (a variable), not a schedule")
    return matches[0]


def _apply(optimizer, lr_index, optimizer_values, grads, trainable, learning_rate):
    optimizer_values = list(optimizer_values)
    optimizer_values[lr_index] = jnp.asarray(learning_rate, optimizer_values[lr_index].dtype)
    return optimizer.stateless_apply(optimizer_values, grads, trainable)


class Pretraining:
    """A compiled MLM step for `masked_lm` (a `BertMaskedLM`) on pools of pretraining rows."""

    def __init__(self, masked_lm, optimizer, pools, special, rate, batch_size, review_share):
        self.model, self.optimizer = masked_lm, optimizer
        self.lr_index = learning_rate_index(optimizer)
        self.pools = {name: jnp.asarray(rows, jnp.int32) for name, rows in pools.items()}  # on the device
        length = int(next(iter(pools.values())).shape[1])
        self.num_predictions = int(np.ceil(rate * length))
        self.special, self.rate = special, rate
        self.vocabulary_size = masked_lm.backbone.vocabulary_size
        self.first_regular_id = max(special.values()) + 1
        reviews = int(round(batch_size * review_share))
        self.draws = {"reviews": reviews, "austen": batch_size - reviews}
        self.tokens_per_step = batch_size * length
        self.step = jax.jit(self._step, donate_argnums=(0, 1, 2))
        self.evaluate_batch = jax.jit(self._evaluate_batch)

    def initial_state(self, seed):
        return ([v.value for v in self.model.trainable_variables],
                [v.value for v in self.model.non_trainable_variables],
                [v.value for v in self.optimizer.variables], jax.random.PRNGKey(seed))

    def _rows(self, pools, key):
        keys = jax.random.split(key, len(self.draws))
        parts = [pools[name][jax.random.randint(k, (count,), 0, pools[name].shape[0])]
                 for k, (name, count) in zip(keys, sorted(self.draws.items())) if count]
        return jnp.concatenate(parts, axis=0)

    def _loss(self, trainable, non_trainable, inputs, labels, weights, training):
        logits, non_trainable = self.model.stateless_call(trainable, non_trainable, inputs, training=training)
        loss, right, count = masked_cross_entropy(logits, labels, weights)
        return loss, (right, count, non_trainable)

    def _step(self, trainable, non_trainable, optimizer_values, key, pools, learning_rate):
        key, rows_key, mask_key = jax.random.split(key, 3)
        rows = self._rows(pools, rows_key)
        inputs, labels, weights = mask_rows(rows, mask_key, self.rate, self.num_predictions, self.special,
                                            self.vocabulary_size, self.first_regular_id)
        grad_fn = jax.value_and_grad(self._loss, has_aux=True)
        (loss, (right, count, non_trainable)), grads = grad_fn(trainable, non_trainable, inputs, labels, weights, True)
        trainable, optimizer_values = _apply(self.optimizer, self.lr_index, optimizer_values, grads, trainable,
                                             learning_rate)
        return trainable, non_trainable, optimizer_values, key, loss, right / jnp.maximum(count, 1.0)

    def _evaluate_batch(self, trainable, non_trainable, rows, key):
        inputs, labels, weights = mask_rows(rows, key, self.rate, self.num_predictions, self.special,
                                            self.vocabulary_size, self.first_regular_id)
        loss, (right, count, _) = self._loss(trainable, non_trainable, inputs, labels, weights, False)
        return loss * count, right, count

    def evaluate(self, trainable, non_trainable, rows, batch_size, max_rows=2048, seed=1234):
        """Masked-token `{"loss", "accuracy", "predictions"}` on `rows`, the same masks for every model."""
        return self._figures(self._evaluation_totals(trainable, non_trainable, rows, batch_size, max_rows, seed))

    def _figures(self, totals):
        """`evaluate`'s figures from the sums of `evaluate_batch`'s: (loss x count, right, count)."""
        return {"loss": round(totals[0] / max(totals[2], 1), 4), "accuracy": round(totals[1] / max(totals[2], 1), 4),
                "predictions": int(totals[2])}

    def _evaluation_totals(self, trainable, non_trainable, rows, batch_size, max_rows, seed):
        """The sums of `evaluate_batch`'s figures over `rows[:max_rows]`, batch by batch."""
        rows = np.asarray(rows[:max_rows], np.int32)
        if len(rows) % batch_size:  # whole batches (one compiled shape); all-[PAD] rows have nothing to score
            rows = np.concatenate([rows, np.zeros((batch_size - len(rows) % batch_size, rows.shape[1]), np.int32)])
        totals = 0.0
        for i, start in enumerate(range(0, len(rows), batch_size)):
            batch = jnp.asarray(rows[start : start + batch_size])
            figures = self.evaluate_batch(trainable, non_trainable, batch, jax.random.PRNGKey(seed + i))
            totals = totals + np.array([float(x) for x in figures])
        return totals

    def run(self, state, total_steps, peak, warmup_share, deadline, snapshot_at=(), log_every=100, start_step=0,
            snapshots=None, curve=None, checkpoint=None, seconds_before=0.0):
        """Runs one-cycle steps `start_step + 1 .. total_steps` (fewer if `deadline`, a `time.time()`, passes).

        Returns `(state, snapshots {step: trainable copy}, curve, steps done)`. A snapshot step is
        counted after that many steps. A resumed run passes the `snapshots` and `curve` it had: the
        schedule depends on the step alone and the batches on the PRNG key in `state`, so the resumed
        run takes the steps the uninterrupted one would have. `checkpoint(state, step, snapshots,
        curve)`, if given, is called at every logged step (it decides itself whether to write); the curve's
        seconds count from `seconds_before` (a resumed run's earlier pretraining time).
        """
        snapshots, curve, started = dict(snapshots or {}), list(curve or []), time.time()
        losses, accuracies = [], []
        step = start_step
        for step in range(start_step + 1, total_steps + 1):
            rate = one_cycle(step - 1, total_steps, peak, warmup_share)
            *state, loss, accuracy = self.step(*state, self.pools, np.float32(rate))
            losses.append(loss)
            accuracies.append(accuracy)
            if step in snapshot_at:
                snapshots[step] = [jnp.copy(x) for x in state[0]]
            if step % log_every == 0 or step == total_steps:
                # Reading the figures waits for the device (steps are dispatched ahead): the time is taken after.
                loss, accuracy = float(jnp.mean(jnp.stack(losses))), float(jnp.mean(jnp.stack(accuracies)))
                curve.append({"step": step, "seconds": round(seconds_before + time.time() - started, 2), "learning_rate": rate,
                              "loss": round(loss, 4), "accuracy": round(accuracy, 4)})
                losses, accuracies = [], []
                if checkpoint is not None:
                    checkpoint(state, step, snapshots, curve)
                if time.time() > deadline:
                    break
        return state, snapshots, curve, step


class ReplacedTokenDetection(Pretraining):
    """ELECTRA's objective (`--objective electra`) in the same compiled step: `model` is a keras_bert
    `ElectraPretrainer`, whose generator fills the masked slots by sampling and whose discriminator (the
    backbone fine-tuned afterwards) tells each token replaced or original.

    The loss and its terms are the pretrainer's own (`rtd_terms`: generator cross-entropy plus `rtd_weight`
    times the detection loss over every unpadded token). The step's and `evaluate`'s accuracy is the
    generator's masked-token accuracy; `evaluate` adds the discriminator's detection accuracy over all
    tokens, over the replaced ones, and the all-original baseline.
    """

    def _terms(self, trainable, non_trainable, inputs, labels, weights, training):
        # The pretrainer reads a slot at position 0 as unused; `mask_rows` points its unused slots at real
        # tokens (weight 0), which would then be sampled over: they go to 0 here.
        inputs = {**inputs, "mask_positions": jnp.where(weights, inputs["mask_positions"], 0)}
        outputs, non_trainable = self.model.stateless_call(trainable, non_trainable, inputs, training=training)
        terms = self.model.rtd_terms(inputs, labels, outputs, weights.astype(jnp.float32))
        return terms, outputs, non_trainable

    def _loss(self, trainable, non_trainable, inputs, labels, weights, training):
        terms, _, non_trainable = self._terms(trainable, non_trainable, inputs, labels, weights, training)
        loss = terms["generator_loss"] + self.model.rtd_weight * terms["rtd_loss"]
        right = (terms["generator_correct"] * terms["slot_weights"]).sum()
        return loss, (right, terms["slot_weights"].sum(), non_trainable)

    def _evaluate_batch(self, trainable, non_trainable, rows, key):
        inputs, labels, weights = mask_rows(rows, key, self.rate, self.num_predictions, self.special,
                                            self.vocabulary_size, self.first_regular_id)
        terms, _, _ = self._terms(trainable, non_trainable, inputs, labels, weights, False)
        tokens, replaced = terms["token_weights"], terms["token_weights"] * terms["replaced"]
        count = terms["slot_weights"].sum()
        return (terms["generator_loss"] * count, (terms["generator_correct"] * terms["slot_weights"]).sum(), count,
                (terms["rtd_correct"] * tokens).sum(), tokens.sum(), (terms["rtd_correct"] * replaced).sum(),
                replaced.sum())

    def _figures(self, totals):
        """`Pretraining`'s figures (the generator's masked tokens), plus `rtd_accuracy` (over unpadded tokens),
        `rtd_replaced_accuracy` (over the replaced ones) and `all_original_accuracy` (the baseline: every token
        called original)."""
        return {**super()._figures(totals), "rtd_accuracy": round(totals[3] / max(totals[4], 1), 4),
                "rtd_replaced_accuracy": round(totals[5] / max(totals[6], 1), 4),
                "all_original_accuracy": round(1 - totals[6] / max(totals[4], 1), 4)}


class FineTuning:
    """A compiled train step and prediction step for one classifier architecture, reused across runs."""

    def __init__(self, classifier, optimizer, token_ids, labels, pad_id, eval_batch_size):
        self.model, self.optimizer = classifier, optimizer
        self.lr_index = learning_rate_index(optimizer)
        self.token_ids = jnp.asarray(token_ids, jnp.int32)  # every sentence, on the device
        self.labels = jnp.asarray(labels, jnp.int32)
        self.pad_id, self.eval_batch_size = pad_id, eval_batch_size
        self.initial_optimizer = [jnp.copy(v.value) for v in optimizer.variables]
        self.train_step = jax.jit(self._train_step)
        self.predict_batch = jax.jit(self._predict_batch)

    def compile(self, init, batch_size):
        """Compiles the train and predict steps on `init`'s shapes; returns {"train": s, "predict": s}."""
        seconds = {}
        indices = np.zeros(batch_size, np.int32)
        started = time.time()
        # Twice: the optimizer state that a step returns may differ in weak types from the one it started with.
        state = self.train_step(*init, self.initial_optimizer, indices, np.float32(0.0))
        jax.block_until_ready(self.train_step(*state[:3], indices, np.float32(0.0)))
        seconds["train"] = round(time.time() - started, 2)
        started = time.time()
        jax.block_until_ready(self.predict_batch(*init, np.zeros(self.eval_batch_size, np.int32)))
        seconds["predict"] = round(time.time() - started, 2)
        return seconds

    def _inputs(self, indices):
        token_ids = self.token_ids[indices]
        return {"token_ids": token_ids, "segment_ids": jnp.zeros_like(token_ids),
                "padding_mask": (token_ids != self.pad_id).astype(jnp.int32)}

    def _loss(self, trainable, non_trainable, indices):
        inputs = self._inputs(indices)
        logits, non_trainable = self.model.stateless_call(trainable, non_trainable, inputs, training=True)
        loss, _, _ = masked_cross_entropy(logits, self.labels[indices], jnp.ones(indices.shape))
        return loss, non_trainable

    def _train_step(self, trainable, non_trainable, optimizer_values, indices, learning_rate):
        (loss, non_trainable), grads = jax.value_and_grad(self._loss, has_aux=True)(trainable, non_trainable, indices)
        trainable, optimizer_values = _apply(self.optimizer, self.lr_index, optimizer_values, grads, trainable,
                                             learning_rate)
        return trainable, non_trainable, optimizer_values, loss

    def _predict_batch(self, trainable, non_trainable, indices):
        logits, _ = self.model.stateless_call(trainable, non_trainable, self._inputs(indices), training=False)
        return jnp.argmax(logits, axis=-1)

    def accuracy(self, trainable, non_trainable, split):
        """Accuracy on the sentences `split` (indices), in whole batches (padded with index 0, not counted)."""
        split = np.asarray(split, np.int32)
        padded = np.concatenate([split, np.zeros(-len(split) % self.eval_batch_size, np.int32)])
        predictions = [self.predict_batch(trainable, non_trainable, jnp.asarray(padded[i : i + self.eval_batch_size]))
                       for i in range(0, len(padded), self.eval_batch_size)]
        predicted = np.concatenate([np.asarray(p) for p in predictions])[: len(split)]
        return float(np.mean(predicted == np.asarray(self.labels)[split]))

    def run(self, init, train, validation, steps, batch_size, peak, warmup_share, evaluations, seed):
        """One fine-tuning run from `init` = (trainable, non_trainable) values on the sentences `train`.

        Validation accuracy is measured `evaluations` times (evenly spaced, the last step included).
        Returns `(record, (trainable, non_trainable) of the best one)` (the earliest of a tie); the
        caller scores the test split on those weights, once, and only for the run it keeps.
        """
        rng = np.random.default_rng(seed)
        order = np.concatenate([rng.permutation(train) for _ in range(-(-steps * batch_size // len(train)))])
        batches = order[: steps * batch_size].reshape(steps, batch_size).astype(np.int32)
        every = max(1, -(-steps // evaluations))
        trainable, non_trainable = init
        optimizer_values, curve, best = self.initial_optimizer, [], None
        for step in range(steps):
            rate = one_cycle(step, steps, peak, warmup_share)
            trainable, non_trainable, optimizer_values, loss = self.train_step(
                trainable, non_trainable, optimizer_values, batches[step], np.float32(rate))
            if (step + 1) % every == 0 or step + 1 == steps:
                accuracy = self.accuracy(trainable, non_trainable, validation)
                curve.append({"step": step + 1, "validation_accuracy": round(accuracy, 4),
                              "loss": round(float(loss), 4)})
                if best is None or accuracy > best[0]:
                    best = (accuracy, step + 1, trainable, non_trainable)
        record = {"validation_accuracy": round(best[0], 4), "chosen_step": best[1], "steps": steps,
                  "epochs": round(steps * batch_size / len(train), 2), "validation_curve": curve}
        return record, (best[2], best[3])
