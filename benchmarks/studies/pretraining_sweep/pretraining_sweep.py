"""Which pretraining settings learn most in a fixed wall-clock budget? A small grid, ranked.

Each setting of the grid (size x sequence length x learning rate x packing x masking) pretrains
from scratch for `--budget-minutes` (calibration included) on the corpus of
`benchmarks/studies/pretraining_payoff/pretraining_payoff.py` (five Austen novels plus the unlabeled movie-review training
sentences, its vocabulary), and is scored on *Persuasion*, the novel left out of the corpus: masked-token
accuracy (with the run's own masking) and NSP accuracy at the end of the budget. The ranking decided the
defaults of `keras-bert pretrain --budget-minutes` runs (`keras_bert.jobs.pretrain_budget.BUDGET_RECIPE`; the
run of 2026-11-25 is in benchmarks/studies/pretraining_sweep/pretraining_sweep_results.json and the README).

What chose what: *Persuasion* chose the recipe, so every figure here is a validation figure
(`validation_mlm_accuracy`, `validation_nsp_accuracy`; the results file of 2026-11-25 calls them
`heldout_*`). The sweep reports no test figure: what the chosen recipe is worth downstream is measured by
the payoff study, on the movie-review test sentences, which neither study chose anything on. Only the
review sentences of the training split go into the corpus (never the validation or test sentences).

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/pretraining_sweep/pretraining_sweep.py --budget-minutes 3 \\
        [--sizes tiny mini] [--sequence-lengths 64 128] [--learning-rates 1e-3 2e-3] \\
        [--packing off on] [--maskings whole-word] [--report sweep.json]

Short budgets rank settings; the payoff table uses the full budget. Not part of the test suite.
"""

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))  # the checkout

from benchmarks.finetune_sentiment import read_split  # noqa: E402
from benchmarks.studies.pretraining_payoff.pretraining_payoff import DOCUMENT_SEPARATOR, ROOT, prepare_corpus, vocabulary  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-minutes", type=float, default=5.0)
    parser.add_argument("--sizes", nargs="+", default=["tiny", "mini"])
    parser.add_argument("--sequence-lengths", nargs="+", type=int, default=[64, 128])
    parser.add_argument("--learning-rates", nargs="+", type=float, default=[1e-3, 2e-3])
    parser.add_argument("--packing", nargs="+", choices=["off", "on"], default=["off"])
    parser.add_argument("--maskings", nargs="+", default=["whole-word"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--eval-batches", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", default=str(ROOT / "benchmarks" / ".cache" / "payoff"))
    parser.add_argument("--report", help="write the results as JSON here (rewritten after every setting)")
    args = parser.parse_args(argv)

    import keras

    from keras_bert.jobs.pretrain_budget import pretrain_within_budget

    work = Path(args.work)
    files, heldout_novel = prepare_corpus(work, read_split()[0]["train"])
    vocab = vocabulary(work, files, args.vocab_size)
    grid = list(itertools.product(args.sizes, args.sequence_lengths, args.learning_rates, args.packing, args.maskings))
    print(f"backend {keras.backend.backend()}: {len(grid)} settings x {args.budget_minutes} min")
    rows = []
    for size, length, rate, packing, masking in grid:
        name = f"{size}_T{length}_lr{rate:g}_pack-{packing}_{masking}"
        started = time.time()
        summary = pretrain_within_budget(
            files, vocab, str(work / "sweep" / name), args.budget_minutes, eval_corpus=heldout_novel,
            eval_batches=args.eval_batches, size=size, sequence_length=length, batch_size=args.batch_size,
            learning_rate=rate, pack_sequences=packing == "on", masking=masking, seed=args.seed,
            document_separator=DOCUMENT_SEPARATOR, overwrite=True, tensorboard=False, verbose=0,
        )
        final = summary["final_metrics"]
        row = {"setting": name, "size": size, "sequence_length": length, "learning_rate": rate,
               "packing": packing, "masking": masking, "steps": summary["budget"]["steps"],
               "step_seconds": summary["budget"]["step_seconds"],
               "validation_mlm_accuracy": round(final.get("val_mlm_accuracy", float("nan")), 4),
               "validation_nsp_accuracy": round(final.get("val_nsp_accuracy", float("nan")), 4),
               "wall_minutes": round((time.time() - started) / 60, 2)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.report:
            with open(args.report, "w", encoding="utf-8") as f:
                json.dump({"backend": keras.backend.backend(), "options": vars(args),
                           "ranked_by": "validation (Persuasion) masked-token accuracy at the end of the budget",
                           "results": rows}, f, indent=2)
    print()
    print("validation (Persuasion, the set that ranks the settings) accuracies; no test figure here")
    print(f"{'setting':44} {'steps':>6} {'MLM acc':>8} {'NSP acc':>8} {'minutes':>8}")
    for r in sorted(rows, key=lambda r: -r["validation_mlm_accuracy"]):
        print(f"{r['setting']:44} {r['steps']:6d} {r['validation_mlm_accuracy']:8.4f} "
              f"{r['validation_nsp_accuracy']:8.4f} {r['wall_minutes']:8.2f}")
    return rows


if __name__ == "__main__":
    main()
