"""Shared pieces of the task tests: the fixture folder, its tokenizer, its sentiment rows and a tiny model to start
fine-tuning from (backbones: harness.tiny_backbone)."""

import functools
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "tasks"


@functools.lru_cache(maxsize=None)
def fixture_tokenizer():
    """The tokenizer of the fixtures' vocab.txt (uncased, ~150 tokens)."""
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    return BertTokenizer(str(FIXTURES / "vocab.txt"))


def write(path, text):
    """Writes `text` to `path` (a pathlib.Path) and returns its str path."""
    path.write_text(text, encoding="utf-8")
    return str(path)


def classify_rows():
    """(header, rows) of the fixtures' classify_train.tsv: rows are "text<TAB>label", labels negative / positive."""
    header, *rows = (FIXTURES / "classify_train.tsv").read_text(encoding="utf-8").splitlines()
    return header, rows


def write_rows(path, header, rows):
    """Writes a TSV file of `header` and `rows` to `path` and returns `path`."""
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def swapped(rows):
    """`rows` of classify_train.tsv with each label replaced by the other one."""
    flip = {"positive": "negative", "negative": "positive"}
    return [f"{text}\t{flip[label]}" for text, label in (row.rsplit("\t", 1) for row in rows)]


def save_tiny_init(folder, **overrides):
    """Saves `folder`/backbone.keras (harness.tiny_backbone at length 16, built after seed 0, with `overrides`) and
    copies the fixtures' vocab.txt beside it, so a fine-tuning job can start from the file. Returns the .keras path."""
    import keras

    from harness import tiny_backbone

    keras.utils.set_random_seed(0)
    tiny_backbone(**{"max_sequence_length": 16, **overrides}).save(folder / "backbone.keras")
    shutil.copy(FIXTURES / "vocab.txt", folder / "vocab.txt")
    return folder / "backbone.keras"


# A context longer than one 32-token window, with non-ASCII text before the answer (offsets in characters and bytes
# differ), and a short one: what `check_served_answers` asks.
QA_CONTEXTS = ["Zoë and Ångström 🤖 went home . carla has a black car . the day was long . anna lives in oslo .",
               "it was a quiet week . anna lives in oslo ."]  # fmt: skip
QA_QUESTIONS = ["what color is the car ?", "where does anna live ?"]


def check_served_answers(run, served_folder):
    """A fine-tuned question answerer's run: its pipeline (the run's windows) answers with non-empty spans of the
    contexts, without white space at their ends, and its exported SavedModel gives the same answers and starts.

    Returns:
        The pipeline, for more checks.
    """
    import tensorflow as tf

    from keras_bert.cli import main as cli
    from keras_bert.pipelines import QuestionAnswererPipeline
    from keras_bert.pipelines.loading import load_pipeline

    pipeline = load_pipeline(run)  # the run's windows (doc_stride, max_query_length), as the export reads them
    assert isinstance(pipeline, QuestionAnswererPipeline)
    expected = [pipeline(q, c) for q, c in zip(QA_QUESTIONS, QA_CONTEXTS)]
    for answer, context in zip(expected, QA_CONTEXTS):
        assert answer["answer"] == context[answer["start"] : answer["end"]] == answer["answer"].strip() != ""
    assert cli(["export", str(run), "--out", str(served_folder)]) == 0
    served = tf.saved_model.load(str(served_folder)).signatures["serve_text"]
    out = served(question=tf.constant(QA_QUESTIONS), context=tf.constant(QA_CONTEXTS))
    assert [a.decode() for a in out["answer"].numpy()] == [a["answer"] for a in expected]
    assert out["answer_start"].numpy().tolist() == [a["start"] for a in expected]
    assert out["answer_end"].numpy().tolist() == [a["end"] for a in expected]
    return pipeline
