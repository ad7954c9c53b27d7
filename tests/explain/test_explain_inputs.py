"""What explanations do around the gradients: words from wordpieces, the quadrature, targets, bad inputs, reports.

Nothing here depends on the backend (the gradients are checked on every backend in test_captum_parity.py).
"""

import json

import numpy as np
import pytest

from keras_bert.explain import TokenAttributor, deletion_curve, write_attribution_report
from keras_bert.explain.deletion_curve import _without
from keras_bert.explain.integration_steps import integration_steps
from keras_bert.explain.word_groups import group_words
from pipelines.long_text_reference import task_model
from task_helpers import fixture_tokenizer

pytestmark = pytest.mark.only_backend(
    "torch", reason="text handling, quadrature and report files are numpy and Python: the same on every backend"
)


@pytest.fixture(scope="module")
def attributor():
    return TokenAttributor(task_model("classifier", seed=2, max_sequence_length=16), fixture_tokenizer(), steps=8)


def test_words_join_wordpieces_and_keep_punctuation_with_their_word():
    fields = ["playing well.", "ok"]
    spans = [None, (0, 0, 4), (0, 4, 7), (0, 8, 12), (0, 12, 13), None, (1, 0, 2), None, None]
    tokens = ["[CLS]", "play", "##ing", "well", ".", "[SEP]", "ok", "[SEP]", "[PAD]"]
    words, word_of_token = group_words(spans, fields, tokens)
    assert [w["text"] for w in words] == ["playing", "well.", "ok"]
    assert word_of_token == [None, 0, 0, 1, 1, None, 2, None, None]
    assert [(w["field"], w["start"], w["end"]) for w in words] == [(0, 0, 7), (0, 8, 13), (1, 0, 2)]
    # A tokenizer without offsets: every token is its own word.
    words, _ = group_words([None, (0, None, None), (0, None, None), None], ["ab"], ["[CLS]", "a", "b", "[SEP]"])
    assert [w["text"] for w in words] == ["a", "b"]


def test_byte_level_bpe_words_are_cut_at_the_spaces_its_tokens_carry(tmp_path):
    from keras_bert import ModernBertTokenizer
    from keras_bert.explain.text_inputs import TextPacker
    from preprocessing_helpers import write_modernbert_tokenizer_folder

    tokenizer = ModernBertTokenizer.from_pretrained(write_modernbert_tokenizer_folder(tmp_path, vocab_size=400))
    fields = ["Emma Woodhouse, handsome  and rich."]
    packed = TextPacker(tokenizer, 32).pack(fields, "the test")
    tokens = [tokenizer.id_to_token(int(i)) for i in packed.token_ids[0]]
    assert any(t.startswith("\u0120") for t in tokens)  # "Ġ": tokens carry the space before their word
    words, _ = group_words(packed.spans[0], fields, tokens)
    assert [w["text"] for w in words] == ["Emma", "Woodhouse,", "handsome", "and", "rich."]


@pytest.mark.parametrize("method, steps", [("gausslegendre", 7), ("riemann_trapezoid", 9)])
def test_quadrature_weights_sum_to_one_and_integrate_a_polynomial(method, steps):
    alphas, weights = integration_steps(method, steps)
    assert len(alphas) == steps and alphas.min() >= 0 and alphas.max() <= 1
    assert abs(weights.sum() - 1) < 1e-12
    exact = {"gausslegendre": 1e-12, "riemann_trapezoid": 1e-2}[method]
    assert abs((weights * alphas**3).sum() - 0.25) < exact  # ∫ a³ da over [0, 1]
    with pytest.raises(ValueError, match="steps"):
        integration_steps(method, 1 if method == "riemann_trapezoid" else 0)


def test_bad_inputs_fail_with_clear_errors(attributor):
    with pytest.raises(ValueError, match="empty"):
        attributor(["good film", "   "])
    with pytest.raises(ValueError, match=r"input 0: 3[0-9] tokens .* longer than the 16 .*never cut a text"):
        attributor("good film and a great cast " * 5)
    with pytest.raises(ValueError, match=r"target 'happy' is not a class .*\['negative', 'neutral', 'positive'\]"):
        attributor("good film", target="happy")
    with pytest.raises(ValueError, match="target 7"):
        attributor("good film", target=7)
    with pytest.raises(ValueError, match="method"):
        TokenAttributor(attributor.model, attributor.tokenizer, method="shap")
    with pytest.raises(ValueError, match="explanations need a task model"):
        TokenAttributor(attributor.model.backbone, attributor.tokenizer)


def test_targets_by_name_and_index_and_word_sums(attributor):
    by_name = attributor("good film", target="positive")[0]
    by_index = attributor("good film", target=2)[0]
    assert by_name.target == by_index.target == {"name": "positive", "index": 2}
    assert by_name.words == ["good", "film"] and by_name.tokens[0] == "[CLS]"
    assert np.allclose(by_name.word_attributions, by_name.attributions[1:3])
    assert by_name.attributions[0] == 0 and by_name.attributions[-1] == 0  # [CLS], [SEP] are the baseline's too


def test_deleting_words_and_the_curve(attributor):
    row = attributor("good film , great cast")[0]
    assert _without(row, [1, 3]) == ["good , cast"]
    first = deletion_curve(attributor, ["good film , great cast", "dull plot and a weak show"], max_words=2, draws=3)
    again = deletion_curve(attributor, ["good film , great cast", "dull plot and a weak show"], max_words=2, draws=3)
    assert first == again  # the seed fixes the random draws
    assert first.ks == [0, 1, 2] and first.top[0] == first.random[0]  # nothing deleted: the same probability
    assert 0 <= first.area_top <= 1 and 0 <= first.area_random <= 1


def test_report_files_are_self_contained(attributor, tmp_path):
    rows = attributor(["good film", "dull plot , weak show"])
    paths = write_attribution_report(rows, tmp_path / "out", "classifier")
    names = sorted(p.split("/")[-1] for p in paths)
    assert names == ["attributions.jsonl", "explanation_001.png", "explanation_002.png", "report.html"]
    records = [json.loads(line) for line in (tmp_path / "out" / "attributions.jsonl").read_text().splitlines()]
    assert len(records) == 2 and records[1]["words"] == ["dull", "plot", ",", "weak", "show"]
    for key in ("tokens", "words", "attributions", "word_attributions", "target", "score_input", "score_baseline"):
        assert key in records[0]
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<style>" in page and "http" not in page and "<script" not in page and "<link" not in page
    assert "for the target" in page and page.count('class="w"') == 7  # every word shaded
    assert (tmp_path / "out" / "explanation_001.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
