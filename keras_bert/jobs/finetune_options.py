"""FinetuneOptions: every option of `finetune` and of `keras-bert finetune`, with its default, in one place.

Defaults follow the BERT paper's fine-tuning recipe: AdamW (weight decay
0.01, not on LayerNorm and biases), learning rate 3e-5 with linear warmup
over the first 10% of steps and linear decay to 0, 3 epochs, batch 32,
dropout 0.1. The task file options at the end are every task's; each task
reads its own (`FinetuneTaskJob.OPTIONS` names them).
"""

import dataclasses

from keras_bert.jobs.compiled_step_options import CompiledStepOptions
from keras_bert.jobs.distribution_options import DistributionOptions
from keras_bert.jobs.job_options import fraction, option, positive_int, positive_number, within
from keras_bert.jobs.labelled_training_options import LabelledTrainingOptions
from keras_bert.option_values import POOLING_MODES
from keras_bert.task_registry import CLI_NAMES, TASKS

_BEST_EPOCH = "with --eval (the validation file): best epoch and early stopping"
_TEXT_FILES = "classify / regress / multiple-choice files"
_CONLL = "ner (CoNLL files)"
_SQUAD = "qa (SQuAD JSON)"
_SWAG = "multiple-choice (SWAG-style)"


def task_word(value):
    """The CLI word of a task given by its CLI word or its registry name ("classifier" -> "classify")."""
    return TASKS[value].cli_name if value in TASKS else value


