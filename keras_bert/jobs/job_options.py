"""Each job's options, defined once: one dataclass per job is both its Python keywords and its command-line options.

    @dataclasses.dataclass(frozen=True)
    class FinetuneOptions(JobOptions):
        train: str = option(help="training file")
        epochs: int = option(3, "training epochs", check=positive_int)

    @takes_options(FinetuneOptions)
    def finetune(options): ...          # finetune("classify", "tiny", "train.tsv", "runs/x", epochs=2)

    add_job_options(parser, FinetuneOptions)   # keras_bert.cli: `keras-bert finetune --epochs 2`

As Hugging Face's `TrainingArguments`, a field holds everything about one
option: its default (the one place for it), its help text, and what the
command line needs to offer it (a flag, a value type, choices, switches that
set a value, a help group). `check` names the valid range (`positive_int`,
`within("[0, 1)")`, ...): the dataclass enforces it on a Python call, the
command line while it parses (before any data, keras or TensorFlow loads),
with the same one-line message. An option that has a range declares it here,
once, for every job that takes it; a job checks only what depends on its data
or on other options.

This module imports nothing heavy: building the command's parser must stay fast.
"""

import dataclasses
import functools
import inspect
import math

REQUIRED = dataclasses.MISSING


def option(default=REQUIRED, help=None, *, flag=None, switches=None, type=None, nargs=None, choices=None,
           metavar=None, check=None, group=None, cli=True, python=True):
    """A `JobOptions` field.

    Args:
        default: the default (leave it out for a required option).
        help: what the option does, for `--help` and readers of the dataclass.
        flag: the command-line flag (default `--name-with-dashes`); a name
            without dashes is a positional argument.
        switches: `{flag: value}` of flags that take no value and set the
            option to `value` (`{"--quiet": 0}`); two make a mutually exclusive
            pair (`--x`/`--no-x` shows as one).
        type: converts the command-line text (a function raising ValueError).
        nargs, choices, metavar: as argparse takes them.
        check: `check(name, value)` raising ValueError for a value out of range (None is never checked).
        group: the `--help` section.
        cli: False for a Python-only keyword (callbacks, ...).
        python: False for a command-line-only option: the command passes it
            on as a keyword that the job function collects with the rest
            (`takes_options(more_keywords=...)`), or uses it itself.
    """
    metadata = dict(help=help, flag=flag, switches=switches, type=type, nargs=nargs, choices=choices, metavar=metavar,
                    check=check, group=group, cli=cli, python=python)
    # Keyword-only in the dataclass: shared bases (`RunOptions`, ...) put their defaulted fields before a job's
    # required ones; the job function's positional order is the class's `POSITIONAL`.
    return dataclasses.field(default=default, metadata=metadata, kw_only=True)


@dataclasses.dataclass(frozen=True)
class JobOptions:
    """The base of every job's options: checks each field's range when the options are made.

    Attributes:
        POSITIONAL: the options the job function also takes by position, in
            that order (the others are keyword-only).
    """

    POSITIONAL = ()

    def __post_init__(self):
        for field in dataclasses.fields(self):
            check, value = field.metadata.get("check"), getattr(self, field.name)
            if check is not None and value is not None:
                check(field.name, value)

    @classmethod
    def defaults(cls, *names):
        """`{name: default}` of the options `names` (`REQUIRED` for a required one)."""
        defaults = {field.name: field.default for field in dataclasses.fields(cls)}
        return {name: defaults[name] for name in names}

    @classmethod
    def python_fields(cls):
        """The fields that are keywords of the job function: the `POSITIONAL` ones first."""
        fields = {field.name: field for field in dataclasses.fields(cls) if field.metadata["python"]}
        return [fields[name] for name in cls.POSITIONAL] + [f for f in fields.values() if f.name not in cls.POSITIONAL]


