"""LabelHeadTask: the base of the task models whose head is BERT's classification layer."""

from keras_bert.layers.arguments import get_initializer
from keras_bert.models.bert_task import BertTask, check_label_head, output_layers


class LabelHeadTask(BertTask):
    """A task model whose head is dropout, then one dense layer to `num_classes` float32 logits.

    `BertClassifier` puts the head on one vector per text (the pooled [CLS],
    or the tokens' mean), `BertTokenClassifier` on every token's vector. A
    subclass says which by `head_input`, a function of the backbone's output
    dict and the model's inputs, and keeps its own arguments and layers.

    Args:
        backbone: a backbone of the family.
        num_classes: int. Number of classes (1: a regressor, where the subclass allows it).
        dropout: float. Dropout before the output layer (BERT: 0.1).
        label_names: optional list of `num_classes` strings, saved with the model.
        kernel_initializer: initializer of the output layer (BERT: truncated normal, stddev 0.02).
        head_input: `f(backbone_outputs, inputs) -> tensor`, what the head reads.
        head_layers: dict of the subclass's own layers used by `head_input`, set as attributes after the model exists.
        prediction_head: None (BERT's head), or a layer applied to what the head reads before the dropout
            (ModernBERT's dense + activation + LayerNorm, `PredictionHead`), kept as `prediction_head`.
        **kwargs: `keras.Model` arguments (`name`, ...).
    """

    config_arguments = ("num_classes", "dropout", "label_names", "kernel_initializer")
    # `num_classes=1` is a regressor (a value, no label names to count).
    allows_regression = False

    def __init__(
        self, backbone, num_classes, dropout, label_names, kernel_initializer, head_input, head_layers=None,
        prediction_head=None, **kwargs,
    ):
        label_names = check_label_head(type(self), kwargs, num_classes, dropout, label_names, self.allows_regression)

        # === Layers === (locals until the model is initialised, for the torch backend)
        output_dropout, output_dense = output_layers(backbone, num_classes, dropout, kernel_initializer)

        # === Functional graph ===
        inputs = backbone.input
        head_features = head_input(backbone(inputs), inputs)
        if prediction_head is not None:
            head_features = prediction_head(head_features)
        outputs = output_dense(output_dropout(head_features))
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.backbone = backbone
        self.output_dropout = output_dropout
        self.output_dense = output_dense
        self.prediction_head = prediction_head
        for name, layer in (head_layers or {}).items():
            setattr(self, name, layer)

        # === Config ===
        self.num_classes = num_classes
        self.dropout = dropout
        self.label_names = label_names
        self.kernel_initializer = get_initializer(kernel_initializer)