@dataclasses.dataclass(frozen=True)
class FinetuneOptions(DistributionOptions, CompiledStepOptions, LabelledTrainingOptions):
    """The options of a fine-tuning run (`keras_bert.jobs.finetune.finetune`); each field's help says what it does."""

    POSITIONAL = ("task", "init", "train", "output_dir")

    # argparse converts with `type` before it checks `choices`: registry names are accepted and become CLI
    # words, while --help and the "invalid choice" error list the CLI words only.
    task: str = option(help="classify, regress, ner, qa, multiple-choice (or the registry names: classifier, ...)",
                       type=task_word, choices=list(CLI_NAMES))
    init: str = option(help="Hugging Face BERT folder, .keras file (backbone, pretrainer or task model), preset name "
                            "(bert_base_en_uncased, google-bert/bert-base-uncased, ...: keras_bert.list_presets()) or "
                            "hf://owner/name, a job's --out folder, or a size name (tiny, mini, ...) for random "
                            "weights (see keras_bert.loading)")
    # Which set does what (docs/guides/fine-tuning.md): the validation file chooses, the test file only reports.
    eval: str = option(None, "validation file: scored every epoch, it chooses the epoch model.keras keeps (--monitor) "
                             "and drives early stopping, so its metrics are not an unbiased estimate")
    test: str = option(None, "test file: evaluated once after training, on the weights model.keras holds; it chooses "
                             "nothing (the figure to report)")
    dropout: float = option(0.1, "dropout of the backbone and the head", type=float, check=fraction)
    freeze_backbone: bool = option(False, "train the task head only", switches={"--freeze-backbone": True})
    layer_decay: float = option(None, "layer-wise learning-rate decay: each encoder layer trains at this times the "
                                      "rate of the layer above it, the embeddings lowest (ELECTRA: 0.8; not ALBERT, "
                                      "whose layers are one); default one rate for all", type=float,
                                check=within("(0, 1]"))
    monitor: str = option("val_loss", "validation metric that picks the best epoch: val_loss (smaller is better), "
                                      "or e.g. val_accuracy (larger is better)", group=_BEST_EPOCH)
    early_stopping_patience: int = option(None, "stop after N epochs without a better --monitor", type=int,
                                          metavar="N", check=positive_int, group=_BEST_EPOCH)
    select_best: bool = option(True, "with --eval: model.keras holds the last epoch's weights instead of the best "
                                     "epoch's (by --monitor); without --eval it always holds the last epoch's",
                               switches={"--keep-last-epoch": False}, group=_BEST_EPOCH)
    lora_rank: int = option(None, "LoRA: train rank-R adapters on the encoder kernels and the head only; writes "
                                  "adapter.npz (adapters and head) beside model.keras (adapters merged)", type=int,
                            metavar="R", check=positive_int)
    lora_alpha: float = option(None, "LoRA scale: the update is multiplied by A / R (default A = R)", type=float,
                               metavar="A", check=positive_number)
    # ----------------------------------------------------------------- every task's file options
    format: str = option(None, "default: from the file extension", choices=["tsv", "csv", "jsonl"],
                         group=_TEXT_FILES)
    header: bool = option(True, "TSV/CSV without a header row: columns are 0-based numbers",
                          switches={"--no-header": False}, group=_TEXT_FILES)
    text_column: object = option("sentence", "the text column", group=_TEXT_FILES)
    pair_column: object = option(None, "second text of sentence pairs", group=_TEXT_FILES)
    label_column: object = option(
        "label", "classify: a class name per row (any text or integer; the classes are the training file's distinct "
                 "labels, sorted, numerically if all are integers; with two, F1 is reported for the second, e.g. "
                 "'positive' of negative/positive or 1 of 0/1); regress: a real number",
        group=_TEXT_FILES)
    window_stride: int = option(None, "split long single texts into windows every N tokens (default half a window; "
                                      "0 truncates); held-out logits are averaged per text", type=int,
                                check=within("[0, inf)", integer=True), group=_TEXT_FILES)
    counterfactual_augmentation: object = option(
        None, "counterfactual data augmentation: add to the training set (never to --eval or --test) a copy of each "
              "training text that holds a term of PAIRS with the terms swapped (he <-> she, John <-> Mary, ...) and "
              "the same label; PAIRS is 'builtin' or a pairs file (term<TAB>term per line), in Python also a list "
              "of them or a keras_bert.TermPairs. The number of copies is in finetune.json and metrics.json",
        metavar="PAIRS", group=_TEXT_FILES)
    pooling: str = option("cls", "the head's input: BERT's pooler on [CLS], or the mean of the token vectors (for a "
                                 "backbone pretrained without NSP/SOP, whose pooler never trained)",
                          choices=POOLING_MODES, group=_TEXT_FILES)
    word_column: int = option(0, "the word column", type=int, group=_CONLL)
    tag_column: int = option(-1, "the tag column", type=int, group=_CONLL)
    doc_stride: int = option(None, "tokens between the starts of a long context's windows (default: from "
                                   "--sequence-length, a third of it at most and 128 at 384)", type=int,
                             check=positive_int, group=_SQUAD)
    max_query_length: int = option(None, "question tokens kept (default: a quarter of --sequence-length, 64 at "
                                         "384)", type=int, check=positive_int, group=_SQUAD)
    max_answer_length: int = option(30, "longest answer in tokens", type=int, check=positive_int, group=_SQUAD)
    n_best_size: int = option(20, "start and end candidates per window", type=int, check=positive_int,
                              group=_SQUAD)
    allow_no_answer: bool = option(None, "answer '' when [CLS] wins (default: whether the training data has "
                                         "unanswerable questions)", cli=False)
    null_score_diff_threshold: float = option(0.0, "how much [CLS] must win by for no answer", type=float,
                                              group=_SQUAD)
    on_mismatch: str = option("raise", "skip (and count) questions whose answer offsets do not match the context",
                              switches={"--skip-mismatched-answers": "skip"}, group=_SQUAD)
    context_column: object = option("sent1", "the context column", group=_SWAG)
    question_column: object = option("sent2", "text put before every choice ('' for none)", group=_SWAG)
    choice_columns: list = option(None, "default: the columns named ending0, ending1, ...", nargs="+", group=_SWAG)
