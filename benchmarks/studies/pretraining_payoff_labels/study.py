"""Does pretraining pay off where labels are few? The study on one GPU, in one process, within a time limit.

    python -m benchmarks.studies.pretraining_payoff_labels.study --out DIR [--time-limit 470] [--quick]

Reads the arrays `prepare.py` wrote (no TensorFlow here: KERAS_BACKEND=jax, keras_bert's models and
optimizers only) and, within `--time-limit` seconds of wall time counted from the process start:
1. pretrains a BERT (`--size`, pre-LN, dropout 0, MLM only at `--mask-rate` or, with `--objective electra`,
   ELECTRA's replaced-token detection on those masks; one-cycle rate, bf16 on a GPU) from random weights
   on Austen plus the movie-review TRAINING sentences with labels removed,
   for `--pretrain-seconds` (steps fitted to a measured throughput), keeping a snapshot half-way;
2. fine-tunes, for every label budget (`--budgets`), init and fine-tuning seed: (a) random
   initialisation, (b) the half-way and the final pretrained weights, (c) all-MiniLM-L6-v2. The
   validation split chooses the learning rate (of each init's grid, on the first seed) and the step
   (early stopping); the test split is scored once, on the chosen weights, and is what is reported;
3. writes results.json (every figure) and results.md (the tables) into `--out` after every phase and
   every fine-tuning run, so a run stopped from outside keeps what it finished.
The time guard skips (and lists) the runs that would not end before the limit, then ends cleanly.
"""

import time

STARTED = time.time()  # the time limit counts from here, imports included

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("KERAS_BACKEND", "jax")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # the checkout: `benchmarks` and `keras_bert` (not installed on a device)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.studies.pretraining_payoff_labels import checkpoints, data, report, training  # noqa: E402
from keras_bert.models.bert_backbone import BertBackbone  # noqa: E402
from keras_bert.models.bert_classifier import BertClassifier  # noqa: E402
from keras_bert.models.bert_masked_lm import BertMaskedLM  # noqa: E402
from keras_bert.models.electra_backbone import ElectraBackbone  # noqa: E402
from keras_bert.models.electra_pretrainer import ElectraPretrainer  # noqa: E402
from keras_bert.models.bert_sizes import BERT_SIZES  # noqa: E402
from keras_bert.optimizers import create_optimizer  # noqa: E402

INITS = ("random", "pretrained_half", "pretrained_full", "minilm")
SIZES = {**BERT_SIZES, "quick": dict(num_layers=1, hidden_dim=32, num_heads=2, intermediate_dim=64)}
# What --quick sets: a CPU check of the machinery (under a minute without MiniLM); its figures are not results.
QUICK = dict(size="quick", batch_size=16, finetune_batch_size=16, pretrain_seconds=2.0, finetune_reserve=0.0,
             budgets=["100", "all"], seeds=[0, 1], min_steps=4, max_steps=8, max_epochs=2, evaluations=2,
             eval_batch_size=64, mlm_eval_rows=64, calibration_steps=2, log_every=5, lr_random=[1e-3],
             lr_pretrained=[1e-3, 3e-4], lr_minilm=[1e-4], time_limit=300.0, min_arm_seconds=5.0, dtype="float32")

# Where this run departs from issue 46's full plan, to fit 8 minutes of one GPU (README.md says more).
DESIGN_NOTES = [
    "one pretraining run (seed --seed): the 95% intervals are over fine-tuning seeds only",
    "the half-way budget is a snapshot of the same one-cycle run (its rate then about half the peak), not a run of "
    "its own",
    "the fine-tuning rate is chosen per (init, budget) on the first seed's validation accuracy; later seeds reuse it",
    "one validation split (1,000 sentences) serves every label budget",
    "the time guard skips runs that would pass --time-limit (listed under skipped); later seeds run last",
]


