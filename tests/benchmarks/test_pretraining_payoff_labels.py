"""The GPU pretraining-payoff study (benchmarks/studies/pretraining_payoff_labels/) end to end in its quick mode, on CPU.

`prepare.py --quick` tokenizes a slice of the real data here (TensorFlow); `study.py --quick` then runs in
a Python where TensorFlow is not installed at all, on JAX, as on the GPU machine: tiny model, a few
steps. Checks the results file's structure, that the splits are disjoint and that no validation or
test sentence is pretraining text. Its accuracies check the machinery only (quick mode says so).
"""

import json

import numpy as np
import pytest

from benchmarks.studies.pretraining_payoff_labels import data, prepare
from harness import REPO_ROOT, SHARED_DATA, TENSORFLOW_PACKAGES, run_with_packages_hidden

# prepare.py is TensorFlow code (the tokenizer) and the study runs in its own JAX process whatever the pass's
# backend: one pass covers both, TensorFlow's (the suite's JAX and torch passes share the other slot).
ONE_PASS = pytest.mark.only_backend("tensorflow", reason="prepare.py is TensorFlow code and the study runs in its "
                                    "own JAX process: one pass covers both")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("prepared")
    prepare.main(["--quick", "--no-minilm", "--out", str(folder), "--data", str(SHARED_DATA)])
    return folder


@ONE_PASS
def test_the_splits_are_disjoint_and_no_held_out_sentence_is_pretraining_text(prepared):
    arrays = dict(np.load(prepared / "arrays.npz"))
    manifest = json.loads((prepared / "manifest.json").read_text())
    splits = {name: set(arrays[name].tolist()) for name in data.SPLITS}
    assert not splits["train"] & splits["validation"] and not splits["test"] & (splits["train"] | splits["validation"])
    assert sum(map(len, splits.values())) == len(arrays["sentences"]) == manifest["sentence_counts"]["kept"]
    assert all(arrays["sentence_ids"][i] % 10 == 0 for i in splits["test"])
    # The text check: every sentence packed into the pretraining rows is a training sentence.
    sep = manifest["special_ids"]["sep"]
    assert prepare.check_no_leak(arrays, sep) == len(splits["train"])
    test_row = arrays["sentences"][sorted(splits["test"])[:1]]  # (1, 64): [CLS] sentence [SEP] [PAD]...
    test_row = np.pad(test_row, [(0, 0), (0, arrays["pretrain_reviews"].shape[1] - test_row.shape[1])])
    planted = dict(arrays, pretrain_reviews=np.concatenate([arrays["pretrain_reviews"], test_row]))
    with pytest.raises(AssertionError, match="held-out sentences are in the pretraining rows"):  # caught
        prepare.check_no_leak(planted, sep)
    # And by text: what the pretraining rows were made from is exactly the training split.
    rows, _ = data.read_sentences(SHARED_DATA / "sentiment" / data.SENTIMENT.name)
    by_id = {row["id"]: row["text"] for row in rows}
    train_texts = [by_id[int(arrays["sentence_ids"][i])] for i in arrays["train"]]
    assert manifest["pretraining_text"]["review_digest"] == data.text_digest(train_texts)
    held_out = {data.normalized(by_id[int(arrays["sentence_ids"][i])]) for i in splits["validation"] | splits["test"]}
    assert not held_out & {data.normalized(t) for t in train_texts}


