"""BertMaskedLM: masked language modelling only (the RoBERTa recipe, no NSP), on any backbone of the family."""

import keras

from keras_bert.layers.masked_lm_head import MaskedLMHead
from keras_bert.models.bert_task import BertTask
from keras_bert.models.input_checks import BACKBONE_INPUTS
from keras_bert.optimizers import create_optimizer


def masked_lm_head_for(backbone, **options):
    """The masked-LM head of `backbone`, its decoder tied to the backbone's token embedding.

    Backbones whose embeddings are narrower than their hidden states (ALBERT,
    ELECTRA's generator) project down to `embedding_dim` in the head's
    transform, as their checkpoints do. A backbone whose family's head
    differs from BERT's says how by `masked_lm_head_options` (ModernBERT: no
    transform bias, LayerNorms of its kind); `options` (`MaskedLMHead`
    arguments: `activation`, `transform_bias`, `decoder_bias`, ...) override both.
    """
    return MaskedLMHead(
        vocabulary_size=backbone.vocabulary_size,
        token_embedding=backbone.token_embedding,
        layer_norm_epsilon=backbone.layer_norm_epsilon,
        embedding_dim=getattr(backbone, "embedding_dim", None),
        **{**getattr(backbone, "masked_lm_head_options", {}), **options},
        dtype=backbone.dtype_policy,
        name="masked_lm_head",
    )


def mask_positions_input():
    """The `mask_positions` input: int32 `(batch_size, num_predictions)`, the positions the MLM head decodes."""
    return keras.Input(shape=(None,), dtype="int32", name="mask_positions")


@keras.saving.register_keras_serializable(package="keras_bert")
class BertMaskedLM(BertTask):
    """A backbone with the masked-LM head alone.

    Inputs (a dict): the backbone's inputs (`token_ids`, `segment_ids`,
    `padding_mask`; DistilBERT takes no `segment_ids`) and `mask_positions`
    of shape `(batch_size, num_predictions)`.

    Output: float32 logits of shape `(batch_size, num_predictions, vocabulary_size)`.

    Training data are `(x, y, sample_weight)`: `y` the original token ids at
    `mask_positions`, `sample_weight` 1.0 for real predictions and 0.0 for
    padded slots.

    Args:
        backbone: a backbone of the family (`BertBackbone`, `RobertaBackbone`, ...).
        head_options: dict of `MaskedLMHead` arguments beyond the backbone's
            (see `masked_lm_head_for`); a subclass's own arguments set them
            (`ModernBertMaskedLM`). Not part of the config.
    """

    input_names = BACKBONE_INPUTS + ("mask_positions",)
    heads_in_checkpoints = True

    def __init__(self, backbone, head_options=None, **kwargs):
        # === Layers === (locals until the model is initialised, for the torch backend)
        masked_lm_head = masked_lm_head_for(backbone, **(head_options or {}))

        # === Functional graph ===
        inputs = {**backbone.input, "mask_positions": mask_positions_input()}
        features = backbone({name: inputs[name] for name in backbone.input_names})
        outputs = masked_lm_head(features["sequence_output"], inputs["mask_positions"])
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.dtype_policy = backbone.dtype_policy  # e.g. mixed_float16 turns on loss scaling in compile()
        self.backbone = backbone
        self.masked_lm_head = masked_lm_head

    def default_optimizer(self):
        """The pretraining AdamW (lr 1e-4)."""
        return create_optimizer()

    def compile_defaults(self):
        """MLM cross-entropy over the real masked positions (padded slots weigh 0), and MLM accuracy."""
        return {
            "loss": keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="mean_with_sample_weight"),
            "weighted_metrics": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
        }
