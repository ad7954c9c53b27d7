"""CompiledStepOptions: `--jit-compile`, the one switch of `finetune` and `pretrain` for a compiled training step."""

import dataclasses

from keras_bert.jobs.job_options import JobOptions, option


@dataclasses.dataclass(frozen=True)
class CompiledStepOptions(JobOptions):
    """Whether the job's train step is compiled whole (`model.jit_compile`)."""

    jit_compile: bool = option(
        None, "compile the whole training step once (forward, loss, backward, update): on torch keras_bert's "
              "CompiledTrainStep (a minute or two of compiling, then about twice the eager step on a CPU; see the "
              "speed guide), on TensorFlow XLA; --no-jit-compile: eager torch, tf.function without XLA. Default: "
              "Keras' choice (XLA on JAX; eager on torch)",
        switches={"--jit-compile": True, "--no-jit-compile": False}, group="speed")


def apply_jit_compile(model, jit_compile):
    """Sets `model.jit_compile` when the option was given, on a new model and on one resumed from a checkpoint
    alike (a `.keras` checkpoint compiles back with Keras' "auto"); returns `model`.

    Raises:
        ValueError: `--jit-compile` on torch for a model that is not a keras_bert task model (ELECTRA's
            pretrainer): Keras would `torch.compile` its step instead, measured no faster than eager (issue 48).
    """
    if jit_compile is None:
        return model
    # deferred: the command line parses these options before Keras loads (a bad argument ends without it)
    import keras

    from keras_bert.models.bert_task import BertTask  # deferred with keras, as above

    if jit_compile and keras.backend.backend() == "torch" and not isinstance(model, BertTask):
        raise ValueError(
            f"--jit-compile on torch compiles keras_bert's task models and BertPretrainer (CompiledTrainStep); "
            f"{type(model).__name__} trains eagerly. Leave --jit-compile out."
        )
    model.jit_compile = jit_compile
    return model
