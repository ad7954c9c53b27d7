"""`keras-bert pretrain --objective electra`: its run folder and held-out summary, fine-tuning from it, resuming it.

One uninterrupted run with held-out evaluation (module fixture, through the CLI) serves every test:
its training, metrics, record and summary, the `.keras` file, `finetune --init <run folder>`
picking the discriminator (and a classifier training on it), and the reference weights for the
run killed at a seeded random step (the child script and helpers of test_interrupted_training.py).
"""

import json
import random

import keras
import numpy as np
import pytest

from keras_bert import BertClassifier, ElectraBackbone, ElectraPretrainer
from keras_bert.jobs.checkpointing import STATE_FILE
from keras_bert.loading import load_init
from keras_bert.jobs.pretrain import pretrain
from resume_helpers import assert_resumed_equal, max_weight_delta
from robustness_helpers import AUSTEN, FIXTURE_VOCAB, run_child, run_cli
from test_interrupted_training import CHILD, KILL_SEED

STEPS, EVERY = 4, 2

# The ELECTRA model itself (generator, discriminator, sampling, losses, a fit step, saving) runs on every backend in
# tests/models/test_electra_pretrainer.py; the job around it is the same Python on each. Its kill-and-resume test runs
# on torch, where it also checks torch's own generator to the bit (dropout, and the held-out pass of the straight
# run: keras_bert.jobs.random_state). A child killed and resumed costs 8 s on torch, 18 s on JAX.
pytestmark = pytest.mark.only_backend("torch", reason="the ELECTRA job's records, summary, fine-tuning start and resume "
                                      "are the same Python on every backend; the ELECTRA model runs on each in "
                                      "tests/models/test_electra_pretrainer.py")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("electra_corpus")
    lines = (AUSTEN / "persuasion.txt").read_text(encoding="utf-8").splitlines()
    (folder / "train.txt").write_text("\n".join(lines[200:500]), encoding="utf-8")
    (folder / "heldout.txt").write_text("\n".join(lines[600:700]), encoding="utf-8")
    return folder


def electra_argv(corpus, out):
    return [
        "pretrain", "--objective", "electra", "--generator-size", "0.5", "--corpus", corpus / "train.txt",
        "--vocab", FIXTURE_VOCAB, "--size", "tiny", "--sequence-length", "32", "--batch-size", "8", "--steps", STEPS,
        "--checkpoint-every", EVERY, "--learning-rate", "1e-3", "--seed", "3", "--no-tensorboard", "--out", out,
    ]


def heldout(corpus):
    return ["--eval-corpus", corpus / "heldout.txt", "--eval-batches", "2"]


