"""A holder whose contents `tf.saved_model.save` does not walk: for what a SavedModel must not carry.

`tf.saved_model.save` walks every attribute of a `tf.Module` it saves. Two
kinds of attribute are costly there and useless in the file, because the
served graphs were traced through them already and hold their ops in their
own function library:
- A tokenizer's internal `tf.function`s (one per method, so an eager call
  costs one dispatch, not ~20). The save traced each of them again.
- The Keras model itself. Keras gives every `Model` on TensorFlow a
  `_default_save_signature` property, a fresh `tf.function` that the save
  traces, once per model and nested model, and writes into the file.
For a tiny classifier's SavedModel export, the tokenizer's functions took
3.1 s and the models' default signatures 2.6 s, of 9.4 s in all (3.2 s
without them). The TF Hub encoder export of a tiny backbone went from 10.7 s
to 8.5 s. Held in a plain object, neither is walked. The models' variables
are still saved: the serving and hub modules list them themselves.
"""

import types


def untracked(**objects):
    """`objects` as attributes of a plain object, which `tf.Module` tracking and SavedModel serialization skip."""
    # SimpleNamespace is neither a Trackable nor a tf.function, so AutoTrackable lists neither it nor what it holds.
    return types.SimpleNamespace(**objects)
