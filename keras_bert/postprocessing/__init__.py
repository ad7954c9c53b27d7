"""Task post-processing, defined once: what the model's outputs over a batch of texts mean as answers.

- `text_windows`: windows over texts longer than one sequence (single texts
  and pairs), BERT's max-context rule, and the aggregation of the windows'
  outputs (per text, per token).
- `label_scores`: labels and choices with their probabilities.
- `entity_spans`: word tags and entity spans from per-token probabilities.
- `answer_spans`: n-best answer decoding over all windows of a context.

Everything here is TensorFlow ops on whole batches: the exported SavedModel
traces these functions into its `serve_text` graph, and the Python pipelines
(`keras_bert.pipelines`) and the fine-tuning features and evaluation
(`keras_bert.preprocessing.task_data`) run the same functions eagerly, so a
served model and a pipeline cannot read a text differently. Nothing here
imports the pipelines, the export code or the preprocessing.
"""