class Clock:
    """Seconds left before the limit, less a margin kept for writing the results."""

    def __init__(self, limit, margin):
        self.deadline = STARTED + limit - margin

    def left(self):
        return self.deadline - time.time()


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for results.json and results.md ($OUT on a device)")
    parser.add_argument("--prepared", default=str(HERE / ".prepared"), help="what prepare.py wrote")
    parser.add_argument("--time-limit", type=float, default=470.0, help="seconds of wall time, imports included")
    parser.add_argument("--margin", type=float, default=8.0, help="seconds kept free before --time-limit")
    parser.add_argument("--quick", action="store_true", help=f"tiny sizes and few steps (CPU check): {QUICK}")
    parser.add_argument("--inits", nargs="+", default=list(INITS), choices=INITS)
    parser.add_argument("--seed", type=int, default=0, help="pretraining seed (weights, batches, masks)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the study in --out: finished fine-tuning groups are kept, pretraining goes on "
                             "from its last checkpoint (or its saved weights)")
    parser.add_argument("--checkpoint-minutes", type=float, default=0.0,
                        help="write the pretraining state into --out this often (0: never, the GPU run's default); "
                             "a CPU run uses 5")
    parser.add_argument("--dtype", default=None, help="Keras dtype policy (default: mixed_bfloat16 on a GPU)")
    group = parser.add_argument_group("pretraining (the small-compute recipe)")
    group.add_argument("--size", default="medium", choices=sorted(SIZES))
    group.add_argument("--num-layers", type=int, default=None, help="encoder blocks (default: the size's)")
    group.add_argument("--intermediate-dim", type=int, default=None, help="feed-forward width (default: the size's)")
    group.add_argument("--post-ln", action="store_true", help="BERT's post-LN blocks instead of pre-LN")
    group.add_argument("--gated-feed-forward", action="store_true", help="a gated GELU feed-forward (GeGLU)")
    group.add_argument("--no-biases", action="store_true", help="no biases in dense layers, no LayerNorm betas")
    group.add_argument("--objective", default="mlm", choices=("mlm", "electra"),
                       help="mlm: BERT's masked-LM; electra: replaced-token detection (ElectraPretrainer: a small "
                            "generator fills the masked slots, the encoder fine-tuned afterwards tells each token "
                            "replaced or original)")
    group.add_argument("--generator-size", type=float, default=0.25,
                       help="electra: the generator's width as a fraction of the encoder's (ELECTRA-small: 1/4)")
    group.add_argument("--rtd-weight", type=float, default=50.0,
                       help="electra: the weight of the detection loss beside the generator's (ELECTRA: 50)")
    group.add_argument("--pretrain-seconds", type=float, default=150.0)
    group.add_argument("--pretrain-steps", type=int, default=None,
                       help="instead of fitting steps to --pretrain-seconds: this many, run to the end whatever the "
                            "machine's load (a CPU run planned from an idle calibration; --time-limit still holds)")
    group.add_argument("--finetune-reserve", type=float, default=240.0,
                       help="seconds kept for fine-tuning: pretraining is cut to leave them")
    group.add_argument("--batch-size", type=int, default=256)
    group.add_argument("--learning-rate", type=float, default=1e-3, help="peak of the one-cycle schedule")
    group.add_argument("--warmup-share", type=float, default=0.1)
    group.add_argument("--weight-decay", type=float, default=0.01)
    group.add_argument("--mask-rate", type=float, default=0.3)
    group.add_argument("--review-share", type=float, default=0.3,
                       help="share of each batch's rows drawn from the training sentences (the rest: Austen)")
    group.add_argument("--calibration-steps", type=int, default=10)
    group.add_argument("--log-every", type=int, default=100)
    group = parser.add_argument_group("fine-tuning")
    group.add_argument("--budgets", nargs="+", default=["100", "300", "1000", "all"])
    group.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    group.add_argument("--lr-random", type=float, nargs="+", default=[3e-4, 1e-3])
    group.add_argument("--lr-pretrained", type=float, nargs="+", default=[1e-4, 3e-4])
    group.add_argument("--lr-minilm", type=float, nargs="+", default=[5e-5, 1e-4])
    group.add_argument("--finetune-batch-size", type=int, default=32)
    group.add_argument("--max-epochs", type=float, default=10.0)
    group.add_argument("--min-steps", type=int, default=120)
    group.add_argument("--max-steps", type=int, default=600)
    group.add_argument("--evaluations", type=int, default=10, help="validation scores per run (early stopping)")
    group.add_argument("--finetune-dropout", type=float, default=0.1)
    group.add_argument("--finetune-warmup-share", type=float, default=0.1)
    group.add_argument("--first-step-estimate", type=float, default=0.05,
                       help="seconds per fine-tuning step (evaluations included) the time guard assumes before "
                            "an arm's first run has measured it")
    group.add_argument("--min-arm-seconds", type=float, default=45.0,
                       help="an arm (ours, MiniLM) is built and compiled only with this many seconds left")
    group.add_argument("--pooling", default="mean", choices=BertClassifier.POOLING_MODES)
    group.add_argument("--eval-batch-size", type=int, default=256)
    group.add_argument("--mlm-eval-rows", type=int, default=2048, help="held-out rows scored for masked-token accuracy")
    args = parser.parse_args(argv)
    if args.quick:
        parser.set_defaults(**QUICK)
        args = parser.parse_args(argv)
    if args.dtype is None:
        args.dtype = "mixed_bfloat16" if jax.default_backend() == "gpu" else "float32"
    return args


