"""ModernBertMaskedLM: transformers' `ModernBertForMaskedLM` (prediction head, tied decoder, decoder bias)."""

import os

import keras

from keras_bert.converters.checkpoint import read_checkpoint
from keras_bert.converters.hf_tasks import read_masked_lm_head
from keras_bert.models.bert_masked_lm import BertMaskedLM
from keras_bert.models.modern_bert_backbone import ModernBertBackbone
from keras_bert.models.pretrained import build_from_checkpoint


@keras.saving.register_keras_serializable(package="keras_bert")
class ModernBertMaskedLM(BertMaskedLM):
    """A `ModernBertBackbone` with ModernBERT's masked-LM head, as transformers' `ModernBertForMaskedLM`.

    The head is `MaskedLMHead` in ModernBERT's form: the prediction head
    (`Dense(hidden_dim)` without a bias, `head_activation`, a LayerNorm of
    the backbone's kind), then the decoder tied to the token embedding and
    its bias (`decoder_bias`). Only the `mask_positions` are decoded;
    transformers decodes every position (or the labelled ones, with
    `sparse_prediction`), which gives the same logits there.

    Inputs (a dict): `token_ids`, `padding_mask` and `mask_positions`
    (int32 `(batch_size, num_predictions)`).

    Output: float32 logits of shape `(batch_size, num_predictions, vocabulary_size)`.

    Training data, `compile` defaults: `BertMaskedLM`'s.

    Args:
        backbone: a `keras_bert.ModernBertBackbone`.
        head_activation: the prediction head's activation (`classifier_activation`: "gelu").
        head_bias: bool. A bias in the prediction head's dense layer (`classifier_bias`).
        decoder_bias: bool. The decoder's output bias (`decoder_bias`: True).

    Examples:
    ```python
    mlm = keras_bert.ModernBertMaskedLM.from_pretrained("path/to/ModernBertForMaskedLM_dir")
    logits = mlm.predict({"token_ids": ids, "padding_mask": mask, "mask_positions": positions})
    ```
    """

    backbone_class = ModernBertBackbone
    config_arguments = ("head_activation", "head_bias", "decoder_bias")

    def __init__(self, backbone, head_activation="gelu", head_bias=False, decoder_bias=True, **kwargs):
        kwargs.pop("head_options", None)  # the arguments below are the whole head
        options = {"activation": head_activation, "transform_bias": head_bias, "decoder_bias": decoder_bias}
        super().__init__(backbone, head_options=options, **kwargs)
        self.head_activation = head_activation
        self.head_bias = bool(head_bias)
        self.decoder_bias = bool(decoder_bias)

    @classmethod
    def from_pretrained(cls, path, backbone_kwargs=None, **kwargs):
        """The model with the checkpoint's encoder and head; the head's form from its config.json.

        Args:
            path: a transformers `ModernBertForMaskedLM` folder (its
                `classifier_activation`, `classifier_bias` and `decoder_bias`
                shape the head), or a `.keras` file of this class.
            backbone_kwargs: dict of backbone arguments that keep the weights'
                shapes (`dropout`, `dtype`, ...), and `cache_dir` for hub names.
            **kwargs: more of those backbone arguments.
        """
        backbone_kwargs = {**(backbone_kwargs or {}), **kwargs}
        checkpoint = read_checkpoint(path, backbone_kwargs.pop("cache_dir", None))
        head = {}
        if checkpoint.format == "hf":
            head = read_masked_lm_head(os.path.join(checkpoint.path, "config.json"))
        return build_from_checkpoint(checkpoint, cls, cls.backbone_class, head_kwargs=head, **backbone_kwargs)
