"""ElectraGenerator: an ELECTRA backbone with its masked-LM head (the generator)."""

import keras

from keras_bert.layers.masked_lm_head import MaskedLMHead
from keras_bert.models.bert_task import BertTask
from keras_bert.models.electra_backbone import ElectraBackbone
from keras_bert.models.input_checks import BACKBONE_INPUTS
from keras_bert.optimizers import create_optimizer


@keras.saving.register_keras_serializable(package="keras_bert")
class ElectraGenerator(BertTask):
    """An `ElectraBackbone` with ELECTRA's generator head (transformers' `ElectraForMaskedLM`).

    The head is `Dense(embedding_dim) -> GELU -> LayerNorm`, then the
    transposed token embedding plus a bias (the decoder is tied), applied
    at `mask_positions` only, like `BertMaskedLM`'s.

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask` and
    `mask_positions` of shape `(batch_size, num_predictions)`.

    Output: float32 logits of shape `(batch_size, num_predictions, vocabulary_size)`.

    Training data are `(x, y, sample_weight)` as for `BertMaskedLM`.
    `from_pretrained` loads a Hugging Face `ElectraForMaskedLM` folder with its
    head (`generator_predictions.*`, `generator_lm_head.bias`).

    Args:
        backbone: a `keras_bert.ElectraBackbone`.
    """

    input_names = BACKBONE_INPUTS + ("mask_positions",)
    heads_in_checkpoints = True
    backbone_class = ElectraBackbone

    def __init__(self, backbone, **kwargs):
        # === Layers === (locals until the model is initialised, for the torch backend)
        masked_lm_head = MaskedLMHead(
            vocabulary_size=backbone.vocabulary_size,
            token_embedding=backbone.token_embedding,
            layer_norm_epsilon=backbone.layer_norm_epsilon,
            embedding_dim=backbone.embedding_dim,
            dtype=backbone.dtype_policy,
            name="masked_lm_head",
        )

        # === Functional graph ===
        inputs = {**backbone.input, "mask_positions": keras.Input(shape=(None,), dtype="int32", name="mask_positions")}
        features = backbone({name: inputs[name] for name in BACKBONE_INPUTS})
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