def environment():
    device = jax.devices()[0]
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": getattr(device, "device_kind", str(device)), "card": getattr(device, "device_kind", None),
            "platform": jax.default_backend(),
            "device_count": jax.device_count(), "python": platform.python_version(), "jax": jax.__version__,
            "keras": keras.__version__, "numpy": np.__version__, "keras_backend": keras.backend.backend(),
            "host": platform.node()}


def load(prepared):
    arrays = {k: v.astype(np.int32) for k, v in np.load(Path(prepared) / "arrays.npz").items()}
    manifest = json.loads((Path(prepared) / "manifest.json").read_text(encoding="utf-8"))
    return arrays, manifest


def encoder_options(args):
    """The backbone's recipe options of this run (BertBackbone's and ElectraBackbone's): the size's shape
    (--num-layers and --intermediate-dim change it), pre-LN unless --post-ln, --gated-feed-forward, --no-biases."""
    sizes = dict(SIZES[args.size])
    for name in ("num_layers", "intermediate_dim"):
        if getattr(args, name):
            sizes[name] = getattr(args, name)
    return {**sizes, "normalize_first": not args.post_ln, "gated_feed_forward": args.gated_feed_forward,
            "attention_bias": not args.no_biases, "feed_forward_bias": not args.no_biases,
            "layer_norm_bias": not args.no_biases}


def our_backbone(manifest, args, dropout):
    """The encoder that is pretrained and fine-tuned (the random arm's too): an `ElectraBackbone` for
    `--objective electra` (the pretrainer needs one; at equal widths its layers are BERT's, block options included)."""
    family = ElectraBackbone if args.objective == "electra" else BertBackbone
    return family(vocabulary_size=manifest["vocabulary_size"], **encoder_options(args), dropout=dropout,
                  max_sequence_length=manifest["sequence_length"], dtype=args.dtype)


def pretraining_job(args, manifest, pools):
    """`(model, job)`: the model pretrained (its `.backbone` is what fine-tuning starts from) and its compiled
    step, for `--objective`; the AdamW it trains with is built on the model's weights."""
    backbone = our_backbone(manifest, args, dropout=0.0)
    if args.objective == "electra":
        model = ElectraPretrainer(backbone, args.generator_size, args.rtd_weight, seed=args.seed)
        job_class = training.ReplacedTokenDetection
    else:
        model, job_class = BertMaskedLM(backbone), training.Pretraining
    optimizer = create_optimizer(learning_rate=args.learning_rate, weight_decay=args.weight_decay)
    optimizer.build(model.trainable_variables)
    job = job_class(model, optimizer, pools, manifest["special_ids"], args.mask_rate, args.batch_size,
                    args.review_share)
    return model, job


def objective_options(args, model):
    """The objective's own settings, for the results (none for MLM)."""
    if args.objective != "electra":
        return {}
    return {"generator": dict(model.generator_size), "rtd_weight": args.rtd_weight}


