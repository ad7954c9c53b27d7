"""PretrainOptions: every option of `pretrain` and of `keras-bert pretrain`, with its default, in one place.

The data options (`--sequence-length`, `--batch-size`, `--masking`, ...) are
`PretrainingDataConfig` fields: the command passes on those given, and the
config's own defaults hold for the rest. `--budget-minutes` runs
`pretrain_within_budget` instead, whose `BUDGET_RECIPE` fills the settings left out.
"""

import dataclasses

from keras_bert.jobs.compiled_step_options import CompiledStepOptions
from keras_bert.jobs.distribution_options import DistributionOptions
from keras_bert.jobs.job_options import fraction, option, positive_int, positive_number, within
from keras_bert.jobs.run_options import RunOptions

_DATA = "pretraining data (PretrainingDataConfig; its defaults where not given)"
_ELECTRA = "--objective electra"
_ARCHITECTURE = "encoder options (--family bert)"


def mixed_precision(text):
    """"bfloat16" -> "mixed_bfloat16": the Keras dtype policy of `--mixed-precision`."""
    if text not in ("bfloat16", "float16"):
        raise ValueError(f"expected bfloat16 or float16, got {text!r}")
    return f"mixed_{text}"


@dataclasses.dataclass(frozen=True)
class PretrainOptions(DistributionOptions, CompiledStepOptions, RunOptions):
    """The options of a pretraining run (`keras_bert.jobs.pretrain.pretrain`); each field's help says what it does."""

    POSITIONAL = ("corpus", "vocabulary", "output_dir", "data")

    corpus: object = option(help="training text files, folders or globs (a path, glob, folder, or list of them)",
                            nargs="+")
    vocabulary: str = option(help="vocab.txt (see `keras-bert vocab`); with --family modernbert, ModernBERT's "
                                  "tokenizer.json (read with the tokenizer files beside it)", flag="--vocab")
    data: object = option(None, "a PretrainingDataConfig: how the text becomes batches (its fields given as "
                                "keywords replace its own)", cli=False)
    eval_corpus: object = option(None, "held-out text files, evaluated at every checkpoint", nargs="+")
    size: str = option("mini", "tiny, mini, small, medium, base or large (with --budget-minutes, the budget recipe's)")
    lowercase: bool = option(True, "the vocabulary is cased", switches={"--cased": False})
    dropout: float = option(0.1, "the dropout rate", type=float, check=fraction)
    dtype: str = option(None, "mixed precision policy (mixed_float16 wraps the optimizer in a LossScaleOptimizer)",
                        flag="--mixed-precision", type=mixed_precision, metavar="{bfloat16,float16}")
    steps: int = option(1000, "training batches in all (see --budget-minutes)", type=int, check=positive_int)
    budget_minutes: float = option(None, "instead of --steps: as many steps as fit in N wall-clock minutes, found by a "
                                         "short timed calibration run (counted in the budget)", type=float,
                                   check=positive_number, python=False)
    optimizer: str = option("adamw", "the optimizer", choices=["adamw", "lamb"])
    learning_rate: float = option(1e-4, "peak learning rate (with --budget-minutes, the recipe's)", type=float,
                                  check=positive_number)
    weight_decay: float = option(0.01, "decoupled weight decay", type=float, check=within("[0, inf)"))
    warmup_steps: int = option(None, "linear warmup, then linear decay to 0 (default: 10% of --steps)", type=int,
                               check=within("[0, inf)", integer=True))
    gradient_accumulation_steps: int = option(None, "apply the update every N batches", flag="--grad-accumulation",
                                              type=int, check=positive_int)
    seed: object = option(None, "seeds the model, dropout and the data (default: the data config's, 0)", type=int)
    checkpoint_every: int = option(None, "steps between checkpoints and held-out evaluations (must divide --steps)",
                                   type=int, check=positive_int)
    eval_batches: int = option(20, "held-out batches evaluated at every checkpoint", type=int, check=positive_int)
    steps_per_execution: int = option(1, "steps per compiled call (raise on TPUs)", type=int, check=positive_int)
    verbose: int = option(1, "1 for progress bars and summaries, 0 for silence", cli=False)
    family: str = option("bert", "bert: BertBackbone (the sentence task of the data options); modernbert: "
                                 "ModernBertBackbone with ModernBERT's recipe, masked LM only at 30% over packed "
                                 "documents that do not attend to each other (each data option given still wins)",
                         choices=["bert", "modernbert"])
    objective: str = option("bert", "bert: masked LM (+ sentence task); electra: replaced-token detection, a small "
                                    "generator fills the masked positions and the discriminator (the model to "
                                    "fine-tune) finds them", choices=["bert", "electra"])
    generator_size: float = option(0.25, "the generator's width as a fraction of the discriminator's, in (0, 1]",
                                   type=float, check=within("(0, 1]"), group=_ELECTRA)
    rtd_weight: float = option(50.0, "weight of the RTD loss", type=float, check=positive_number, group=_ELECTRA)
    # Architecture options of `family="bert"` (BertBackbone's, and ElectraBackbone's with --objective electra):
    # together, the small-compute recipe's encoder.
    normalize_first: bool = option(False, "pre-LN blocks with a final LayerNorm (BERT: post-LN). With the two below, "
                                          "--dropout 0 and --masking-rate 0.3: the small-compute recipe (Cramming)",
                                   switches={"--normalize-first": True}, group=_ARCHITECTURE)
    gated_feed_forward: bool = option(False, "a gated GELU feed-forward (GeGLU) instead of BERT's two dense layers",
                                      switches={"--gated-feed-forward": True}, group=_ARCHITECTURE)
    biases: bool = option(True, "no biases in the attention, feed-forward and masked-LM head layers, no LayerNorm "
                                "betas", switches={"--no-biases": False}, group=_ARCHITECTURE)
    # ----------------------------------------------------------------- data options (`**data_options` of `pretrain`)
    sequence_length: int = option(None, "the length of every example (default 128; with --budget-minutes, the "
                                        "recipe's)", type=int, group=_DATA, python=False)
    batch_size: int = option(None, "the global batch, split evenly over the data-parallel replicas (default 32)",
                             type=int, check=positive_int, group=_DATA, python=False)
    masking: str = option(None, "token (the default); whole-word (the default with --budget-minutes); span (SpanBERT: "
                                "whole-word spans, geometric lengths); ngram (1..--max-ngram whole words, weights 1/n)",
                          choices=["token", "whole-word", "span", "ngram"], group=_DATA, python=False)
    masking_rate: float = option(None, "share of the real tokens masked and predicted (default 0.15; --family "
                                       "modernbert: 0.3)", type=float, check=within("(0, 1)"), group=_DATA, python=False)
    span_p: float = option(None, "--masking span: geometric p in (0, 1] (default 0.2)", type=float, group=_DATA,
                           python=False)
    max_span_length: int = option(None, "--masking span: longest span in words (default 10)", type=int, group=_DATA,
                                  python=False)
    max_ngram: int = option(None, "--masking ngram: longest n-gram in words (default 3)", type=int, group=_DATA,
                            python=False)
    sentence_task: str = option(None, "nsp (the default): next-sentence prediction (BERT); sop: sentence-order "
                                      "prediction (ALBERT); none: MLM only over rows of full sentences (RoBERTa)",
                                choices=["nsp", "sop", "none"], group=_DATA, python=False)
    mode: str = option(None, "dynamic (the default): masks drawn anew every epoch; static: TFRecords",
                       choices=["dynamic", "static"], group=_DATA, python=False)
    dupe_factor: int = option(None, "static mode: passes over the corpus (default 5)", type=int, group=_DATA,
                              python=False)
    pack_sequences: bool = option(None, "pack several short sentence pairs into each row (less padding; attention "
                                        "stays within each pair). Default off; with --budget-minutes, on for MLM + NSP "
                                        "(the budget recipe)",
                                  switches={"--pack-sequences": True, "--no-pack-sequences": False}, group=_DATA,
                                  python=False)
    max_sequences_per_pack: int = option(None, "with --pack-sequences: most pairs per row (default 3)", type=int,
                                         group=_DATA, python=False)
    streaming: bool = option(None, "read the corpus a bounded buffer at a time (corpora larger than memory; see the "
                                   "README)", switches={"--streaming": True}, group=_DATA, python=False)
