"""ModernBertClassifier: transformers' `ModernBertForSequenceClassification` head on a `ModernBertBackbone`."""

import keras

from keras_bert.layers.prediction_head import PredictionHead
from keras_bert.models.bert_classifier import BertClassifier
from keras_bert.models.modern_bert_backbone import ModernBertBackbone


def modern_bert_prediction_head(backbone, activation, use_bias, kernel_initializer):
    """The `PredictionHead` ModernBERT's task models share: its LayerNorm is the backbone's kind (epsilon, bias)."""
    return PredictionHead(
        activation=activation,
        use_bias=use_bias,
        layer_norm_epsilon=backbone.layer_norm_epsilon,
        # A backbone of another family has LayerNorms with a bias.
        layer_norm_bias=getattr(backbone, "layer_norm_bias", True),
        kernel_initializer=kernel_initializer,
        dtype=backbone.dtype_policy,
        name="prediction_head",
    )


@keras.saving.register_keras_serializable(package="keras_bert")
class ModernBertClassifier(BertClassifier):
    """A ModernBERT sentence (pair) classifier or regressor, as transformers' `ModernBertForSequenceClassification`.

    The head differs from BERT's: ModernBERT has no pooler, so the classifier
    reads the first token's final hidden state (`pooling="cls"`) or the mean
    of the real tokens' (`pooling="mean"`), then ModernBERT's prediction head
    (`Dense(hidden_dim)`, `head_activation`, a LayerNorm of the backbone's
    kind; `PredictionHead`), dropout, and the output layer. Everything else
    (inputs, outputs, labels, regression with `num_classes=1`, `compile`
    defaults, the [CLS]-only last block in `predict`) is `BertClassifier`'s.

    Inputs (a dict): `token_ids`, `padding_mask`, int32 `(batch_size,
    sequence_length)` (a `segment_ids` feature is dropped, see `BertTask`).

    Outputs: float32 logits of shape `(batch_size, num_classes)`.

    Args:
        backbone: a `keras_bert.ModernBertBackbone`.
        num_classes: int. Number of classes; 1 for regression.
        dropout: float. Dropout before the output layer (`classifier_dropout`: 0.0).
        label_names: optional list of `num_classes` strings.
        kernel_initializer: initializer of the prediction head and output layer.
        pooling: "cls" (the first token) or "mean" (`classifier_pooling`).
        head_activation: the prediction head's activation (`classifier_activation`: "gelu").
        head_bias: bool. A bias in the prediction head's dense layer (`classifier_bias`).

    Examples:
    ```python
    classifier = keras_bert.ModernBertClassifier.from_pretrained("path/to/hf_modernbert_dir", num_classes=2)
    classifier = keras_bert.ModernBertClassifier.from_pretrained("path/to/ModernBertForSequenceClassification_dir")
    classifier.compile()
    classifier.fit(train_dataset, epochs=3)
    ```
    """

    backbone_class = ModernBertBackbone
    config_arguments = BertClassifier.config_arguments + ("head_activation", "head_bias")

    def __init__(
        self, backbone, num_classes, dropout=0.0, label_names=None, kernel_initializer="truncated_normal", pooling="cls",
        head_activation="gelu", head_bias=False, **kwargs,
    ):
        prediction_head = modern_bert_prediction_head(backbone, head_activation, head_bias, kernel_initializer)
        super().__init__(
            backbone, num_classes, dropout, label_names, kernel_initializer, pooling, prediction_head=prediction_head,
            **kwargs,
        )
        self.head_activation = head_activation
        self.head_bias = bool(head_bias)
