"""Issue 49: `finetune --task qa --sequence-length 64` failed with "`doc_stride` must be in [1, 1]".

The window options kept BERT's values for 384 tokens (a question of 64 tokens, windows every 128) whatever
the sequence length. Left out, they now follow it (64 and 128 at 384, in proportion below); given values
that do not fit are refused with the values that would.
"""

import pytest

import keras_bert.jobs.finetune
from harness import tiny_backbone
from keras_bert.cli.main import main
from keras_bert.jobs.finetune_handlers import QuestionAnswererJob
from task_helpers import FIXTURES

PLUMBING = "how the QA windows follow the sequence length is the same on every backend"


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_qa_window_options_left_out_follow_the_sequence_length(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr(keras_bert.jobs.finetune, "finetune", lambda **keywords: seen.update(keywords) or {})
    argv = ["finetune", "--task", "qa", "--init", "tiny", "--train", str(FIXTURES / "squad_v1_train.json"),
            "--out", str(tmp_path / "run")]
    assert main([*argv, "--sequence-length", "64"]) == 0
    windows = {name: seen[name] for name in ("max_query_length", "doc_stride")}
    assert windows == {"max_query_length": None, "doc_stride": None}  # for the job to derive
    derived = {}
    for length in (32, 64, 128, 384, 512):
        handler = QuestionAnswererJob({**QuestionAnswererJob.OPTIONS, **windows, "sequence_length": length})
        derived[length] = handler.options["max_query_length"], handler.options["doc_stride"]
    # BERT's 64 / 128 at 384 tokens (and above), in proportion below: a quarter and a third of the sequence.
    assert derived == {32: (8, 10), 64: (16, 21), 128: (32, 42), 384: (64, 128), 512: (64, 128)}
    # A value given is kept; the other follows the length and the room it leaves.
    handler = QuestionAnswererJob({**QuestionAnswererJob.OPTIONS, "max_query_length": 40, "doc_stride": None,
                                   "sequence_length": 64})
    assert (handler.options["max_query_length"], handler.options["doc_stride"]) == (40, 21)


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_qa_window_options_that_do_not_fit_name_the_values_that_would(tmp_path, capsys):
    tiny_backbone(max_sequence_length=32).save(tmp_path / "backbone.keras")
    argv = ["finetune", "--task", "qa", "--init", str(tmp_path / "backbone.keras"), "--vocab",
            str(FIXTURES / "vocab.txt"), "--train", str(FIXTURES / "squad_v1_train.json"), "--sequence-length", "32",
            "--doc-stride", "128", "--out", str(tmp_path / "run")]
    assert main(argv) == 2  # refused before any data are read
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Received: doc_stride=128" in err[0], err
    # What would fit: the defaults at this length, or a stride that fits beside the (derived) question of 8.
    assert "(max_query_length=8, doc_stride=10)" in err[0] and "doc_stride in [1, 21]" in err[0], err
    assert not (tmp_path / "run" / "finetune.json").exists()
