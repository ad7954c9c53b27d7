"""MultipleNegativesRankingLoss: contrastive loss on (anchor, positive[, negatives...]) embeddings, in-batch negatives."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_bert")
class MultipleNegativesRankingLoss(keras.losses.Loss):
    """Each anchor must be more similar to its own positive than to every other candidate of the batch.

    The loss of sentence-transformers' `MultipleNegativesRankingLoss` (its
    default "query_to_doc" direction), also known as InfoNCE: for a batch of
    `n` tuples `(anchor_i, positive_i, negative_i_1, ...)`, the candidates are
    all positives followed by all hard negatives of the batch; the scores are
    `scale * cos(anchor_i, candidate_j)` and the loss is the cross-entropy of
    the softmax over the candidates with target `positive_i`, averaged over the
    anchors. The other pairs of the batch are the negatives, so bigger batches
    give a harder task.

    Args:
        scale: float. Multiplies the cosine similarities (the inverse of a
            softmax temperature; sentence-transformers uses 20).

    Call arguments:
        y_true: ignored (the targets are the tuples' own positives): any array with the
            batch size; `BertTextEmbedder.fit` passes zeros when the data have no labels.
        y_pred: float tensor of shape `(batch_size, 1 + num_candidates_per_anchor, hidden_dim)`:
            `y_pred[:, 0]` the anchors, `y_pred[:, 1]` their positives,
            `y_pred[:, 2:]` optional hard negatives.

    Returns:
        The mean loss (a scalar), or per anchor with `reduction=None`.
    """

    def __init__(self, scale=20.0, name="multiple_negatives_ranking_loss", reduction="sum_over_batch_size", **kwargs):
        super().__init__(name=name, reduction=reduction, **kwargs)
        if not isinstance(scale, (int, float)) or isinstance(scale, bool) or scale <= 0:
            raise ValueError(f"`scale` must be a positive number. Received: scale={scale!r}")
        self.scale = float(scale)

    def call(self, y_true, y_pred):
        y_pred = ops.cast(y_pred, "float32")
        norms = ops.sqrt(ops.maximum(ops.sum(ops.square(y_pred), axis=-1, keepdims=True), 1e-24))
        unit = y_pred / norms  # (batch, k, hidden); norm floored at 1e-12, as in sentence-transformers' cos_sim
        anchors = unit[:, 0, :]  # (batch, hidden)
        # All positives first, then all first negatives, ...: (batch * (k - 1), hidden).
        candidates = ops.reshape(ops.transpose(unit[:, 1:, :], (1, 0, 2)), (-1, ops.shape(unit)[-1]))
        scores = self.scale * ops.matmul(anchors, ops.transpose(candidates))  # (batch, batch * (k - 1))
        targets = ops.arange(ops.shape(anchors)[0], dtype="int32")  # anchor i's positive is candidate i
        return keras.losses.sparse_categorical_crossentropy(targets, scores, from_logits=True)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}
