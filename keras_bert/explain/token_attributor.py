"""`TokenAttributor`: which tokens and words drove a task model's prediction (integrated gradients, grad × input)."""

import keras
import numpy as np

from keras_bert.explain.embedding_gradients import EmbeddingScores, gradient_times_input, integrated_gradients
from keras_bert.explain.integration_steps import INTEGRATION_METHODS, integration_steps
from keras_bert.explain.task_targets import check_fields, default_targets, task_of
from keras_bert.explain.text_inputs import TextPacker
from keras_bert.explain.token_attributions import TokenAttributions
from keras_bert.explain.word_groups import group_words

# Attribution methods: integrated gradients (Sundararajan et al., 2017) and the one-pass gradient × input.
METHODS = ("ig", "grad_x_input")
# The token every wordpiece but [CLS] and [SEP] becomes in the baseline.
BASELINES = ("pad", "mask")


class TokenAttributor:
    """Attributes a task model's prediction to the tokens and words of its input.

    Integrated gradients integrates the gradient of the target's score with
    respect to the token embeddings along the straight path from a baseline
    (every wordpiece replaced by [PAD] or [MASK], [CLS] and [SEP] kept,
    positions and segments unchanged) to the input, and multiplies by the
    input's difference from the baseline: the attributions of the tokens sum
    to the score's change from the baseline (completeness). Gradient × input
    takes one gradient at the input (cheap, no such sum). A token's
    attribution is the sum over the embedding axis; a word's, the sum of its
    wordpieces'. Runs on TensorFlow, JAX and PyTorch alike; the numbers agree
    with captum's `LayerIntegratedGradients` on the word embeddings of the
    same weights in transformers (tests/explain).

    Explanations read one sequence per input, never windows: an input
    longer than `sequence_length` is refused with a ValueError.

    Args:
        model: a `BertClassifier` (classes or a regressor), `BertTokenClassifier`,
            `BertQuestionAnswerer` or `BertMultipleChoice`.
        tokenizer: the tokenizer it was trained with (word offsets need a
            `BertTokenizer`; with another, every token is its own word).
        method: `"ig"` (integrated gradients) or `"grad_x_input"`.
        steps: integration points for `"ig"`.
        baseline: `"pad"` or `"mask"`.
        integration: `"gausslegendre"` or `"riemann_trapezoid"` (see `integration_steps`).
        sequence_length: the longest sequence to explain (default: the
            model's `max_sequence_length`).
        batch_size: integration points per forward and backward pass.

    Call arguments:
        inputs: one input or a list of them; an input is a string, or a
            tuple of strings for the tasks that read several (text and pair;
            question and context; context and choices).
        target: what to explain instead of the prediction: a class or tag
            (name or index), a choice index, or "start"/"end"; None for the
            predicted class / choice, every tagged word, or the answer's start and end.

    Returns:
        A list of `TokenAttributions`, one per input and target, in input order.

    Examples:
    ```python
    attributor = keras_bert.TokenAttributor(classifier, tokenizer, steps=64)
    row = attributor("a gorgeous, witty, seductive movie.")[0]
    row.target, list(zip(row.words, row.word_attributions))
    ```
    """

    def __init__(self, model, tokenizer, method="ig", steps=64, baseline="pad", integration="gausslegendre",
                 sequence_length=None, batch_size=32):
        self.task = task_of(model)
        if method not in METHODS:
            raise ValueError(f"`method` must be one of {METHODS}. Received: method={method!r}")
        if baseline not in BASELINES:
            raise ValueError(f"`baseline` must be one of {BASELINES}. Received: baseline={baseline!r}")
        if integration not in INTEGRATION_METHODS:
            raise ValueError(
                f"`integration` must be one of {INTEGRATION_METHODS}. Received: integration={integration!r}"
            )
        self.alphas, self.weights = integration_steps(integration, steps)
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"`batch_size` must be a positive int. Received: batch_size={batch_size!r}")
        limit = model.backbone.max_sequence_length
        sequence_length = limit if sequence_length is None else sequence_length
        if not isinstance(sequence_length, int) or not 3 <= sequence_length <= limit:
            raise ValueError(f"`sequence_length` must be an int in [3, {limit}] (the model's max_sequence_length). "
                             f"Received: sequence_length={sequence_length!r}")
        self.model, self.tokenizer = model, tokenizer
        self.method, self.steps, self.baseline, self.integration = method, steps, baseline, integration
        self.batch_size = batch_size
        self.baseline_token_id = getattr(tokenizer, f"{baseline}_token_id")
        self.packer = TextPacker(tokenizer, sequence_length, choices=self.task == "multiple_choice")
        self._compiled = {}  # JAX's compiled gradient programs, one per target (see `scores_and_gradients`)

    def __call__(self, inputs, target=None):
        prepared = [self.prepare(fields, f"input {i}", target) for i, fields in enumerate(_input_list(inputs))]
        return [self.attribute(packed, t) for packed, targets in prepared for t in targets]

    def prepare(self, fields, where="input", target=None):
        """Checks and packs one input and runs the model on it: `(PackedText, [Target])`.

        Everything that can be wrong with an input (empty, too long, an
        unknown target) fails here, before any gradient is computed.
        """
        fields = [fields] if isinstance(fields, str) else list(fields)
        check_fields(self.task, fields, where)
        packed = self.packer.pack(fields, where)
        # predict_on_batch: one compiled forward pass (JAX would compile each op of a plain call for each shape)
        outputs = keras.tree.map_structure(np.asarray, self.model.predict_on_batch(packed.inputs))
        targets = default_targets(self.task, self.model, outputs, *self._words(packed, 0), packed.spans[0], target)
        if not targets and target is not None:
            raise ValueError(f"{where}: no word is tagged {target!r}, so there is nothing to explain for that target")
        return packed, targets

    def attribute(self, packed, target):
        """The `TokenAttributions` of one packed input for one `Target`."""
        scores = EmbeddingScores(self.model, target)
        if self.method == "ig":
            attributions, score_input, score_baseline = integrated_gradients(
                scores, packed.inputs, self.baseline_ids(packed), self.alphas, self.weights, self.batch_size,
                self._compiled,
            )
        else:
            attributions, score_input = gradient_times_input(scores, packed.inputs, self._compiled)
            score_baseline = None
        row = target.row
        length = int(np.asarray(packed.inputs["padding_mask"]).reshape(packed.token_ids.shape)[row].sum())
        tokens = [self.tokenizer.id_to_token(i) for i in packed.token_ids[row, :length]]
        words, word_of_token = self._words(packed, row)
        values = attributions[row, :length]
        word_values = np.zeros(len(words))
        for position, word in enumerate(word_of_token[:length]):
            if word is not None:
                word_values[word] += values[position]
        ig = self.method == "ig"
        return TokenAttributions(
            fields=packed.fields, tokens=tokens, attributions=values.tolist(), words=[w["text"] for w in words],
            word_attributions=word_values.tolist(), word_spans=[[w["field"], w["start"], w["end"]] for w in words],
            target=target.to_dict(), score_input=score_input, score_baseline=score_baseline, method=self.method,
            baseline=self.baseline, steps=self.steps if ig else None, integration=self.integration if ig else None,
        )

    def baseline_ids(self, packed):
        """The baseline's token ids `(rows, length)`: every wordpiece the baseline token; [CLS], [SEP], padding kept."""
        is_text = np.array([[span is not None for span in row] for row in packed.spans])
        return np.where(is_text, self.baseline_token_id, packed.token_ids).astype("int32")

    def _words(self, packed, row):
        length = packed.token_ids.shape[1]
        tokens = [self.tokenizer.id_to_token(i) for i in packed.token_ids[row, :length]]
        return group_words(packed.spans[row], packed.fields, tokens)


def _input_list(inputs):
    """One input or a list of them → a list of inputs (a string or a tuple of strings each)."""
    if isinstance(inputs, (str, tuple)):
        return [inputs]
    if isinstance(inputs, (bytes, bytearray)) or not hasattr(inputs, "__iter__"):
        raise ValueError(
            f"`inputs` must be a string, a tuple of strings or a list of them. Received {type(inputs).__name__}"
        )
    return list(inputs)
