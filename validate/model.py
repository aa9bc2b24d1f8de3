"""Analytic model of DLIO's PyTorch-path reads, written from DLIO's source (torch_data_loader.dlio_sampler,
main._train/_eval, config.get_global_map_index), and of 2.0.0's TensorFlow path (config.build_sample_map_iter,
reader_handler.next), independent of the kernel: which samples each rank reads in each
epoch, and the opens/reads/bytes that follow. RELEASES says what differs between DLIO releases."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from common.mapping import dotted_get

# What changes the reads between releases (paths in the dlio_benchmark package of that revision):
#   shuffles      dlio_sampler shuffles its slice (PyPI 2.0.0 torch_data_loader.py:104-108; gone in v2.0.1 :84-103)
#   cap_on_fetch  the step cap is checked when a batch arrives, so one more batch is loaded when there is one
#                 (v2.0.1 main.py:328 and :242; PyPI 2.0.0 checks after the step, main.py:287 and :239)
#   trim          training trims file counts to multiples of samples-per-file x batch x ranks (main.py:230-246 at
#                 e1919d7, from ad8ce8b)
#   bytes_keys    dataset.record_length_bytes* (v2.0.1 utils/config.py:792-797; record_length* before)
#   v201_keys     record_dims, hdf5.num_dset_per_record (v2.0.1 utils/config.py:831-839)
# mlperf_storage_v2.0 (392621b, entry "2.0.0-52"): torch_data_loader.py:88-107 no shuffle; main.py:347-348 and
# :250-252 the cap after the step; no trimming; utils/config.py:721-726 record_length_bytes* but no record_dims/hdf5.*
# MLCommons DLIO 3.x (mlcommons/DLIO_local_changes main f6796ed, entry "3.0.2"): as 2.0.1 for the keys
# (utils/config.py:1556-1561) and the cap (main.py:619), plus
#   whole_file    each sample is open(path, 'rb') + read of the whole file, no HDF5 (reader/hdf5_reader.py:61-63,
#                 reader/_local_fs_iterable_mixin.py:348-359, :150-153): one open and one read of the file's size
#   round_robin   rank r keeps files r, r+R, ... trimmed to floor(N/R) (main.py:274-278, :478-484); the sampler reads
#                 allreduce_min(local samples) in order (torch_data_loader.py:545-550)
#   reshard       reconfigure(epoch) before every epoch, file_shuffle on or off (utils/config.py:1135-1138,
#                 :1067-1110): numpy seed(seed+epoch) shuffle of the rank's list, buckets (i + rank) % R, alltoall,
#                 seed(seed+epoch+31*rank) shuffle
#   prewarm       one batch read before epoch 1 and after every epoch (main.py:705-717, :809-820)
#   seed_per_rank generation draws the sizes of rank r's files after np.random.seed(10 + r) (hdf5_generator.py:70)
NEW_3X = ("whole_file", "round_robin", "reshard", "prewarm", "seed_per_rank")
_2X = dict.fromkeys(NEW_3X, False)
RELEASES = {
    "2.0.0": {"shuffles": True, "cap_on_fetch": False, "trim": False, "bytes_keys": False, "v201_keys": False, **_2X},
    "2.0.0-52": {"shuffles": False, "cap_on_fetch": False, "trim": False, "bytes_keys": True, "v201_keys": False,
                 **_2X},
    "2.0.1": {"shuffles": False, "cap_on_fetch": True, "trim": False, "bytes_keys": True, "v201_keys": True, **_2X},
    "2.0.1-17": {"shuffles": False, "cap_on_fetch": True, "trim": True, "bytes_keys": True, "v201_keys": True, **_2X},
    "3.0.2": {"shuffles": False, "cap_on_fetch": True, "trim": False, "bytes_keys": True, "v201_keys": True,
              **dict.fromkeys(NEW_3X, True), "ckpt_stream": "simple_streaming"},
}
# 3.0.2 where mlpstorage_py imports (MLPerf Storage v3.0's own environment): its checkpoint files are written and read
# by mlpstorage's StreamingCheckpointing (pytorch_checkpointing.py:114-137); everything else as 3.0.2
RELEASES["3.0.2+mlpstorage"] = {**RELEASES["3.0.2"], "ckpt_stream": "mlpstorage_streaming"}


class UnknownRelease(ValueError):
    """A kernel entry this model has no rules for: the second opinion is missing, never guessed."""


def release(name: str | None) -> dict:
    """The rules of a kernel entry (None: a manifest from before the dlio block, i.e. 2.0.0)."""
    try:
        return RELEASES[name or "2.0.0"]
    except KeyError:
        raise UnknownRelease(f"the analytic model has no rules for DLIO entry {name!r} (validate/model.py RELEASES "
                             f"has {', '.join(RELEASES)}): add them from DLIO's source, independently of the "
                             "kernel's entry") from None


def dlio_rank_slice(total: int, ranks: int, rank: int) -> list[int]:
    spp = math.ceil(total / ranks)
    return list(range(rank * spp, min((rank + 1) * spp, total)))


def train_steps(total: int, ranks: int, batch: int, n_rank: int, total_training_steps: int = -1,
                least: int = 1) -> int:
    cap = total // batch // ranks
    if 0 < total_training_steps < cap:
        cap = total_training_steps
    return min(n_rank // batch, max(cap, least))


def eval_steps(total: int, ranks: int, batch: int, n_rank: int, least: int = 1) -> int:
    return min(n_rank // batch, max(total // batch // ranks, least))


def eval_epochs(epochs: int, eval_after_epoch: int = 1, epochs_between_evals: int = 1) -> list[int]:
    nxt, out = eval_after_epoch, []
    for e in range(1, epochs + 1):
        if e >= nxt:
            nxt += epochs_between_evals
            out.append(e)
    return out


def file_dims(cfg: dict, rel: str | None = None) -> list[tuple[int, int]]:
    """DataGenerator.get_dimension: per file (train files, then eval files) the dimensions of one samples dataset."""
    suffix = "_bytes" if release(rel)["bytes_keys"] else ""
    rl = int(dotted_get(cfg, f"dataset.record_length{suffix}", 65536))
    rls = int(dotted_get(cfg, f"dataset.record_length{suffix}_stdev", 0))
    nfiles = int(dotted_get(cfg, "dataset.num_files_train", 8)) + int(dotted_get(cfg, "dataset.num_files_eval", 0))
    dims = dotted_get(cfg, "dataset.record_dims", None) if release(rel)["v201_keys"] else None
    if dims:  # v2.0.1 hdf5_generator.py:60-63: (d1 / num_dset_per_record, d2) in every file
        n = int(dotted_get(cfg, "dataset.hdf5.num_dset_per_record", 1))
        return [(int(dims[0]) // n, int(dims[1]))] * nfiles
    dim = int(math.sqrt(rl))
    sd = rls / 2.0 / math.sqrt(rl)
    if sd > 0:
        np.random.seed(10)
        flat = [max(int(d), 1) for d in np.random.normal(dim, sd, 2 * nfiles)]
    else:
        flat = [dim] * (2 * nfiles)
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(nfiles)]


SIEVE_BUF = 64 * 1024   # HDF5's default data sieve buffer (H5Pset_sieve_buf_size; h5py and the kernel keep it)


def raw_read_bytes(dims: tuple[int, int], index: int, per_file: int, chunked: bool) -> int:
    """Bytes of the one raw read HDF5 issues for sample `index` of a contiguous (per_file, d0, d1) uint8 dataset in a
    freshly opened file (DLIO opens the file per sample). A sample smaller than the sieve buffer is read through it:
    HDF5 1.14 H5Dcontig.c H5D__contig_readvv_sieve_cb fills the buffer from the sample's offset with
    min(sieve size, bytes left in the dataset, bytes left before the end of allocation) (the labels dataset lies after
    the samples, so the dataset's end binds first); a larger one is read directly.
    Measured: 1 file x 1024 samples of 45x45 bytes on 2 ranks, both programs' Log VFD reads were 64 KiB but for the
    last 32 samples, whose reads shrink with the bytes left (rank 1: 65,052,960 bytes over 2 epochs)."""
    sample = dims[0] * dims[1]
    if chunked or sample >= SIEVE_BUF:
        return sample
    return min(SIEVE_BUF, (per_file - index) * sample)


def is_tensorflow(cfg: dict) -> bool:
    """DLIO's tf.data loader: framework and reader.data_loader both tensorflow (DLIO refuses a mixed pair,
    utils/config.py:211-213)."""
    return str(dotted_get(cfg, "reader.data_loader", "")).lower() == "tensorflow" and \
        str(dotted_get(cfg, "framework", "")).lower() == "tensorflow"


def tf_thread_lists(nfiles: int, spf: int, ranks: int, rank: int, read_threads: int, file_list: list[int],
                    positions: list[int]) -> list[list[tuple[int, int]]]:
    """DLIO 2.0.0 utils/config.py:317-349 build_sample_map_iter for one rank: per reader thread, the (file, sample)
    pairs it reads in order. `positions` is the rank's arange(r*spp, (r+1)*spp), shuffled or not; file_list the
    (possibly shuffled) file indices. Written from the source line by line, the rank offset of :338 included, which
    only the first position uses (:348 recomputes the index without it)."""
    nt = read_threads if read_threads > 0 else 1
    spt = len(positions) // nt
    lists: list[list[tuple[int, int]]] = [[] for _ in range(nt)]
    files_per_rank = (nfiles // ranks) % nfiles
    file_index = rank * files_per_rank
    for sample_index, sample in enumerate(positions):
        lists[(sample_index // spt) % nt].append((file_list[file_index], int(sample) % spf))
        file_index = ((sample_index + 1) // spf) % nfiles
    return lists


def tf_thread_opens(items: list[tuple[int, int]], spf: int) -> int:
    """reader/reader_handler.py:80-109 for one thread: a file is opened when it is not in the open-file map or its
    entry is None; after every spf samples processed the file just read is closed (set to None)."""
    open_map: dict[int, bool] = {}
    opens = 0
    for processed, (f, _) in enumerate(items, start=1):
        if not open_map.get(f):
            open_map[f] = True
            opens += 1
        if processed % spf == 0:
            open_map[f] = False
    return opens


def tf_workload_reads(cfg: dict, ranks: int) -> dict[int, list[dict]]:
    """DLIO 2.0.0's TensorFlow path (data_loader/tf_data_loader.py, reader/reader_handler.py next(), main.py _train
    and _eval): rank -> one training segment per epoch, then an evaluation segment in the evaluation epochs. Every
    batch of every thread is read (the shapes the kernel accepts: batches per rank = steps), each thread's last batch
    padded without reads; one raw read per sample (the file stays open, the dataset is reopened per sample, so HDF5's
    sieve buffer starts afresh: raw_read_bytes). reconfigure(e) (utils/config.py:368-380) seeds numpy once, shuffles
    the training file list and then the evaluation list (both in place), and builds both sample maps, each reseeding
    for its sample shuffle; the evaluation after epoch e reads the map built before it."""
    spf = int(dotted_get(cfg, "dataset.num_samples_per_file", 1))
    nfiles = int(dotted_get(cfg, "dataset.num_files_train", 8))
    neval = int(dotted_get(cfg, "dataset.num_files_eval", 0))
    bse = int(dotted_get(cfg, "reader.batch_size_eval", 1))
    evals = eval_epochs(int(dotted_get(cfg, "train.epochs", 1)), int(dotted_get(cfg, "evaluation.eval_after_epoch", 1)),
                        int(dotted_get(cfg, "evaluation.epochs_between_evals", 1))) \
        if bool(dotted_get(cfg, "workflow.evaluation", False)) and neval > 0 else []
    seed = int(dotted_get(cfg, "train.seed", 123))
    change = bool(dotted_get(cfg, "train.seed_change_epoch", True))
    epochs = int(dotted_get(cfg, "train.epochs", 1))
    rt = int(dotted_get(cfg, "reader.read_threads", 1))
    on = ("seed", "random", "true")
    sshuffle = str(dotted_get(cfg, "reader.sample_shuffle", "off")).lower() in on
    fshuffle = str(dotted_get(cfg, "reader.file_shuffle", "off")).lower() in on
    bs = int(dotted_get(cfg, "reader.batch_size", 1))
    dims = file_dims(cfg, "2.0.0")
    chunked = bool(dotted_get(cfg, "dataset.enable_chunking", False))
    out: dict[int, list[dict]] = {}
    for r in range(ranks):
        file_list = {"train": list(range(nfiles)), "eval": list(range(neval))}
        segs = []
        for e in range(1, epochs + 1):  # reconfigure(e) before epoch e (main.py:330, :349)
            s = seed + e if change else seed
            if fshuffle:  # utils/config.py:370-376: in place, so it compounds; one seeding for both lists
                np.random.seed(s)
                np.random.shuffle(file_list["train"])
                np.random.shuffle(file_list["eval"])
            for phase in ["train"] + (["eval"] if e in evals else []):
                n, b, off = (nfiles, bs, 0) if phase == "train" else (neval, bse, nfiles)
                spp = math.ceil(n * spf / ranks)
                positions = list(range(r * spp, (r + 1) * spp))
                if sshuffle:
                    np.random.seed(s)
                    np.random.shuffle(positions)
                lists = tf_thread_lists(n, spf, ranks, r, rt, file_list[phase], positions)
                reads = [x for t in lists for x in t]
                segs.append({"phase": phase, "epoch": e, "samples": [f * spf + i for f, i in reads], "prefetched": 0,
                             "steps": sum(math.ceil(len(t) / b) for t in lists),
                             "opens": sum(tf_thread_opens(t, spf) for t in lists),
                             "bytes": [raw_read_bytes(dims[off + f], i, spf, chunked) for f, i in reads]})
        out[r] = segs
    return out


def dlio3_listing(nfiles: int, subfolders: int = 0, fmt: str = "hdf5", skip_listing: bool = False) -> list[int]:
    """The file indices in the order rank 0 of MLCommons DLIO 3.x (f6796ed) lists them: data_generator.py:350-359
    writes file i as train/<i % S padded to len(str(S))>/img_<i padded to len(str(N))>_of_<N>.<format> when S > 1
    (else train/img_...), main.py:371-419 lists the sub-folders sorted, globs each and sorts the whole listing by path
    (:403-404, :431-446 flat likewise). Computed on the path strings, as DLIO sorts them. With dataset.skip_listing
    (:280-305) nothing is listed: rank r names files r, r+R, ... in index order, sub-folders or not."""
    if skip_listing:
        return list(range(nfiles))
    nd, nds = len(str(nfiles)), len(str(subfolders))
    names = {(f"train/{str(i % subfolders).zfill(nds)}/" if subfolders > 1 else "train/") +
             f"img_{str(i).zfill(nd)}_of_{nfiles}.{fmt}": i for i in range(nfiles)}
    return [names[n] for n in sorted(names)]


def dlio3_file_lists(nfiles: int, ranks: int, seed: int, epochs: int, reshard: bool,
                     seed_change_epoch: bool = True, subfolders: int = 0,
                     skip_listing: bool = False) -> list[list[list[int]]]:
    """[epoch - 1][rank] -> the rank's training files, for epochs 1..epochs, as MLCommons DLIO 3.x (f6796ed) holds
    them. main.py:274-278 rank 0's listing dealt round-robin (position i to rank i % R), :483-484 trimmed to
    floor(N/R) per rank; utils/config.py:1135-1138 reconfigure(epoch) (before epoch 1, main.py:699, and after every
    epoch, :802) reshards with file_shuffle given: :1083-1110 every rank np.random.seed(seed + epoch) (seed without
    seed_change_epoch), np.random.shuffle(its paths), buckets[(i + rank) % R], mpi.alltoall (the buckets received
    in source-rank order), then np.random.seed(seed + epoch + rank * 31) and shuffle. Computed on names, as DLIO."""
    names = [f"f{i}" for i in dlio3_listing(nfiles, subfolders, skip_listing=skip_listing)]
    lists = [[n for i, n in enumerate(names) if i % ranks == r][: nfiles // ranks] for r in range(ranks)]
    out = []
    for e in range(1, epochs + 1):
        if reshard:
            sent = []
            for r in range(ranks):
                paths = list(lists[r])
                np.random.seed(seed + e if seed_change_epoch else seed)
                np.random.shuffle(paths)
                buckets: list[list[str]] = [[] for _ in range(ranks)]
                for i, f in enumerate(paths):
                    buckets[(i + r) % ranks].append(f)
                sent.append(buckets)
            lists = []
            for d in range(ranks):
                shard = [f for q in range(ranks) for f in sent[q][d]]
                np.random.seed(seed + e + d * 31)
                np.random.shuffle(shard)
                lists.append(shard)
        out.append([[int(n[1:]) for n in lst] for lst in lists])
    return out


def dlio3_workload_reads(cfg: dict, ranks: int, rel: str = "3.0.2") -> dict[int, list[dict]]:
    """rank -> segments of a training launch of MLCommons DLIO 3.x (PyTorch loader, HDF5 on a local file system):
    a "prewarm" segment before epoch 1 and after every epoch (main.py:705-717, :809-820: next(iter(loader)) reads
    the first batch of the epoch reconfigured last; with reader processes, up to prefetch_factor x workers batches
    more may be read before the iterator is deleted, counted in "prefetched_max"), then each epoch's "train" segment.
    Samples of an epoch: the sampler's range(allreduce_min(local samples)) in order (torch_data_loader.py:548-549),
    sample i of file list[i // spf] (utils/config.py:75-79); steps: floor(local / batch) (drop_last; training_steps
    utils/config.py:1121-1122, or ceil before any reshard, :759-762, which the loader's end undercuts), or
    total_training_steps, the cap tested when a batch arrives (main.py:619): one more batch fetched below the end.
    Each sample read is one open and one read of the whole file (reader/hdf5_reader.py:61-63,
    _local_fs_iterable_mixin.py:150-153): "bytes" lists, per read, the index of the file read (whose size it is)."""
    spf = int(dotted_get(cfg, "dataset.num_samples_per_file", 1))
    ntrain = int(dotted_get(cfg, "dataset.num_files_train", 8))
    bs = int(dotted_get(cfg, "reader.batch_size", 1))
    seed = int(dotted_get(cfg, "train.seed", 123))
    sce = bool(dotted_get(cfg, "train.seed_change_epoch", True))
    epochs = int(dotted_get(cfg, "train.epochs", 1))
    tts = int(dotted_get(cfg, "train.total_training_steps", -1))
    rt = int(dotted_get(cfg, "reader.read_threads", 1))
    prefetch = int(dotted_get(cfg, "reader.prefetch_size", 2))
    # utils/config.py:1671-1672 keeps the YAML string: `is not Shuffle.OFF` holds for any value given; absent, the
    # default Shuffle.OFF (:119) keeps the listing
    reshard = dotted_get(cfg, "reader.file_shuffle", None) is not None
    if bool(dotted_get(cfg, "workflow.evaluation", False)):
        raise UnknownRelease(f"the analytic model has DLIO {rel}'s training reads only, not its evaluation")
    subfolders = int(dotted_get(cfg, "dataset.num_subfolders_train", 0))
    raw = dotted_get(cfg, "dataset.skip_listing", False)  # utils/config.py:1607-1612
    skip = raw.strip().lower() in ("true", "1", "yes", "on") if isinstance(raw, str) else bool(raw)
    lists = dlio3_file_lists(ntrain, ranks, seed, epochs + 1, reshard, sce, subfolders, skip)
    local = (ntrain // ranks) * spf
    batches = local // bs
    steps = min(batches, tts) if tts > 0 else batches
    fetched = steps + 1 if steps < batches else steps
    window = (math.ceil(prefetch / rt) if prefetch > 0 else 2) * rt if rt > 0 else 1

    def seg(rank: int, phase: str, e: int, n_batches: int, used: int) -> dict:
        # read_threads 0: TorchDataset.__init__ runs worker_init(-1) in the rank (torch_data_loader.py:174-175), whose
        # pickle.loads makes a copy the ConfigArguments singleton (utils/config.py:308-313): the in-rank reader keeps
        # the map of reconfigure(1) (main.py:699) in every epoch; reader processes load the refreshed args (:802-808),
        # spawned or forked alike: each runs worker_init, whose pickle.loads(serial_args) makes its copy the singleton
        # (torch_data_loader.py:178-179), and refresh_args re-pickles serial_args before the next iterator (:819-828):
        # a forked reader does not read the lists it inherits (docs/fidelity-dlio3.md, row 8)
        order = [f * spf + i for f in lists[(e if rt > 0 else 1) - 1][rank] for i in range(spf)]
        read = order[: n_batches * bs]
        return {"phase": phase, "epoch": e, "samples": read[: used * bs], "prefetched": (n_batches - used) * bs,
                "opens": len(read), "bytes": [s // spf for s in read]}

    # The pre-warm's next(iter(loader)) then del (main.py:705-716, :809-820): torch's iterator queues
    # prefetch_factor x W batches at once, batch k to worker k % W (prefetch_factor: torch_data_loader.py:741-752).
    # Worker 0 reads batch 0 and takes its next queued index before the main process has received batch 0 and set
    # the iterator's done event (torch/utils/data/_utils/worker.py _worker_loop skips an index only when the event is
    # already set): it reads its whole share, batches 0, W, ..., (pf - 1) W. In the rank (W = 0): batch 0 only. The
    # other workers' batches are read or not as far as each spawned worker got: "prefetched_max"/"prefetch_samples".
    pf = (math.ceil(prefetch / rt) if prefetch > 0 else 2) if rt > 0 else 1
    share = [j * max(rt, 1) for j in range(pf) if j * max(rt, 1) < batches]
    # and the one batch the iterator queues when batch 0 arrives, before next() returns: _process_data calls
    # _try_put_index (torch 2.15 torch/utils/data/dataloader.py:1565-1567, :1533-1563), which hands batch pf x W to
    # the next worker of its cycle (:1260, :1545), worker 0, read or not as far as that worker got before the done
    # event (seen at 148,000 files: 7 opens on one rank; at tiny scale a rank has no batch pf x W)
    racy = [b for b in range(min(window + (1 if rt > 0 else 0), batches)) if b not in share]

    out: dict[int, list[dict]] = {}
    for r in range(ranks):
        segs = []
        for e in range(1, epochs + 2):
            pre = seg(r, "prewarm", e, 1, 1) if batches else seg(r, "prewarm", e, 0, 0)
            order = [f * spf + i for f in lists[(e if rt > 0 else 1) - 1][r] for i in range(spf)]
            pre["samples"] = [s for b in share for s in order[b * bs:(b + 1) * bs]]
            pre["opens"], pre["bytes"] = len(pre["samples"]), [s // spf for s in pre["samples"]]
            pre["prefetched_max"] = len(racy) * bs
            # which samples those are: the other workers' batches of the window, in batch order
            pre["prefetch_samples"] = [s for b in racy for s in order[b * bs:(b + 1) * bs]]
            _dlio3_workers(pre, order, share, share + racy, rt, bs, spf)
            segs.append(pre)
            if e <= epochs:
                train = seg(r, "train", e, fetched, steps)
                _dlio3_workers(train, order, range(fetched), range(fetched), rt, bs, spf)
                segs.append(train)
        out[r] = segs
    return out


def _dlio3_workers(seg: dict, order: list[int], sure, most, rt: int, bs: int, spf: int) -> None:
    """Which process of the iterator opens which files, in order (the segment's "workers": per worker the files of
    the batches it surely reads; "workers_max": of the batches it may read, a prefix of which it reads). torch hands
    batch k of an iterator to worker k % W (torch/utils/data/dataloader.py:1260, :1545) and a worker reads its
    batches first in, first out (_utils/worker.py:335), each batch's samples in the sampler's order (_utils/fetch.py:
    54). With read_threads 0 the rank reads every batch itself: one list."""
    w = max(rt, 1)

    def files(batches) -> list[list[int]]:
        return [[s // spf for b in sorted(batches) if b % w == i for s in order[b * bs:(b + 1) * bs]]
                for i in range(w)]
    seg["workers"], seg["workers_max"] = files(sure), files(most)


def dlio3_read_threads(asked: int, cpu_count: int | None, ranks_per_node: int, cap: int | None) -> int:
    """MLCommons DLIO 3.x's reader processes per rank (f6796ed utils/config.py:853-876, derive_configurations): a
    read_threads of 1 (the dataclass default, :158) becomes min(CPUs per rank, the cap) when that is more than 1, with
    CPUs per rank max(1, (os.cpu_count() or 1) // max(1, ranks_per_node())) (utils/utility.py:323-338: the ranks on
    this rank's node) and the cap max(1, int(os.environ.get('DLIO_MAX_AUTO_THREADS', '8'))) (cap None: unset). Any
    other value is kept: a YAML value > 1 is taken as intended, 0 reads in the rank."""
    if asked != 1:
        return asked
    per_rank = max(1, (cpu_count or 1) // max(1, ranks_per_node))
    n = min(per_rank, max(1, 8 if cap is None else cap))
    return n if n > 1 else asked


def dlio3_sized(cfg: dict, machine: dict | None) -> dict:
    """cfg with reader.read_threads as DLIO 3.x sizes it on `machine` ({cpu_count, ranks_per_node, cap}: the inputs
    the run's kernel recorded, output.json read_threads_auto); None: as given (a run from before the kernel sized its
    readers, or a caller that plants nothing)."""
    if not machine:
        return cfg
    reader = dict(cfg.get("reader") or {})
    reader["read_threads"] = dlio3_read_threads(int(reader.get("read_threads", 1)), machine.get("cpu_count"),
                                                int(machine.get("ranks_per_node") or 1), machine.get("cap"))
    return {**cfg, "reader": reader}


def workload_reads(cfg: dict, ranks: int, rel: str | None = None, machine: dict | None = None
                   ) -> dict[int, list[dict]]:
    """rank -> ordered segments {phase, epoch, samples, opens, bytes: [per raw read], prefetched: n} of a training
    launch of DLIO release `rel` (a RELEASES key; 2.0.0 when None); machine: the inputs DLIO 3.x sizes its readers
    by (dlio3_sized; the 2.0.x releases read read_threads as given)."""
    if is_tensorflow(cfg):
        if (rel or "2.0.0") != "2.0.0":
            raise UnknownRelease(f"the analytic model has DLIO's TensorFlow path for 2.0.0 only, not {rel!r}")
        return tf_workload_reads(cfg, ranks)
    r_ = release(rel)
    if all(r_[k] for k in NEW_3X):
        return dlio3_workload_reads(dlio3_sized(cfg, machine), ranks, rel)
    todo = [k for k in NEW_3X if r_[k]]
    if todo:
        raise UnknownRelease(f"the analytic model does not model DLIO entry {rel}'s rules {', '.join(todo)} yet "
                             "(written down in validate/model.py RELEASES, not implemented in workload_reads)")
    spf = int(dotted_get(cfg, "dataset.num_samples_per_file", 1))
    ntrain = int(dotted_get(cfg, "dataset.num_files_train", 8))
    neval = int(dotted_get(cfg, "dataset.num_files_eval", 0))
    bs = int(dotted_get(cfg, "reader.batch_size", 1))
    bse = int(dotted_get(cfg, "reader.batch_size_eval", 1))
    ndset = int(dotted_get(cfg, "dataset.hdf5.num_dset_per_record", 1)) if r_["v201_keys"] else 1
    files = {"train": ntrain, "eval": neval}
    if r_["trim"]:
        files = {"train": ntrain // (spf * bs * ranks) * (spf * bs * ranks),
                 "eval": neval // (spf * bse * ranks) * (spf * bse * ranks)}
    seed = int(dotted_get(cfg, "train.seed", 123))
    epochs = int(dotted_get(cfg, "train.epochs", 1))
    tts = int(dotted_get(cfg, "train.total_training_steps", -1))
    shuffle = str(dotted_get(cfg, "reader.sample_shuffle", "off")).lower() in ("seed", "random", "true") \
        and r_["shuffles"]
    do_eval = bool(dotted_get(cfg, "workflow.evaluation", False))
    rt = int(dotted_get(cfg, "reader.read_threads", 1))
    prefetch = int(dotted_get(cfg, "reader.prefetch_size", 2))
    dims = file_dims(cfg, rel)
    chunked = bool(dotted_get(cfg, "dataset.enable_chunking", False)) or bool(dotted_get(cfg, "dataset.hdf5.chunk_dims",
                                                                                         None))
    evals = eval_epochs(epochs, int(dotted_get(cfg, "evaluation.eval_after_epoch", 1)),
                        int(dotted_get(cfg, "evaluation.epochs_between_evals", 1))) if do_eval else []
    out: dict[int, list[dict]] = {}
    for r in range(ranks):
        segs = []
        lists = {ph: dlio_rank_slice(files[ph] * spf, ranks, r) for ph in ("train", "eval")}
        for e in range(1, epochs + 1):
            for phase in ["train"] + (["eval"] if e in evals else []):
                idx = lists[phase]
                b = bs if phase == "train" else bse
                total = files[phase] * spf
                if shuffle:
                    np.random.seed(seed)
                    np.random.shuffle(idx)
                least = 0 if r_["cap_on_fetch"] else 1
                steps = train_steps(total, ranks, b, len(idx), tts, least) if phase == "train" else \
                    eval_steps(total, ranks, b, len(idx), least)
                batches = len(idx) // b
                fetched = steps + 1 if r_["cap_on_fetch"] and steps < batches else steps  # next() calls
                issued = fetched
                if rt > 0:  # PyTorch workers: prefetch_factor x workers batches in flight, one more per next()
                    window = (math.ceil(prefetch / rt) if prefetch > 0 else 2) * rt
                    issued = min(batches, fetched + window)
                read = idx[: issued * b]
                off = 0 if phase == "train" else ntrain
                segs.append({"phase": phase, "epoch": e, "samples": list(idx[: steps * b]),
                             "prefetched": (issued - steps) * b, "opens": len(read),
                             "read_files": [int(s) // spf for s in read],
                             "bytes": [raw_read_bytes(dims[off + s // spf], s % spf, spf, chunked) for s in read
                                       for _ in range(ndset)]})
        out[r] = segs
    return out


# ---------- checkpoints (DLIO 2.0.0: checkpointing/base_checkpointing.py, pytorch_checkpointing.py; main.py:274-302)


class _PickleSize:
    """The length of the protocol-2 pickle torch.save writes for a state (a dict of 1-D int8 tensors and dicts of
    them), counted the way Python's pickler emits it: memo slots (BINPUT/BINGET, 2 bytes below slot 256, else 5),
    shared objects written once (the rebuild function, CharStorage, OrderedDict, 'storage', 'cpu', and keys spelled in
    DLIO's code), str(index) keys and storage keys new every time, ints as BININT1/BININT2/BININT/LONG1."""

    LITERALS = {"a", "b", "combined"}  # keys spelled in base_checkpointing.py; str(index) keys are new objects

    def __init__(self) -> None:
        self.n, self.memo, self.seen, self.storages = 3, 0, {}, 0  # PROTO 2 (2 bytes), STOP (1)

    def put(self) -> None:
        self.n += 2 if self.memo < 256 else 5
        self.memo += 1

    def shared(self, key: str, first_len: int) -> None:
        if key in self.seen:
            self.n += 2 if self.seen[key] < 256 else 5
        else:
            self.n += first_len
            self.seen[key] = self.memo
            self.put()

    def string(self, s: str) -> None:
        self.n += 5 + len(s.encode())
        self.put()

    def integer(self, v: int) -> None:
        if 0 <= v < 256:
            self.n += 2
        elif 0 <= v < 65536:
            self.n += 3
        elif -2**31 <= v < 2**31:
            self.n += 5
        else:
            self.n += 2 + (v.bit_length() + 8) // 8

    def tensor(self, numel: int, storage: str = "CharStorage") -> None:
        self.shared("global rebuild", 1 + len("torch._utils\n_rebuild_tensor_v2\n"))
        self.n += 2  # MARK MARK
        self.shared("str storage", 5 + len("storage"))
        self.shared(f"global {storage}", 1 + len(f"torch\n{storage}\n"))
        self.string(str(self.storages))
        self.storages += 1
        self.shared("str cpu", 5 + len("cpu"))
        self.integer(numel)
        self.n += 1  # TUPLE
        self.put()
        self.n += 1  # BINPERSID
        self.integer(0)
        self.integer(numel)
        self.n += 1  # TUPLE1 (size)
        self.put()
        self.integer(1)
        self.n += 1  # TUPLE1 (stride)
        self.put()
        self.n += 1  # NEWFALSE
        self.shared("global OrderedDict", 1 + len("collections\nOrderedDict\n"))
        self.n += 2  # EMPTY_TUPLE REDUCE
        self.put()
        self.n += 1  # TUPLE
        self.put()
        self.n += 1  # REDUCE
        self.put()

    def value(self, v) -> None:
        if isinstance(v, dict):
            self.dict(v)
        elif isinstance(v, tuple):  # (elements, DLIO datatype)
            self.tensor(v[0], DATATYPES[v[1]][1])
        else:
            self.tensor(v)

    def dict(self, d: dict) -> None:
        self.n += 1  # EMPTY_DICT
        self.put()
        items = list(d.items())
        if len(items) == 1:
            self.key(items[0][0])
            self.value(items[0][1])
            self.n += 1  # SETITEM
            return
        if not items:
            return
        i = 0
        while True:  # MARK ... SETITEMS in batches of 1000 (an empty last batch when the count is a multiple)
            batch = items[i:i + 1000]
            self.n += 2
            for k, v in batch:
                self.key(k)
                self.value(v)
            i += len(batch)
            if len(batch) < 1000:
                break

    def key(self, k: str) -> None:
        if k in self.LITERALS:
            self.shared(f"key {k}", 5 + len(k.encode()))
        else:
            self.string(k)


# DLIO 2.0.0-52's datatypes: bytes per element (checkpointing/base_checkpointing.py:33-43) and the storage class
# torch.save names in its pickle for the torch dtype DLIO maps them to (pytorch_checkpointing.py get_torch_datatype)
DATATYPES = {"int8": (1, "CharStorage"), "uint8": (1, "ByteStorage"), "fp16": (2, "HalfStorage"),
             "bf16": (2, "BFloat16Storage"), "fp32": (4, "FloatStorage"), "fp64": (8, "DoubleStorage")}


def _tensors(state: dict) -> list[int]:
    """The byte size of each tensor of a state, in torch.save's storage order (a leaf: int8 elements, or a tuple
    (elements, datatype))."""
    out = []
    for v in state.values():
        if isinstance(v, dict):
            out += _tensors(v)
        else:
            out.append(v[0] * DATATYPES[v[1]][0] if isinstance(v, tuple) else v)
    return out


def torch_save_size(state: dict) -> int:
    """Bytes of torch.save(state, f) (torch 2.x's zip container; a state: nested dicts whose leaves are int8 tensor
    elements or (elements, datatype) tuples): records data.pkl, .format_version ("1"),
    .storage_alignment ("64"), byteorder ("little"), data/<k> per tensor, version ("3\\n"), .data/serialization_id (40
    digits); each record a 30-byte local header, its name, a zip64 field when its size or offset reaches 2^32 - 1
    (4 + 16 / + 8 bytes), an "FB" padding field aligning the data to 64 bytes, the data, a data descriptor (16 bytes,
    24 with zip64); then the central directory (46 bytes + name + its zip64 field per record) and the zip64 end
    record, locator and end record (56 + 20 + 22)."""
    p = _PickleSize()
    p.dict(state)
    recs = [("archive/data.pkl", p.n), ("archive/.format_version", 1), ("archive/.storage_alignment", 2),
            ("archive/byteorder", 6)] + [(f"archive/data/{i}", n) for i, n in enumerate(_tensors(state))] + \
        [("archive/version", 2), ("archive/.data/serialization_id", 40)]
    big = 2**32 - 1
    ofs = cd = 0
    for name, size in recs:
        z64 = (16 if size >= big else 0) + (8 if ofs >= big else 0)
        z64 = 4 + z64 if z64 else 0
        start = ofs + 30 + len(name) + 4 + z64
        pad = -start % 64
        cd += 46 + len(name) + z64
        ofs = start + pad + size + (24 if z64 else 16)
    return ofs + cd + 98


def checkpoint_states(cfg: dict) -> dict[str, dict]:
    """DLIO 2.0.0's states of the checkpointing rank (base_checkpointing.py:38-56): model {"a": model_size} if
    model_size > 0; optimizer {str(i): {"a": g, "b": g} for g > 0, "combined": sum} if groups are given; layer
    {str(i): p for p > 0} if layer_parameters are given. Values: tensor elements (int8). Empty states are not
    written (their dict is falsy)."""
    ck = cfg.get("checkpoint") or {}
    out: dict[str, dict] = {}
    if int(ck.get("model_size", 10240)) > 0:
        out["model"] = {"a": int(ck.get("model_size", 10240))}
    groups = [int(g) for g in ck.get("optimization_groups", [])]
    if groups:
        opt: dict = {str(i): {"a": g, "b": g} for i, g in enumerate(groups) if g > 0}
        opt["combined"] = sum(g for g in groups if g > 0)
        out["optimizer"] = opt
    layer = {str(i): int(p) for i, p in enumerate(ck.get("layer_parameters", [17371, 24740228])) if int(p) > 0}
    if layer:
        out["layer"] = layer
    return out


def checkpoint_files(cfg: dict, ranks: int, rel: str | None = None) -> dict[str, int]:
    """Every checkpoint file a training launch writes (name -> bytes), from the workload alone (DLIO 2.0.0; 2.0.0-52:
    checkpoint_files_v2).
    Points (main.py): after step k of an epoch when steps_between_checkpoints s > 0 and k % s == 0 (:274-283);
    otherwise after the training loop of epoch e == checkpoint_after_epoch, then every epochs_between_checkpoints
    (:296-301, :327), named with the step _train returned. Writers: rank 0 (type rank_zero, the default) or every rank
    (all_ranks); files model-e-s-r.pt, optimizer-e-s-r.pt, and layer-l-e-s-r.pt for l < num_layers (+
    tensor_parallelism when > 1) on ranks r % pipeline_parallelism == 0 (base_checkpointing.py:70-86)."""
    if not dotted_get(cfg, "workflow.checkpoint", False):
        return {}
    if rel == "2.0.0-52":
        return checkpoint_files_v2(cfg, ranks)
    if rel in ("3.0.2", "3.0.2+mlpstorage"):
        return checkpoint_files_v3(cfg, ranks)
    if rel not in (None, "2.0.0"):
        raise UnknownRelease(f"the analytic model has checkpoint rules for DLIO 2.0.0, 2.0.0-52 and 3.0.2 only, not "
                             f"{rel!r}")
    ck = cfg.get("checkpoint") or {}
    sb = int(ck.get("steps_between_checkpoints", -1))
    after, between = int(ck.get("checkpoint_after_epoch", 1)), int(ck.get("epochs_between_checkpoints", 1))
    epochs = int(dotted_get(cfg, "train.epochs", 1))
    segs = workload_reads(cfg, ranks, rel)[0]
    bs = int(dotted_get(cfg, "reader.batch_size", 1))
    points = []
    for e in range(1, epochs + 1):
        seg = next(s for s in segs if s["phase"] == "train" and s["epoch"] == e)
        steps = len(seg["samples"]) // bs
        if sb > 0:
            points += [(e, k) for k in range(1, steps + 1) if k % sb == 0]
        elif e == after or (between > 0 and e > after and (e - after) % between == 0):
            # _train returns the step the cap stopped it at, or one past the last batch if the loader ran out first
            total = int(dotted_get(cfg, "dataset.num_files_train", 8)) * \
                int(dotted_get(cfg, "dataset.num_samples_per_file", 1))
            batches = len(dlio_rank_slice(total, ranks, 0)) // bs
            cap = train_steps(total, ranks, bs, 10**15, int(dotted_get(cfg, "train.total_training_steps", -1)))
            points.append((e, steps if steps < batches or steps == cap else steps + 1))
    states = {k: torch_save_size(v) for k, v in checkpoint_states(cfg).items()}
    writers = range(ranks) if str(ck.get("type", "rank_zero")) == "all_ranks" else [0]
    layers = int(ck.get("num_layers", 1))
    tp, pp = int(ck.get("tensor_parallelism", 1)), int(ck.get("pipeline_parallelism", 1))
    out = {}
    for e, s in points:
        for r in writers:
            for kind in ("model", "optimizer"):
                if kind in states:
                    out[f"{kind}-{e}-{s}-{r}.pt"] = states[kind]
            if "layer" in states and r % pp == 0 and layers > 0:
                for layer in range(layers + (tp if tp > 1 else 0)):
                    out[f"layer-{layer}-{e}-{s}-{r}.pt"] = states["layer"]
    return out


# ---------- checkpoints of DLIO 2.0.0-52 (MLPerf Storage v2.0's branch mlperf_storage_v2.0, 392621b): transformer
# states sharded by ZeRO / tensor / pipeline parallelism, one folder per checkpoint, the checkpoint-only workflow.
# Paths are of that revision's dlio_benchmark package.


def transformer_parameters(m: dict) -> int:
    """base_checkpointing.py:284-302 get_num_parameters: embedding + L x (input norm, QKV with KV heads, dense, layer
    norm, gated MLP h->2f and f->h) + final norm + lm_head (= embedding)."""
    h, v, f, L = m["hidden"], m["vocab"], m["ffn"], m["layers"]
    kv = h // m["heads"] * m["kv_heads"]
    return v * h + (h + h * (h + 2 * kv) + h * h + h + 2 * f * h + f * h) * L + h + v * h


def layer_parameters(m: dict, layer: int, dp: int) -> list[int]:
    """base_checkpointing.py:304-329 get_layer_parameters: tensor elements of layer `layer` (0 embedding, 1..L
    transformer layers, L+1 lm_head, L+2 final norm), divided by tp and, at ZeRO 3, by dp (integer divisions, in
    DLIO's order)."""
    h, f, L, tp = m["hidden"], m["ffn"], m["layers"], m["tp"]
    kv = h // m["heads"] * m["kv_heads"]
    sf = dp if m["zero"] >= 3 else 1
    if layer in (0, L + 1):
        return [h * m["vocab"] // tp // sf]
    if layer == L + 2:
        return [h // sf]
    return [h // sf, h * (h + 2 * kv) // tp // sf, h * h // tp // sf, h // sf, h * 2 * f // tp // sf, h * f // tp // sf]


def layer_range(m: dict, pp_rank: int) -> tuple[int, int]:
    """base_checkpointing.py:360-382 get_layer_index (layer_parameters not given): this pipeline stage's transformer
    layers, the first stage from 0 (embedding), the last to L+2."""
    L, pp = m["layers"], m["pp"]
    per, rem = L // pp, L % pp
    if pp_rank < rem:
        start = pp_rank * (per + 1) + 1
        end = start + per
    else:
        start = rem * (per + 1) + (pp_rank - rem) * per + 1
        end = start + per - 1
    if pp_rank == pp - 1:
        end = L + 2
    if pp_rank == 0:
        start = 0
    return start, end


def transformer_model(cfg: dict) -> dict:
    """The model block as 392621b's utils/config.py:895-933 reads it, with its defaults (:108-136)."""
    g = lambda k, d: dotted_get(cfg, f"model.{k}", d)  # noqa: E731
    return {"type": g("type", None), "layers": int(g("num_layers", -1)),
            "hidden": int(g("transformer.hidden_size", 2048)), "ffn": int(g("transformer.ffn_hidden_size", 8192)),
            "vocab": int(g("transformer.vocab_size", 32000)),
            "heads": int(g("transformer.num_attention_heads", 32)), "kv_heads": int(g("transformer.num_kv_heads", 8)),
            "tp": int(g("parallelism.tensor", 1)), "pp": int(g("parallelism.pipeline", 1)),
            "dp": int(g("parallelism.data", -1)), "zero": int(g("parallelism.zero_stage", 0)),
            "model_dtype": str(g("model_datatype", "fp16")), "optimizer_dtype": str(g("optimizer_datatype", "fp32")),
            "model_size": int(g("model_size_bytes", 10240)), "layer_parameters": g("layer_parameters", []),
            "optimization_groups": g("optimization_groups", [])}


def checkpoint_files_v2(cfg: dict, ranks: int) -> dict[str, int]:
    """Every checkpoint file (path relative to the checkpoint folder -> bytes) a checkpoint-only launch of DLIO
    2.0.0-52 writes. main.py:257-287 _checkpoint/_checkpoint_write: num_checkpoints_write saves, epoch 1, steps 1..N,
    each into global_epoch1_step<s>/ (base_checkpointing.py:385-418 save_checkpoint); the reads (main.py:289-305) load
    the same files. Per rank (base_checkpointing.py:56-107): mp = pp x tp, dp = ranks // mp (or model.parallelism.data,
    subset mode), ranks >= mp write nothing at ZeRO 0; layer states {l: {i: tensor}} for this stage's layers unless
    ZeRO 1 on dp rank > 0 (:120-134), optimizer states [P, 5h, P, 5h, P, 5h] with P = parameters // (dp x mp) at ZeRO
    > 0, // mp at ZeRO 0 (:340-358), in the optimizer datatype; model_states-<rank> for a non-transformer model
    (:159-160). Files (:391-418): ZeRO 1/2 layer files on dp rank 0 (model_<mp>_model_states, or per layer
    layer_<l>-model_<mp>_model_states when pp > 1), else zero_pp_rank_<dp>_mp_rank_<mp>_model_states; the optimizer
    file zero_pp_rank_<dp>_mp_rank_<mp>_optim_states."""
    return {name: torch_save_size(st) for name, st in transformer_states(cfg, ranks).items()}


def transformer_states(cfg: dict, ranks: int, who: str = "2.0.0-52") -> dict[str, dict]:
    """The states behind checkpoint_files_v2 (path -> {key: (elements, datatype)} or nested dicts of them): the
    formulas of 392621b's base_checkpointing.py, at the same lines in f6796ed's (3.x)."""
    if dotted_get(cfg, "workflow.train", True):
        raise UnknownRelease(f"the analytic model has DLIO {who}'s checkpoint-only workflow (workflow.train false), "
                             "not its checkpoints during training")
    m = transformer_model(cfg)
    if m["layer_parameters"] or m["optimization_groups"]:
        raise UnknownRelease(f"the analytic model has DLIO {who}'s transformer formulas, not given "
                             "model.layer_parameters / optimization_groups")
    mp = m["pp"] * m["tp"]
    dp = m["dp"] if m["dp"] > 0 else ranks // mp
    n = int(dotted_get(cfg, "checkpoint.num_checkpoints_write", -1))
    out: dict[str, dict] = {}
    for r in range(ranks):
        if m["zero"] == 0 and r >= mp:
            continue  # rank_to_checkpoint = 0 != my_rank (:93-97)
        pp_rank, dp_rank, mp_rank = (r // m["tp"]) % m["pp"], r // mp, r % mp
        files: dict[str, dict] = {}
        if m["type"] != "transformer" and m["model_size"] > 0:
            files[f"model_states-{r}"] = {"a": (m["model_size"], "int8")}
        if m["layers"] > 0 and not (m["zero"] == 1 and dp_rank != 0):
            lo, hi = layer_range(m, pp_rank)
            layers = {str(li): {str(i): (p, m["model_dtype"]) for i, p in enumerate(layer_parameters(m, li, dp))
                                if p > 0} for li in range(lo, hi + 1)}
            if 0 < m["zero"] < 3:
                if dp_rank == 0 and m["pp"] > 1:
                    files.update({f"layer_{li}-model_{mp_rank}_model_states": st for li, st in
                                  ((int(k), v) for k, v in layers.items())})
                elif dp_rank == 0:
                    files[f"model_{mp_rank}_model_states"] = layers
            else:
                files[f"zero_pp_rank_{dp_rank}_mp_rank_{mp_rank}_model_states"] = layers
        p = transformer_parameters(m) // (dp * mp if m["zero"] > 0 else mp) if m["layers"] > 0 else 0
        if p > 0:
            groups = [p, m["hidden"] * 5] * 3
            files[f"zero_pp_rank_{dp_rank}_mp_rank_{mp_rank}_optim_states"] = {
                str(i): (g, m["optimizer_dtype"]) for i, g in enumerate(groups) if g > 0}
        for s in range(1, n + 1):
            out.update({f"global_epoch1_step{s}/{name}.pt": st for name, st in files.items() if st})
    return out


# ---------- checkpoints of MLCommons DLIO 3.x (f6796ed, MLPerf Storage v3.0): the ranks, states and file names of
# 2.0.0-52 (checkpointing/base_checkpointing.py:47-179, :284-460, the same formulas at the same lines), but each file
# is the raw byte count of its state, streamed (pytorch_checkpointing.py:40-50 _compute_state_bytes, :231-253
# save_state/load_state; simple_streaming_checkpointing.py:291-322 when mlpstorage_py is not importable).
V3_CHUNK = 32 * 1024 * 1024  # pytorch_checkpointing.py:130-131 chunk_size; simple_streaming_checkpointing.py:280
DTYPE_BYTES = {"int8": 1, "uint8": 1, "fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8}  # base_checkpointing.py:33-43


def state_bytes(state) -> int:
    """pytorch_checkpointing.py:40-50: elements x datatype size summed over the (nested) state."""
    if isinstance(state, tuple):
        return state[0] * DTYPE_BYTES[state[1]]
    return sum(state_bytes(v) for v in state.values())


def checkpoint_files_v3(cfg: dict, ranks: int) -> dict[str, int]:
    """Every checkpoint file (path relative to the checkpoint folder -> bytes) a checkpoint-only launch of DLIO 3.x
    writes (main.py:542-577 _checkpoint/_checkpoint_write: epoch 1, steps 1..num_checkpoints_write)."""
    if dotted_get(cfg, "workflow.train", True):
        raise UnknownRelease("the analytic model has DLIO 3.x's checkpoint-only workflow (workflow.train false), not "
                             "its checkpoints during training (main.py:632-658)")
    return {n: b for n, st in transformer_states(cfg, ranks, "3.x").items() if (b := state_bytes(st)) > 0}


def _pieces(b: int, size: int) -> Counter:
    """b bytes cut into pieces of `size` and the rest: {str(piece size): count}."""
    out: Counter = Counter({str(size): b // size})
    if b % size:
        out[str(b % size)] += 1
    return +out


# mlcommons/storage mlpstorage_py/checkpointing/streaming_checkpoint.py (3e5a631) StreamingCheckpointing as DLIO 3.x
# builds it (pytorch_checkpointing.py:130-137): num_parallel_readers 4, read_chunk_size its default 4 x chunk_size
MLPS_READERS = 4
MLPS_READ_CHUNK = 4 * V3_CHUNK


def mlps_reads(b: int) -> dict:
    """StreamingCheckpointing.load of a b-byte file: blocks of ceil(b / 4) bytes (at most 4), one FileStorageReader
    each (storage_readers/file_reader.py: os.open, posix_fadvise(0, 0, RANDOM)), each block read by os.pread of
    min(128 MiB, what is left of it), each followed by posix_fadvise(DONTNEED); then each reader closed."""
    bs = -(-b // MLPS_READERS)
    blocks = [min(bs, b - p) for p in range(0, b, bs)][:MLPS_READERS]
    sizes: Counter = Counter()
    for n in blocks:
        sizes += _pieces(n, MLPS_READ_CHUNK)
    reads = sum(sizes.values())
    return {"opens": len(blocks), "closes": len(blocks), "reads": reads, "read_bytes": b, "read_sizes": dict(sizes),
            "fadvises": len(blocks) + reads}


def checkpoint_io_v3(cfg: dict, ranks: int, stream: str = "simple_streaming") -> dict[str, dict]:
    """Per checkpoint file, the POSIX calls DLIO 3.x makes on it, by the stream its _get_streaming() builds.
    simple_streaming (SimpleStreamingCheckpointing, mlpstorage_py not importable): writes of min(remaining, 32 MiB)
    zeros (simple_streaming_checkpointing.py:299-304: one write(2) per chunk), one fsync whatever checkpoint.fsync says
    (:305-306; the key lands in args.checkpoint_sync, utils/config.py:1767-1768), and the read-back: main.py:579-597
    _checkpoint_read loads steps 1..num_checkpoints_read, each file read whole once (:308-322), so its bytes read are
    its size (0 for the files of later steps).
    mlpstorage_streaming (MLPerf v3.0: mlpstorage's StreamingCheckpointing): the same chunks written by its writer
    process (storage_writers/file_writer.py: one os.open, one os.write per chunk, each followed by
    posix_fadvise(DONTNEED), one fsync at close), no lseek anywhere (os.open/os.write/os.pread), and each file of
    steps 1..num_checkpoints_read read back as mlps_reads says: every call and its size."""
    if stream not in ("simple_streaming", "mlpstorage_streaming"):
        raise UnknownRelease(f"the analytic model has no checkpoint stream {stream!r}")
    nread = int(dotted_get(cfg, "checkpoint.num_checkpoints_read", -1))
    out = {}
    for name, b in checkpoint_files_v3(cfg, ranks).items():
        sizes = _pieces(b, V3_CHUNK)
        step = int(name.split("/", 1)[0].rsplit("step", 1)[1])
        row = {"bytes": b, "writes": sum(sizes.values()), "write_sizes": dict(sizes), "fsyncs": 1,
               "read_bytes": b if step <= nread else 0}
        if stream == "mlpstorage_streaming":
            back = mlps_reads(b) if step <= nread else {"opens": 0, "closes": 0, "reads": 0, "read_bytes": 0,
                                                       "read_sizes": {}, "fadvises": 0}
            row.update({**back, "opens": 1 + back["opens"], "closes": 1 + back["closes"], "seeks": 0,
                        "fadvises": row["writes"] + back["fadvises"]})
        out[name] = row
    return out
