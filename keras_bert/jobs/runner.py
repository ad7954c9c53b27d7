"""What every training job shares: build or resume a model, fit it with resumable checkpoints, save it.

`pretrain` and `finetune` each read as a list of phases; the phases they
have in common live here, in `JobRunner`, so both resume, log and save the
same way:

    runner = JobRunner(output_dir, job, resume_keys, resume=resume, strategy=strategy)
    model = runner.build_or_resume(build_and_compile)      # a checkpoint of the same job, or a new model
    history = runner.fit(model, batches, epochs=..., steps_per_epoch=...)
    runner.save(model, tokenizer.get_vocabulary())         # model.keras, vocab.txt
    runner.write_json("config.json", record)               # the job record, written last
    runner.finish()                                        # (deletes checkpoints/ unless they are kept)

Output folder (besides what each job adds):
    model.keras          the trained model, for predicting: no optimizer state (written atomically)
    vocab.txt            the vocabulary it reads
    history.csv          one row per epoch (appended to on resume)
    logs/                TensorBoard logs (when enabled)
    checkpoints/         the latest resumable checkpoint, with the optimizer state (see
                         `keras_bert.jobs.checkpointing`); deleted when the run finishes without `keep_checkpoints`

One run per folder: a run is finished once model.keras and then its record are
written (`keras_bert.run_folders`). A new run refuses a folder that holds an
earlier one, or with `overwrite` deletes that run's outputs before it starts;
a resumed run deletes its own model.keras and record first (it writes them
again when it finishes). A folder whose run was interrupted therefore holds no
model.keras that predict, export or `--init` could take for a finished one.

Distribution: the model is built and `fit` runs under `strategy_scope(strategy)`.
Only the chief writes to the output folder. Saving runs collective ops under
MultiWorkerMirroredStrategy, so the other workers save too, into a temporary
folder that `finish` deletes (tf.distribute's pattern for this).
"""

import os
import shutil
import tempfile

import keras
import numpy as np

from keras_bert.atomic_files import write_atomically, write_json_atomically, write_text_atomically
from keras_bert.distribution import is_chief, strategy_scope
from keras_bert.jobs.checkpointing import (
    NonFiniteLossGuard,
    ResumableCheckpoint,
    has_checkpoint,
    load_checkpoint,
    read_checkpoint_state,
)
from keras_bert.jobs.progress import PlainProgressLogger, interactive
from keras_bert.jobs.random_state import KeepRandomStateThroughEvaluation
from keras_bert.run_folders import (
    CHECKPOINT_DIR,
    MODEL_FILE,
    TOKENIZER_FILE,
    clear_run,
    final_outputs,
    remove_final_outputs,
)


def check_same_job(recorded, job, keys, checkpoint_dir):
    """Raises unless `job` agrees with the checkpoint's `recorded` job on every one of `keys`.

    A resumed run that changed any of them would silently continue a different
    training. Keys that an older checkpoint did not record are not compared.

    Raises:
        ValueError naming every differing key with both values.
    """
    different = {k: (recorded[k], job[k]) for k in keys if k in recorded and recorded[k] != job[k]}
    if different:
        shown = ", ".join(f"{k}: checkpoint {a!r} vs now {b!r}" for k, (a, b) in different.items())
        raise ValueError(
            f"--resume: the checkpoint in {checkpoint_dir} is from a different job ({shown}); use the same "
            "arguments, or another --out folder."
        )


