"""BertMultipleChoice: pick one of several candidate continuations or answers (SWAG, RACE, ...)."""

import keras

from keras_bert.layers.arguments import check_rate, get_initializer
from keras_bert.layers.choice_reshape import FlattenChoices, UnflattenChoices
from keras_bert.models.bert_task import BertTask, cls_only_scope, output_layers


@keras.saving.register_keras_serializable(package="keras_bert")
class BertMultipleChoice(BertTask):
    """A `BertBackbone` that scores each of several choices and normalises across them.

    Every choice is its own sequence, `[CLS] context [SEP] question + choice
    [SEP]`; the backbone encodes all of them, a dropout + dense layer turns
    each pooled [CLS] vector into one score, and a softmax across the choices
    of an example gives their probabilities (BERT's SWAG head).

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32 of
    shape `(batch_size, num_choices, sequence_length)` (see
    `BertMultipleChoicePreprocessor`). `num_choices` may differ between batches.

    Outputs: float32 logits of shape `(batch_size, num_choices)`.

    Training data are `(x, y)` with the index of the right choice, int of shape `(batch_size,)`.

    Args:
        backbone: a `keras_bert.BertBackbone`.
        dropout: float. Dropout before the scoring layer (BERT: 0.1).
        kernel_initializer: initializer of the scoring layer.

    Examples:
    ```python
    model = keras_bert.BertMultipleChoice(keras_bert.BertBackbone.from_pretrained(path))
    model.compile()  # AdamW lr 3e-5, cross-entropy across choices, accuracy
    model.fit(train_features.dataset(batch_size=16, shuffle=True), epochs=3)
    ```
    """

    has_choices_axis = True
    config_arguments = ("dropout", "kernel_initializer")

    def __init__(self, backbone, dropout=0.1, kernel_initializer="truncated_normal", **kwargs):
        check_rate("dropout", dropout)

        # === Layers === (locals until the model is initialised, for the torch backend)
        flatten = FlattenChoices(name="flatten_choices")
        output_dropout, output_dense = output_layers(backbone, 1, dropout, kernel_initializer)  # one score per choice
        unflatten = UnflattenChoices(dtype="float32", name="unflatten_choices")

        # === Functional graph ===
        inputs = {
            name: keras.Input(shape=(None, None), dtype="int32", name=name)
            for name in backbone.input_names  # DistilBERT takes no segment_ids
        }
        flat = {name: flatten(value) for name, value in inputs.items()}  # (batch * choices, length)
        pooled = backbone(flat)["pooled_output"]
        scores = output_dense(output_dropout(pooled))  # (batch * choices, 1)
        outputs = unflatten(scores, inputs["token_ids"])  # (batch, choices)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.backbone = backbone
        self.output_dropout = output_dropout
        self.output_dense = output_dense

        # === Config ===
        self.dropout = dropout
        self.kernel_initializer = get_initializer(kernel_initializer)

    def inference_scope(self):
        """The head reads only `pooled_output`: inference computes the last block at [CLS] only (`cls_only_scope`)."""
        return cls_only_scope(self.backbone)

    def compile_defaults(self):
        """Cross-entropy of the softmax across choices, and accuracy."""
        return {
            "loss": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            "metrics": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
        }
