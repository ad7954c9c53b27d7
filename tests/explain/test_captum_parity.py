"""Token attributions against outside truth: the same weights in transformers, explained by captum 0.9.

Each tiny task model (weights from numpy, identical on every backend) is written as a Hugging Face folder
with the package's writer and loaded by transformers; captum's `LayerIntegratedGradients` on its word
embeddings, with our baseline ids, method and steps, must give our attributions to 1e-4 of the largest,
and integrated gradients must be complete (the attributions sum to the score's change) within 1%.
"""

import numpy as np
import pytest

from keras_bert.converters import save_hf_checkpoint
from keras_bert.explain import TokenAttributor
from pipelines.long_text_reference import task_model
from task_helpers import FIXTURES, fixture_tokenizer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
captum_attr = pytest.importorskip("captum.attr")

TOLERANCE = 1e-4  # max |ours - captum| relative to the largest |captum| attribution
INPUTS = {
    "classifier": "the film was good and the cast was great",
    "token_classifier": "anna smith met ivan in paris",
    "question_answerer": ("who met ivan", "anna smith met ivan in paris"),
    "multiple_choice": ("the film was good", "and the cast was great", "but the plot was dull"),
}
HF_CLASSES = {
    "classifier": "AutoModelForSequenceClassification", "token_classifier": "AutoModelForTokenClassification",
    "question_answerer": "AutoModelForQuestionAnswering", "multiple_choice": "AutoModelForMultipleChoice",
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Per task: (our model, the transformers model with the same weights)."""
    pairs = {}
    for kind in INPUTS:
        ours = task_model(kind, seed=1)
        folder = save_hf_checkpoint(ours, tmp_path_factory.mktemp(kind) / "hf", vocabulary=str(FIXTURES / "vocab.txt"))
        reference = getattr(transformers, HF_CLASSES[kind]).from_pretrained(folder, attn_implementation="eager")
        pairs[kind] = (ours, reference.eval())
    return pairs


def _hf_score(reference, target):
    """`f(input_ids, token_type_ids, attention_mask) -> (n,)`: the target's score in transformers' outputs."""

    def score(input_ids, token_type_ids, attention_mask):
        out = reference(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)
        if target.output is not None:
            return getattr(out, f"{target.output}_logits")[:, target.token]
        if target.token is not None:
            return out.logits[:, target.token, target.index]
        return out.logits[:, target.index]

    return score


def _captum(reference, attributor, packed, target, method, steps, kind="ig"):
    """captum's attributions of `target`, summed over the embedding axis: `(rows, length)` numpy."""
    tensors = [torch.tensor(np.asarray(packed.inputs[k]), dtype=torch.long)
               for k in ("token_ids", "segment_ids", "padding_mask")]
    layer = reference.base_model.embeddings.word_embeddings
    score = _hf_score(reference, target)
    if kind == "grad_x_input":
        explainer = captum_attr.LayerGradientXActivation(score, layer)
        values = explainer.attribute(tensors[0], additional_forward_args=tuple(tensors[1:]))
    else:
        baseline = torch.tensor(attributor.baseline_ids(packed).reshape(tensors[0].shape), dtype=torch.long)
        explainer = captum_attr.LayerIntegratedGradients(score, layer)
        values = explainer.attribute(tensors[0], baselines=baseline, additional_forward_args=tuple(tensors[1:]),
                                     n_steps=steps, method=method, internal_batch_size=steps)
    values = values.detach().numpy().sum(axis=-1)
    return values.reshape(-1, values.shape[-1])  # (rows, length): one row per choice


def _ours_and_captum(models, kind, method="gausslegendre", steps=64, baseline="pad", how="ig"):
    ours, reference = models[kind]
    attributor = TokenAttributor(ours, fixture_tokenizer(), method=how, steps=steps, baseline=baseline,
                                 integration=method, batch_size=32)
    packed, targets = attributor.prepare(INPUTS[kind])
    target = targets[0]
    row = attributor.attribute(packed, target)
    expected = _captum(reference, attributor, packed, target, method, steps, how)[target.row, : len(row.tokens)]
    return row, np.asarray(row.attributions), expected


def _relative_difference(ours, expected):
    return float(np.abs(ours - expected).max() / np.abs(expected).max())


@pytest.mark.parametrize("kind", list(INPUTS))
def test_integrated_gradients_match_captum_and_are_complete(models, kind):
    row, ours, expected = _ours_and_captum(models, kind)
    assert np.abs(expected).max() > 1e-3  # attributions far from zero: the comparison means something
    assert _relative_difference(ours, expected) <= TOLERANCE
    change = row.score_input - row.score_baseline
    assert abs(change) > 1e-2
    assert row.completeness_error <= 0.01 * abs(change)


def test_trapezoid_and_mask_baseline_match_captum(models):
    steps = 64
    row, ours, expected = _ours_and_captum(models, "classifier", "riemann_trapezoid", steps, baseline="mask")
    # captum weighs the same points by 1/steps (halved at the ends): its sum is 1 - 1/steps, ours 1.
    assert _relative_difference(ours, expected * steps / (steps - 1)) <= TOLERANCE
    assert row.completeness_error <= 0.01 * abs(row.score_input - row.score_baseline)


def test_gradient_times_input_matches_captum(models):
    row, ours, expected = _ours_and_captum(models, "classifier", how="grad_x_input")
    assert row.score_baseline is None and row.steps is None
    assert _relative_difference(ours, expected) <= TOLERANCE
