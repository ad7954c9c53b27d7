"""ModernBertTokenClassifier: transformers' `ModernBertForTokenClassification` head on a `ModernBertBackbone`."""

import keras

from keras_bert.models.bert_token_classifier import BertTokenClassifier
from keras_bert.models.modern_bert_backbone import ModernBertBackbone
from keras_bert.models.modern_bert_classifier import modern_bert_prediction_head


@keras.saving.register_keras_serializable(package="keras_bert")
class ModernBertTokenClassifier(BertTokenClassifier):
    """A ModernBERT tagger (one label per token), as transformers' `ModernBertForTokenClassification`.

    Every token's final hidden state goes through ModernBERT's prediction
    head (`Dense(hidden_dim)`, `head_activation`, a LayerNorm of the
    backbone's kind; `PredictionHead`), dropout, and the output layer.
    Labels, the -100 positions left out of the loss, and the `compile`
    defaults are `BertTokenClassifier`'s.

    Inputs (a dict): `token_ids`, `padding_mask`, int32 `(batch_size,
    sequence_length)` (a `segment_ids` feature is dropped, see `BertTask`).

    Outputs: float32 logits of shape `(batch_size, sequence_length, num_classes)`.

    Args:
        backbone: a `keras_bert.ModernBertBackbone`.
        num_classes: int. Number of tags.
        dropout: float. Dropout before the output layer (`classifier_dropout`: 0.0).
        label_names: optional list of `num_classes` tag names ("O", "B-PER", ...).
        kernel_initializer: initializer of the prediction head and output layer.
        head_activation: the prediction head's activation (`classifier_activation`: "gelu").
        head_bias: bool. A bias in the prediction head's dense layer (`classifier_bias`).

    Examples:
    ```python
    tagger = keras_bert.ModernBertTokenClassifier.from_pretrained("path/to/ModernBertForTokenClassification_dir")
    tagger = keras_bert.ModernBertTokenClassifier.from_pretrained("path/to/hf_modernbert_dir", num_classes=9)
    ```
    """

    backbone_class = ModernBertBackbone
    config_arguments = BertTokenClassifier.config_arguments + ("head_activation", "head_bias")

    def __init__(
        self, backbone, num_classes, dropout=0.0, label_names=None, kernel_initializer="truncated_normal",
        head_activation="gelu", head_bias=False, **kwargs,
    ):
        prediction_head = modern_bert_prediction_head(backbone, head_activation, head_bias, kernel_initializer)
        super().__init__(
            backbone, num_classes, dropout, label_names, kernel_initializer, prediction_head=prediction_head, **kwargs
        )
        self.head_activation = head_activation
        self.head_bias = bool(head_bias)
