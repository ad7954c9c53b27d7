"""ElectraPretrainer: ELECTRA's replaced-token-detection pretraining, a small generator and the discriminator."""

import warnings

import keras
from keras import ops

from keras_bert.models.electra_backbone import ElectraBackbone
from keras_bert.models.electra_discriminator import ElectraDiscriminator
from keras_bert.models.electra_generator import ElectraGenerator
from keras_bert.models.input_checks import BACKBONE_INPUTS, check_fit_data, check_inputs
from keras_bert.optimizers import build_before_first_trace, create_optimizer

GENERATOR_SIZE_KEYS = ("num_layers", "num_heads", "hidden_dim", "intermediate_dim")


def generator_sizes(backbone, generator_size=0.25):
    """The generator's `num_layers`, `num_heads`, `hidden_dim` and `intermediate_dim`.

    ELECTRA's recipe: the generator has the discriminator's depth, and its
    width, feed-forward width and head count scaled by one fraction (1/4 for
    ELECTRA-small and -large, 1/3 for -base). `hidden_dim` is rounded to a
    multiple of the head count so the heads divide it.

    Args:
        backbone: the discriminator's `ElectraBackbone`.
        generator_size: a float in (0, 1], the fraction; or a dict with any of
            `GENERATOR_SIZE_KEYS` (the rest as the fraction
            `hidden_dim / backbone.hidden_dim` gives them).

    Raises:
        ValueError: a bad fraction or key, or a generator wider than the
            discriminator (the message names both widths).
    """
    overrides = {}
    if isinstance(generator_size, dict):
        unknown = sorted(set(generator_size) - set(GENERATOR_SIZE_KEYS))
        if unknown:
            raise ValueError(
                f"`generator_size` as a dict takes {list(GENERATOR_SIZE_KEYS)}. "
                f"Received: generator_size={generator_size!r}"
            )
        overrides = dict(generator_size)
        hidden = overrides.get("hidden_dim")
        fraction = hidden / backbone.hidden_dim if isinstance(hidden, int) and hidden > 0 else 0.25
    else:
        fraction = generator_size
        ok = isinstance(fraction, (int, float)) and not isinstance(fraction, bool) and 0 < fraction
        if not ok:
            raise ValueError(
                f"`generator_size` must be a number in (0, 1]. Received: generator_size={generator_size!r}"
            )
    num_heads = max(1, round(backbone.num_heads * fraction))
    sizes = {
        "num_layers": backbone.num_layers,
        "num_heads": num_heads,
        "hidden_dim": num_heads * max(1, round(backbone.hidden_dim * fraction / num_heads)),
        "intermediate_dim": max(1, round(backbone.intermediate_dim * fraction)),
        **overrides,
    }
    if sizes["hidden_dim"] > backbone.hidden_dim:
        raise ValueError(
            "The generator must not be wider than its discriminator (it would make the task too hard for the "
            f"discriminator to learn from). Received: generator hidden_dim={sizes['hidden_dim']}, discriminator "
            f"hidden_dim={backbone.hidden_dim} (generator_size={generator_size!r})"
        )
    return sizes


