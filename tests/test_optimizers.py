"""create_optimizer: BERT's schedule and weight-decay exclusions, also after a .keras round trip."""

import keras
import numpy as np
import pytest

from harness import tiny_backbone
from keras_bert import BertPretrainer, create_optimizer
from keras_bert.optimizers import WarmupSchedule


def test_linear_warmup_then_linear_decay():
    optimizer = create_optimizer(learning_rate=1e-3, warmup_steps=10, total_steps=110)
    schedule = optimizer._learning_rate
    values = [float(keras.ops.convert_to_numpy(schedule(step))) for step in (0, 4, 9, 10, 60, 109)]
    np.testing.assert_allclose(values, [1e-4, 5e-4, 1e-3, 1e-3, 5e-4, 1e-5], rtol=1e-5)


def test_schedule_round_trips_through_config():
    schedule = create_optimizer(learning_rate=2e-4, warmup_steps=5, total_steps=50)._learning_rate
    restored = WarmupSchedule.from_config(schedule.get_config())
    for step in (0, 3, 5, 20, 49):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(restored(step)), keras.ops.convert_to_numpy(schedule(step)), rtol=1e-6
        )


@pytest.mark.parametrize("name", ["adamw", "lamb"])
def test_no_weight_decay_on_layer_norm_and_bias_even_after_reload(name, tmp_path):
    model = BertPretrainer(tiny_backbone())
    model.compile(optimizer=create_optimizer(name, weight_decay=0.1))
    path = str(tmp_path / "m.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    for optimizer, variables in ((model.optimizer, model.trainable_variables), (restored.optimizer, restored.trainable_variables)):
        decayed = {v.path.split("/")[-1] for v in variables if optimizer._use_weight_decay(v)}
        excluded = {v.path.split("/")[-1] for v in variables if not optimizer._use_weight_decay(v)}
        assert decayed == {"kernel", "embeddings", "position_embeddings"}, decayed
        assert excluded == {"gamma", "beta", "bias", "output_bias"}, excluded


def test_rejects_unknown_optimizer_and_bad_steps():
    with pytest.raises(ValueError, match="'sgd'"):
        create_optimizer("sgd")
    with pytest.raises(ValueError, match="total_steps=5, warmup_steps=10"):
        create_optimizer(warmup_steps=10, total_steps=5)
