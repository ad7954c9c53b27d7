"""What a LoRA run of `finetune` adds: adapters on the new model, the adapter file, the merged model, its checkpoints.

    lora = lora_job(rank, alpha, freeze_backbone, verbose)   # None for full fine-tuning
    lora.enable(model)                # before compile; prints the share of parameters that train
    lora.save(runner, model, tokenizer)   # adapter.npz, and model.keras with plain merged kernels

Keras writes a LoRA layer's merged kernel (and no adapter) into `.keras`
files, so a LoRA run checkpoints its raw variables instead
(`RawVariablesFormat`): a resumed run gets its adapters and optimizer state back.
"""

import os

from keras_bert.jobs.raw_variables import RawVariablesFormat
from keras_bert.models.lora import enable_lora, lora_info, merge_lora, parameter_counts, save_adapter

ADAPTER_FILE = "adapter.npz"


def lora_job(rank, alpha, freeze_backbone, verbose=0):
    """The `LoraJob` of a run with `rank`, or None when `rank` is None (full fine-tuning).

    Raises:
        ValueError: a rank that is not a positive int, an alpha that is not
            positive, or LoRA together with `freeze_backbone`.
    """
    if rank is None:
        if alpha is not None:
            raise ValueError(f"--lora-alpha needs --lora-rank. Received: lora_alpha={alpha!r} without a rank")
        return None
    if not isinstance(rank, int) or isinstance(rank, bool) or rank <= 0:
        raise ValueError(f"The LoRA rank must be a positive int. Received: lora_rank={rank!r}")
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha <= 0):
        raise ValueError(f"The LoRA alpha must be a positive number. Received: lora_alpha={alpha!r}")
    if freeze_backbone:
        raise ValueError("--lora-rank trains adapters inside the backbone: it cannot go with --freeze-backbone.")
    return LoraJob(rank, alpha, verbose)


class LoraJob:
    """The LoRA part of a fine-tuning run (see the module docstring).

    Args:
        rank, alpha: as `keras_bert.models.lora.enable_lora` takes them.
        verbose: 1 prints the share of parameters that train when LoRA is enabled.
    """

    format = RawVariablesFormat()  # of its checkpoints' model files: see the module docstring

    def __init__(self, rank, alpha=None, verbose=0):
        self.rank = rank
        self.alpha = alpha
        self.verbose = verbose

    def enable(self, model):
        """LoRA on `model`'s encoder kernels (the rank checked against each); the rest of the backbone frozen."""
        enable_lora(model, self.rank, alpha=self.alpha)
        if self.verbose:
            print(self.describe(model))

    def describe(self, model):
        """One line: rank, targets and the share of parameters that train."""
        info, counts = lora_info(model), parameter_counts(model)
        return (f"LoRA rank {info['rank']} (alpha {info['alpha']}) on {', '.join(info['targets'])}: "
                f"{counts['trainable']:,} of {counts['total']:,} parameters train ({100 * counts['share']:.2f}%)")

    def save(self, runner, model, tokenizer):
        """Writes `adapter.npz` (adapters and head) and the merged model (`runner.save`); returns the LoRA record."""
        path = runner.path(ADAPTER_FILE)
        save_adapter(model, path, base=runner.job["init"])
        runner.save(self.merged(model), tokenizer.get_vocabulary(), tokenizer)
        info = {k: v for k, v in lora_info(model).items() if k != "layers"}
        return {**info, **parameter_counts(model), "adapter_file": ADAPTER_FILE, "adapter_bytes": os.path.getsize(path)}

    def merged(self, model):
        """`model` with the adapters merged into plain kernels, uncompiled.

        Uncompiled on purpose: the run's optimizer state is the adapters', and
        a compiled copy would make every load warn that it does not fit.
        """
        return merge_lora(model)
