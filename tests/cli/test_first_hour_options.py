"""Impossible option values are refused up front, and the help says what the run-folder options do (issue 49).

Each option's range is declared once, in its `option(check=...)` (keras_bert/jobs/*_options.py): the command
line refuses a value while it parses (before keras loads), the Python API when the job's options are made.
"""

import re

import pytest

from keras_bert.cli.main import main
from keras_bert.jobs.distill_options import DistillOptions
from keras_bert.jobs.finetune_options import FinetuneOptions
from keras_bert.jobs.pretrain_options import PretrainOptions

PLUMBING = "argument parsing and option tables are the same on every backend"

REQUIRED = {
    "finetune": ["--task", "classify", "--init", "tiny", "--train", "t.tsv", "--out", "o"],
    "pretrain": ["--corpus", "c.txt", "--vocab", "v.txt", "--out", "o"],
    "distill": ["--teacher", "runs/t", "--train", "t.tsv", "--out", "o"],
}
OPTIONS = {
    "finetune": (FinetuneOptions, dict(task="classify", init="tiny", train="t.tsv", output_dir="o")),
    "pretrain": (PretrainOptions, dict(corpus="c.txt", vocabulary="v.txt", output_dir="o")),
    "distill": (DistillOptions, dict(teacher="runs/t", train="t.tsv", output_dir="o")),
}
# (command, flag, value, what the one-line error says)
IMPOSSIBLE = [
    ("finetune", "--learning-rate", "-1", "`learning_rate` must be a positive number"),
    ("finetune", "--learning-rate", "inf", "`learning_rate` must be a positive number"),
    ("finetune", "--dropout", "1", r"`dropout` must be in \[0, 1\)"),
    ("finetune", "--dropout", "-0.1", r"`dropout` must be in \[0, 1\)"),
    ("finetune", "--weight-decay", "-0.01", "`weight_decay` must be a number >= 0"),
    ("finetune", "--window-stride", "-1", "`window_stride` must be an int >= 0"),
    ("finetune", "--doc-stride", "0", "`doc_stride` must be a positive int"),
    ("finetune", "--max-query-length", "0", "`max_query_length` must be a positive int"),
    ("finetune", "--max-answer-length", "0", "`max_answer_length` must be a positive int"),
    ("finetune", "--n-best-size", "0", "`n_best_size` must be a positive int"),
    ("finetune", "--lora-alpha", "0", "`lora_alpha` must be a positive number"),
    ("pretrain", "--learning-rate", "-0.01", "`learning_rate` must be a positive number"),
    ("pretrain", "--dropout", "1.5", r"`dropout` must be in \[0, 1\)"),
    ("pretrain", "--weight-decay", "-1", "`weight_decay` must be a number >= 0"),
    ("pretrain", "--warmup-steps", "-5", "`warmup_steps` must be an int >= 0"),
    ("pretrain", "--grad-accumulation", "0", "`gradient_accumulation_steps` must be a positive int"),
    ("pretrain", "--checkpoint-every", "0", "`checkpoint_every` must be a positive int"),
    ("pretrain", "--eval-batches", "0", "`eval_batches` must be a positive int"),
    ("pretrain", "--steps-per-execution", "0", "`steps_per_execution` must be a positive int"),
    ("pretrain", "--generator-size", "0", r"`generator_size` must be in \(0, 1\]"),
    ("pretrain", "--rtd-weight", "-1", "`rtd_weight` must be a positive number"),
    ("distill", "--learning-rate", "0", "`learning_rate` must be a positive number"),
    ("distill", "--temperature", "0", "`temperature` must be a positive number"),
    ("distill", "--alpha", "1.5", r"`alpha` must be in \[0, 1\]"),
    ("distill", "--hidden-loss-weight", "-1", "`hidden_loss_weight` must be a number >= 0"),
    ("distill", "--layer-indices", "-1", "`layer_indices` must be an int >= 0"),
]


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
@pytest.mark.parametrize("command, flag, value, message", IMPOSSIBLE, ids=[f"{c} {f} {v}" for c, f, v, _ in IMPOSSIBLE])
def test_an_impossible_value_is_refused_in_one_line_naming_the_option(capsys, command, flag, value, message):
    with pytest.raises(SystemExit) as exit_:
        main([command, *REQUIRED[command], flag, value])
    assert exit_.value.code == 2
    [line] = capsys.readouterr().err.strip().splitlines()  # one line, no usage block
    assert line.startswith(f"keras-bert {command}: error: argument {flag}: ")
    assert re.search(message, line), line
    options_class, required = OPTIONS[command]
    name = message.split("`")[1]
    typed = [int(value)] if name == "layer_indices" else float(value) if "." in value or "inf" in value else int(value)
    with pytest.raises(ValueError, match=message):  # the Python API: `finetune(..., dropout=1)` and the others
        options_class(**required, **{name: typed})


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
def test_the_python_jobs_refuse_an_impossible_value_before_reading_anything(tmp_path):
    from keras_bert.jobs.distill import distill
    from keras_bert.jobs.finetune import finetune
    from keras_bert.jobs.pretrain import pretrain

    # No such files: a check that came after reading them would say so instead.
    with pytest.raises(ValueError, match=r"`dropout` must be in \[0, 1\)"):
        finetune("classify", "tiny", tmp_path / "none.tsv", tmp_path / "out", dropout=1.0)
    with pytest.raises(ValueError, match="`weight_decay` must be a number >= 0"):
        pretrain(tmp_path / "none.txt", tmp_path / "none_vocab.txt", tmp_path / "out", weight_decay=-1.0)
    with pytest.raises(ValueError, match="`temperature` must be a positive number"):
        distill(tmp_path / "no_teacher", tmp_path / "none.tsv", tmp_path / "out", temperature=0.0)
    # A bool is an int to Python, not a count or a rate to a job: epochs=True would train one epoch.
    with pytest.raises(ValueError, match="`epochs` must be a positive int. Received: epochs=True"):
        finetune("classify", "tiny", tmp_path / "none.tsv", tmp_path / "out", epochs=True)
    assert not (tmp_path / "out").exists()


def _help(command):
    with pytest.raises(SystemExit):
        main([command, "--help"])


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
def test_the_help_says_what_keep_last_epoch_and_the_checkpoints_do(capsys):
    _help("finetune")
    text = " ".join(capsys.readouterr().out.split())
    keep_last = text.split("--keep-last-epoch ")[-1]
    assert keep_last.startswith("with --eval: model.keras holds the last epoch's weights instead of the best "
                                "epoch's (by --monitor)")
    keep_checkpoints = text.split("--keep-checkpoints, --no-keep-checkpoints ")[-1]
    assert "optimizer state" in keep_checkpoints and "--resume" in keep_checkpoints
    assert "holds an earlier run: its outputs (model.keras, " in text  # --overwrite says what it deletes
    _help("pretrain")
    assert "--no-keep-checkpoints" in capsys.readouterr().out
