"""RunOptions: what every training job (`pretrain`, `finetune`, `distill`) takes about its run and output folder."""

import dataclasses

from keras_bert.jobs.job_options import JobOptions, option


@dataclasses.dataclass(frozen=True)
class RunOptions(JobOptions):
    """The output folder, resuming, progress and logs of a training run (see `JobRunner`)."""

    output_dir: str = option(help="output folder", flag="--out")
    verbose: int = option(1, "no progress output; one JSON line of the evaluation metrics", switches={"--quiet": 0})
    callbacks: tuple = option((), "extra Keras callbacks, run after the job's own", cli=False)
    resume: bool = option(False, "continue from the last checkpoint in --out (one is written at every epoch end); "
                                 "the run must have the job's arguments", switches={"--resume": True})
    overwrite: bool = option(False, "start over in an --out folder that holds an earlier run: its outputs "
                                    "(model.keras, the job record, reports, history, logs, checkpoints) are deleted "
                                    "before training starts; vocab.txt and files of your own stay",
                             switches={"--overwrite": True})
    keep_checkpoints: bool = option(True, "keep --out/checkpoints once the run has finished: the last checkpoint's "
                                          "weights and the optimizer state that --resume continues from (with "
                                          "AdamW's two moments per weight, about three times the size of "
                                          "model.keras, which has no optimizer state); --no-keep-checkpoints deletes "
                                          "the folder once model.keras is written",
                                    switches={"--keep-checkpoints": True, "--no-keep-checkpoints": False})
    tensorboard: bool = option(True, "write no TensorBoard logs to --out/logs", switches={"--no-tensorboard": False})
