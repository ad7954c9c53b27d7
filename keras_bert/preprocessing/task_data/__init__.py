"""Task data: each fine-tuning task's readers (labelled files -> examples) and features (examples -> model inputs).

"Task" has one meaning per place in the package: the task registry
(`keras_bert.task_registry`) names a task's parts; these modules are its
`reader` and `features`; `keras_bert.jobs.finetune_handlers` holds what the
fine-tuning job does per task; `keras_bert.models.BertTask` is the base of
the task models.
"""
