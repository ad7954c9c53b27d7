"""A probe for issue 46: fine-tuning through the masked-LM head ("it was [MASK] .") instead of a new classifier head.

    KERAS_BACKEND=jax .venv/bin/python -m benchmarks.studies.pretraining_payoff_labels.prompt_probe \
        --run runs/payoff_cpu/seed0 --init pretrained_full --out runs/payoff_cpu/prompt_seed0.json
    .venv/bin/python -m benchmarks.studies.pretraining_payoff_labels.prompt_probe compare --budget 300 \
        --study runs/payoff_cpu/random/results.json runs/payoff_cpu/seed0/results.json \
        --prompt runs/payoff_cpu/prompt_random.json runs/payoff_cpu/prompt_seed0.json --out comparison.json

Why: the study fine-tunes a new, randomly initialised head on the tokens' mean, so what the pretrained
masked-LM head learned (which words fit where) is thrown away, and with 300 labels the new head has to be
learned from 300 sentences. Prompt-based fine-tuning (Schick & Schuetze 2021, PET; Gao et al. 2021, LM-BFF)
appends a template with a [MASK] to each sentence and reads the class from the masked-LM head's scores of two
words, one per class (the "verbalizer"): the whole pretrained model, head included, starts the task. Random
initialisation gets the same treatment (its masked-LM head is random), so the arms stay comparable.

The protocol is the study's (`study.py`): the same prepared arrays, splits and label budget (the first n of the
training order), `training.FineTuning`'s compiled steps, one-cycle schedule, evaluations and early stopping by
validation accuracy. Validation chooses the learning rate and the verbalizer on the first seed; the other seeds
run with that choice; the test split is scored once per chosen run, on the weights validation chose. The
architecture and the pretrained weights are those of a finished study run (`--run`: its `results.json` settings
and `pretrained.npz`, which holds the masked-LM head as well as the encoder).

`compare` puts the two ways side by side per init (the study's runs with a new head, this probe's through the
masked-LM head): the way with the higher mean validation accuracy over the seeds is the init's (a rule fixed
before either ran), its test accuracies are reported, and the payoff is the chosen pretrained way minus the chosen
random way, paired by fine-tuning seed.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.common import interval  # noqa: E402
from benchmarks.studies.pretraining_payoff_labels import checkpoints, data, study, training  # noqa: E402
from keras_bert.atomic_files import write_json_atomically  # noqa: E402
from keras_bert.models.bert_masked_lm import BertMaskedLM  # noqa: E402
from keras_bert.optimizers import create_optimizer  # noqa: E402

TEMPLATE = ("it", "was", "[MASK]", ".")
# Class 0 is a negative mean rating, class 1 a positive one (data.read_sentences).
VERBALIZERS = {"great/terrible": ("terrible", "great"), "good/bad": ("bad", "good")}


def prompt_rows(sentences, special, template_ids):
    """Each sentence row `[CLS] words [SEP] pad...` as `[CLS] words it was [MASK] . [SEP] pad...` (the words
    cut where the template would not fit), and the [MASK]'s position in each row."""
    rows = np.full_like(sentences, special["pad"])
    positions = np.zeros(len(sentences), np.int32)
    width = sentences.shape[1]
    mask_offset = template_ids.index(special["mask"])
    for i, row in enumerate(sentences):
        length = int(np.sum(row != special["pad"]))
        words = row[1 : length - 1][: width - 2 - len(template_ids)]
        filled = np.concatenate([[special["cls"]], words, template_ids, [special["sep"]]])
        rows[i, : len(filled)] = filled
        positions[i] = 1 + len(words) + mask_offset
    return rows, positions


