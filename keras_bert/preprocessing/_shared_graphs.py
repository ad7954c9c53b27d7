"""Traced tokenizer graphs shared by equal tokenizers, for eager calls.

Why: a tokenizer traces its `tf.function`s on its first call, and that is
slow: tf-text's ragged ops add validation asserts, each built as a
`tf.cond`. Measured, idle, the MiniLM vocabulary: a BertTokenizer's first
`tokenize` took 0.7-1.2 s and its first `tokenize_with_offsets` 5.5-7.0 s,
for every new instance. A program that builds the same tokenizer again (a
pipeline per call, a notebook cell run twice, a job per run, a test per case)
paid that again. Two tokenizers with equal vocabularies and options trace the
same program, so an eager call can run the graph an equal tokenizer traced
before: 0.01 s for each later instance. (Test files that tokenize in many
tests, tests/jobs/test_job_runner.py + test_finetune_best_epoch.py +
tests/pipelines on TensorFlow: 151 s instead of 172 s.)

The family's tokenizers share the same way. On the test suite's Austen
vocabularies, idle, a new instance's first `tokenize` of six texts took
0.49-0.50 s (`BytePairTokenizer`) and 0.20 s (`SentencePieceTokenizer`)
after an equal one had traced, and 0.001-0.004 s with sharing.

Only eager calls share. A call inside a graph (`tf.data`, `tf.function`, a
SavedModel export) uses the tokenizer's own graphs: a traced graph captures
the resources (vocabulary tables) of the tokenizer that traced it, and a
SavedModel must own the resources its functions use.
"""

import collections
import threading

import tensorflow as tf

# A few vocabularies at most in one process (a model's and a test's); each entry keeps one tokenizer alive.
MAX_SHARED = 4

_graphs_by_key = collections.OrderedDict()
_lock = threading.Lock()


def shared_graphs(key, own):
    """The graphs registered first under `key` (the tokenizer's class, vocabulary and options), else `own`.

    `own` is registered when `key` is new; the least recently used of more
    than `MAX_SHARED` keys is forgotten.
    """
    with _lock:
        graphs = _graphs_by_key.get(key)
        if graphs is None:
            graphs = _graphs_by_key[key] = own
            if len(_graphs_by_key) > MAX_SHARED:
                _graphs_by_key.popitem(last=False)
        else:
            _graphs_by_key.move_to_end(key)
        return graphs


def eager_graphs(graphs, key):
    """The graphs a tokenizer's call runs: its own `graphs` inside a graph, else the shared ones for its key.

    graphs: the tokenizer's own graphs, an object with an `eager` attribute
        (None until the first eager call), where the choice is remembered.
    key: a function returning the tokenizer's key (its class, vocabulary and
        options); called once per tokenizer, since hashing a vocabulary costs.
    """
    if not tf.executing_eagerly():
        return graphs
    if graphs.eager is None:
        graphs.eager = shared_graphs(key(), graphs)
    return graphs.eager