@keras.saving.register_keras_serializable(package="keras_bert")
class ElectraPretrainer(keras.Model):
    """ELECTRA's pretraining (Clark et al., 2020): a small masked-LM generator and the discriminator it feeds.

    At every step the generator (an `ElectraGenerator` on a narrow
    `ElectraBackbone`) predicts the tokens at `mask_positions`; a replacement
    is sampled from its softmax at each of them (no gradient flows through
    the sampling); the discriminator (an `ElectraDiscriminator` on `backbone`)
    reads the corrupted text (the samples at the masked positions, the
    original tokens everywhere else) and tells, per token, replaced from
    original. A sample equal to the original token counts as original.

    The two share the token, position and segment embeddings (and their
    LayerNorm: the whole `BertEmbeddings` layer, as ELECTRA's code shares its
    `embeddings` scope); the generator's embeddings are the discriminator's
    `embedding_dim` wide and projected to its own width when it differs. Its
    masked-LM decoder is tied to the shared token embedding.

    Loss: `generator MLM cross-entropy (mean over the real masked slots) +
    rtd_weight * replaced-token-detection sigmoid cross-entropy (mean over the
    unpadded tokens)`.

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32
    `(batch_size, sequence_length)`, and `mask_positions`, int32
    `(batch_size, num_predictions)`: distinct positions, 0 in padded slots
    (position 0, [CLS], is never masked) - what `keras_bert.pretraining_dataset`
    yields (without `pack_sequences`).

    Outputs (a dict):
        generator_logits: float32 `(batch_size, num_predictions, vocabulary_size)`.
        sampled_ids: int32 `(batch_size, num_predictions)`, the sampled replacements.
        corrupted_token_ids: int32 `(batch_size, sequence_length)`, what the discriminator read.
        discriminator_logits: float32 `(batch_size, sequence_length)`, > 0 where judged replaced.

    Training data are `(x, y, sample_weight)`: `y` the original ids at
    `mask_positions`, int32 `(batch_size, num_predictions)`, and
    `sample_weight` 1.0 for real slots, 0.0 for padded ones (default:
    `mask_positions > 0`); or the pretraining dataset's dicts, whose `"mlm"`
    entries are used (its NSP labels are ignored).

    Metrics: `generator_accuracy` (over real masked slots), `rtd_accuracy`
    (over unpadded tokens), `rtd_replaced_accuracy` (over the replaced tokens
    only), `rtd_all_original_accuracy` (the baseline `rtd_accuracy` must
    beat: the share of unpadded tokens left original), and the two losses
    `generator_loss`, `rtd_loss`.

    Args:
        backbone: the discriminator's `keras_bert.ElectraBackbone`, the one to
            fine-tune afterwards (`pretrainer.backbone`).
        generator_size: the generator's size, a fraction of the
            discriminator's (default 1/4) or a dict of sizes (see `generator_sizes`).
        rtd_weight: float >= 0, lambda, the weight of the RTD loss (ELECTRA: 50).
        seed: int or None, seeds the sampling of replacements in training;
            in inference (`training=False`: evaluation, `predict`) they are
            drawn with this fixed seed (0 for None), the same for the same logits.

    Examples:
    ```python
    backbone = keras_bert.ElectraBackbone(vocabulary_size=8000, num_layers=4, num_heads=4, hidden_dim=256,
                                          intermediate_dim=1024, embedding_dim=128)
    pretrainer = keras_bert.ElectraPretrainer(backbone, generator_size=0.25)
    pretrainer.compile()  # AdamW lr 1e-4
    pretrainer.fit(pretraining_dataset, epochs=1)
    classifier = keras_bert.BertClassifier(pretrainer.backbone, num_classes=2)
    ```
    """

    input_names = BACKBONE_INPUTS + ("mask_positions",)

    def __init__(self, backbone, generator_size=0.25, rtd_weight=50.0, seed=None, **kwargs):
        if not isinstance(backbone, ElectraBackbone):
            raise ValueError(f"ElectraPretrainer needs an ElectraBackbone. Received: {type(backbone).__name__}")
        sizes = generator_sizes(backbone, generator_size)
        ok = isinstance(rtd_weight, (int, float)) and not isinstance(rtd_weight, bool) and rtd_weight >= 0
        if not ok:
            raise ValueError(f"`rtd_weight` must be a number >= 0. Received: rtd_weight={rtd_weight!r}")
        super().__init__(**kwargs)
        # The discriminator's config with the generator's sizes; its embeddings are the discriminator's own.
        shared = {name: getattr(backbone, name) for name in backbone.config_names() if not name.startswith("output_")}
        generator_backbone = ElectraBackbone(
            **{**shared, **sizes}, dtype=backbone.dtype_policy, shared_embeddings=backbone.embeddings,
            name="generator_backbone",
        )
        self.discriminator = ElectraDiscriminator(backbone, name="discriminator")
        self.generator = ElectraGenerator(generator_backbone, name="generator")
        self.dtype_policy = backbone.dtype_policy  # e.g. mixed_float16 turns on loss scaling in compile()
        self.generator_size = sizes
        self.rtd_weight = float(rtd_weight)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed, name="replacement_seed_generator")
        self.generator_loss_tracker = keras.metrics.Mean(name="generator_loss")
        self.rtd_loss_tracker = keras.metrics.Mean(name="rtd_loss")
        self.generator_accuracy = keras.metrics.Mean(name="generator_accuracy")
        self.rtd_accuracy = keras.metrics.Mean(name="rtd_accuracy")
        self.rtd_replaced_accuracy = keras.metrics.Mean(name="rtd_replaced_accuracy")
        self.rtd_all_original_accuracy = keras.metrics.Mean(name="rtd_all_original_accuracy")
        # Every variable exists already (the two halves are built functional models).
        self.built = True

    @classmethod
    def from_pretrained(cls, discriminator, generator, rtd_weight=50.0, seed=None, **backbone_kwargs):
        """The pretrainer on a pretrained discriminator and generator (to continue pretraining).

        Args:
            discriminator: a checkpoint `ElectraDiscriminator.from_pretrained`
                reads (a Hugging Face `ElectraForPreTraining` folder, ...).
            generator: one `ElectraGenerator.from_pretrained` reads (`ElectraForMaskedLM`),
                with the discriminator's vocabulary, positions, segments and `embedding_dim`.
            rtd_weight: as the constructor's.
            seed: as the constructor's.
            **backbone_kwargs: arguments that keep the weights' shapes (`dropout`, `dtype`).

        Returns:
            An `ElectraPretrainer` whose halves hold the two checkpoints'
            weights. The embeddings are shared: the discriminator's are kept
            (a warning says so when the generator's differ).
        """
        loaded_discriminator = ElectraDiscriminator.from_pretrained(discriminator, **backbone_kwargs)
        loaded_generator = ElectraGenerator.from_pretrained(generator, **backbone_kwargs)
        sizes = {k: getattr(loaded_generator.backbone, k) for k in GENERATOR_SIZE_KEYS}
        model = cls(loaded_discriminator.backbone, generator_size=sizes, rtd_weight=rtd_weight, seed=seed)
        # The generator first: its copy of the shared embeddings is then overwritten by the discriminator's.
        model.generator.set_weights(loaded_generator.get_weights())
        model.discriminator.set_weights(loaded_discriminator.get_weights())
        theirs = loaded_generator.backbone.embeddings.get_weights()
        ours = model.backbone.embeddings.get_weights()
        difference = max(float(abs(a - b).max()) for a, b in zip(theirs, ours))
        if difference > 0:
            warnings.warn(
                f"{generator}: the generator's embeddings differ from the discriminator's (by up to {difference:.3g}); "
                "the pretrainer shares one copy and keeps the discriminator's.",
                stacklevel=2,
            )
        return model

    @property
    def backbone(self):
        """The discriminator's `ElectraBackbone`: the encoder to fine-tune."""
        return self.discriminator.backbone

    @property
    def discriminator_backbone(self):
        """The same as `backbone`."""
        return self.discriminator.backbone

    @property
    def generator_backbone(self):
        """The generator's narrow `ElectraBackbone` (its embeddings are the discriminator's)."""
        return self.generator.backbone

    # --- the forward pass
    def __call__(self, inputs, *args, **kwargs):
        check_inputs(inputs, self.backbone.input_limits, names=self.input_names, where=self.name)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs, training=None):
        token_ids = inputs["token_ids"]  # (batch, seq)
        generator_logits = self.generator(
            {name: inputs[name] for name in self.input_names}, training=training
        )  # (batch, P, vocab), float32
        # Training draws from the seed generator; inference (evaluation, predict) from a fixed seed, so
        # held-out metrics are reproducible and evaluating does not change the training run's draws.
        seed = self.seed_generator if training else (self.seed if self.seed is not None else 0)
        sampled = self.sample_replacements(generator_logits, seed)  # (batch, P)
        slots = _slot_matrix(inputs["mask_positions"], ops.shape(token_ids)[1])  # (batch, P, seq)
        at_masked = ops.max(slots, axis=1)  # (batch, seq): 1 where a sample goes
        placed = ops.sum(slots * ops.expand_dims(sampled, -1), axis=1)  # (batch, seq): each sample at its position
        corrupted = ops.where(at_masked > 0, placed, ops.cast(token_ids, "int32"))
        discriminator_inputs = {name: inputs[name] for name in BACKBONE_INPUTS}
        discriminator_inputs["token_ids"] = corrupted
        discriminator_logits = self.discriminator(discriminator_inputs, training=training)  # (batch, seq)
        return {
            "generator_logits": generator_logits,
            "sampled_ids": sampled,
            "corrupted_token_ids": corrupted,
            "discriminator_logits": discriminator_logits,
        }

    def sample_replacements(self, generator_logits, seed=None):
        """One token per slot from `softmax(generator_logits)`: int32 `(batch, P)`, no gradient.

        `seed`: a `keras.random.SeedGenerator` or an int (default: the model's seed generator).
        """
        seed = self.seed_generator if seed is None else seed
        logits = ops.stop_gradient(ops.cast(generator_logits, "float32"))
        batch, slots = ops.shape(logits)[0], ops.shape(logits)[1]
        flat = ops.reshape(logits, (-1, ops.shape(logits)[-1]))  # (batch * P, vocab)
        sampled = keras.random.categorical(flat, 1, seed=seed, dtype="int32")  # (batch * P, 1)
        return ops.reshape(sampled, (batch, slots))

    # --- losses and metrics
    def rtd_terms(self, x, y, y_pred, sample_weight=None):
        """The per-batch quantities of the loss and metrics, from the model's outputs.

        Returns:
            dict of float32 tensors: `generator_loss`, `rtd_loss` (scalars),
            `generator_correct`, `slot_weights` `(batch, P)`, `rtd_correct`,
            `token_weights`, `replaced` `(batch, seq)` (1.0 where the sample differs from the original).
        """
        originals = ops.cast(y["mlm"] if isinstance(y, dict) else y, "int32")  # (batch, P)
        if isinstance(sample_weight, dict):
            sample_weight = sample_weight.get("mlm")
        positions = x["mask_positions"]
        slot_weights = ops.cast(positions > 0 if sample_weight is None else sample_weight, "float32")
        generator_logits = ops.cast(y_pred["generator_logits"], "float32")
        generator_loss = _weighted_mean(
            keras.losses.sparse_categorical_crossentropy(originals, generator_logits, from_logits=True), slot_weights
        )
        # A slot is replaced when its sample differs from the original token; (batch, P) -> (batch, seq).
        changed = ops.cast(ops.not_equal(y_pred["sampled_ids"], originals), "int32")
        changed = changed * ops.cast(slot_weights > 0, "int32")  # (batch, P)
        slots = _slot_matrix(positions, ops.shape(x["token_ids"])[1])
        replaced = ops.cast(ops.max(slots * ops.expand_dims(changed, -1), axis=1), "float32")  # (batch, seq)
        logits = y_pred["discriminator_logits"]
        token_weights = ops.cast(x["padding_mask"], "float32")
        rtd_loss = _weighted_mean(ops.binary_crossentropy(replaced, logits, from_logits=True), token_weights)
        return {
            "generator_loss": generator_loss,
            "rtd_loss": rtd_loss,
            "generator_correct": ops.cast(ops.equal(ops.argmax(generator_logits, axis=-1), originals), "float32"),
            "slot_weights": slot_weights,
            "rtd_correct": ops.cast(ops.equal(logits > 0, replaced > 0), "float32"),
            "token_weights": token_weights,
            "replaced": replaced,
        }

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        terms = self.rtd_terms(x, y, y_pred, sample_weight)
        loss = terms["generator_loss"] + self.rtd_weight * terms["rtd_loss"]
        if self.losses:  # regularisers, if any layer has them
            loss = loss + ops.sum(ops.stack([ops.cast(v, "float32") for v in self.losses]))
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        terms = self.rtd_terms(x, y, y_pred, sample_weight)
        self.generator_loss_tracker.update_state(terms["generator_loss"])
        self.rtd_loss_tracker.update_state(terms["rtd_loss"])
        self.generator_accuracy.update_state(terms["generator_correct"], sample_weight=terms["slot_weights"])
        self.rtd_accuracy.update_state(terms["rtd_correct"], sample_weight=terms["token_weights"])
        self.rtd_replaced_accuracy.update_state(
            terms["rtd_correct"], sample_weight=terms["token_weights"] * terms["replaced"]
        )
        # The trivial baseline: calling every token original.
        self.rtd_all_original_accuracy.update_state(1.0 - terms["replaced"], sample_weight=terms["token_weights"])
        return self.get_metrics_result()

    # --- training
    def compile(self, optimizer="auto", **kwargs):
        """Compiles; the loss is set by the model (`rtd_weight`), `loss` and `metrics` are not arguments.

        Args:
            optimizer: "auto" is the pretraining AdamW (lr 1e-4), or any Keras
                optimizer (`create_optimizer(...)` for warmup and decay).
            **kwargs: the other arguments of `keras.Model.compile` (`steps_per_execution`, ...).
        """
        for name in ("loss", "metrics", "weighted_metrics"):
            if kwargs.get(name) is not None:
                raise ValueError(
                    f"ElectraPretrainer.compile takes no `{name}`: the model computes its loss and metrics. "
                    f"Received: {name}={kwargs[name]!r}"
                )
        if isinstance(optimizer, str) and optimizer == "auto":
            optimizer = create_optimizer()
        super().compile(optimizer=optimizer, **kwargs)

    def compile_from_config(self, config):
        # As BertTask's: a saved compile config holds the resolved optimizer
        # (Keras skips restoring the compile state of a model with a custom
        # `compile` unless this is overridden, losing the optimizer state).
        config = keras.saving.deserialize_keras_object(config)
        config["jit_compile"] = "auto"
        for name in ("loss", "metrics", "weighted_metrics"):
            config.pop(name, None)
        keras.Model.compile(self, **config)
        self.optimizer.build(self.trainable_variables)

    def fit(self, x=None, *args, **kwargs):
        check_fit_data(x, self.backbone.input_limits, self.input_names, self.name)
        build_before_first_trace(self)
        return super().fit(x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        check_fit_data(x, self.backbone.input_limits, self.input_names, self.name)
        return super().evaluate(x, *args, **kwargs)

    # --- saving
    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.layers.serialize(self.backbone),
            "generator_size": dict(self.generator_size),
            "rtd_weight": self.rtd_weight,
            "seed": self.seed,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = keras.layers.deserialize(config["backbone"])
        return cls(**config)


def _slot_matrix(mask_positions, sequence_length):
    """int32 `(batch, P, seq)`: 1 at each real slot's position (padded slots, position 0, are all 0)."""
    real = ops.cast(mask_positions > 0, "int32")  # (batch, P)
    return ops.one_hot(ops.cast(mask_positions, "int32"), sequence_length, dtype="int32") * ops.expand_dims(real, -1)


def _weighted_mean(values, weights):
    return ops.sum(values * weights) / ops.maximum(ops.sum(weights), 1e-12)
