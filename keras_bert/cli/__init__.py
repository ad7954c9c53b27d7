"""`keras-bert`: the command line; the only part of the package that uses argparse.

One module per subcommand; `main.py` builds the parser and turns errors into
one-line messages with exit code 2.
"""

from keras_bert.cli.errors import UserError
from keras_bert.cli.main import build_parser, main

__all__ = ["UserError", "build_parser", "main"]