class JobRunner:
    """Builds or resumes, fits and saves the model of one training job.

    Args:
        output_dir: the job's output folder.
        job: dict of the job's arguments (JSON values, `steps` among them);
            recorded in every checkpoint, so that `--resume` can compare it with the new run's.
        resume_keys: the keys of `job` a resumed run must share with its checkpoint.
        resume: continue from the checkpoint in `output_dir/checkpoints`, if any.
        overwrite: start afresh in a folder that holds an earlier run (its
            outputs are deleted first: `run_folders.clear_run`). Without
            `resume` or `overwrite`, such a folder is refused: a new run would
            replace that run's files one by one and leave a mix of both. So is
            one with `resume` but no checkpoint to continue from.
        keep_checkpoints: keep `checkpoints/` after the run finishes (for a
            later `resume`); False deletes it once the record is written.
        strategy: None, or a strategy / distribution object (see `keras_bert.distribution`).
        upgrade_record: optional; turns the job recorded by an older
            checkpoint into today's spelling before the comparison.
        tensorboard: write TensorBoard logs to `output_dir/logs`.
        callbacks: extra Keras callbacks, run after the runner's own.
        before_checkpoint: Keras callbacks whose epoch end must come before the
            epoch's checkpoint is committed (e.g. one that records the best
            epoch: a kill between the two then repeats the epoch instead of
            losing its record). They may be given after construction too, as
            `runner.before_checkpoint`, until `fit`.
        verbose: 1 says whether the run resumes and shows progress (Keras' bar
            on a terminal; when stdout is not one, a `PlainProgressLogger` line
            every `progress_interval` seconds, so logs stay readable); 0 is silent.
        epoch_name: what the plain progress lines call an epoch ("checkpoint" in pretraining).
        progress_interval: seconds between plain progress lines.
        model_format: None to checkpoint `.keras` files, or how else to write
            and read the checkpoint's model (see `checkpointing.save_checkpoint`;
            LoRA runs use `RawVariablesFormat`, rebuilding with `build_or_resume`'s `build`).

    Attributes:
        start_step: the step the run starts from (0, or the checkpoint's).
        write_dir: where this process writes: `output_dir` on the chief, else a temporary folder.
    """

    def __init__(
        self,
        output_dir,
        job,
        resume_keys,
        *,
        resume=False,
        overwrite=False,
        keep_checkpoints=True,
        strategy=None,
        upgrade_record=None,
        tensorboard=True,
        callbacks=(),
        before_checkpoint=(),
        verbose=1,
        model_format=None,
        epoch_name="epoch",
        progress_interval=5.0,
    ):
        self.output_dir = os.fspath(output_dir)
        self.job = job
        self.resume_keys = tuple(resume_keys)
        self.resume = resume
        self.keep_checkpoints = keep_checkpoints
        self.strategy = strategy
        self.upgrade_record = upgrade_record
        self.tensorboard = tensorboard
        self.callbacks = list(callbacks)
        self.before_checkpoint = list(before_checkpoint)
        self.verbose = verbose
        self.model_format = model_format or None
        self.epoch_name = epoch_name
        self.progress_interval = progress_interval
        self.checkpoint_dir = os.path.join(self.output_dir, CHECKPOINT_DIR)
        self.chief = is_chief()
        if not (resume and has_checkpoint(self.checkpoint_dir)):
            self._clear_earlier_run(overwrite)
        self.write_dir = self.output_dir if self.chief else tempfile.mkdtemp(prefix="keras_bert_worker_")
        os.makedirs(self.write_dir, exist_ok=True)
        self.start_step = 0

    def _clear_earlier_run(self, overwrite):
        """Refuses (or, with `overwrite`, clears) an output folder that holds an earlier run, before anything is
        written.

        Raises:
            FileExistsError naming what the earlier run left and the ways on.
        """
        state = read_checkpoint_state(self.checkpoint_dir) if os.path.isdir(self.checkpoint_dir) else None
        # With `resume`, a checkpoint is here only when the model file its record names is not.
        broken = " whose model file is missing" if self.resume else ""
        found = ([f"a checkpoint at step {state['step']}{broken}"] if state is not None else []) + [
            f"a {name}" for name in final_outputs(self.output_dir)
        ]
        if not found:
            return
        if not overwrite and self.resume:  # --resume without a checkpoint would start over beside that run
            raise FileExistsError(
                f"{self.output_dir} holds an earlier run ({', '.join(found)}) but no checkpoint for --resume to "
                "continue from; pass --overwrite to start over in it, or another --out folder."
            )
        if not overwrite:
            raise FileExistsError(
                f"{self.output_dir} holds an earlier run ({found[0]}); pass --resume to continue it, --overwrite to "
                "start over in it, or another --out folder."
            )
        if self.chief:
            clear_run(self.output_dir)

    def path(self, name):
        """Where this process writes the output file `name`."""
        return os.path.join(self.write_dir, name)

    def build_or_resume(self, build):
        """The checkpoint's model when resuming from one, else `build()` (a new, compiled model).

        Both happen under the strategy's scope, so the variables are distributed.

        Raises:
            ValueError: the checkpoint is of a job with other `resume_keys` values.
        """
        with strategy_scope(self.strategy):
            if self.resume and has_checkpoint(self.checkpoint_dir):
                recorded = read_checkpoint_state(self.checkpoint_dir).get("job", {})
                if self.upgrade_record is not None:
                    recorded = self.upgrade_record(recorded)
                check_same_job(recorded, self.job, self.resume_keys, self.checkpoint_dir)
                if self.chief:  # written again when this run finishes; until then the folder is not a finished run
                    remove_final_outputs(self.output_dir)
                model, state = load_checkpoint(self.checkpoint_dir, self.model_format, build)
                self.start_step = state["step"]
                if self.verbose:
                    print(f"Resuming from step {self.start_step} of {self.job['steps']} ({self.checkpoint_dir})")
                return model
            if self.resume and self.verbose:
                print(f"No checkpoint in {self.checkpoint_dir}: starting from scratch.")
            return build()

    def fit(self, model, data, *, epochs, steps_per_epoch, **fit_options):
        """`model.fit` from `start_step` to `epochs * steps_per_epoch`, checkpointing every epoch.

        Args:
            model: from `build_or_resume`.
            data: the training batches, already past the first `start_step`
                (a resumed run skips the batches trained on before).
            epochs, steps_per_epoch: the whole run's; an epoch ends with a checkpoint.
            **fit_options: passed to `fit` (`validation_data`, `shuffle`, ...).

        Returns:
            `{metric: [float per epoch]}` of the epochs run now (empty when the
            checkpoint had finished training).
        """
        if self.start_step >= epochs * steps_per_epoch:
            return {}
        # Keras' bar redraws itself with "\r" and backspaces: in a log file that is every step's bar on one line.
        plain = bool(self.verbose) and not interactive()
        with strategy_scope(self.strategy):
            result = model.fit(
                data,
                epochs=epochs,
                steps_per_epoch=steps_per_epoch,
                initial_epoch=self.start_step // steps_per_epoch,
                callbacks=self._callbacks(steps_per_epoch, plain),
                verbose=0 if plain else self.verbose,
                # Our datasets shuffle themselves; Keras' default shuffle=True only warns about that.
                **{"shuffle": False, **fit_options},
            )
        return {k: [float(v) for v in values] for k, values in result.history.items()}

    def _callbacks(self, steps_per_epoch, plain=False):
        callbacks = [
            # First, so its state is taken before any other callback's `on_test_begin`: held-out evaluation
            # must not change the training's random draws (torch's data iterator draws a seed; see random_state).
            KeepRandomStateThroughEvaluation(),
            # The guard raises at the end of a non-finite step, before the
            # epoch-end checkpoint could save the broken weights.
            NonFiniteLossGuard(self.checkpoint_dir, steps_per_epoch),
            *self.before_checkpoint,
            ResumableCheckpoint(self.path("checkpoints"), steps_per_epoch, extra={"job": self.job},
                                model_format=self.model_format),
            keras.callbacks.CSVLogger(self.path("history.csv"), append=self.start_step > 0),
            *self.callbacks,
        ]
        if self.tensorboard:
            callbacks.append(keras.callbacks.TensorBoard(self.path("logs")))
        if plain:
            callbacks.append(PlainProgressLogger(self.progress_interval, epoch_name=self.epoch_name))
        return callbacks

    def save(self, model, vocabulary, tokenizer=None):
        """Writes `model.keras` and `vocab.txt` (the tokens in id order), each atomically.

        model.keras holds what predicting needs: the architecture and weights of
        an uncompiled copy of `model`, without its optimizer state (with AdamW
        twice the weights' size); the checkpoints keep that state for `resume`.
        A `tokenizer` that a vocab.txt cannot give (not WordPiece: ModernBERT's
        byte-level BPE, ...) is saved too, as `keras_bert_tokenizer.json`, which
        `Tokenizer.from_pretrained` (and so every command that loads the run) reads.
        """
        write_atomically(self.path(MODEL_FILE), uncompiled(model).save, suffix=".keras")
        write_text_atomically("".join(token + "\n" for token in vocabulary), self.path("vocab.txt"))
        if tokenizer is not None and type(tokenizer).__name__ != "BertTokenizer":
            from keras_bert.preprocessing.tokenizer import saved_tokenizer_contents  # defers TensorFlow

            write_json_atomically(saved_tokenizer_contents(tokenizer), self.path(TOKENIZER_FILE))

    def write_json(self, name, data):
        """Writes `data` as the JSON file `name` of the output folder, atomically."""
        write_json_atomically(data, self.path(name))

    def finish(self):
        """Ends the run once its record is written: deletes a non-chief worker's temporary folder, and without
        `keep_checkpoints` the checkpoints (model.keras has the weights; only `resume` needed them)."""
        if not self.chief:
            shutil.rmtree(self.write_dir, ignore_errors=True)
        elif not self.keep_checkpoints:
            shutil.rmtree(self.checkpoint_dir, ignore_errors=True)


def uncompiled(model):
    """`model` when it is not compiled, else an uncompiled copy of it (same class, config and weights).

    The copy has no optimizer, so saving it writes no optimizer state, and
    loading the file then restores no optimizer that a predicting process
    would not use. Rebuilt from `model`'s config like `keras.saving.load_model`
    does; each weight goes through a host copy (on JAX, the same buffer in two
    models would let one model's donated buffers delete the other's weights).

    Raises:
        ValueError: the copy's weights do not match `model`'s (a model whose config does not rebuild it).
    """
    if not getattr(model, "compiled", False):
        return model
    copy = type(model).from_config(model.get_config())
    if [v.shape for v in copy.weights] != [v.shape for v in model.weights]:
        raise ValueError(f"{type(model).__name__}.from_config(get_config()) does not rebuild the model's weights.")
    for target, source in zip(copy.weights, model.weights):
        target.assign(np.array(keras.ops.convert_to_numpy(source)))
    return copy
