"""The metric implementations against hand-computed values."""

import numpy as np
import pytest

from keras_bert.metrics import (
    MaskedAccuracy,
    accuracy,
    classification_metrics,
    entity_metrics,
    f1_score,
    get_entities,
    normalize_answer,
    pearson_correlation,
    spearman_correlation,
    squad_exact_match,
    squad_f1,
    squad_metrics,
)


# Text preprocessing and metrics are TensorFlow / NumPy code that does the
# same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)


def test_accuracy_and_f1_by_hand():
    y_true = [1, 1, 1, 0, 0, 2]
    y_pred = [1, 0, 1, 0, 1, 2]
    assert accuracy(y_true, y_pred) == pytest.approx(4 / 6)
    # Class 1: tp=2, fp=1, fn=1 -> F1 = 4 / 6. Class 0: tp=1, fp=1, fn=1 -> 2/4. Class 2: 1.
    assert f1_score(y_true, y_pred, pos_label=1) == pytest.approx(2 / 3)
    assert f1_score(y_true, y_pred, average="macro") == pytest.approx((2 / 3 + 1 / 2 + 1) / 3)
    # A class never seen counts as 0 when num_classes names it.
    assert f1_score(y_true, y_pred, average="macro", num_classes=4) == pytest.approx((2 / 3 + 1 / 2 + 1) / 4)
    assert f1_score([0, 0], [0, 0], pos_label=1) == 0.0
    results = classification_metrics([0, 1, 1, 0], [0, 1, 0, 0], num_classes=2)
    # Class 1: tp=1, fp=0, fn=1 -> 2/3; class 0: tp=2, fp=1, fn=0 -> 4/5.
    assert results == pytest.approx({"accuracy": 0.75, "f1": 2 / 3, "macro_f1": (2 / 3 + 4 / 5) / 2})
    with pytest.raises(ValueError, match="same length"):
        accuracy([1, 2], [1])
    with pytest.raises(ValueError, match="average"):
        f1_score([1], [1], average="micro")


def test_pearson_and_spearman_by_hand():
    x = [1.0, 2.0, 3.0, 4.0]
    assert pearson_correlation(x, [2.0, 4.0, 6.0, 8.0]) == pytest.approx(1.0)
    assert pearson_correlation(x, [8.0, 6.0, 4.0, 2.0]) == pytest.approx(-1.0)
    # x centred: -1.5 -.5 .5 1.5; y = 1 3 2 5 centred: -1.75 .25 -.75 2.25
    # cov = 2.625+(-.125)+(-.375)+3.375 = 5.5; |x|^2 = 5; |y|^2 = 3.0625+.0625+.5625+5.0625 = 8.75
    assert pearson_correlation(x, [1.0, 3.0, 2.0, 5.0]) == pytest.approx(5.5 / np.sqrt(5 * 8.75))
    # Monotonic but not linear: Spearman is exactly 1.
    assert spearman_correlation(x, [1.0, 10.0, 100.0, 1000.0]) == pytest.approx(1.0)
    # Ties take their average rank: y = 1 2 2 3 -> ranks 1 2.5 2.5 4; rank pearson by hand.
    ranks = np.array([1, 2.5, 2.5, 4])
    expected = np.corrcoef([1, 2, 3, 4], ranks)[0, 1]
    assert spearman_correlation(x, [1.0, 2.0, 2.0, 3.0]) == pytest.approx(expected)
    assert pearson_correlation(x, [1.0, 1.0, 1.0, 1.0]) == 0.0


def test_entities_like_seqeval():
    tags = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "I-ORG", "I-ORG", "O", "I-MISC"]
    assert get_entities(tags) == [("PER", 0, 1), ("LOC", 3, 3), ("LOC", 4, 5), ("ORG", 6, 7), ("MISC", 9, 9)]
    # Sentences are joined with an "O" between them.
    assert get_entities([["B-PER"], ["I-PER"]]) == [("PER", 0, 0), ("PER", 2, 2)]
    # I- of another type ends the entity and starts a new one.
    assert get_entities(["B-PER", "I-LOC"]) == [("PER", 0, 0), ("LOC", 1, 1)]


