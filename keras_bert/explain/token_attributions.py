"""`TokenAttributions`: one explained prediction, per wordpiece and per word."""

import dataclasses


@dataclasses.dataclass
class TokenAttributions:
    """How much each token (and each word) of one input moved one output score.

    The attributions of integrated gradients sum to `score_input -
    score_baseline` (completeness, up to the quadrature's error); those of
    gradient × input are a first-order estimate with no such sum, and
    `score_baseline` is None for them.

    Attributes:
        fields: the input's texts (a text; a pair; a question and its
            context; a context and its choices).
        tokens: the wordpieces of the explained sequence, [CLS] and [SEP] included.
        attributions: one float per token (the sum over the embedding axis).
        words: the whitespace-separated words of the text(s), without the special tokens.
        word_attributions: one float per word, the sum of its wordpieces'.
        word_spans: per word, `[field, start, end]` character offsets into
            `fields[field]` (`start`/`end` None where the tokenizer gives no offsets).
        target: what was explained: `{"name", "index"}` for a class or choice,
            `{"name", "index", "token", "word"}` for a tag, `{"name", "output",
            "token"}` for an answer's start or end.
        score_input: the target's score (a logit, or the regressor's value) on the input.
        score_baseline: the score on the baseline (integrated gradients), else None.
        method: `"ig"` or `"grad_x_input"`.
        baseline: `"pad"` or `"mask"`: the token every wordpiece but [CLS]/[SEP] becomes in the baseline.
        steps: integration points (integrated gradients), else None.
        integration: the quadrature rule (integrated gradients), else None.
    """

    fields: list
    tokens: list
    attributions: list
    words: list
    word_attributions: list
    word_spans: list
    target: dict
    score_input: float
    score_baseline: float = None
    method: str = "ig"
    baseline: str = "pad"
    steps: int = None
    integration: str = None

    @property
    def completeness_error(self):
        """`|sum(attributions) - (score_input - score_baseline)|`, or None without a baseline score."""
        if self.score_baseline is None:
            return None
        return abs(sum(self.attributions) - (self.score_input - self.score_baseline))

    def to_dict(self):
        """The row as plain JSON values (what `attributions.jsonl` holds)."""
        return dataclasses.asdict(self)
