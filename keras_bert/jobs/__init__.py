"""Training jobs: `pretrain`, `finetune`, `distill`, `convert`, and the `JobRunner` (build or resume, checkpoints,
atomic save) they share. Each job's options are one dataclass (`finetune_options.FinetuneOptions`, ...): the job
function's keywords and, through `keras_bert.cli.job_arguments`, the command's options."""
