"""Checks and defaults for layer arguments, shared by the layers and the models built from them."""

import keras


def check_positive_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"`{name}` must be a positive int. Received: {name}={value!r}")


def check_rate(name, value):
    if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ValueError(f"`{name}` must be a float in [0, 1). Received: {name}={value!r}")


def check_wavelength(name, value):
    """A rotary embedding's base: a number > 1 (its angles shrink with the feature index only then)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 1:
        raise ValueError(f"`{name}` must be a number > 1. Received: {name}={value!r}")


def get_initializer(initializer):
    """Like `keras.initializers.get`, with BERT's default as "truncated_normal".

    BERT initialises every kernel from a normal truncated at two standard
    deviations with stddev 0.02 (not Keras' stddev 0.05).
    """
    if initializer == "truncated_normal":
        return keras.initializers.TruncatedNormal(stddev=0.02)
    return keras.initializers.get(initializer)


def clone_initializer(initializer):
    """A fresh copy, so seeded initializers don't hand two weights the same values."""
    return initializer.__class__.from_config(initializer.get_config())
