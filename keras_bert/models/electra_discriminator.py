"""ElectraDiscriminator: an ELECTRA backbone with its replaced-token detection head."""

import keras
from keras import ops

from keras_bert.layers.electra_discriminator_head import ElectraDiscriminatorHead
from keras_bert.models.bert_task import BertTask
from keras_bert.models.electra_backbone import ElectraBackbone
from keras_bert.optimizers import create_optimizer


@keras.saving.register_keras_serializable(package="keras_bert")
class _ReplacedTokenCrossEntropy(keras.losses.Loss):
    """Sigmoid cross-entropy of every token's logit, `(batch_size, sequence_length)`, averaged over weighted tokens.

    (Keras' `BinaryCrossentropy` averages the last axis first, which would
    leave one loss per sequence and make per-token sample weights impossible.)
    """

    def __init__(self, name="replaced_token_cross_entropy", reduction="mean_with_sample_weight", **kwargs):
        super().__init__(name=name, reduction=reduction, **kwargs)

    def call(self, y_true, y_pred):
        return ops.binary_crossentropy(ops.cast(y_true, y_pred.dtype), y_pred, from_logits=True)


@keras.saving.register_keras_serializable(package="keras_bert")
def replaced_token_accuracy(y_true, y_pred):
    """1.0 where the logit's sign (> 0: replaced) agrees with the label, per token."""
    return ops.cast(ops.equal(ops.cast(y_true, "bool"), y_pred > 0), "float32")


@keras.saving.register_keras_serializable(package="keras_bert")
class ElectraDiscriminator(BertTask):
    """An `ElectraBackbone` with the discriminator head (transformers' `ElectraForPreTraining`).

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`.

    Output: float32 logits of shape `(batch_size, sequence_length)`, > 0 where
    the token is judged replaced.

    Training data are `(x, y, sample_weight)`: `y` 1 where the generator
    replaced the token and 0 where it is the original, `sample_weight` the
    padding mask (padding positions weigh 0).

    `from_pretrained` loads a Hugging Face `ElectraForPreTraining` folder with
    its head (`discriminator_predictions.*`).

    Args:
        backbone: a `keras_bert.ElectraBackbone`.
    """

    heads_in_checkpoints = True
    backbone_class = ElectraBackbone

    def __init__(self, backbone, **kwargs):
        # === Layers === (locals until the model is initialised, for the torch backend)
        discriminator_head = ElectraDiscriminatorHead(
            activation=backbone.activation, dtype=backbone.dtype_policy, name="discriminator_head"
        )

        # === Functional graph ===
        inputs = backbone.input
        outputs = discriminator_head(backbone(inputs)["sequence_output"])  # (batch, seq)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.dtype_policy = backbone.dtype_policy  # e.g. mixed_float16 turns on loss scaling in compile()
        self.backbone = backbone
        self.discriminator_head = discriminator_head

    def default_optimizer(self):
        """The pretraining AdamW (lr 1e-4)."""
        return create_optimizer()

    def compile_defaults(self):
        """Per-token binary cross-entropy and accuracy, averaged over the tokens the sample weights keep."""
        return {
            "loss": _ReplacedTokenCrossEntropy(),
            "weighted_metrics": [keras.metrics.MeanMetricWrapper(replaced_token_accuracy, name="accuracy")],
        }
