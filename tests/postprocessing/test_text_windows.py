"""`keras_bert.postprocessing.text_windows` against the rules written out by hand (tests/pipelines/long_text_reference.py).

The windows and the max-context rule are what the pipelines, the fine-tuning
features and the exported SavedModel all read long texts with; here they
are checked on whole grids of lengths, window sizes and strides, including
the ties of the max-context rule (the earlier window wins).
"""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert.postprocessing import text_windows
from pipelines.long_text_reference import hand_pair_windows, hand_windows, is_max_context

pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="TensorFlow ops whatever the Keras backend: the same numbers on every backend"
)


def _table(lengths, window, stride):
    owner, start, length = text_windows.window_table(tf.constant(lengths, tf.int32), window, stride)
    return owner.numpy().tolist(), start.numpy().tolist(), length.numpy().tolist()


def test_window_table_holds_every_rows_hand_windows():
    lengths = [0, 1, 5, 13, 14, 29, 40]
    for window in (1, 4, 7, 14):
        for stride in range(1, window + 1):
            owner, start, length = _table(lengths, window, stride)
            for row, n in enumerate(lengths):
                mine = [(s, s + m) for o, s, m in zip(owner, start, length) if o == row]
                assert mine == hand_windows(n, window, stride), (n, window, stride)
            counts = text_windows.windows_per_row(tf.constant(owner, tf.int32), len(lengths)).numpy()
            assert counts.tolist() == [len(hand_windows(n, window, stride)) for n in lengths]


@pytest.mark.parametrize("separators_between", [1, 2])
def test_pair_table_windows_the_longer_segment(separators_between):
    pairs = [(3, 40), (40, 3), (20, 20), (5, 6), (2, 50), (30, 9), (0, 0), (4, 4)]
    length = 16
    owner, span_a, span_b, dropped = text_windows.pair_table(
        [a for a, _ in pairs], [b for _, b in pairs], length, 5, separators_between
    )
    owner, (start_a, count_a), (start_b, count_b) = owner.numpy(), [t.numpy() for t in span_a], [t.numpy() for t in span_b]
    for row, (a, b) in enumerate(pairs):
        mine = [((sa, sa + ca), (sb, sb + cb))
                for o, sa, ca, sb, cb in zip(owner, start_a, count_a, start_b, count_b) if o == row]
        # One separator more takes one token of room, as a sequence one token shorter would have.
        assert mine == hand_pair_windows(a, b, length - (separators_between - 1), 5), (a, b)
        kept = (mine[-1][0][1] - mine[0][0][0]) + (mine[-1][1][1] - mine[0][1][0])
        assert dropped.numpy()[row] == a + b - kept


def test_max_context_follows_run_squad_over_a_grid_with_ties():
    lengths = [9, 17, 23, 40]
    ties = 0
    for window in (4, 5, 8, 9):
        for stride in range(1, window + 1):
            owner, start, length = (tf.constant(v, tf.int32) for v in _table(lengths, window, stride))
            most = text_windows.max_windows_per_token(window, stride)
            mask = text_windows.max_context(owner, start, length, window, most - 1).numpy()
            for row, n in enumerate(lengths):
                spans = hand_windows(n, window, stride)
                rows = [w for w, o in enumerate(owner.numpy()) if o == row]
                for w, (s, e) in zip(rows, spans):
                    expected = [is_max_context(spans, rows.index(w), p) for p in range(s, e)]
                    assert mask[w, : e - s].tolist() == expected, (n, window, stride, w)
                    assert not mask[w, e - s :].any()
                    reversed_tie = [is_max_context(spans, rows.index(w), p, later_wins_ties=True) for p in range(s, e)]
                    ties += expected != reversed_tie
    assert ties > 0  # the grid holds ties, so a reversed tie-break fails here


def test_means_over_windows_and_over_tokens():
    values = np.arange(12, dtype="float32").reshape(6, 2)
    means = text_windows.mean_over_windows(values, tf.constant([0, 0, 1, 2, 2, 2]), 4).numpy()
    np.testing.assert_allclose(means, [[1, 2], [4, 5], [8, 9], [0, 0]])
    assert means.dtype == np.float64

    # Two texts of 7 and 3 tokens, windows of 4 tokens every 2; window position j + 1 holds token start + j.
    lengths = [7, 3]
    owner, start, length = (tf.constant(v, tf.int32) for v in _table(lengths, 4, 2))
    rng = np.random.default_rng(0)
    window_values = rng.normal(size=(len(owner), 6, 3)).astype("float32")
    row_starts = tf.constant([0, 7], tf.int64)
    got = text_windows.token_mean_over_windows(window_values, owner, start, length, row_starts, 10).numpy()
    total, count = np.zeros((10, 3)), np.zeros((10, 1))
    for w, (o, s, n) in enumerate(zip(owner.numpy(), start.numpy(), length.numpy())):
        base = [0, 7][o] + s
        total[base : base + n] += window_values[w, 1 : 1 + n]
        count[base : base + n] += 1
    np.testing.assert_allclose(got, total / count, rtol=1e-12)
