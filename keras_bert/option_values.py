"""Option values the `keras-bert` command lists (choices, defaults), in a module that imports nothing.

Building the command's parser (`keras-bert --help`, an argument error) must
not load keras, TensorFlow or torch: with them it took 8-13 s, without 0.23 s. So the values the
parser shows live here, and the modules that act on them (`distribution`,
`jobs.convert`, `models.bert_classifier`, `export.int8_check`) and the jobs'
option tables (`jobs.*_options`) import them from here.
"""

# `--strategy`: how training is spread over devices (keras_bert.distribution.create_strategy).
STRATEGIES = ("none", "mirrored", "multi-worker", "tpu", "data-parallel", "model-parallel")
TF_STRATEGIES = ("mirrored", "multi-worker", "tpu")
JAX_STRATEGIES = ("data-parallel", "model-parallel")

# `keras-bert convert --model`: the model class built from a checkpoint ("auto": by the heads it holds).
CONVERT_MODEL_CHOICES = ("auto", "backbone", "pretrainer", "masked_lm")
# `keras-bert convert --to`.
CONVERT_TARGETS = ("hf", "keras")

# `BertClassifier(pooling=...)` and `keras-bert finetune --pooling`.
POOLING_MODES = ("cls", "mean")

# `keras-bert export --accuracy-tolerance` and `check_int8_accuracy(tolerance=...)`: accuracy points int8 may lose.
INT8_ACCURACY_TOLERANCE = 0.5
