"""BertPretrainer: BERT's pretraining model, masked LM + next sentence (or sentence-order) prediction."""

import keras

from keras_bert.layers.next_sentence_head import NextSentenceHead
from keras_bert.models.bert_masked_lm import mask_positions_input, masked_lm_head_for
from keras_bert.models.bert_task import BertTask
from keras_bert.models.input_checks import BACKBONE_INPUTS, PACKED_INPUTS
from keras_bert.optimizers import create_optimizer


@keras.saving.register_keras_serializable(package="keras_bert")
class BertPretrainer(BertTask):
    """A `BertBackbone` with the masked-LM and next-sentence heads.

    Inputs (a dict): the backbone's `token_ids`, `segment_ids`, `padding_mask`,
    and `mask_positions`, int32 of shape `(batch_size, num_predictions)`: the
    positions whose original token the MLM head predicts.

    Outputs (a dict):
        mlm: float32 logits of shape `(batch_size, num_predictions, vocabulary_size)`.
        nsp: float32 logits of shape `(batch_size, 2)`; 0 = "B is the actual
            next segment", 1 = "B is random". Sentence-order prediction
            (ALBERT) trains the same head: 0 = "A and B in order", 1 =
            "swapped". Absent with `sentence_head=False`.

    Training data are `(x, y, sample_weight)` with `y = {"mlm": original
    token ids at mask_positions (batch_size, num_predictions), "nsp": labels
    (batch_size,)}` and `sample_weight = {"mlm": 1.0 for real predictions and
    0.0 for padded prediction slots}` — what `keras_bert.pretraining_dataset`
    yields.

    Packed sequences: with a backbone built with `packed_inputs=True`, a row
    holds up to `S` examples, each `[CLS] A [SEP] B [SEP]` with its own
    positions (see `BertBackbone`). The model then also takes `sequence_ids`,
    `position_ids` (int32 `(batch_size, sequence_length)`) and
    `nsp_positions` (int32 `(batch_size, S)`, each example's [CLS] position;
    0 in empty slots), and `nsp` is float32 `(batch_size, S, 2)`: every
    example's [CLS] goes through the backbone's pooler weights and the NSP
    head. Labels `y["nsp"]` are int32 `(batch_size, S)` with
    `sample_weight["nsp"]` 1.0 for real examples and 0.0 for empty slots,
    as `pretraining_dataset(..., pack_sequences=True)` yields; the default
    NSP loss and accuracy then average over the real examples only. The
    masked LM is unchanged: `mask_positions` index the packed row.

    Masked LM only (RoBERTa, `pretraining_dataset(..., sentence_task="none")`):
    with `sentence_head=False` there is no NSP head, no `nsp_positions` input
    and no `nsp` output or loss; `y` and `sample_weight` are `{"mlm": ...}`.
    Unlike `BertMaskedLM` it takes packed inputs and keeps the dict outputs.

    Args:
        backbone: a `keras_bert.BertBackbone`.
        sentence_head: build the NSP/SOP head (default True).

    Examples:
    ```python
    backbone = keras_bert.BertBackbone.from_size("mini", vocabulary_size=8000)
    pretrainer = keras_bert.BertPretrainer(backbone)
    pretrainer.compile()   # AdamW, MLM + NSP cross-entropy, MLM and NSP accuracy
    pretrainer.fit(dataset, epochs=1)
    ```
    """

    input_names = BACKBONE_INPUTS + ("mask_positions",)
    packed_input_names = BACKBONE_INPUTS + PACKED_INPUTS + ("mask_positions", "nsp_positions")
    heads_in_checkpoints = True
    config_arguments = ("sentence_head",)

    def __init__(self, backbone, sentence_head=True, **kwargs):
        if not isinstance(sentence_head, bool):
            raise ValueError(f"`sentence_head` must be True or False. Received: sentence_head={sentence_head!r}")
        # === Layers === (locals until the model is initialised, for the torch backend)
        masked_lm_head = masked_lm_head_for(backbone)
        next_sentence_head = None
        if sentence_head:
            next_sentence_head = NextSentenceHead(dtype=backbone.dtype_policy, name="next_sentence_head")

        # === Functional graph ===
        packed = getattr(backbone, "packed_inputs", False)
        inputs = {**backbone.input, "mask_positions": mask_positions_input()}
        if packed and sentence_head:
            inputs["nsp_positions"] = keras.Input(shape=(None,), dtype="int32", name="nsp_positions")
        features = backbone({name: inputs[name] for name in backbone.input_names})
        outputs = {"mlm": masked_lm_head(features["sequence_output"], inputs["mask_positions"])}
        if sentence_head and packed:
            # Every packed example's [CLS], through the backbone's own pooler weights.
            pooled = backbone.pooler(features["sequence_output"], positions=inputs["nsp_positions"])  # (batch, S, hidden)
            outputs["nsp"] = next_sentence_head(pooled)
        elif sentence_head:
            outputs["nsp"] = next_sentence_head(features["pooled_output"])  # pooled: (batch, hidden)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        if packed:
            self.input_names = tuple(n for n in self.packed_input_names if sentence_head or n != "nsp_positions")
        self.dtype_policy = backbone.dtype_policy  # e.g. mixed_float16 turns on loss scaling in compile()
        self.backbone = backbone
        self.masked_lm_head = masked_lm_head
        self.next_sentence_head = next_sentence_head
        self.sentence_head = sentence_head

    def default_optimizer(self):
        """BERT's pretraining AdamW (lr 1e-4)."""
        return create_optimizer()

    def compile_defaults(self):
        """The sum of MLM cross-entropy averaged over the real masked positions
        (padded slots weigh 0) and NSP cross-entropy; NSP accuracy, and MLM
        accuracy (a weighted metric) over the real masked positions. With
        packed inputs, the NSP loss and accuracy are averaged over the real
        examples only (empty NSP slots weigh 0). Without the sentence head,
        the MLM loss and accuracy alone."""
        if not self.sentence_head:
            mlm_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="mean_with_sample_weight")
            return {
                "loss": {"mlm": mlm_loss},
                "weighted_metrics": {"mlm": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]},
            }
        if self.backbone.packed_inputs:
            return {
                "loss": {
                    "mlm": keras.losses.SparseCategoricalCrossentropy(
                        from_logits=True, reduction="mean_with_sample_weight"
                    ),
                    "nsp": keras.losses.SparseCategoricalCrossentropy(
                        from_logits=True, reduction="mean_with_sample_weight"
                    ),
                },
                "weighted_metrics": {
                    "mlm": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
                    "nsp": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
                },
            }
        return {
            "loss": {
                "mlm": keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="mean_with_sample_weight"),
                "nsp": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            },
            "metrics": {"nsp": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]},
            "weighted_metrics": {"mlm": [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]},
        }
