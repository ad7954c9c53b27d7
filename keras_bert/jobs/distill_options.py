"""DistillOptions: every option of `distill` and of `keras-bert distill`, with its default, in one place."""

import dataclasses

from keras_bert.jobs.job_options import each, option, positive_int, positive_number, within
from keras_bert.jobs.labelled_training_options import LabelledTrainingOptions

_FILES = "files (default: as the teacher's fine-tuning run read them)"


@dataclasses.dataclass(frozen=True)
class DistillOptions(LabelledTrainingOptions):
    """The options of a distillation run (`keras_bert.jobs.distill.distill`; the loss: `Distiller`).

    The file options at the end are passed on as `distill`'s `**task_options`
    (from Python, every option of the teacher's task, as `finetune` takes them).
    """

    POSITIONAL = ("teacher", "train", "output_dir")

    teacher: str = option(help="the teacher: a `keras-bert finetune` --out folder (its vocab.txt, casing and sequence "
                               "length become the defaults), or a .keras classifier/tagger file")
    eval: str = option(None, "held-out file: its loss is shown every epoch and student and teacher are evaluated on "
                             "it after training; it chooses nothing")
    student_layers: int = option(3, "the student's transformer blocks, taken from every other one of the teacher's",
                                 type=int, check=positive_int)
    layer_indices: list = option(None, "the teacher blocks the student starts from (default: evenly spaced, first "
                                       "and last kept)", type=int, nargs="+",
                                 check=each(within("[0, inf)", integer=True)))
    temperature: float = option(2.0, "softmax temperature of the soft targets", type=float, check=positive_number)
    alpha: float = option(0.5, "weight of the soft targets (KL * T^2); 1 - alpha goes to the labels' cross-entropy",
                          type=float, check=within("[0, 1]"))
    hidden_loss_weight: float = option(0.0, "weight of a cosine loss between student blocks and the teacher blocks "
                                            "they came from (the teacher then runs at every step instead of once up "
                                            "front)", type=float, check=within("[0, inf)"))
    vocab: str = option(None, "vocab.txt (default: the teacher folder's)")
    sequence_length: int = option(None, "default: the teacher run's, else 128", type=int, check=positive_int)
    learning_rate: float = option(1e-4, "AdamW's peak rate", type=float, check=positive_number)
    format: str = option(None, "the file format", choices=["tsv", "csv", "jsonl"], group=_FILES, python=False)
    text_column: str = option(None, "the text column", group=_FILES, python=False)
    pair_column: str = option(None, "second text of sentence pairs", group=_FILES, python=False)
    label_column: str = option(None, "the label column", group=_FILES, python=False)
    word_column: int = option(None, "tagger (CoNLL) files", type=int, group=_FILES, python=False)
    tag_column: int = option(None, "tagger (CoNLL) files", type=int, group=_FILES, python=False)
