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


# ---- a workload (DLIO YAML dict, as recorded in manifest.json) -> per-rank reads ----

def _get(cfg: dict, path: str, default):
    node = cfg
    for k in path.split("."):
        if not isinstance(node, dict) or k not in node:
            return default
        node = node[k]
    return node


def file_dims(cfg: dict) -> list[tuple[int, int]]:
    """DLIO 2.0.0 DataGenerator.get_dimension: per file (train files, then eval files) the sample dimensions."""
    rl = int(_get(cfg, "dataset.record_length", 65536))
    rls = int(_get(cfg, "dataset.record_length_stdev", 0))
    nfiles = int(_get(cfg, "dataset.num_files_train", 8)) + int(_get(cfg, "dataset.num_files_eval", 0))
    dim = int(math.sqrt(rl))
    sd = rls / 2.0 / math.sqrt(rl)
    if sd > 0:
        np.random.seed(10)
        flat = [max(int(d), 1) for d in np.random.normal(dim, sd, 2 * nfiles)]
    else:
        flat = [dim] * (2 * nfiles)
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(nfiles)]


def workload_reads(cfg: dict, ranks: int) -> dict[int, list[dict]]:
    """rank -> ordered segments {phase, epoch, samples, bytes: [per sample], prefetched: n} of a training launch."""
    spf = int(_get(cfg, "dataset.num_samples_per_file", 1))
    ntrain = int(_get(cfg, "dataset.num_files_train", 8))
    neval = int(_get(cfg, "dataset.num_files_eval", 0))
    bs = int(_get(cfg, "reader.batch_size", 1))
    bse = int(_get(cfg, "reader.batch_size_eval", 1))
    seed = int(_get(cfg, "train.seed", 123))
    epochs = int(_get(cfg, "train.epochs", 1))
    tts = int(_get(cfg, "train.total_training_steps", -1))
    shuffle = str(_get(cfg, "reader.sample_shuffle", "off")).lower() in ("seed", "random", "true")
    do_eval = bool(_get(cfg, "workflow.evaluation", False))
    rt = int(_get(cfg, "reader.read_threads", 1))
    prefetch = int(_get(cfg, "reader.prefetch_size", 2))
    dims = file_dims(cfg)
    evals = eval_epochs(epochs, int(_get(cfg, "evaluation.eval_after_epoch", 1)),
                        int(_get(cfg, "evaluation.epochs_between_evals", 1))) if do_eval else []
    out: dict[int, list[dict]] = {}
    for r in range(ranks):
        segs = []
        lists = {"train": dlio_rank_slice(ntrain * spf, ranks, r), "eval": dlio_rank_slice(neval * spf, ranks, r)}
        for e in range(1, epochs + 1):
            for phase in ["train"] + (["eval"] if e in evals else []):
                idx = lists[phase]
                b = bs if phase == "train" else bse
                total = (ntrain if phase == "train" else neval) * spf
                if shuffle:
                    np.random.seed(seed)
                    np.random.shuffle(idx)
                steps = train_steps(total, ranks, b, len(idx), tts) if phase == "train" else \
                    eval_steps(total, ranks, b, len(idx))
                issued = steps
                if rt > 0:  # PyTorch workers: prefetch_factor x workers batches in flight
                    window = (math.ceil(prefetch / rt) if prefetch > 0 else 2) * rt
                    issued = min(len(idx) // b, steps + window)
                read = idx[: issued * b]
                off = 0 if phase == "train" else ntrain
                segs.append({"phase": phase, "epoch": e, "samples": list(idx[: steps * b]),
                             "prefetched": (issued - steps) * b,
                             "bytes": [dims[off + s // spf][0] * dims[off + s // spf][1] for s in read]})
        out[r] = segs
    return out
