"""`keras-bert vocab`: learn a WordPiece vocabulary from text files.

    keras-bert vocab --corpus texts/ --size 8000 --out vocab.txt
"""

from keras_bert.cli.preflight import matching_files

HELP = "learn a WordPiece vocabulary from text files"
# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"corpus": ("--corpus", matching_files)}


def add_vocab_arguments(parser):
    """Adds the `keras-bert vocab` arguments to an argparse (sub)parser."""
    parser.add_argument("--corpus", required=True, nargs="+", help="text files, folders or globs")
    parser.add_argument("--size", type=int, default=8000, help="vocabulary size (default 8000)")
    case = parser.add_mutually_exclusive_group()
    case.add_argument("--lowercase", dest="lowercase", action="store_true", default=True, help="uncased (default)")
    case.add_argument("--cased", dest="lowercase", action="store_false", help="keep case")
    parser.add_argument("--out", required=True, help="vocab.txt to write")


def run_vocab(args):
    """Learns and writes the vocabulary; returns the exit status (0)."""
    # defers TensorFlow (tensorflow-text learns the vocabulary): `keras-bert --help` must not import it
    from keras_bert.preprocessing.vocabulary import learn_vocabulary, write_vocabulary

    vocabulary = learn_vocabulary(args.corpus, args.size, lowercase=args.lowercase, verbose=True)
    write_vocabulary(vocabulary, args.out)
    print(f"wrote {len(vocabulary)} tokens to {args.out}")
    return 0
