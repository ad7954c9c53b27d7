"""BertTokenClassifier: one label per token (named entities, part of speech, ...)."""

import keras

from keras_bert.metrics.masked_accuracy import MaskedAccuracy
from keras_bert.models.label_head_task import LabelHeadTask

IGNORE_LABEL = -100


@keras.saving.register_keras_serializable(package="keras_bert")
class BertTokenClassifier(LabelHeadTask):
    """A `BertBackbone` with a classification head on every token.

    The head is BERT's for NER: dropout, then one dense layer from each
    token's final hidden state to `num_classes` logits. Words split into
    several wordpieces are labelled on their first wordpiece; the others,
    [CLS], [SEP] and padding carry the label -100 (or a sample weight of 0)
    and count neither in the loss nor in the accuracy (see
    `keras_bert.preprocessing.task_data.ner_data`, which does this alignment).

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32 of
    shape `(batch_size, sequence_length)`.

    Outputs: float32 logits of shape `(batch_size, sequence_length, num_classes)`.

    Training data are `(x, y[, sample_weight])` with int labels of shape
    `(batch_size, sequence_length)`: a class id, or -100 for a position to ignore.

    Args:
        backbone: a `keras_bert.BertBackbone`.
        num_classes: int. Number of tags (e.g. 9 for CoNLL-2003 BIO tags).
        dropout: float. Dropout before the output layer (BERT: 0.1).
        label_names: optional list of `num_classes` tag names ("O", "B-PER", ...).
        kernel_initializer: initializer of the output layer.

    Examples:
    ```python
    tagger = keras_bert.BertTokenClassifier(backbone, num_classes=len(tags), label_names=tags)
    tagger.compile()  # AdamW lr 3e-5, cross-entropy over labelled positions, their accuracy
    tagger.fit(train_dataset, epochs=3)
    ```
    """

    ignored_label = IGNORE_LABEL

    def __init__(self, backbone, num_classes, dropout=0.1, label_names=None, kernel_initializer="truncated_normal", **kwargs):
        super().__init__(
            backbone, num_classes, dropout, label_names, kernel_initializer,
            head_input=lambda backbone_outputs, inputs: backbone_outputs["sequence_output"],  # (batch, length, hidden)
            **kwargs,
        )

    def compile_defaults(self):
        """Sparse categorical cross-entropy averaged over the positions whose
        label is not -100 and whose sample weight is not 0, and `MaskedAccuracy`
        (a weighted metric): token accuracy over the same positions."""
        return {
            "loss": keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, ignore_class=IGNORE_LABEL, reduction="mean_with_sample_weight"
            ),
            "weighted_metrics": [MaskedAccuracy(ignore_class=IGNORE_LABEL, name="accuracy")],
        }
