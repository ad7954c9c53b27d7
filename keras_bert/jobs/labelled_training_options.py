"""LabelledTrainingOptions: what `finetune` and `distill` share: labelled files, a vocabulary, and the AdamW recipe.

The evaluation files are each job's own: `finetune`'s `--eval` chooses (the best epoch, early stopping) and its
`--test` chooses nothing, while `distill`'s `--eval` chooses nothing; their help says so.
"""

import dataclasses

from keras_bert.jobs.job_options import fraction, option, positive_int, positive_ints, positive_number, within
from keras_bert.jobs.run_options import RunOptions


@dataclasses.dataclass(frozen=True)
class LabelledTrainingOptions(RunOptions):
    """A task model's training on labelled files: AdamW with linear warmup and decay to 0, full batches only."""

    train: str = option(help="training file")
    vocab: str = option(None, "vocab.txt (default: the model's)")
    lowercase: bool = option(None, "whether the vocabulary is uncased (default: what the model records, else its "
                                   "files)",
                             switches={"--lowercase": True, "--cased": False})
    sequence_length: int = option(None, "packed length (default 128, 384 for qa; at most the backbone's)", type=int,
                                  check=positive_int)
    batch_size: int = option(32, "the global batch, split evenly over the data-parallel replicas", type=int,
                             check=positive_int)
    epochs: int = option(3, "training epochs (BERT: 2-4)", type=int, check=positive_int)
    learning_rate: float = option(3e-5, "AdamW's peak rate (BERT: 2e-5 .. 5e-5)", type=float, check=positive_number)
    warmup_ratio: float = option(0.1, "share of the steps with linear warmup; then linear decay to 0", type=float,
                                 check=fraction)
    weight_decay: float = option(0.01, "AdamW's decoupled weight decay", type=float, check=within("[0, inf)"))
    seed: int = option(0, "seeds weights, dropout and shuffling", type=int)
    length_buckets: list = option(None, "train on batches of similar length, cut to these lengths (e.g. 16 32 48): "
                                        "less compute on padding; not for multiple choice", type=int, nargs="+",
                                  check=positive_ints)
