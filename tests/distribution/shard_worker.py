"""What each worker of a multi-worker pretraining run trains on, run as processes by test_worker_shards.py.

Each scenario runs the pretraining job (`pretrain()`) on the text files of
$CORPUS/texts and records every training step's input as the replicas received it:
`BertPretrainer.train_step` is wrapped to hand each replica's `token_ids` and
`mask_positions` to Python (`tf.py_function`). Prints one JSON line.

    python shard_worker.py reference             # one device: every step's global batch
    python shard_worker.py multi-worker INDEX    # with TF_CONFIG set, one of two workers

A worker runs the job twice over: reading the whole corpus (every worker runs
the same pipeline and keeps its part of each global batch) and streaming it
(`streaming=True`: each worker reads its own files). Each time the run is
stopped at the end of step 3 (checkpoint at step 2, as a kill there would
leave it), then resumed. Both workers write to one output folder, as on a
shared file system: the resumed run's workers all read the chief's checkpoint.
"""

import json
import os
import sys

SCENARIO = sys.argv[1]
PROCESS_ID = int(sys.argv[2]) if len(sys.argv) > 2 else 0

import tensorflow as tf  # noqa: E402

from keras_bert.distribution import create_strategy, is_chief  # noqa: E402

# MultiWorkerMirroredStrategy must exist before any other TensorFlow work. The reference runs under a
# strategy too: under any of them Keras' fit builds the model from a first iterator (see distribution_worker.py).
if SCENARIO == "multi-worker":
    STRATEGY = create_strategy("multi-worker")
else:
    STRATEGY = tf.distribute.OneDeviceStrategy("/cpu:0")

import keras  # noqa: E402

from keras_bert.jobs.pretrain import pretrain  # noqa: E402
from keras_bert.models import BertPretrainer  # noqa: E402

CORPUS, OUT = os.environ["CORPUS"], os.environ["OUT"]
STEPS, EVERY, STOP_AFTER = 4, 2, 3
JOB = dict(size="tiny", sequence_length=32, batch_size=8, steps=STEPS, checkpoint_every=EVERY, learning_rate=1e-2,
           dropout=0.0, seed=0, tensorboard=False, verbose=0)

SEEN = []  # one {"replica", "token_ids", "mask_positions"} per replica and training step, in order


def _record(replica, token_ids, mask_positions):
    SEEN.append({"replica": int(replica), "token_ids": token_ids.numpy().tolist(),
                 "mask_positions": mask_positions.numpy().tolist()})
    return 0


_train_step = BertPretrainer.train_step


def train_step(self, data):
    context = tf.distribute.get_replica_context()
    replica = context.replica_id_in_sync_group if context is not None else 0
    x = data[0]
    tf.py_function(_record, [replica, x["token_ids"], x["mask_positions"]], Tout=tf.int32)
    return _train_step(self, data)


BertPretrainer.train_step = train_step


class Stopped(Exception):
    pass


class StopAfter(keras.callbacks.Callback):
    """Stops the run at the end of step `step`, before that epoch's checkpoint (as a kill there would)."""

    def __init__(self, step):
        super().__init__()
        self.step, self.seen = step, 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen == self.step:
            raise Stopped()


def run(out, **options):
    """`pretrain()` into $OUT/out: (the steps' recorded inputs, its summary, None when stopped)."""
    SEEN.clear()
    summary = None
    try:
        summary = pretrain(corpus=[os.path.join(CORPUS, "texts")], vocabulary=os.path.join(CORPUS, "vocab.txt"),
                           output_dir=os.path.join(OUT, out), strategy=STRATEGY, **{**JOB, **options})
    except Stopped:
        pass
    return list(SEEN), summary


def losses(out):
    """history.csv's loss column (one row per checkpoint interval)."""
    with open(os.path.join(OUT, out, "history.csv")) as f:
        rows = [line.split(",") for line in f.read().splitlines()]
    column = rows[0].index("loss")
    return [float(row[column]) for row in rows[1:]]


def stopped_and_resumed(out, **options):
    stopped, _ = run(out, callbacks=[StopAfter(STOP_AFTER)], **options)
    resumed, summary = run(out, resume=True, **options)
    record = {"stopped": stopped, "resumed": resumed, "resumed_from_step": summary["resumed_from_step"]}
    if is_chief():
        record["losses"] = losses(out)
    return record


def main():
    result = {"scenario": SCENARIO, "process_id": PROCESS_ID, "replicas": STRATEGY.num_replicas_in_sync}
    if SCENARIO == "reference":
        result["steps"], _ = run("reference")
    else:
        result["chief"] = is_chief()
        result["in_memory"] = stopped_and_resumed("in_memory")
        result["streaming"] = stopped_and_resumed("streaming", streaming=True)
    print("RESULT " + json.dumps(result), flush=True)


main()