def test_entity_metrics_by_hand():
    true = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O", "B-LOC", "I-LOC"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O", "B-LOC", "O"]]
    # True: PER(0-1), LOC(3), ORG(5), LOC(7-8). Predicted: PER(0-1), ORG(3), ORG(5), LOC(7).
    # Correct: PER and ORG(5) -> precision 2/4, recall 2/4.
    results = entity_metrics(true, pred)
    assert results["precision"] == pytest.approx(0.5)
    assert results["recall"] == pytest.approx(0.5)
    assert results["f1"] == pytest.approx(0.5)
    assert results["per_type"]["PER"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 1}
    assert results["per_type"]["LOC"]["recall"] == 0.0 and results["per_type"]["LOC"]["support"] == 2
    assert results["per_type"]["ORG"]["precision"] == pytest.approx(0.5)
    perfect = entity_metrics(true, true)
    assert perfect["f1"] == 1.0
    assert entity_metrics([["O"]], [["O"]])["f1"] == 0.0
    with pytest.raises(ValueError, match="Sentence 0 has 2 true tags but 1"):
        entity_metrics([["O", "O"]], [["O"]])


def test_squad_normalisation_and_scores_by_hand():
    assert normalize_answer("The  Cat, an apple!") == "cat apple"
    assert normalize_answer("A theory") == "theory"
    assert squad_exact_match("the Eiffel Tower.", ["Eiffel tower", "Paris"]) == 1.0
    assert squad_exact_match("Eiffel", ["Eiffel tower"]) == 0.0
    # pred "eiffel" vs gold "eiffel tower": precision 1, recall 1/2 -> F1 2/3.
    assert squad_f1("Eiffel", ["Eiffel tower"]) == pytest.approx(2 / 3)
    # Best over the gold answers.
    assert squad_f1("tower in paris", ["the tower", "in paris"]) == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    # Unanswerable: only "" matches.
    assert squad_exact_match("", []) == 1.0 and squad_f1("something", []) == 0.0
    # Repeated words count by their multiplicity.
    assert squad_f1("a a b", ["a b b"]) == pytest.approx(2 / 3)
    results = squad_metrics(
        {"q1": "Eiffel", "q2": "", "q3": "Paris"},
        {"q1": ["Eiffel tower"], "q2": [], "q3": ["paris"], "q4": ["never predicted"]},
    )
    assert results["exact_match"] == pytest.approx(100 * 2 / 4)
    assert results["f1"] == pytest.approx(100 * (2 / 3 + 1 + 1 + 0) / 4)
    assert results["has_answer_total"] == 3 and results["no_answer_exact_match"] == 100.0
    assert results["has_answer_exact_match"] == pytest.approx(100 / 3)


def test_masked_accuracy_skips_ignored_positions_and_zero_weights():
    import keras

    metric = MaskedAccuracy()
    y_true = np.array([[1, -100, 0, 2], [2, 2, -100, -100]])
    logits = np.zeros((2, 4, 3), "float32")
    predicted = np.array([[1, 0, 1, 2], [2, 0, 0, 0]])
    np.put_along_axis(logits, predicted[..., None], 1.0, axis=-1)
    # Counted: (1,1) ok, (0,1) wrong, (2,2) ok, (2,2) ok, (2,0) wrong -> 3 / 5.
    metric.update_state(y_true, logits)
    assert float(keras.ops.convert_to_numpy(metric.result())) == pytest.approx(3 / 5)
    metric.reset_state()
    weights = np.array([[1, 1, 0, 1], [1, 0, 1, 1]], "float32")
    # Weight 0 also drops (0, 1) and (2, 0): 3 / 3.
    metric.update_state(y_true, logits, sample_weight=weights)
    assert float(keras.ops.convert_to_numpy(metric.result())) == pytest.approx(1.0)
    assert MaskedAccuracy.from_config(metric.get_config()).ignore_class == -100
