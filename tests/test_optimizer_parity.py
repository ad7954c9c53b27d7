"""Training beside transformers: 30 AdamW steps from the same `BertForPreTraining` give the same losses.

Numerical truth from outside: a random tiny transformers `BertForPreTraining` is trained by transformers' own
loop (`torch.optim.AdamW`, `get_linear_schedule_with_warmup`, gradient clipping at 1.0, no decay on LayerNorm and
biases), and the same checkpoint, loaded into our `BertPretrainer`, by `create_optimizer`'s AdamW with the same
settings (epsilon 1e-6, weight decay 0.01, warmup), on the same fixed batches. Every step's loss must agree to a
relative 1e-5 on each backend. With Keras' epsilon form (`epsilon_after_bias_correction=False`) the runs drift
apart: the check below shows the test would notice. Layer-wise rate decay is checked the same way, against a
`torch.optim.AdamW` with one parameter group per layer at the rates BEiT's and ELECTRA's fine-tuning code give them.
"""

import re

import keras
import numpy as np
import pytest

from keras_bert import BertPretrainer, create_optimizer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

STEPS, WARMUP, PEAK, WEIGHT_DECAY, EPSILON = 30, 5, 2e-3, 0.01, 1e-6
BATCH, LENGTH, PREDICTIONS, VOCABULARY, DISTINCT_BATCHES = 8, 16, 3, 99, 3
CONFIG = dict(vocab_size=VOCABULARY, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
              max_position_embeddings=LENGTH, type_vocab_size=2, hidden_act="gelu", hidden_dropout_prob=0.0,
              attention_probs_dropout_prob=0.0)


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """The starting checkpoint's folder and the 30 fixed batches (ours and transformers' form of each)."""
    torch.manual_seed(0)
    model = transformers.BertForPreTraining(transformers.BertConfig(**CONFIG, attn_implementation="eager"))
    folder = tmp_path_factory.mktemp("bert_for_pretraining")
    model.save_pretrained(folder)
    return folder, fixed_batches()


def fixed_batches():
    """`STEPS` batches, `DISTINCT_BATCHES` of them repeated: `[(ours: (x, y, sample_weight), transformers' kwargs)]`."""
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(DISTINCT_BATCHES):
        token_ids = rng.integers(5, VOCABULARY, size=(BATCH, LENGTH)).astype("int32")
        segment_ids = (np.arange(LENGTH) >= LENGTH // 2).astype("int32")[None].repeat(BATCH, 0)
        positions = np.sort(np.stack([rng.choice(np.arange(1, LENGTH), PREDICTIONS, replace=False)
                                      for _ in range(BATCH)]), axis=1).astype("int32")
        targets = rng.integers(5, VOCABULARY, size=(BATCH, PREDICTIONS)).astype("int32")
        next_sentence = rng.integers(0, 2, size=(BATCH,)).astype("int32")
        labels = np.full((BATCH, LENGTH), -100, "int64")
        np.put_along_axis(labels, positions, targets, axis=1)
        ours = ({"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": np.ones_like(token_ids),
                 "mask_positions": positions},
                {"mlm": targets, "nsp": next_sentence},
                {"mlm": np.ones((BATCH, PREDICTIONS), "float32"), "nsp": np.ones((BATCH,), "float32")})
        theirs = dict(input_ids=torch.tensor(token_ids, dtype=torch.long),
                      token_type_ids=torch.tensor(segment_ids, dtype=torch.long),
                      attention_mask=torch.ones(BATCH, LENGTH, dtype=torch.long), labels=torch.tensor(labels),
                      next_sentence_label=torch.tensor(next_sentence, dtype=torch.long))
        batches.append((ours, theirs))
    return [batches[step % DISTINCT_BATCHES] for step in range(STEPS)]  # seen again: the loss falls


def layer_rate(name, layer_decay):
    """A transformers parameter's rate factor: embeddings `decay ** (L + 1)`, layer i `decay ** (L - i)`, the rest 1."""
    layers = CONFIG["num_hidden_layers"]
    if match := re.match(r"bert\.encoder\.layer\.(\d+)\.", name):
        return layer_decay ** (layers - int(match.group(1)))
    return layer_decay ** (layers + 1) if name.startswith("bert.embeddings.") else 1.0


def transformers_losses(folder, batches, layer_decay=None):
    """transformers' loop, as its Trainer runs it: AdamW with decay groups, linear warmup and decay, clipping;
    with `layer_decay`, a parameter group per layer too (the schedule scales each group's own rate)."""
    model = transformers.BertForPreTraining.from_pretrained(folder, attn_implementation="eager").train()
    no_decay = ("bias", "LayerNorm.weight")
    groups = {}
    for n, p in model.named_parameters():  # tied weights once: the MLM decoder is the word embeddings
        decay = 0.0 if any(k in n for k in no_decay) else WEIGHT_DECAY
        rate = PEAK * (layer_rate(n, layer_decay) if layer_decay else 1.0)
        groups.setdefault((decay, rate), []).append(p)
    groups = [{"params": params, "weight_decay": decay, "lr": rate} for (decay, rate), params in groups.items()]
    optimizer = torch.optim.AdamW(groups, lr=PEAK, eps=EPSILON)
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, WARMUP, STEPS)
    losses = []
    for _, batch in batches:
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
    return np.array(losses)


def our_losses(folder, batches, **optimizer_options):
    model = BertPretrainer.from_pretrained(str(folder), dropout=0.0)
    model.compile(optimizer=create_optimizer(learning_rate=PEAK, weight_decay=WEIGHT_DECAY, warmup_steps=WARMUP,
                                             total_steps=STEPS, epsilon=EPSILON, **optimizer_options))
    return np.array([float(model.train_on_batch(x, y, sample_weight=w, return_dict=True)["loss"]) for (x, y, w), _ in batches])


def test_adamw_training_matches_transformers_loop_step_for_step(start):
    folder, batches = start
    expected = transformers_losses(folder, batches)
    actual = our_losses(folder, batches)
    relative = np.abs(actual - expected) / np.abs(expected)
    print(f"{keras.backend.backend()}: loss {expected[0]:.4f} -> {expected[-1]:.4f} in transformers; "
          f"max relative difference over {STEPS} steps {relative.max():.2g}")
    assert expected[-1] < 0.9 * expected[0], "the run hardly trained: the comparison would show little"
    assert relative.max() <= 1e-5, relative
    keras_form = our_losses(folder, batches, epsilon_after_bias_correction=False)
    drift = np.abs(keras_form - expected) / np.abs(expected)
    print(f"with Keras' epsilon form: max relative difference {drift.max():.2g}")
    assert drift.max() > 1e-4, "Keras' form should drift from transformers' here"


def test_layer_wise_rate_decay_matches_transformers_with_a_parameter_group_per_layer(start):
    folder, batches = start
    expected = transformers_losses(folder, batches, layer_decay=0.5)
    actual = our_losses(folder, batches, layer_decay=0.5)
    relative = np.abs(actual - expected) / np.abs(expected)
    print(f"{keras.backend.backend()}: layer decay 0.5: max relative difference over {STEPS} steps {relative.max():.2g}")
    assert relative.max() <= 1e-5, relative
    # One rate for every layer trains differently: the comparison sees whether the rates were applied.
    one_rate = transformers_losses(folder, batches)
    assert (np.abs(one_rate - expected) / np.abs(expected)).max() > 1e-3
