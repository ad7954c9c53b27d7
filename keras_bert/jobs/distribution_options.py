"""DistributionOptions: how `pretrain` and `finetune` spread training over devices (`keras_bert.distribution`)."""

import dataclasses

from keras_bert.jobs.job_options import JobOptions, mesh_shape, option
from keras_bert.option_values import STRATEGIES

_GROUP = "distribution"


@dataclasses.dataclass(frozen=True)
class DistributionOptions(JobOptions):
    """The strategy a training job runs under; only the chief writes to the output folder."""

    strategy: object = option(
        None, "mirrored / multi-worker (TF_CONFIG) / tpu on KERAS_BACKEND=tensorflow; data-parallel / model-parallel "
              "on KERAS_BACKEND=jax (from Python, a strategy or distribution object too); torch trains on one "
              "device. --batch-size is the global batch.", choices=STRATEGIES, group=_GROUP)
    mesh_shape: tuple = option(None, "model-parallel device mesh DATAxMODEL, e.g. 2x2", flag="--mesh", type=mesh_shape,
                               group=_GROUP)
    tpu: str = option(None, "--strategy tpu: 'local' (default: Colab, TPU VMs) or a TPU name/address", group=_GROUP)
