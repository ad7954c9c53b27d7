"""Seeds: a user's int or str seed → the integers numpy, tf.data and stateless TF ops take."""

import hashlib

import numpy as np


def int_seed(seed):
    """A non-negative int below 2**62 for `seed` (an int, or any value, hashed via `str`)."""
    if isinstance(seed, (int, np.integer)):
        return int(seed) % (1 << 62)
    return int(hashlib.sha256(str(seed).encode()).hexdigest()[:15], 16)


def batch_seed(seed, epoch, batch_index):
    """int64 `(2,)` stateless seed of one batch's masks: the user's seed, and epoch/batch packed."""
    return np.array([int_seed(seed), epoch * (1 << 32) + batch_index], np.int64)
