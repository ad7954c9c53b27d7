"""The GPU pretraining-payoff study (benchmarks/studies/pretraining_payoff_gpu/) end to end in its quick mode, on CPU.

`prepare.py --quick` tokenizes a slice of the real data here (TensorFlow); `study.py --quick` then runs in
a Python where TensorFlow is not installed at all, on JAX, as on the GPU machine: tiny model, a few
steps. Checks the results file's structure, that the splits are disjoint and that no validation or
test sentence is pretraining text. Its accuracies check the machinery only (quick mode says so).
"""

import json

import numpy as np
import pytest

from benchmarks.studies.pretraining_payoff_gpu import data, prepare
from harness import REPO_ROOT, SHARED_DATA, TENSORFLOW_PACKAGES, run_with_packages_hidden

# The study runs in its own JAX process whatever the pass's backend: one pass checks it.
pytestmark = pytest.mark.only_backend("jax", reason="the study is a JAX program in its own process; one pass covers it")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("prepared")
    prepare.main(["--quick", "--no-minilm", "--out", str(folder), "--data", str(SHARED_DATA)])
    return folder


def test_the_splits_are_disjoint_and_no_held_out_sentence_is_pretraining_text(prepared):
    arrays = dict(np.load(prepared / "arrays.npz"))
    manifest = json.loads((prepared / "manifest.json").read_text())
    splits = {name: set(arrays[name].tolist()) for name in data.SPLITS}
    assert not splits["train"] & splits["validation"] and not splits["test"] & (splits["train"] | splits["validation"])
    assert sum(map(len, splits.values())) == len(arrays["sentences"]) == manifest["sentence_counts"]["kept"]
    assert all(arrays["sentence_ids"][i] % 10 == 0 for i in splits["test"])
    # The text check: every sentence packed into the pretraining rows is a training sentence.
    sep = manifest["special_ids"]["sep"]
    assert prepare.check_no_leak(arrays, sep) == len(splits["train"])
    test_row = arrays["sentences"][sorted(splits["test"])[:1]]  # (1, 64): [CLS] sentence [SEP] [PAD]...
    test_row = np.pad(test_row, [(0, 0), (0, arrays["pretrain_reviews"].shape[1] - test_row.shape[1])])
    planted = dict(arrays, pretrain_reviews=np.concatenate([arrays["pretrain_reviews"], test_row]))
    with pytest.raises(AssertionError, match="held-out sentences are in the pretraining rows"):  # caught
        prepare.check_no_leak(planted, sep)
    # And by text: what the pretraining rows were made from is exactly the training split.
    rows, _ = data.read_sentences(SHARED_DATA / "sentiment" / data.SENTIMENT.name)
    by_id = {row["id"]: row["text"] for row in rows}
    train_texts = [by_id[int(arrays["sentence_ids"][i])] for i in arrays["train"]]
    assert manifest["pretraining_text"]["review_digest"] == data.text_digest(train_texts)
    held_out = {data.normalized(by_id[int(arrays["sentence_ids"][i])]) for i in splits["validation"] | splits["test"]}
    assert not held_out & {data.normalized(t) for t in train_texts}


def test_the_quick_study_runs_without_tensorflow_and_writes_every_figure(prepared, tmp_path):
    out = tmp_path / "out"
    arguments = ["--quick", "--prepared", str(prepared), "--out", str(out),
                 "--inits", "random", "pretrained_full", "minilm"]
    script = f"from benchmarks.studies.pretraining_payoff_gpu import study; study.main({arguments!r})"
    run = run_with_packages_hidden(script, TENSORFLOW_PACKAGES, tmp_path, env={"KERAS_BACKEND": "jax"},
                                   python_path=[REPO_ROOT], timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["quick"] is True and results["tensorflow_imported"] is False and results["errors"] == []
    assert "QUICK MODE" in (out / "results.md").read_text()
    assert {"date", "device", "jax", "keras"} <= set(results["environment"])
    pretraining = results["pretraining"]
    assert pretraining["steps_done"] > 0 and pretraining["tokens_per_second"] > 0
    assert set(pretraining["snapshots"]) == {"pretrained_half", "pretrained_full"}
    for snapshot in pretraining["snapshots"].values():
        assert 0 <= snapshot["austen_heldout"]["accuracy"] <= 1 and snapshot["review_validation"]["predictions"] > 0
    assert any("minilm" in line for line in results["skipped"])  # not prepared: said, not hidden
    budgets, inits = results["settings"]["budgets"], ["random", "pretrained_full"]
    for budget in budgets:
        for init in inits:
            cell = results["summary"][budget][init]
            assert cell["test_accuracy"]["n"] == len(results["settings"]["seeds"]), (budget, init, results["skipped"])
            assert 0 <= cell["test_accuracy"]["mean"] <= 1 and cell["test_accuracy"]["ci95"] is not None
    chosen = [r for r in results["runs"] if r["chosen"]]
    assert all("test_accuracy" in r and r["validation_curve"] for r in chosen)
    # Test accuracy is measured only on the runs validation chose, never on the rates it rejected.
    assert not any("test_accuracy" in r for r in results["runs"] if not r["chosen"])
    first_seed = [r for r in results["runs"] if r["init"] == "pretrained_full" and r["seed"] == 0]
    assert {r["learning_rate"] for r in first_seed} == {1e-3, 3e-4}  # the grid, validation choosing
