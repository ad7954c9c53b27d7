"""Two TensorFlow workers pretrain: each trains on its own part of the data, and a stopped run resumes where it stopped.

shard_runs.py runs the pretraining job in the two MultiWorkerMirroredStrategy
processes of conftest.py's `tf_runs` (TF_CONFIG on localhost; they also run the
other distribution tests' jobs) and in its one-device tf-local process, and
records what every replica trained on at every step. The corpus
is two files of different novels: in streaming mode worker i reads file i
(`streaming.worker_share`), so the words of a worker's rows tell which file
they came from. Each worker run is stopped after step 3 (checkpoint at 2) and
resumed by both workers from the chief's checkpoint.

Found with it: a resumed streaming run skipped `num_workers` times too much
data (each worker's batches hold a global batch, which tf.distribute splits
over all replicas, so a worker takes `num_workers` steps per batch): it now
skips rows, `distribution.skip_steps`.
"""

import pytest

from scenario_processes import SHARD_BOOKS as BOOKS

SPECIAL = {0, 1, 2, 3, 4}  # [PAD] [UNK] [CLS] [SEP] [MASK]

pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="MultiWorkerMirroredStrategy is tf.distribute's; the shared cluster, once in the suite"
)


@pytest.fixture(scope="module")
def runs(tf_runs):
    """(each worker's shard runs, the one-device reference's steps)."""
    workers = tf_runs["workers"]
    assert [w["chief"] for w in workers] == [True, False] and workers[0]["replicas"] == 2
    return [w["shards"] for w in workers], tf_runs["local"]["shards"]


def rows(step):
    return sorted(map(tuple, step["token_ids"]))


def per_worker_steps(workers, mode, phase):
    """[(worker 0's rows, worker 1's rows) per step] of one run; each worker holds one replica."""
    steps = [w[mode][phase] for w in workers]
    assert len(steps[0]) == len(steps[1])
    assert [s["replica"] for s in steps[0]] == [0] * len(steps[0]) and {s["replica"] for s in steps[1]} == {1}
    return list(zip(map(rows, steps[0]), map(rows, steps[1])))


def assert_disjoint_halves(steps):
    for a, b in steps:
        assert len(a) == len(b) == 4  # the global batch of 8, split over the two workers
        assert not set(a) & set(b)


def test_workers_split_every_global_batch_and_resume_at_the_checkpoint(runs):
    """The whole corpus read by every worker: each keeps its half of each global batch of a one-device run."""
    workers, reference = runs
    global_batches = [rows(step) for step in reference["steps"]]
    assert len(global_batches) == 4
    stopped = per_worker_steps(workers, "in_memory", "stopped")
    resumed = per_worker_steps(workers, "in_memory", "resumed")
    assert len(stopped) == 3 and len(resumed) == 2
    assert_disjoint_halves(stopped + resumed)
    # Together the workers cover each global batch: steps 1-3, then 3-4 again from the checkpoint of step 2.
    for step, (a, b) in zip([1, 2, 3, 3, 4], stopped + resumed):
        assert sorted(a + b) == global_batches[step - 1], f"step {step}"
    assert [w["in_memory"]["resumed_from_step"] for w in workers] == [2, 2]
    # The chief's history: one row per checkpoint interval, the second written by the resumed run. (Its losses are
    # not the one-device run's: under tf.distribute each replica averages the MLM loss over its own masked tokens.)
    assert len(workers[0]["in_memory"]["losses"]) == 2


def test_streaming_workers_read_their_own_files_and_resume_at_the_checkpoint(runs, two_books):
    """With `streaming=True` worker i reads only file i; the resumed run trains step 3 again on the same rows."""
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    workers, _ = runs
    tokenizer = BertTokenizer(str(two_books / "vocab.txt"))
    ids = [set(tokenizer([(two_books / "texts" / f"{book}.txt").read_text()]).flat_values.numpy().tolist()) - SPECIAL
           for book in BOOKS]
    only = [ids[0] - ids[1], ids[1] - ids[0]]  # the words of one book alone
    for index, worker in enumerate(workers):
        run = worker["streaming"]
        words = set()
        for step in run["stopped"] + run["resumed"]:
            for row, positions in zip(step["token_ids"], step["mask_positions"]):
                # Masked positions may hold a random token; the others are the text's.
                words.update(token for i, token in enumerate(row) if i not in set(positions))
        assert words & only[index], f"worker {index} read nothing of {BOOKS[index]}"
        assert not words & only[1 - index], f"worker {index} read {BOOKS[1 - index]}, the other worker's file"

    stopped = per_worker_steps(workers, "streaming", "stopped")
    resumed = per_worker_steps(workers, "streaming", "resumed")
    assert_disjoint_halves(stopped + resumed)
    assert [w["streaming"]["resumed_from_step"] for w in workers] == [2, 2]
    # Step 3, stopped before its checkpoint, is trained again on the very rows each worker had then.
    assert resumed[0] == stopped[2]
