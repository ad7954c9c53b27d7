"""`keras-bert embed`: JSON lines (one per input line, blank lines reported) or a .npy array, from any model form."""

import json

import numpy as np
import pytest

from embedding_helpers import TINY_SENTENCES, write_sentence_transformers_folder
from keras_bert.cli.main import main
from keras_bert.pipelines.text_embedder_pipeline import TextEmbedderPipeline
from task_helpers import FIXTURES


def embed(capsys, *args):
    """`keras-bert embed ARGS`: (exit status, stdout lines, stderr)."""
    code = main(["embed", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_sentence_transformers_folder(tmp_path_factory.mktemp("st") / "tiny", pooling="mean", normalize=True)


@pytest.fixture(scope="module")
def pipeline(folder):
    return TextEmbedderPipeline.from_pretrained(folder)


@pytest.fixture(scope="module")
def expected(pipeline):
    return pipeline(TINY_SENTENCES[:2])


def test_json_lines_one_per_input_line(capsys, tmp_path, folder, expected):
    (tmp_path / "in.txt").write_text(f"{TINY_SENTENCES[0]}\n\n{TINY_SENTENCES[1]}\n", encoding="utf-8")
    code, lines, err = embed(capsys, folder, "--file", tmp_path / "in.txt")
    records = [json.loads(line) for line in lines]
    assert code == 0 and [r["input"] for r in records] == [TINY_SENTENCES[0], "", TINY_SENTENCES[1]]
    np.testing.assert_allclose([records[0]["embedding"], records[2]["embedding"]], expected, atol=1e-6)
    assert records[1]["error"].startswith("empty input") and "in.txt:2" in err


def test_npy_out_and_a_keras_file(capsys, tmp_path, folder, pipeline, expected):
    code, _, err = embed(capsys, folder, *TINY_SENTENCES[:2], "--out", tmp_path / "v.npy")
    assert code == 0 and "wrote 2 embeddings of dimension 16" in err
    np.testing.assert_allclose(np.load(tmp_path / "v.npy"), expected, atol=1e-6)
    # The same embedder saved as .keras, with the tokenizer named.
    pipeline.model.save(tmp_path / "embedder.keras")
    code, _, _ = embed(capsys, tmp_path / "embedder.keras", *TINY_SENTENCES[:2], "--tokenizer", FIXTURES / "vocab.txt",
                       "--out", tmp_path / "k.npy")
    assert code == 0
    np.testing.assert_allclose(np.load(tmp_path / "k.npy"), expected, atol=1e-6)


@pytest.mark.parametrize(
    "args, message",
    [(["--out", "v.txt"], "expected a .npy file name"), (["--batch-size", "0"], "--batch-size must be at least 1"),
     (["--out", "v.npy", "--file", "blank.txt"], "blank.txt:1: empty input")],
)
def test_user_errors_are_one_line(capsys, tmp_path, monkeypatch, folder, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "blank.txt").write_text("\nanna came\n", encoding="utf-8")
    texts = [] if "--file" in args else ["anna came"]
    code, _, err = embed(capsys, folder, *texts, *args)
    assert code == 2 and message in err
