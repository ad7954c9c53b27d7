"""Each job's options are defined once: the Python keywords and the command's argparse come from one dataclass."""

import argparse
import dataclasses
import inspect

import pytest

from keras_bert.cli.job_arguments import add_job_options, job_keywords
from keras_bert.jobs.convert_options import ConvertOptions
from keras_bert.jobs.distill_options import DistillOptions
from keras_bert.jobs.finetune_options import FinetuneOptions
from keras_bert.jobs.job_options import REQUIRED
from keras_bert.jobs.pretrain_options import PretrainOptions

pytestmark = pytest.mark.only_backend("jax", reason="option tables and argparse: the same on every backend")


def _jobs():
    from keras_bert.jobs.convert import convert
    from keras_bert.jobs.distill import distill
    from keras_bert.jobs.finetune import finetune
    from keras_bert.jobs.pretrain import pretrain

    return [(finetune, FinetuneOptions), (pretrain, PretrainOptions), (distill, DistillOptions),
            (convert, ConvertOptions)]


@pytest.mark.parametrize("index", range(4), ids=["finetune", "pretrain", "distill", "convert"])
def test_the_job_keywords_are_the_option_fields_with_their_defaults(index):
    job, options_class = _jobs()[index]
    parameters = inspect.signature(job).parameters
    fields = {field.name: field for field in options_class.python_fields()}
    assert [name for name in parameters if parameters[name].kind != inspect.Parameter.VAR_KEYWORD] == list(fields)
    for name, field in fields.items():
        expected = inspect.Parameter.empty if field.default is REQUIRED else field.default
        assert parameters[name].default == expected, name
    positional = [n for n, p in parameters.items() if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == list(options_class.POSITIONAL)


@pytest.mark.parametrize("options_class", [FinetuneOptions, PretrainOptions, DistillOptions, ConvertOptions],
                         ids=["finetune", "pretrain", "distill", "convert"])
def test_every_command_line_field_is_an_argparse_option_that_passes_only_what_was_given(options_class):
    parser = add_job_options(argparse.ArgumentParser(), options_class)
    dests = {action.dest for action in parser._actions}
    cli_fields = [field for field in dataclasses.fields(options_class) if field.metadata["cli"]]
    assert {field.name for field in cli_fields} <= dests
    for action in parser._actions:
        if hasattr(action, "job_default"):  # what --help shows is the dataclass's default
            assert action.job_default == options_class.defaults(action.dest)[action.dest]
    required = [field.name for field in cli_fields if field.default is REQUIRED]
    argv = {"task": ["--task", "classify"], "init": ["--init", "tiny"], "train": ["--train", "t.tsv"],
            "output_dir": ["--out", "o"], "corpus": ["--corpus", "c.txt"], "vocabulary": ["--vocab", "v.txt"],
            "teacher": ["--teacher", "runs/t"], "source": ["s"], "destination": ["d.keras"]}
    given = job_keywords(parser.parse_args([word for name in required for word in argv[name]]), options_class)
    assert sorted(given) == sorted(required)


def test_impossible_values_are_refused_while_parsing_and_from_python_with_one_message():
    parser = add_job_options(argparse.ArgumentParser(prog="finetune", exit_on_error=False), FinetuneOptions)
    base = ["--task", "classify", "--init", "tiny", "--train", "t.tsv", "--out", "o"]
    for flag, value, message in [("--learning-rate", "0", "`learning_rate` must be a positive number"),
                                 ("--epochs", "0", "`epochs` must be a positive int"),
                                 ("--batch-size", "-1", "`batch_size` must be a positive int"),
                                 ("--warmup-ratio", "1.5", r"`warmup_ratio` must be in \[0, 1\)")]:
        with pytest.raises(argparse.ArgumentError, match=message):
            parser.parse_args([*base, flag, value])
        name = flag[2:].replace("-", "_")
        with pytest.raises(ValueError, match=message):
            FinetuneOptions(task="classify", init="tiny", train="t.tsv", output_dir="o", **{name: float(value)})
    with pytest.raises(ValueError, match="`student_layers` must be a positive int"):
        DistillOptions(teacher="t", train="t.tsv", output_dir="o", student_layers=0)


def test_an_unknown_keyword_is_a_type_error_naming_it():
    from keras_bert.jobs.convert import convert

    with pytest.raises(TypeError, match="overwrit"):
        convert("a", "b.keras", overwrit=True)
