"""BertQuestionAnswerer: extractive question answering (SQuAD 1.1 and 2.0)."""

import keras

from keras_bert.layers.span_head import SpanHead
from keras_bert.models.bert_task import BertTask


@keras.saving.register_keras_serializable(package="keras_bert")
class BertQuestionAnswerer(BertTask):
    """A `BertBackbone` with a span head: start and end logits for every token.

    Input sequences are `[CLS] question [SEP] context window [SEP]`. The
    answer is the context span `(start, end)` with the highest
    `start_logits[start] + end_logits[end]`; the span `(0, 0)` at [CLS] means
    "no answer in this window" (how BERT handles SQuAD 2.0's unanswerable
    questions and windows of long contexts that miss the answer).
    `keras_bert.preprocessing.task_data.squad_data` builds the windows and decodes the
    logits back into character spans of the original context.

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32 of
    shape `(batch_size, sequence_length)`.

    Outputs (a dict):
        start: float32 logits of shape `(batch_size, sequence_length)`.
        end: float32 logits of shape `(batch_size, sequence_length)`.
        Padding positions hold -1e9.

    Training data are `(x, {"start": start_positions, "end": end_positions})`,
    int32 token positions of shape `(batch_size,)`; 0 for no answer.

    Args:
        backbone: a `keras_bert.BertBackbone`.
        kernel_initializer: initializer of the span projection.
        prediction_head: None (BERT's head), or a layer applied to every token's
            vector before the span projection (ModernBERT's `PredictionHead`), kept as `prediction_head`.
        prediction_dropout: float. With `prediction_head`, dropout between it and the span projection
            (kept as the `output_dropout` layer); not part of BERT's config.

    Examples:
    ```python
    qa = keras_bert.BertQuestionAnswerer(keras_bert.BertBackbone.from_pretrained(path))
    qa.compile()  # AdamW lr 3e-5, mean of start and end cross-entropy
    qa.fit(train_features.dataset(batch_size=32, shuffle=True), epochs=2)
    ```
    """

    config_arguments = ("kernel_initializer",)

    def __init__(
        self, backbone, kernel_initializer="truncated_normal", prediction_head=None, prediction_dropout=0.0, **kwargs
    ):
        # === Layers === (locals until the model is initialised, for the torch backend)
        span_head = SpanHead(kernel_initializer=kernel_initializer, dtype=backbone.dtype_policy, name="span_head")
        output_dropout = None
        if prediction_head is not None:
            output_dropout = keras.layers.Dropout(prediction_dropout, dtype=backbone.dtype_policy, name="output_dropout")

        # === Functional graph ===
        inputs = backbone.input
        sequence = backbone(inputs)["sequence_output"]  # (batch, length, hidden)
        if prediction_head is not None:
            sequence = output_dropout(prediction_head(sequence))
        start_logits, end_logits = span_head(sequence, padding_mask=inputs["padding_mask"])
        outputs = {"start": start_logits, "end": end_logits}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.backbone = backbone
        self.span_head = span_head
        self.prediction_head = prediction_head
        self.output_dropout = output_dropout

        # === Config ===
        self.kernel_initializer = span_head.kernel_initializer

    def compile_defaults(self):
        """BERT's SQuAD loss: the mean of the start and end cross-entropies
        (Google's run_squad.py: `(start_loss + end_loss) / 2`); start and end
        position accuracy."""
        return {
            "loss": {
                "start": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                "end": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            },
            "loss_weights": {"start": 0.5, "end": 0.5},
            "metrics": {
                "start": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
                "end": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
            },
        }
