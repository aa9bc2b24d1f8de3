"""Analytic model of DLIO 2.0.0's PyTorch-path reads, written from DLIO's source (torch_data_loader.dlio_sampler,
main._train/_eval, config.get_global_map_index), independent of the kernel: which samples each rank reads in each
epoch, and the opens/reads/bytes that follow."""
from __future__ import annotations

import math

import numpy as np


def dlio_rank_slice(total: int, ranks: int, rank: int) -> list[int]:
    spp = math.ceil(total / ranks)
    return list(range(rank * spp, min((rank + 1) * spp, total)))


def train_steps(total: int, ranks: int, batch: int, n_rank: int, total_training_steps: int = -1) -> int:
    cap = total // batch // ranks
    if 0 < total_training_steps < cap:
        cap = total_training_steps
    return min(n_rank // batch, max(cap, 1))


def eval_steps(total: int, ranks: int, batch: int, n_rank: int) -> int:
    return min(n_rank // batch, max(total // batch // ranks, 1))


def dlio_reads(total: int, ranks: int, batch: int, seed: int, epochs: int, shuffle: bool, *, phase: str = "train",
               total_training_steps: int = -1) -> dict[int, list[list[int]]]:
    """rank -> per epoch (or per evaluation) the consumed samples in order."""
    out: dict[int, list[list[int]]] = {}
    for r in range(ranks):
        idx = dlio_rank_slice(total, ranks, r)
        if phase == "train":
            steps = train_steps(total, ranks, batch, len(idx), total_training_steps)
        else:
            steps = eval_steps(total, ranks, batch, len(idx))
        per = []
        for _ in range(epochs):
            if shuffle:
                np.random.seed(seed)
                np.random.shuffle(idx)
            per.append(list(idx[: steps * batch]))
        out[r] = per
    return out


def eval_epochs(epochs: int, eval_after_epoch: int = 1, epochs_between_evals: int = 1) -> list[int]:
    nxt, out = eval_after_epoch, []
    for e in range(1, epochs + 1):
        if e >= nxt:
            nxt += epochs_between_evals
            out.append(e)
    return out


def sample_bytes(record_length: int) -> int:
    d = int(math.sqrt(record_length))
    return d * d