@pytest.fixture(scope="module")
def straight(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("straight_electra")
    status, stdout, err = run_cli([*electra_argv(corpus, out), *heldout(corpus)])
    assert status == 0, err
    return out, stdout


def test_run_records_electra_reports_heldout_accuracies_and_finetunes_from_the_discriminator(straight):
    out, stdout = straight
    assert "held-out generator MLM accuracy" in stdout and "held-out RTD accuracy" in stdout
    record = json.loads((out / "config.json").read_text())
    assert record["job"]["objective"] == "electra" and record["job"]["generator_size"] == 0.5
    assert record["backbone"]["hidden_dim"] == 128  # the discriminator's, the "tiny" size
    heldout = record["heldout"]
    assert set(heldout) == {
        "generator_mlm_accuracy", "rtd_accuracy", "rtd_replaced_accuracy", "rtd_all_original_accuracy"
    }
    assert all(0.0 <= value <= 1.0 for value in heldout.values()), heldout
    assert heldout["rtd_accuracy"] == record["final_metrics"]["val_rtd_accuracy"]

    # Trained: the loss fell between the two checkpoints; every metric was logged.
    header, *rows = [line.split(",") for line in (out / "history.csv").read_text().splitlines()]
    metrics = {"loss", "generator_loss", "rtd_loss", "generator_accuracy", "rtd_accuracy", "rtd_replaced_accuracy",
               "rtd_all_original_accuracy"}
    assert set(header) == {"epoch", *metrics, *(f"val_{name}" for name in metrics)}
    losses = [float(row[header.index("loss")]) for row in rows]
    assert len(losses) == 2 and losses[1] < losses[0], losses

    pretrainer = keras.saving.load_model(str(out / "model.keras"))
    assert isinstance(pretrainer, ElectraPretrainer) and pretrainer.generator_backbone.hidden_dim == 64
    assert pretrainer.generator_backbone.embeddings is pretrainer.backbone.embeddings  # shared after loading too
    assert ElectraPretrainer.from_config(pretrainer.get_config()).get_config() == pretrainer.get_config()
    # `finetune --init <run folder>` starts from the discriminator, also when it rebuilds it with another dropout.
    for dropout in (0.1, 0.2):
        backbone, tokenizer, _ = load_init(str(out), dropout=dropout)
        assert type(backbone) is ElectraBackbone and backbone.dropout == dropout
        assert tokenizer.vocabulary_size() == backbone.vocabulary_size
        for ours, theirs in zip(backbone.weights, pretrainer.backbone.weights):
            np.testing.assert_array_equal(keras.ops.convert_to_numpy(ours), keras.ops.convert_to_numpy(theirs))
    classifier = BertClassifier(backbone, num_classes=2)
    classifier.compile(optimizer=keras.optimizers.Adam(1e-3))
    features = {"token_ids": np.array([[2, 7, 9, 3], [2, 8, 3, 0]], "int32"), "padding_mask": np.array(
        [[1, 1, 1, 1], [1, 1, 1, 0]], "int32"), "segment_ids": np.zeros((2, 4), "int32")}
    assert np.isfinite(classifier.fit(features, np.array([0, 1]), epochs=1, verbose=0).history["loss"][0])


def test_electra_run_killed_at_a_random_step_resumes_to_the_same_weights(corpus, straight, tmp_path):
    """Without the held-out evaluation, which leaves the training draws as they were: its sampling has a fixed
    seed, and the runner sets back the torch generator its data iterator draws from (`random_state`)."""
    kill_step = random.Random(KILL_SEED).randint(EVERY + 1, STEPS)
    child = run_child(CHILD, "step", kill_step, *electra_argv(corpus, tmp_path))
    assert child.returncode == -9, child.stderr[-2000:]
    state = json.loads((tmp_path / "checkpoints" / STATE_FILE).read_text())
    assert state["step"] == (kill_step - 1) // EVERY * EVERY  # killed before that epoch's checkpoint

    status, stdout, err = run_cli([*electra_argv(corpus, tmp_path), "--resume"])
    assert status == 0, err
    assert f"(resumed from step {state['step']})" in stdout
    delta = max_weight_delta(straight[0] / "model.keras", tmp_path / "model.keras")
    assert_resumed_equal(delta, f"electra pretrain killed at step {kill_step}")


def test_objective_and_packing_are_checked_before_any_work(corpus, tmp_path):
    arguments = dict(
        corpus=str(corpus / "train.txt"), vocabulary=str(FIXTURE_VOCAB), output_dir=str(tmp_path), verbose=0
    )
    with pytest.raises(ValueError, match="objective='gpt'"):
        pretrain(**arguments, objective="gpt")
    with pytest.raises(ValueError, match="pack_sequences=True"):
        pretrain(**arguments, objective="electra", pack_sequences=True)
    assert not list(tmp_path.iterdir())


def test_the_encoder_options_build_both_halves_of_an_electra_run(corpus, tmp_path):
    """`--normalize-first --gated-feed-forward --no-biases` with `--objective electra`: the run records the encoder
    and the saved discriminator and generator have its blocks (the small-compute recipe on ELECTRA)."""
    argv = [*electra_argv(corpus, tmp_path), "--normalize-first", "--gated-feed-forward", "--no-biases",
            "--dropout", "0"]
    argv[argv.index("--steps") + 1] = EVERY
    status, stdout, err = run_cli(argv)
    assert status == 0, err
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["job"]["encoder"] == {"normalize_first": True, "gated_feed_forward": True, "attention_bias": False,
                                        "feed_forward_bias": False, "layer_norm_bias": False}
    assert config["backbone"]["normalize_first"] and not config["backbone"]["layer_norm_bias"]
    model = keras.saving.load_model(str(tmp_path / "model.keras"))
    for half in (model.discriminator_backbone, model.generator_backbone):
        assert half.normalize_first and half.gated_feed_forward and not half.attention_bias