class PromptFineTuning(training.FineTuning):
    """`training.FineTuning` on a `BertMaskedLM`: the class logits are its scores of the verbalizer's two words
    at each row's [MASK]."""

    def __init__(self, masked_lm, optimizer, token_ids, mask_positions, labels, pad_id, eval_batch_size):
        super().__init__(masked_lm, optimizer, token_ids, labels, pad_id, eval_batch_size)
        self.mask_positions = jnp.asarray(mask_positions, jnp.int32)[:, None]
        # The compiled steps take the verbalizer's word ids as an argument (one compilation serves every
        # verbalizer); `use` binds them to the names FineTuning's run, accuracy and compile call.
        self.jitted_train_step, self.jitted_predict_batch = self.train_step, self.predict_batch
        self.use([0, 0])

    def use(self, word_ids):
        word_ids = jnp.asarray(word_ids, jnp.int32)
        self.train_step = lambda *args: self.jitted_train_step(*args, word_ids)
        self.predict_batch = lambda *args: self.jitted_predict_batch(*args, word_ids)

    def _inputs(self, indices):
        return {**super()._inputs(indices), "mask_positions": self.mask_positions[indices]}

    def _class_logits(self, trainable, non_trainable, indices, word_ids, training):
        logits, non_trainable = self.model.stateless_call(trainable, non_trainable, self._inputs(indices),
                                                          training=training)
        return logits[:, 0, :][:, word_ids], non_trainable

    def _loss(self, trainable, non_trainable, indices, word_ids):
        logits, non_trainable = self._class_logits(trainable, non_trainable, indices, word_ids, True)
        loss, _, _ = training.masked_cross_entropy(logits, self.labels[indices], jnp.ones(indices.shape))
        return loss, non_trainable

    def _train_step(self, trainable, non_trainable, optimizer_values, indices, learning_rate, word_ids):
        (loss, non_trainable), grads = jax.value_and_grad(self._loss, has_aux=True)(trainable, non_trainable,
                                                                                    indices, word_ids)
        trainable, optimizer_values = training._apply(self.optimizer, self.lr_index, optimizer_values, grads,
                                                      trainable, learning_rate)
        return trainable, non_trainable, optimizer_values, loss

    def _predict_batch(self, trainable, non_trainable, indices, word_ids):
        logits, _ = self._class_logits(trainable, non_trainable, indices, word_ids, False)
        return jnp.argmax(logits, axis=-1)


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="a finished study run folder (results.json, pretrained.npz)")
    parser.add_argument("--init", required=True, choices=("random", "pretrained_half", "pretrained_full"))
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--prepared", default=str(study.HERE / ".prepared"))
    parser.add_argument("--budget", default="300")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--rates", type=float, nargs="+", default=[3e-4, 1e-3, 3e-3])
    parser.add_argument("--verbalizers", nargs="+", default=list(VERBALIZERS), choices=list(VERBALIZERS))
    return parser.parse_args(argv)


def compare(argv):
    parser = argparse.ArgumentParser(description="the study's new-head runs and the probe's, per init")
    parser.add_argument("--budget", default="300")
    parser.add_argument("--study", nargs="+", required=True, help="study results.json files (chosen runs)")
    parser.add_argument("--prompt", nargs="+", required=True, help="this probe's JSON files")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    ways = {}  # (init, way) -> {seed: chosen run}
    for path in args.study:
        with open(path, encoding="utf-8") as f:
            for run in json.load(f)["runs"]:
                if run.get("chosen") and run["budget"] == args.budget:
                    ways.setdefault((run["init"], "new head"), {})[run["seed"]] = run
    for path in args.prompt:
        with open(path, encoding="utf-8") as f:
            probe = json.load(f)
        if probe["budget"] == args.budget:
            ways[(probe["init"], "masked-LM head")] = {run["seed"]: run for run in probe["runs"] if run["chosen"]}
    table = {}
    for (init, way), runs in sorted(ways.items()):
        table.setdefault(init, {})[way] = {
            "validation": interval([r["validation_accuracy"] for r in runs.values()]),
            "test": interval([r["test_accuracy"] for r in runs.values()]), "seeds": sorted(runs)}
    for init, row in table.items():
        row["chosen_way"] = max(row, key=lambda way: row[way]["validation"]["mean"])  # first of a tie
    comparison = {"budget": args.budget, "rule": "per init, the way with the higher mean validation accuracy",
                  "inits": table}
    if "random" in table:
        base = ways[("random", table["random"]["chosen_way"])]
        for init in [i for i in table if i != "random"]:
            ours = ways[(init, table[init]["chosen_way"])]
            comparison[f"payoff_{init}"] = interval([ours[s]["test_accuracy"] - base[s]["test_accuracy"]
                                                     for s in sorted(set(ours) & set(base))])
    write_json_atomically(comparison, args.out)
    print(json.dumps(comparison, indent=1))


