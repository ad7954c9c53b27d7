"""The files the documentation examples name, placed in their working folder.

The guides' code reads files a user has (`train.tsv`, `my_texts/`, ...). The test
puts small real files under those names: the first rows of the task fixtures of
tests/fixtures/tasks (made-up sentences in the real formats) and the first
chapters of three Austen novels from ../shared/data as the pretraining corpus.
The examples keep the guides' real settings (epochs, batch size, length); the
test keeps them fast by giving them few rows.

    python tests/docs/example_data.py FOLDER      # the same files, for running an example by hand
"""

import json
import os
import shutil
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures" / "tasks"
SHARED_DATA = (TESTS.parent / ".." / "shared" / "data").resolve()

# name in the working folder -> task fixture
TASK_FILES = {
    "train.tsv": "classify_train.tsv",
    "dev.tsv": "classify_dev.tsv",
    "pairs_train.tsv": "pairs_train.tsv",
    "pairs_dev.tsv": "pairs_dev.tsv",
    "scores_train.tsv": "regress_train.tsv",
    "scores_dev.tsv": "regress_dev.tsv",
    "train.conll": "ner_train.conll",
    "dev.conll": "ner_dev.conll",
    "squad_train.json": "squad_v2_train.json",
    "squad_dev.json": "squad_v2_dev.json",
    "swag_train.csv": "mc_train.csv",
    "swag_dev.csv": "mc_dev.csv",
    "tiny_vocab.txt": "vocab.txt",  # the fixtures' 147-token vocabulary, for random tiny models
    "reviews.txt": "bias_reviews.txt",  # one text per line, some with he/she or a name (guides/bias-checks.md)
    "my_pairs.tsv": "bias_pairs.tsv",  # a user's own term pairs, term<TAB>term
}
# Pretraining corpus: the first characters of these novels (a few chapters each).
CORPUS_NOVELS = {"my_texts": ("emma.txt", "prideprejudice.txt"), "heldout": ("persuasion.txt",)}
CORPUS_CHARACTERS = 40_000
ROWS = 64  # examples per task file (TSV/CSV rows, CoNLL sentences, SQuAD paragraphs)


def _first_rows(source, target):
    text = source.read_text(encoding="utf-8")
    if source.suffix == ".json":  # SQuAD: the first paragraphs (each with its questions)
        data = json.loads(text)
        data["data"] = [dict(data["data"][0], paragraphs=data["data"][0]["paragraphs"][:ROWS // 8])]
        text = json.dumps(data, indent=1)
    elif source.suffix == ".conll":  # sentences are separated by blank lines
        text = "\n\n".join(text.split("\n\n")[: ROWS + 1]) + "\n"
    elif source.name != "vocab.txt":  # a header row, then one example per line
        text = "".join(text.splitlines(keepends=True)[: ROWS + 1])
    target.write_text(text, encoding="utf-8")


# Hugging Face repositories the guides name (through their preset names), each a random tiny BERT in the cache.
CACHED_REPOSITORIES = ("google-bert/bert-base-uncased", "google/bert_uncased_L-2_H-128_A-2")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def hub_cache(folder):
    """A Hugging Face cache folder holding a random tiny BERT under each of CACHED_REPOSITORIES."""
    import keras_bert  # here: the test process need not import keras_bert to place the data files
    from keras_bert.converters import save_hf_checkpoint

    cache = Path(folder)
    vocabulary = (FIXTURES / "vocab.txt").read_text(encoding="utf-8").splitlines()
    backbone = keras_bert.BertBackbone(vocabulary_size=len(vocabulary), num_layers=2, num_heads=2, hidden_dim=16,
                                       intermediate_dim=32, max_sequence_length=512)
    source = cache / "tiny_random_bert"
    save_hf_checkpoint(backbone, source, vocabulary=vocabulary, do_lower_case=True)
    for repo_id in CACHED_REPOSITORIES:
        storage = cache / f"models--{repo_id.replace('/', '--')}"
        (storage / "refs").mkdir(parents=True)
        (storage / "refs" / "main").write_text(COMMIT)
        shutil.copytree(source, storage / "snapshots" / COMMIT)
    shutil.rmtree(source)
    return cache


def place_example_data(folder):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, fixture in TASK_FILES.items():
        _first_rows(FIXTURES / fixture, folder / name)
    for subfolder, novels in CORPUS_NOVELS.items():
        (folder / subfolder).mkdir(exist_ok=True)
        for novel in novels:
            text = (SHARED_DATA / "austen" / novel).read_text(encoding="utf-8")[:CORPUS_CHARACTERS]
            (folder / subfolder / novel).write_text(text[: text.rfind("\n") + 1], encoding="utf-8")
    return folder


if __name__ == "__main__":
    work = place_example_data(sys.argv[1] if len(sys.argv) > 1 else os.getcwd())
    print(f"HF_HUB_OFFLINE=1 HF_HUB_CACHE={hub_cache(work.parent / (work.name + '-hub'))}")
