"""ModernBertQuestionAnswerer: transformers' `ModernBertForQuestionAnswering` head on a `ModernBertBackbone`."""

import keras

from keras_bert.layers.arguments import check_rate
from keras_bert.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert.models.modern_bert_backbone import ModernBertBackbone
from keras_bert.models.modern_bert_classifier import modern_bert_prediction_head


@keras.saving.register_keras_serializable(package="keras_bert")
class ModernBertQuestionAnswerer(BertQuestionAnswerer):
    """ModernBERT extractive question answering, as transformers' `ModernBertForQuestionAnswering`.

    Every token's final hidden state goes through ModernBERT's prediction
    head (`PredictionHead`) and dropout before the span projection (start
    and end logits; transformers' `classifier` rows 0 and 1). Inputs,
    outputs (padding positions at -1e9), labels and `compile` defaults are
    `BertQuestionAnswerer`'s.

    Inputs (a dict): `token_ids`, `padding_mask`, int32 `(batch_size, sequence_length)`.

    Outputs (a dict): `start`, `end`: float32 logits of shape `(batch_size, sequence_length)`.

    Args:
        backbone: a `keras_bert.ModernBertBackbone`.
        dropout: float. Dropout before the span projection (`classifier_dropout`: 0.0).
        kernel_initializer: initializer of the prediction head and span projection.
        head_activation: the prediction head's activation (`classifier_activation`: "gelu").
        head_bias: bool. A bias in the prediction head's dense layer (`classifier_bias`).

    Examples:
    ```python
    qa = keras_bert.ModernBertQuestionAnswerer.from_pretrained("path/to/ModernBertForQuestionAnswering_dir")
    qa = keras_bert.ModernBertQuestionAnswerer(keras_bert.ModernBertBackbone.from_pretrained(path))
    ```
    """

    backbone_class = ModernBertBackbone
    config_arguments = ("dropout", "kernel_initializer", "head_activation", "head_bias")

    def __init__(
        self, backbone, dropout=0.0, kernel_initializer="truncated_normal", head_activation="gelu", head_bias=False,
        **kwargs,
    ):
        check_rate("dropout", dropout)
        prediction_head = modern_bert_prediction_head(backbone, head_activation, head_bias, kernel_initializer)
        super().__init__(
            backbone, kernel_initializer, prediction_head=prediction_head, prediction_dropout=dropout, **kwargs
        )
        self.dropout = dropout
        self.head_activation = head_activation
        self.head_bias = bool(head_bias)