def run_settings(run, run_folder):
    """The run's architecture and fine-tuning settings over today's defaults, as a Namespace.

    A run written before an option existed (`--objective`, say) ran with the
    behaviour that option's default keeps, so the default fills the gap; every
    setting the run recorded wins over today's default.
    """
    return argparse.Namespace(**{**vars(study.parse(["--out", str(run_folder)])), **run["settings"]})


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["compare"]:
        return compare(argv[1:])
    args = parse(argv)
    with open(Path(args.run) / "results.json", encoding="utf-8") as f:
        run = json.load(f)
    settings = run_settings(run, args.run)
    arrays, manifest = study.load(args.prepared)
    special = manifest["special_ids"]
    vocabulary = (Path(args.prepared) / "vocab.txt").read_text(encoding="utf-8").splitlines()
    index = {token: i for i, token in enumerate(vocabulary)}
    missing = [w for w in TEMPLATE + tuple(w for v in args.verbalizers for w in VERBALIZERS[v]) if w not in index]
    if missing:
        sys.exit(f"error: not in the prepared vocabulary: {missing}")
    rows, positions = prompt_rows(arrays["sentences"], special, [index[w] for w in TEMPLATE])

    def masked_lm():
        return BertMaskedLM(study.our_backbone(manifest, settings, settings.finetune_dropout))

    heads = {}  # per seed: the fresh model's values (random weights, dropout seed state)
    for seed in args.seeds:
        study.seed_everything(seed)
        model = masked_lm()
        heads[seed] = (study.copied(model.trainable_variables), study.copied(model.non_trainable_variables))
        if seed == args.seeds[0]:
            first = model
    pretrained = None
    if args.init != "random":
        saved = checkpoints.load_pretraining(args.run, [heads[args.seeds[0]][0], None, None, None])
        if saved is None or not saved["finished"]:
            sys.exit(f"error: {args.run} holds no finished pretraining (pretrained.npz)")
        pretrained = saved["weights"][args.init]
    optimizer = create_optimizer(learning_rate=1e-4, weight_decay=0.01)
    optimizer.build(first.trainable_variables)
    job = PromptFineTuning(first, optimizer, rows, positions, arrays["labels"], special["pad"],
                           settings.eval_batch_size)
    sizes = data.budget_sizes([args.budget], len(arrays["train"]))
    train = arrays["train"][: sizes[args.budget]]
    steps = study.steps_for(sizes[args.budget], settings)
    results = {"command": " ".join(sys.argv), "environment": study.environment(), "init": args.init,
               "budget": args.budget, "labels": sizes[args.budget], "template": " ".join(TEMPLATE),
               "verbalizers": {v: VERBALIZERS[v] for v in args.verbalizers}, "steps": steps,
               "splits": run["splits"], "runs": []}
    chosen = None
    for position, seed in enumerate(args.seeds):
        trainable, non_trainable = heads[seed]
        init = (pretrained if pretrained is not None else trainable, non_trainable)
        grid = ([(r, v) for v in args.verbalizers for r in args.rates] if position == 0 else [chosen])
        outcomes = []
        for rate, verbalizer in grid:
            job.use([index[w] for w in VERBALIZERS[verbalizer]])
            started = time.time()
            record, best = job.run(init, train, arrays["validation"], steps, settings.finetune_batch_size, rate,
                                   settings.finetune_warmup_share, settings.evaluations, seed)
            record.update(seed=seed, learning_rate=rate, verbalizer=verbalizer, seconds=round(time.time() - started, 1))
            outcomes.append((record, best, verbalizer))
            print(f"seed {seed} rate {rate:g} {verbalizer}: validation {record['validation_accuracy']:.4f}", flush=True)
        record, best, verbalizer = max(outcomes, key=lambda o: o[0]["validation_accuracy"])  # first of a tie
        chosen = (record["learning_rate"], verbalizer)
        job.use([index[w] for w in VERBALIZERS[verbalizer]])
        record.update(chosen=True, test_accuracy=round(job.accuracy(*best, arrays["test"]), 4))  # once
        print(f"seed {seed}: chose rate {chosen[0]:g} {verbalizer}, validation {record['validation_accuracy']:.4f} "
              f"test {record['test_accuracy']:.4f}", flush=True)
        for other, _, _ in outcomes:
            other.setdefault("chosen", False)
            results["runs"].append(other)
        write_json_atomically(results, args.out)
    tests = [r["test_accuracy"] for r in results["runs"] if r["chosen"]]
    results["test_accuracy"] = interval(tests)
    write_json_atomically(results, args.out)
    print(json.dumps(results["test_accuracy"]))


if __name__ == "__main__":
    main()
