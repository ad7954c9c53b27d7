"""`python -m keras_bert ...` is the `keras-bert` command."""

import sys

from keras_bert.cli.main import main

sys.exit(main())