def seed_everything(seed):
    """`keras.utils.set_random_seed` without its `tf.random.set_seed`, which imports TensorFlow where it is installed.

    Python's and NumPy's generators are seeded and Keras' global seed generator is dropped, so the
    next one (which draws every unseeded initializer) is made again from Python's generator.
    """
    from keras.src.backend.common import global_state  # Keras 3.15's own place for it (no public setter)
    from keras.src.random import seed_generator

    global_state.set_global_attribute("global_random_seed", seed)
    global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, None)
    random.seed(seed)
    np.random.seed(seed)


def copied(variables):
    return [jnp.copy(v.value) for v in variables]


def positions(variables, subset):
    """Where each variable of `subset` sits in `variables` (by identity)."""
    index = {id(v): i for i, v in enumerate(variables)}
    return [index[id(v)] for v in subset]


def pretrain(args, arrays, manifest, clock, results):
    """Phase 1: pretraining (`--objective`). Returns {"pretrained_half"/"pretrained_full": backbone weight values}."""
    seed_everything(args.seed)
    pools = {"austen": arrays["pretrain_austen"], "reviews": arrays["pretrain_reviews"]}
    model, job = pretraining_job(args, manifest, pools)
    state = [copied(model.trainable_variables), copied(model.non_trainable_variables),
             copied(job.optimizer.variables), jax.random.PRNGKey(args.seed)]
    backbone_positions = positions(model.trainable_variables, model.backbone.trainable_variables)
    saved = checkpoints.load_pretraining(args.out, state)
    if saved is not None and saved["finished"]:  # a resumed study: pretraining is done, its weights saved
        results["pretraining"] = saved["info"]
        print(f"pretraining: resumed finished weights ({saved['info']['steps_done']} steps)", flush=True)
        return {name: [values[i] for i in backbone_positions] for name, values in saved["weights"].items()}

    # Compile and measure on a copy of the start (the run itself starts from the untouched weights).
    started = time.time()
    trial = job.step(*jax.tree.map(jnp.copy, state), job.pools, np.float32(0.0))
    jax.block_until_ready(trial)
    compile_seconds = time.time() - started
    started = time.time()
    for _ in range(args.calibration_steps):
        trial = job.step(*trial[:4], job.pools, np.float32(0.0))
    jax.block_until_ready(trial)
    steps_per_second = args.calibration_steps / (time.time() - started)
    del trial
    seconds = min(args.pretrain_seconds, clock.left() - args.finetune_reserve)
    if seconds <= 0:
        results["skipped"].append(f"pretraining: {clock.left():.0f} s left after compiling, under --finetune-reserve")
        return {}
    total = max(2, int(seconds * steps_per_second))
    if args.pretrain_steps:  # a plan in steps: the run takes them all, however long the machine needs
        total, seconds = args.pretrain_steps, float("inf")
    info = {"model": {"size": args.size, **encoder_options(args), "vocabulary_size": manifest["vocabulary_size"],
                      "parameters": int(model.backbone.count_params()), "dropout": 0.0,
                      "dtype": args.dtype},
            "objective": args.objective, **objective_options(args, model),
            "batch_size": args.batch_size, "sequence_length": manifest["sequence_length"], "mask_rate": args.mask_rate,
            "num_predictions": job.num_predictions, "review_share": args.review_share,
            "peak_learning_rate": args.learning_rate, "warmup_share": args.warmup_share,
            "weight_decay": args.weight_decay, "compile_seconds": round(compile_seconds, 1),
            "calibration_steps_per_second": round(steps_per_second, 2),
            "budget_seconds": None if args.pretrain_steps else round(seconds, 1), "planned_steps": total}
    resumed = {"start_step": 0, "snapshots": {}, "curve": [], "seconds_before": 0.0}
    if saved is not None:  # a resumed study: the plan, the state and the curve of the interrupted run
        info, total, state = saved["info"], saved["info"]["planned_steps"], saved["state"]
        resumed = {"start_step": saved["step"], "snapshots": saved["snapshots"], "curve": saved["curve"],
                   "seconds_before": saved["seconds"]}
        info.setdefault("resumed_at_steps", []).append(saved["step"])
        seconds = float("inf") if info["budget_seconds"] is None else info["budget_seconds"] - saved["seconds"]
        print(f"pretraining: resumed at step {saved['step']} of {total}", flush=True)
    else:
        print(f"pretraining: compiled in {compile_seconds:.1f} s, {steps_per_second:.2f} steps/s, {total} steps "
              "planned", flush=True)

    started = time.time()
    deadline = min(started + 1.1 * seconds, clock.deadline - args.finetune_reserve / 2)
    writer = checkpoints.PretrainingCheckpoints(args.out, info, 60 * args.checkpoint_minutes,
                                                resumed["seconds_before"], started)
    state, snapshots, curve, done = job.run(state, total, args.learning_rate, args.warmup_share, deadline,
                                            snapshot_at={total // 2}, log_every=args.log_every,
                                            checkpoint=writer if args.checkpoint_minutes else None, **resumed)
    jax.block_until_ready(state[0])
    elapsed = resumed["seconds_before"] + time.time() - started
    snapshots = {"pretrained_half": (total // 2, snapshots.get(total // 2)), "pretrained_full": (done, state[0])}
    info.update(steps_done=done, seconds=round(elapsed, 1), minutes=round(elapsed / 60, 3),
                tokens_seen=done * job.tokens_per_step,
                tokens_per_second=round(done * job.tokens_per_step / elapsed), curve=curve,
                stopped_early=done < total)
    info["snapshots"], weights, trainable = {}, {}, {}
    for name, (step, values) in snapshots.items():
        if values is None:
            results["skipped"].append(f"{name}: pretraining stopped at step {done}, before step {step}")
            continue
        info["snapshots"][name] = {
            "step": step, "tokens_seen": step * job.tokens_per_step,
            "minutes": round(elapsed * step / max(done, 1) / 60, 3),
            "austen_heldout": job.evaluate(values, state[1], arrays["mlm_austen_heldout"], args.eval_batch_size,
                                           args.mlm_eval_rows),
            "review_validation": job.evaluate(values, state[1], arrays["mlm_validation"], args.eval_batch_size,
                                              args.mlm_eval_rows)}
        weights[name] = [values[i] for i in backbone_positions]
        trainable[name] = values
    results["pretraining"] = info
    if args.checkpoint_minutes:
        checkpoints.save_pretrained(args.out, info, trainable)
    return weights


class Arm:
    """One classifier architecture (ours or MiniLM), compiled once; its initial weights for every init and seed."""

    def __init__(self, make_classifier, token_ids, arrays, pad_id, args, seeds):
        self.heads = {}
        for seed in seeds:  # each seed its own random weights (ours) or head (MiniLM)
            seed_everything(seed)
            classifier = make_classifier()
            self.heads[seed] = (copied(classifier.trainable_variables), copied(classifier.non_trainable_variables))
            if seed == seeds[0]:
                first = classifier
        optimizer = create_optimizer(learning_rate=1e-4, weight_decay=0.01)
        optimizer.build(first.trainable_variables)
        self.backbone_positions = positions(first.trainable_variables, first.backbone.trainable_variables)
        self.job = training.FineTuning(first, optimizer, token_ids, arrays["labels"], pad_id, args.eval_batch_size)
        self.seconds_per_step = None
        self.compile_seconds = self.job.compile(self.heads[seeds[0]], args.finetune_batch_size)

    def init(self, seed, backbone_values=None):
        trainable, non_trainable = self.heads[seed]
        if backbone_values is not None:
            trainable = list(trainable)
            for i, value in zip(self.backbone_positions, backbone_values, strict=True):
                if value.shape != trainable[i].shape:
                    raise ValueError(f"pretrained weight {i} has shape {value.shape}, "
                                     f"the classifier's {trainable[i].shape}")
                trainable[i] = value
        return trainable, non_trainable


def build_arms(args, arrays, manifest, clock, results):
    arms = {}
    if clock.left() < args.min_arm_seconds:
        results["skipped"].append(f"fine-tuning: {max(clock.left(), 0):.0f} s left, under --min-arm-seconds")
        return arms
    if {"random", "pretrained_half", "pretrained_full"} & set(args.inits):
        def ours():
            return BertClassifier(our_backbone(manifest, args, args.finetune_dropout), 2,
                                  dropout=args.finetune_dropout, pooling=args.pooling)

        arms["ours"] = guarded(results, "building our classifier", Arm, ours, arrays["sentences"], arrays,
                               manifest["special_ids"]["pad"], args, args.seeds)
    if "minilm" in args.inits:
        folder = Path(args.prepared) / "minilm"
        if "minilm_sentences" not in arrays or not (folder / "model.safetensors").exists():
            results["skipped"].append("minilm: not prepared (prepare.py --no-minilm?)")
        elif clock.left() < args.min_arm_seconds:
            results["skipped"].append(f"minilm: {max(clock.left(), 0):.0f} s left, under --min-arm-seconds")
        else:
            def minilm_arm():
                backbone = BertBackbone.from_pretrained(str(folder), dropout=args.finetune_dropout, dtype=args.dtype)

                def minilm():  # a new head on the one loaded backbone
                    return BertClassifier(backbone, 2, dropout=args.finetune_dropout, pooling=args.pooling)

                return Arm(minilm, arrays["minilm_sentences"], arrays, manifest["minilm"]["special_ids"]["pad"], args,
                           args.seeds)

            arms["minilm"] = guarded(results, "loading and compiling the MiniLM classifier", minilm_arm)
    arms = {name: arm for name, arm in arms.items() if arm is not None}
    results["finetuning_compile_seconds"] = {name: arm.compile_seconds for name, arm in arms.items()}
    return arms


def guarded(results, what, function, *args):
    """`function(*args)`, or None with the error written into the results: one failing part (a compile
    running out of memory, say) must not lose the others' figures on a one-shot device run."""
    try:
        return function(*args)
    except Exception:  # noqa: BLE001 (reported in results.json and on stderr)
        results["errors"].append({"what": what, "error": traceback.format_exc(limit=12)})
        print(results["errors"][-1]["error"], file=sys.stderr, flush=True)
        return None


def steps_for(labels, args):
    return int(np.clip(np.ceil(args.max_epochs * labels / args.finetune_batch_size), args.min_steps, args.max_steps))


def finetune_one(arm, init_values, train, splits, steps, rate, seed, args, clock, what, results):
    """One run if the guard lets it fit; returns (record, best weights) or None (skipped, listed)."""
    estimate = steps * (arm.seconds_per_step or args.first_step_estimate)
    if estimate > clock.left():
        results["skipped"].append(f"{what}: needs about {estimate:.0f} s, {max(clock.left(), 0):.0f} s left")
        return None
    started = time.time()
    record, best = arm.job.run(init_values, train, splits["validation"], steps, args.finetune_batch_size, rate,
                               args.finetune_warmup_share, args.evaluations, seed)
    seconds = time.time() - started
    # Seconds per step, evaluations included: the guard's estimate for the next run of this arm.
    arm.seconds_per_step = max(seconds / steps, 0.5 * (arm.seconds_per_step or 0))
    record["seconds"] = round(seconds, 2)
    return record, best


def finetune(args, arrays, pretrained, arms, clock, results):
    """Phase 2: the first seed over every rate of each grid (validation chooses), then the other seeds."""
    grids = {"random": args.lr_random, "pretrained_half": args.lr_pretrained, "pretrained_full": args.lr_pretrained,
             "minilm": args.lr_minilm}
    sizes = data.budget_sizes(args.budgets, len(arrays["train"]))
    splits = {"validation": arrays["validation"], "test": arrays["test"]}
    chosen = {}
    for position, seed in enumerate(args.seeds):
        for budget in args.budgets:
            train = arrays["train"][: sizes[budget]]
            for init in args.inits:
                arm = arms.get("minilm" if init == "minilm" else "ours")
                if arm is None or (init.startswith("pretrained") and init not in pretrained):
                    continue
                done = [r for r in results["runs"] if (r["init"], r["budget"], r["seed"]) == (init, budget, seed)
                        and r.get("chosen")]
                if done:  # a resumed study finished this group: its chosen run and rate stand
                    chosen[(init, budget)] = done[0]["learning_rate"]
                    continue
                rates = grids[init] if position == 0 else [chosen.get((init, budget))]
                if rates == [None]:
                    results["skipped"].append(f"seed {seed}, {budget} labels, {init}: no rate chosen "
                                              "(its first-seed runs were skipped)")
                    continue
                outcomes = []
                for rate in rates:
                    what = f"seed {seed}, {budget} labels, {init}, rate {rate:g}"
                    outcome = finetune_one(arm, arm.init(seed, pretrained.get(init)), train, splits,
                                           steps_for(sizes[budget], args), rate, seed, args, clock, what, results)
                    if outcome is not None:
                        outcome[0].update(init=init, budget=budget, labels=sizes[budget], seed=seed, learning_rate=rate)
                        outcomes.append(outcome)
                if not outcomes:
                    continue
                record, best = max(outcomes, key=lambda o: o[0]["validation_accuracy"])  # the first of a tie
                chosen[(init, budget)] = record["learning_rate"]
                record["chosen"] = True
                record["test_accuracy"] = round(arm.job.accuracy(*best, splits["test"]), 4)  # once, chosen weights
                for other, _ in outcomes:
                    other.setdefault("chosen", False)
                    results["runs"].append(other)
                print(f"{record['init']:>16} {budget:>5} labels seed {seed}: rate {record['learning_rate']:g} "
                      f"validation {record['validation_accuracy']:.3f} test {record['test_accuracy']:.3f} "
                      f"({record['seconds']:.1f} s)", flush=True)
                results["summary"] = report.summarize(results["runs"], args.budgets, args.inits)
                report.write(results, args.out)


def main(argv=None):
    args = parse(argv)
    clock = Clock(args.time_limit, args.margin)
    arrays, manifest = load(args.prepared)
    results = {"quick": bool(args.quick or manifest.get("quick")), "environment": environment(),
               "command": " ".join([Path(sys.argv[0]).name] + (sys.argv[1:] if argv is None else list(argv))),
               "settings": {k: v for k, v in vars(args).items()}, "prepared": manifest,
               "splits": {"train": "label budgets are its first n sentences (nested); only its texts are pretraining "
                                   "text", "validation": "chooses the fine-tuning rate (first seed) and the step "
                                                         "(early stopping); never trained on",
                          "test": "scored once per run on the chosen weights; the reported figure; chose nothing"},
               "design_notes": DESIGN_NOTES, "skipped": [], "errors": [], "runs": []}
    print(f"{results['environment']['device']}: {time.time() - STARTED:.1f} s to start", flush=True)
    timeline = results["timeline_seconds"] = {"started": round(time.time() - STARTED, 1)}
    results = checkpoints.resume_results(args, results)
    report.write(results, args.out)
    pretrained = {}
    if {"pretrained_half", "pretrained_full"} & set(args.inits):
        pretrained = guarded(results, "pretraining", pretrain, args, arrays, manifest, clock, results) or {}
        timeline["pretrained_and_scored"] = round(time.time() - STARTED, 1)
        report.write(results, args.out)
    started = time.time()
    arms = build_arms(args, arrays, manifest, clock, results)
    results["finetuning_setup_seconds"] = round(time.time() - started, 1)
    timeline["classifiers_built_and_compiled"] = round(time.time() - STARTED, 1)
    guarded(results, "fine-tuning", finetune, args, arrays, pretrained, arms, clock, results)
    timeline["finetuned"] = round(time.time() - STARTED, 1)
    results["summary"] = report.summarize(results["runs"], args.budgets, args.inits)
    results["tensorflow_imported"] = "tensorflow" in sys.modules
    results["wall_seconds"] = round(time.time() - STARTED, 1)
    report.write(results, args.out)
    print(report.markdown(results), flush=True)
    return results


if __name__ == "__main__":
    main()
