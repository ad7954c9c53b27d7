"""TFRecords stage: static examples to sharded files of `tf.train.Example`s and back as batches."""

import os

import keras
import numpy as np
import tensorflow as tf

from keras_bert.preprocessing.pretraining.examples import INT_FEATURES
from keras_bert.preprocessing.pretraining.seeds import int_seed


def write_tfrecords(examples, output_dir, num_shards=4, prefix="pretraining", progress=False):
    """Writes static examples to sharded TFRecord files of `tf.train.Example`s.

    Args:
        examples: dict of numpy arrays as from `create_pretraining_examples`.
        output_dir: folder to write to (created if needed).
        num_shards: number of files; consecutive examples share a file, so
            reading the files in order gives the examples in order.
        prefix: file name prefix.
        progress: show a progress bar.

    Returns:
        The list of written file paths, in order.
    """
    os.makedirs(output_dir, exist_ok=True)
    count = len(examples["nsp"])
    num_shards = max(1, min(int(num_shards), count))
    bar = keras.utils.Progbar(count, unit_name="example") if progress else None
    bounds = np.linspace(0, count, num_shards + 1).astype(int)
    paths = []
    for shard in range(num_shards):
        path = os.path.join(output_dir, f"{prefix}-{shard:05d}-of-{num_shards:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(bounds[shard], bounds[shard + 1]):
                writer.write(_serialize(examples, i))
                if bar is not None:
                    bar.add(1)
        paths.append(path)
    return paths


def _serialize(examples, i):
    """Example `i` of `examples` as a serialized `tf.train.Example`."""

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    def floats(values):
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))

    feature = {k: ints(examples[k][i]) for k in INT_FEATURES}
    feature["mlm_weights"] = floats(examples["mlm_weights"][i])
    feature["nsp"] = ints(np.atleast_1d(examples["nsp"][i]))
    if "sequence_ids" in examples:  # packed rows
        for k in ("sequence_ids", "position_ids", "nsp_positions"):
            feature[k] = ints(examples[k][i])
        feature["nsp_weights"] = floats(examples["nsp_weights"][i])
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def read_tfrecords(
    paths, sequence_length, max_predictions_per_seq, batch_size=32, shuffle=False, seed=0,
    drop_remainder=True, shuffle_buffer=10_000, num_examples=None, max_sequences_per_pack=None,
):
    """Reads `write_tfrecords` files as batches of `(x, y, sample_weight)`.

    Args:
        paths: file paths (read in this order).
        sequence_length: the examples' sequence length.
        max_predictions_per_seq: the examples' prediction slots `P`.
        batch_size: examples per batch.
        shuffle: shuffle examples (seeded, anew every epoch).
        seed: shuffle seed.
        drop_remainder: drop a last, smaller batch.
        shuffle_buffer: shuffle buffer size.
        num_examples: the number of examples in the files, if known; gives
            the dataset a known length.
        max_sequences_per_pack: `S` for files of packed examples; None for
            unpacked ones.

    Returns:
        A `tf.data.Dataset` of `(x, y, sample_weight)` as in
        `pretraining_dataset`.
    """
    spec = _feature_spec(sequence_length, max_predictions_per_seq, max_sequences_per_pack)
    packed = max_sequences_per_pack is not None

    def parse(serialized):
        f = tf.io.parse_example(serialized, spec)
        f = {k: tf.cast(v, tf.int32) if v.dtype == tf.int64 else v for k, v in f.items()}
        x = {k: f[k] for k in ("token_ids", "segment_ids", "padding_mask", "mask_positions")}
        weights = {"mlm": f["mlm_weights"], "nsp": tf.ones_like(f["nsp"], dtype=tf.float32)}
        if packed:
            x.update({k: f[k] for k in ("sequence_ids", "position_ids", "nsp_positions")})
            weights["nsp"] = f["nsp_weights"]
        return x, {"mlm": f["mlm_ids"], "nsp": f["nsp"]}, weights

    dataset = tf.data.TFRecordDataset(list(paths))
    if num_examples is not None:
        # A known length lets Keras show steps and stop exactly (see
        # `dataset._dynamic_dataset`).
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(num_examples))
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer, seed=int_seed(seed), reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
    return dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


def _feature_spec(T, P, S):
    """`tf.io.parse_example` spec of examples with length `T`, `P` slots and, packed, `S` pairs per row."""
    spec = {k: tf.io.FixedLenFeature([P if k in ("mask_positions", "mlm_ids") else T], tf.int64) for k in INT_FEATURES}
    spec["mlm_weights"] = tf.io.FixedLenFeature([P], tf.float32)
    spec["nsp"] = tf.io.FixedLenFeature([], tf.int64)
    if S is not None:
        spec["nsp"] = tf.io.FixedLenFeature([S], tf.int64)
        spec["sequence_ids"] = tf.io.FixedLenFeature([T], tf.int64)
        spec["position_ids"] = tf.io.FixedLenFeature([T], tf.int64)
        spec["nsp_positions"] = tf.io.FixedLenFeature([S], tf.int64)
        spec["nsp_weights"] = tf.io.FixedLenFeature([S], tf.float32)
    return spec


def write_tfrecord_batches(batches, output_dir, num_shards=4, prefix="pretraining", progress=False):
    """Writes batches of static examples as they come, for a stream of unknown length.

    Batch `k` goes to shard `k % num_shards`, so no more than one batch is held
    (reading the shards in order does not give the examples in order; read
    them shuffled).

    Args:
        batches: an iterable of dicts of numpy arrays, each keyed like
            `create_pretraining_examples`'s output.
        output_dir: folder to write to (created if needed).
        num_shards: number of files (a shard may stay empty).
        prefix: file name prefix.
        progress: show a running count.

    Returns:
        `(paths, num_examples)`: the written file paths, in order, and the
        number of examples written.
    """
    os.makedirs(output_dir, exist_ok=True)
    num_shards = max(1, int(num_shards))
    paths = [os.path.join(output_dir, f"{prefix}-{s:05d}-of-{num_shards:05d}.tfrecord") for s in range(num_shards)]
    bar = keras.utils.Progbar(None, unit_name="example") if progress else None
    writers = [tf.io.TFRecordWriter(path) for path in paths]
    count = 0
    try:
        for k, batch in enumerate(batches):
            size = len(batch["nsp"])
            for i in range(size):
                writers[k % num_shards].write(_serialize(batch, i))
            count += size
            if bar is not None:
                bar.add(size)
    finally:
        for writer in writers:
            writer.close()
    return paths, count
