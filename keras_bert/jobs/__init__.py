"""Training jobs: `pretrain`, `finetune`, and the `JobRunner` (build or resume, checkpoints, atomic save) they share."""
