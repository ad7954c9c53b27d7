"""A job's command-line options, made from its options dataclass (`keras_bert.jobs.job_options`).

    add_job_options(parser, FinetuneOptions)             # every field with `cli=True` becomes an option
    finetune(**job_keywords(parser.parse_args(argv), FinetuneOptions))

An option the user leaves out is not in the parsed arguments at all
(`argparse.SUPPRESS`), so the job function's own default applies: the
dataclass is the one place for it, and `--help` shows it from there. A value
out of its range (`option(check=...)`) is refused while parsing, before any
data, keras or TensorFlow loads.
"""

import argparse
import dataclasses

from keras_bert.jobs.job_options import REQUIRED

# Conversions whose own ValueError argparse reports as "invalid int value: 'x'".
_BUILTIN_TYPES = (int, float, str)


def argument_type(convert, name=None, check=None, items=False):
    """An argparse `type` that converts with `convert` and checks the value with `check(name, value)`.

    A ValueError of a check or of a custom conversion (`mesh_shape`, ...)
    becomes argparse's one-line "argument --x: <message>"; a built-in
    conversion's keeps argparse's "invalid int value: 'x'".
    """

    def parse(text):
        try:
            value = convert(text)
        except ValueError as error:
            if convert in _BUILTIN_TYPES:
                raise
            raise argparse.ArgumentTypeError(str(error)) from None
        if check is not None:
            try:
                check(name, [value] if items else value)
            except ValueError as error:
                raise argparse.ArgumentTypeError(str(error)) from None
        return value

    parse.__name__ = getattr(convert, "__name__", "value")
    return parse


def add_job_options(parser, options_class):
    """Adds an argparse argument for every command-line field of `options_class`; returns `parser`."""
    groups = {}
    fields = [field for field in dataclasses.fields(options_class) if field.metadata["cli"]]
    # The job's positional options first, as its Python signature has them; the others in their order.
    fields.sort(key=lambda f: options_class.POSITIONAL.index(f.name) if f.name in options_class.POSITIONAL else 99)
    for field in fields:
        group = field.metadata["group"]
        if group is not None and group not in groups:
            groups[group] = parser.add_argument_group(group)
        target = parser if group is None else groups[group]
        if field.metadata["switches"]:
            _add_switches(target, field)
        else:
            _add_value(target, field)
    return parser


def job_keywords(args, options_class):
    """The options `args` holds (those the user gave), as keywords of the job function."""
    names = {field.name for field in dataclasses.fields(options_class) if field.metadata["cli"]}
    return {name: value for name, value in vars(args).items() if name in names}


def _help(field):
    return (field.metadata["help"] or "").replace("%", "%%")  # argparse formats help strings with %


def _add_value(target, field):
    """`--name VALUE` (or a positional), converted and checked while parsing."""
    metadata = field.metadata
    flag = metadata["flag"] or "--" + field.name.replace("_", "-")
    options = dict(help=_help(field), nargs=metadata["nargs"], choices=metadata["choices"])
    if metadata["type"] is not None or metadata["check"] is not None:
        options["type"] = argument_type(metadata["type"] or str, field.name, metadata["check"], bool(metadata["nargs"]))
    options = {k: v for k, v in options.items() if v is not None}
    if not flag.startswith("-"):  # a positional argument: required, its name in the usage line
        target.add_argument(field.name, metavar=flag, **options)
        return
    name_of_flag = flag.lstrip("-").replace("-", "_")
    if metadata["metavar"] is not None or (name_of_flag != field.name and metadata["choices"] is None):
        options["metavar"] = metadata["metavar"] or name_of_flag.upper()
    action = target.add_argument(flag, dest=field.name, default=argparse.SUPPRESS, required=field.default is REQUIRED,
                                 **options)
    if field.default is not REQUIRED:
        action.job_default = field.default  # what `--help` shows (cli.main's formatter)


def _add_switches(target, field):
    """Flags without a value that set the option: one, a `--x`/`--no-x` pair, or mutually exclusive ones."""
    switches = list(field.metadata["switches"].items())
    common = dict(dest=field.name, default=argparse.SUPPRESS)
    (first, first_value), *others = switches
    if len(switches) == 2 and others[0][0] == "--no-" + first[2:] and (first_value, others[0][1]) == (True, False):
        target.add_argument(first, action=argparse.BooleanOptionalAction, help=_help(field), **common)
        return
    if others:
        target = target.add_mutually_exclusive_group()
    target.add_argument(first, action="store_const", const=first_value, help=_help(field), **common)
    for flag, value in others:
        target.add_argument(flag, action="store_const", const=value, help=f"instead: {field.name}={value!r}", **common)