@ONE_PASS
def test_the_quick_study_runs_without_tensorflow_and_writes_every_figure(prepared, tmp_path):
    out = tmp_path / "out"
    arguments = ["--quick", "--prepared", str(prepared), "--out", str(out),
                 "--inits", "random", "pretrained_full", "minilm", "--checkpoint-minutes", "5"]
    script = f"from benchmarks.studies.pretraining_payoff_labels import study; study.main({arguments!r})"
    run = run_with_packages_hidden(script, TENSORFLOW_PACKAGES, tmp_path, env={"KERAS_BACKEND": "jax"},
                                   python_path=[REPO_ROOT], timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["quick"] is True and results["tensorflow_imported"] is False and results["errors"] == []
    assert "QUICK MODE" in (out / "results.md").read_text()
    assert {"date", "device", "jax", "keras"} <= set(results["environment"])
    pretraining = results["pretraining"]
    assert pretraining["steps_done"] > 0 and pretraining["tokens_per_second"] > 0
    assert set(pretraining["snapshots"]) == {"pretrained_half", "pretrained_full"}
    for snapshot in pretraining["snapshots"].values():
        assert 0 <= snapshot["austen_heldout"]["accuracy"] <= 1 and snapshot["review_validation"]["predictions"] > 0
    assert any("minilm" in line for line in results["skipped"])  # not prepared: said, not hidden
    budgets, inits = results["settings"]["budgets"], ["random", "pretrained_full"]
    for budget in budgets:
        for init in inits:
            cell = results["summary"][budget][init]
            assert cell["test_accuracy"]["n"] == len(results["settings"]["seeds"]), (budget, init, results["skipped"])
            assert 0 <= cell["test_accuracy"]["mean"] <= 1 and cell["test_accuracy"]["ci95"] is not None
    chosen = [r for r in results["runs"] if r["chosen"]]
    assert all("test_accuracy" in r and r["validation_curve"] for r in chosen)
    # Test accuracy is measured only on the runs validation chose, never on the rates it rejected.
    assert not any("test_accuracy" in r for r in results["runs"] if not r["chosen"])
    first_seed = [r for r in results["runs"] if r["init"] == "pretrained_full" and r["seed"] == 0]
    assert {r["learning_rate"] for r in first_seed} == {1e-3, 3e-4}  # the grid, validation choosing

    # The same command again would lose the study: refused. With --resume, nothing finished runs again.
    (tmp_path / "again").mkdir()
    (tmp_path / "resumed").mkdir()
    again = run_with_packages_hidden(script, TENSORFLOW_PACKAGES, tmp_path / "again", env={"KERAS_BACKEND": "jax"},
                                     python_path=[REPO_ROOT], timeout=240)
    assert again.returncode != 0 and "--resume continues it" in again.stderr
    resumed_script = script.replace("'5']", "'5', '--resume']")
    resumed = run_with_packages_hidden(resumed_script, TENSORFLOW_PACKAGES, tmp_path / "resumed", env={"KERAS_BACKEND": "jax"},
                                       python_path=[REPO_ROOT], timeout=240)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed finished weights" in resumed.stdout
    after = json.loads((out / "results.json").read_text())
    assert after["runs"] == results["runs"] and after["pretraining"] == pretraining
    assert after["earlier_commands"][0]["command"] == results["command"]

    # Pooling files (here one): the payoff is each pretrained run minus random initialisation's of its seed.
    from benchmarks.studies.pretraining_payoff_labels import combine

    table = combine.main([str(out / "results.json"), "--out", str(tmp_path / "pooled")])
    budget = budgets[0]
    by_seed = {init: {r["seed"]: r["test_accuracy"] for r in chosen if r["init"] == init and r["budget"] == budget}
               for init in inits}
    differences = [by_seed["pretrained_full"][s] - by_seed["random"][s] for s in sorted(by_seed["random"])]
    assert table[budget]["payoff_pretrained_full"]["mean"] == pytest.approx(np.mean(differences), abs=1e-4)
    assert table[budget]["random"]["test_accuracy"] == results["summary"][budget]["random"]["test_accuracy"]


@pytest.mark.only_backend("jax", reason="the study's compiled steps are jax.jit over Keras' stateless API: the JAX "
                          "backend in this process")
def test_a_resumed_pretraining_takes_the_steps_of_the_uninterrupted_one(tmp_path):
    """Stopped after 3 of 6 steps (a deadline already past), written, read back and finished: the same weights
    as 6 steps in one go, bit for bit (the schedule depends on the step, batches and masks on the saved key)."""

    from benchmarks.studies.pretraining_payoff_labels import checkpoints, study, training
    from keras_bert.models.bert_masked_lm import BertMaskedLM
    from keras_bert.optimizers import create_optimizer

    special = {"pad": 0, "cls": 2, "sep": 3, "mask": 4, "unk": 1}
    rows = np.random.default_rng(0).integers(5, 60, size=(32, 16)).astype(np.int32)
    rows[:, 0], rows[:, -1] = special["cls"], special["sep"]

    def job_and_state():
        study.seed_everything(0)
        backbone = study.BertBackbone(vocabulary_size=60, num_layers=1, num_heads=2, hidden_dim=16,
                                      intermediate_dim=32, dropout=0.0, max_sequence_length=16, normalize_first=True,
                                      gated_feed_forward=True, attention_bias=False, feed_forward_bias=False,
                                      layer_norm_bias=False)
        masked_lm = BertMaskedLM(backbone)
        optimizer = create_optimizer(learning_rate=1e-3, weight_decay=0.01)
        optimizer.build(masked_lm.trainable_variables)
        job = training.Pretraining(masked_lm, optimizer, {"austen": rows, "reviews": rows}, special, 0.3, 4, 0.5)
        return job, job.initial_state(0)

    job, state = job_and_state()
    straight, snapshots, _, _ = job.run(state, 6, 1e-2, 0.3, deadline=float("inf"), snapshot_at={3}, log_every=1)

    job, state = job_and_state()
    writer = checkpoints.PretrainingCheckpoints(str(tmp_path), {"planned_steps": 6}, 0.0, 0.0, 0.0)
    _, _, _, done = job.run(state, 6, 1e-2, 0.3, deadline=0.0, snapshot_at={3}, log_every=3, checkpoint=writer)
    assert done == 3
    job, fresh = job_and_state()
    saved = checkpoints.load_pretraining(str(tmp_path), fresh)
    assert saved["step"] == 3 and set(saved["snapshots"]) == {3}
    resumed, resumed_snapshots, curve, done = job.run(
        saved["state"], 6, 1e-2, 0.3, deadline=float("inf"), snapshot_at={3}, log_every=1, start_step=saved["step"],
        snapshots=saved["snapshots"], curve=saved["curve"])
    assert done == 6 and [point["step"] for point in curve] == [3, 4, 5, 6]
    for a, b in zip(straight[0] + straight[2], resumed[0] + resumed[2], strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    for a, b in zip(snapshots[3], resumed_snapshots[3], strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.only_backend("jax", reason="argument handling, the same on every backend; the study runs on JAX")
def test_the_shape_options_change_the_named_size_and_reach_the_encoder(tmp_path):
    from benchmarks.studies.pretraining_payoff_labels import study

    default = study.encoder_options(study.parse(["--out", str(tmp_path), "--size", "tiny"]))
    assert {k: default[k] for k in ("num_layers", "hidden_dim", "intermediate_dim")} == {
        "num_layers": 2, "hidden_dim": 128, "intermediate_dim": 512}
    deeper = study.parse(["--out", str(tmp_path), "--size", "tiny", "--num-layers", "4", "--intermediate-dim", "256"])
    options = study.encoder_options(deeper)
    assert (options["num_layers"], options["hidden_dim"], options["intermediate_dim"]) == (4, 128, 256)
    backbone = study.our_backbone({"vocabulary_size": 60, "sequence_length": 16}, deeper, dropout=0.0)
    assert len(backbone.transformer_layers) == 4 and backbone.intermediate_dim == 256


@pytest.mark.only_backend("jax", reason="the study's compiled steps are jax.jit over Keras' stateless API: the JAX "
                          "backend in this process")
def test_the_electra_objective_corrupts_only_masked_slots_learns_and_hands_its_encoder_to_fine_tuning(tmp_path):
    import jax

    from benchmarks.studies.pretraining_payoff_labels import study, training

    special = {"pad": 0, "cls": 2, "sep": 3, "mask": 4, "unk": 1}
    vocabulary, length = 40, 16
    # Each row one token repeated: the generator learns to copy it into a masked slot, the discriminator that a
    # token unlike its row's was put there.
    rows = np.repeat(np.random.default_rng(0).integers(5, vocabulary, size=(64, 1)), length, axis=1).astype(np.int32)
    rows[:, 0], rows[:, -1] = special["cls"], special["sep"]
    manifest = {"vocabulary_size": vocabulary, "sequence_length": length, "special_ids": special}
    options = ["--out", str(tmp_path), "--size", "quick", "--objective", "electra", "--generator-size", "0.5",
               "--mask-rate", "0.2", "--batch-size", "16", "--review-share", "0.5", "--learning-rate", "3e-3"]
    # The block options reach both halves (the hour-long runs of 2026-11-30 were post-LN while saying pre-LN:
    # ElectraBackbone then had no block options and the study dropped them).
    post_ln = study.our_backbone(manifest, study.parse(options + ["--post-ln", "--no-biases"]), dropout=0.0)
    assert not post_ln.normalize_first and not post_ln.attention_bias and not post_ln.transformer_layers[0].attention_bias
    args = study.parse(options)  # the study's default: pre-LN
    study.seed_everything(0)
    model, job = study.pretraining_job(args, manifest, {"austen": rows, "reviews": rows})
    assert isinstance(job, training.ReplacedTokenDetection) and model.generator_backbone.hidden_dim == 16
    for half in (model.backbone, model.generator_backbone):
        assert {block.normalize_first for block in half.encoder_blocks} == {True}

    # One step's corruption: `mask_rows` leaves unused slots pointing at real tokens (weight 0); the job must not
    # let the generator sample over them, so every token that differs from its row is at a weighted slot.
    state = job.initial_state(0)
    rows_in = jax.numpy.asarray(rows[:16])
    # Compiled as the job's step compiles them: run eagerly, JAX compiled each of their few hundred small ops
    # apart (2-core Intel machine, 2026-12-01, idle: a pytest run of this test alone 45 CPU s so, 31 compiled).
    mask = jax.jit(lambda rows, key: training.mask_rows(rows, key, job.rate, job.num_predictions, special,
                                                         vocabulary, 5))
    inputs, labels, weights = mask(rows_in, jax.random.PRNGKey(1))
    assert int((~weights).sum()) > 0  # the case the job guards: some slots unused
    terms, outputs, _ = jax.jit(lambda *args: job._terms(*args, True))(state[0], state[1], inputs, labels, weights)
    changed = np.argwhere(np.asarray(outputs["corrupted_token_ids"]) != np.asarray(rows_in))
    used = np.where(weights, inputs["mask_positions"], -1)
    assert len(changed) and all(column in used[row] for row, column in changed)
    assert float(terms["replaced"].sum()) == len(changed)  # the detection labels are those tokens, no others

    before = job.evaluate(state[0], state[1], rows, batch_size=16, max_rows=64)
    trained, _, curve, done = job.run(state, 300, 3e-3, 0.1, deadline=float("inf"), log_every=100)
    after = job.evaluate(trained[0], trained[1], rows, batch_size=16, max_rows=64)
    assert done == 300 and set(after) == {"loss", "accuracy", "predictions", "rtd_accuracy", "rtd_replaced_accuracy",
                                          "all_original_accuracy"}
    # It learns both halves (measured, pre-LN at 3e-3: generator 0.04 -> 0.135 (loss 3.68 -> 2.76), replaced
    # tokens found 0.10 -> 0.86, detection 0.98 against the all-original 0.83), the generator more slowly than MLM
    # alone would learn to copy (it is narrow, and shares its embeddings with a discriminator whose loss weighs 50
    # times more). At 1e-2 the pre-LN pair collapses (no replaced token found), the post-LN one does not.
    assert after["accuracy"] > before["accuracy"] + 0.07 and after["loss"] < before["loss"] - 0.5
    assert after["rtd_replaced_accuracy"] > before["rtd_replaced_accuracy"] + 0.25
    assert after["rtd_accuracy"] > after["all_original_accuracy"] + 0.04

    # The encoder fine-tuning starts from is the discriminator's: the classifier's backbone takes its weights in
    # order, shape for shape (the random arm is the same ElectraBackbone, freshly initialised).
    encoder = [trained[0][i] for i in study.positions(model.trainable_variables, model.backbone.trainable_variables)]
    classifier = study.BertClassifier(study.our_backbone(manifest, args, 0.1), 2)
    assert type(classifier.backbone) is type(model.backbone)
    assert [tuple(v.shape) for v in classifier.backbone.trainable_variables] == [tuple(v.shape) for v in encoder]


@pytest.mark.only_backend("jax", reason="the probe's compiled steps are jax.jit over Keras' stateless API: the JAX "
                          "backend in this process")
def test_the_prompt_probe_reads_the_masked_lm_scores_of_the_verbalizer_at_each_rows_mask():
    from benchmarks.studies.pretraining_payoff_labels import prompt_probe, study
    from keras_bert.models.bert_masked_lm import BertMaskedLM
    from keras_bert.optimizers import create_optimizer

    special = {"pad": 0, "cls": 2, "sep": 3, "mask": 4, "unk": 1}
    template = [20, 21, special["mask"], 6]  # "it was [MASK] ."
    short = [2, 10, 11, 12, 3, 0, 0, 0, 0, 0]
    long = [2, 10, 11, 12, 13, 14, 15, 16, 3, 0]  # 7 words: cut to the 4 the template leaves room for
    rows, positions = prompt_probe.prompt_rows(np.array([short, long]), special, template)
    assert rows.tolist() == [[2, 10, 11, 12, 20, 21, 4, 6, 3, 0], [2, 10, 11, 12, 13, 20, 21, 4, 6, 3]]
    assert positions.tolist() == [6, 7] and (rows[np.arange(2), positions] == special["mask"]).all()

    study.seed_everything(0)
    backbone = study.BertBackbone(vocabulary_size=30, num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32,
                                  dropout=0.0, max_sequence_length=10)
    masked_lm = BertMaskedLM(backbone)
    optimizer = create_optimizer(learning_rate=1e-3, weight_decay=0.01)
    optimizer.build(masked_lm.trainable_variables)
    many_rows = np.tile(rows, (8, 1))
    job = prompt_probe.PromptFineTuning(masked_lm, optimizer, many_rows, np.tile(positions, 8), np.arange(16) % 2,
                                        special["pad"], eval_batch_size=4)
    init = (study.copied(masked_lm.trainable_variables), study.copied(masked_lm.non_trainable_variables))
    logits = np.asarray(masked_lm.predict({"token_ids": rows, "segment_ids": np.zeros_like(rows),
                                           "padding_mask": (rows != 0).astype("int32"),
                                           "mask_positions": positions[:, None]}, verbose=0))[:, 0]
    for words in ([7, 8], [8, 7]):  # the class is the verbalizer word the head scores higher at the [MASK]
        job.use(words)
        predicted = np.asarray(job.predict_batch(*init, np.array([0, 1, 0, 1], np.int32)))
        assert predicted.tolist() == np.argmax(logits[:, words], axis=-1).tolist() * 2
    record, (trained, _) = job.run(init, np.arange(16), np.arange(16), steps=6, batch_size=4, peak=1e-2,
                                   warmup_share=0.2, evaluations=2, seed=0)
    assert [point["step"] for point in record["validation_curve"]] == [3, 6]
    assert any(not np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(init[0], trained))


@pytest.mark.only_backend("jax", reason="plain Python over result files, the same on every backend")
def test_the_prompt_comparison_takes_each_inits_way_by_validation_and_pairs_the_payoff_by_seed(tmp_path):
    from benchmarks.studies.pretraining_payoff_labels import prompt_probe

    def runs(init, validation, test, budget="300"):
        return [{"init": init, "budget": budget, "seed": seed, "chosen": True, "validation_accuracy": v,
                 "test_accuracy": t} for seed, (v, t) in enumerate(zip(validation, test))]

    study_runs = (runs("random", [0.62, 0.62, 0.62], [0.60, 0.61, 0.59])
                  + runs("pretrained_full", [0.60] * 3, [0.9] * 3)
                  + runs("random", [0.9] * 3, [0.1] * 3, budget="100")  # another budget: not read
                  + [{"init": "random", "budget": "300", "seed": 0, "chosen": False, "validation_accuracy": 0.99,
                      "test_accuracy": 0.0}])  # a rejected rate: not read
    (tmp_path / "study.json").write_text(json.dumps({"runs": study_runs}))
    prompt_ways = (("random", [0.60] * 3, [0.8] * 3), ("pretrained_full", [0.65] * 3, [0.62, 0.64, 0.66]))
    for init, validation, test in prompt_ways:
        probe = {"init": init, "budget": "300", "runs": runs(init, validation, test)}
        (tmp_path / f"{init}.json").write_text(json.dumps(probe))
    prompt_probe.main(["compare", "--study", str(tmp_path / "study.json"), "--prompt", str(tmp_path / "random.json"),
                       str(tmp_path / "pretrained_full.json"), "--out", str(tmp_path / "out.json")])
    comparison = json.loads((tmp_path / "out.json").read_text())
    assert comparison["inits"]["random"]["chosen_way"] == "new head"  # 0.62 against 0.60 on validation
    assert comparison["inits"]["pretrained_full"]["chosen_way"] == "masked-LM head"  # 0.65 against 0.60
    assert comparison["inits"]["random"]["new head"]["test"]["values"] == [0.60, 0.61, 0.59]
    assert comparison["payoff_pretrained_full"]["values"] == [0.02, 0.03, 0.07]  # 0.62-0.60, 0.64-0.61, 0.66-0.59


@pytest.mark.only_backend("jax", reason="plain Python over a run's recorded settings, the same on every backend")
def test_the_prompt_probe_reads_a_runs_settings_over_the_studys_defaults(tmp_path):
    """A run written before `--objective` existed (2026-11-29's random arm) is probed as the MLM run it was."""
    from benchmarks.studies.pretraining_payoff_labels import prompt_probe, study

    defaults = vars(study.parse(["--out", str(tmp_path)]))
    recorded = {key: value for key, value in defaults.items() if key != "objective"}
    recorded.update(finetune_batch_size=defaults["finetune_batch_size"] * 2, num_layers=3)  # what the run chose
    settings = prompt_probe.run_settings({"settings": recorded}, tmp_path)
    assert settings.objective == "mlm"  # missing from the run: today's default, the behaviour the run had
    assert settings.finetune_batch_size == defaults["finetune_batch_size"] * 2 and settings.num_layers == 3
    # A recorded setting always wins, also where today's default differs.
    assert prompt_probe.run_settings({"settings": {**recorded, "objective": "electra"}}, tmp_path).objective == "electra"
