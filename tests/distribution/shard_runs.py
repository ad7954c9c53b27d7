"""What each worker of a multi-worker pretraining run trains on: runs called by distribution_worker.py.

Each run is the pretraining job (`pretrain()`) on the text files of
$SHARD_CORPUS/texts, recording every training step's input as the replicas received it:
while `recording_steps()` is open, `BertPretrainer.train_step` is wrapped to hand each
replica's `token_ids` and `mask_positions` to Python (`tf.py_function`).

    reference(strategy)                # one device (tf-local's process): every step's global batch
    workers(strategy)                  # one of two MultiWorkerMirroredStrategy workers

A worker runs the job twice over: reading the whole corpus (every worker runs
the same pipeline and keeps its part of each global batch) and streaming it
(`streaming=True`: each worker reads its own files). Each time the run is
stopped at the end of step 3 (checkpoint at step 2, as a kill there would
leave it), then resumed. Both workers write to one output folder, as on a
shared file system: the resumed run's workers all read the chief's checkpoint.
Runs write under $OUT/shards.
"""

import contextlib
import os
import sys

import tensorflow as tf

from keras_bert.distribution import is_chief
from keras_bert.jobs.pretrain import pretrain
from keras_bert.models import BertPretrainer

# The stop the resume tests share; tests/ is not on this child's path by itself (only its own folder is).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from resume_helpers import InterruptAfter, Interrupted  # noqa: E402

CORPUS = os.environ.get("SHARD_CORPUS", "")
OUT = os.path.join(os.environ.get("OUT", ""), "shards")
STEPS, EVERY, STOP_AFTER = 4, 2, 3
JOB = dict(size="tiny", sequence_length=32, batch_size=8, steps=STEPS, checkpoint_every=EVERY, learning_rate=1e-2,
           dropout=0.0, seed=0, tensorboard=False, verbose=0)

SEEN = []  # one {"replica", "token_ids", "mask_positions"} per replica and training step, in order


def _record(replica, token_ids, mask_positions):
    SEEN.append({"replica": int(replica), "token_ids": token_ids.numpy().tolist(),
                 "mask_positions": mask_positions.numpy().tolist()})
    return 0


@contextlib.contextmanager
def recording_steps():
    """Every `BertPretrainer` traced inside records its replicas' inputs (the other runs of the process do not)."""
    train_step = BertPretrainer.train_step

    def recording_train_step(self, data):
        context = tf.distribute.get_replica_context()
        replica = context.replica_id_in_sync_group if context is not None else 0
        x = data[0]
        tf.py_function(_record, [replica, x["token_ids"], x["mask_positions"]], Tout=tf.int32)
        return train_step(self, data)

    BertPretrainer.train_step = recording_train_step
    try:
        yield
    finally:
        BertPretrainer.train_step = train_step


def run(strategy, out, **options):
    """`pretrain()` into $OUT/shards/out: (the steps' recorded inputs, its summary, None when stopped)."""
    SEEN.clear()
    summary = None
    with recording_steps():
        try:
            summary = pretrain(corpus=[os.path.join(CORPUS, "texts")], vocabulary=os.path.join(CORPUS, "vocab.txt"),
                               output_dir=os.path.join(OUT, out), strategy=strategy, **{**JOB, **options})
        except Interrupted:
            pass
    return list(SEEN), summary


def losses(out):
    """history.csv's loss column (one row per checkpoint interval)."""
    with open(os.path.join(OUT, out, "history.csv")) as f:
        rows = [line.split(",") for line in f.read().splitlines()]
    column = rows[0].index("loss")
    return [float(row[column]) for row in rows[1:]]


def stopped_and_resumed(strategy, out, **options):
    stopped, _ = run(strategy, out, callbacks=[InterruptAfter(STOP_AFTER)], **options)
    resumed, summary = run(strategy, out, resume=True, **options)
    record = {"stopped": stopped, "resumed": resumed, "resumed_from_step": summary["resumed_from_step"]}
    if is_chief():
        record["losses"] = losses(out)
    return record


def reference(strategy):
    return {"steps": run(strategy, "reference")[0]}


def workers(strategy):
    return {"in_memory": stopped_and_resumed(strategy, "in_memory"),
            "streaming": stopped_and_resumed(strategy, "streaming", streaming=True)}