def takes_options(options_class, more_keywords=None):
    """Makes `run(options, **more)` callable with `options_class`'s fields as its keywords (the Python API).

    Args:
        options_class: a `JobOptions` dataclass.
        more_keywords: the name of a `**keywords` parameter that takes what is
            not a field (e.g. every `PretrainingDataConfig` field), passed to
            `run` as it is; None: an unknown keyword is a TypeError.

    Returns:
        A decorator. The job it makes has the signature of the fields (shown by
        `help()`), binds its arguments to them (a TypeError names an unknown or
        missing one), and calls `run` with the checked options.
    """
    parameters = []
    for field in options_class.python_fields():
        positional = field.name in options_class.POSITIONAL
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if positional else inspect.Parameter.KEYWORD_ONLY
        default = inspect.Parameter.empty if field.default is REQUIRED else field.default
        parameters.append(inspect.Parameter(field.name, kind, default=default))
    if more_keywords is not None:
        parameters.append(inspect.Parameter(more_keywords, inspect.Parameter.VAR_KEYWORD))
    signature = inspect.Signature(parameters)

    def decorate(run):
        @functools.wraps(run)
        def job(*args, **keywords):
            arguments = signature.bind(*args, **keywords).arguments
            more = arguments.pop(more_keywords, {}) if more_keywords is not None else {}
            return run(options_class(**arguments), **more)

        job.__signature__ = signature
        return job

    return decorate


def python_keywords(options):
    """The job-function keywords of `options` (a `JobOptions`), as a dict."""
    return {field.name: getattr(options, field.name) for field in options.python_fields()}


# --------------------------------------------------------------------------- checks (`option(check=...)`)
# Numbers must be finite: `--learning-rate inf` is no more a rate than -1.
def _number(value, integer=False):
    if isinstance(value, bool):
        return False
    if integer:
        return isinstance(value, int)
    return isinstance(value, (int, float)) and math.isfinite(value)


def positive_int(name, value):
    if not _number(value, integer=True) or value < 1:
        raise ValueError(f"`{name}` must be a positive int. Received: {name}={value!r}")


def positive_ints(name, value):
    if not all(_number(v, integer=True) and v > 0 for v in value):
        raise ValueError(f"`{name}` must be positive ints. Received: {name}={value!r}")


def positive_number(name, value):
    if not _number(value) or not value > 0:
        raise ValueError(f"`{name}` must be a positive number. Received: {name}={value!r}")


def within(interval, integer=False):
    """A check that a number (an int with `integer`) lies in `interval`, written as in maths.

    `within("[0, 1)")` takes 0 <= x < 1; `within("(0, 1]")` 0 < x <= 1; an
    upper bound of `inf` leaves it open above (`within("[0, inf)")`: x >= 0).
    A list option (`nargs`) checks each of its values with `each(...)`.
    """
    low, high = (float(bound) for bound in interval[1:-1].split(","))
    above = (lambda x: x >= low) if interval[0] == "[" else (lambda x: x > low)
    below = (lambda x: x <= high) if interval[-1] == "]" else (lambda x: x < high)
    kind = "an int" if integer else "a number"
    if math.isinf(high):
        wanted = f"{kind} {'>=' if interval[0] == '[' else '>'} {low:g}"
    else:
        wanted = f"{'an int ' if integer else ''}in {interval}"

    def check(name, value):
        if not _number(value, integer) or not (above(value) and below(value)):
            raise ValueError(f"`{name}` must be {wanted}. Received: {name}={value!r}")

    return check


def each(check):
    """A check of a list option that applies `check` to each of its values."""

    def check_each(name, values):
        for value in values:
            check(name, value)

    return check_each


fraction = within("[0, 1)")


# --------------------------------------------------------------------------- command-line value types
def mesh_shape(text):
    """"2x4" -> (2, 4): the (data, model) shape of a model-parallel device mesh.

    Raises:
        ValueError: not DATAxMODEL with two positive ints.
    """
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"expected DATAxMODEL such as 2x2, got {text!r}")
    return tuple(int(p) for p in parts)
