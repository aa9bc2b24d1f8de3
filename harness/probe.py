"""What the installed DLIO does, found by running its own code (run with the reference venv's Python, never with the
harness's): the behaviour rules the kernel's DLIO entries carry (`h5dlio --dlio-entries`) and which workload keys
DLIO honours. Nothing here reads DLIO's version number or its source text.

Usage: python probe.py KEYS_JSON > probe.json, KEYS_JSON the kernel's "versioned_keys" list ([{yaml, option}, ...]).
Output: {"rules": {rule: value or null}, "keys": {yaml key: honoured true/false or null}, "how": {rule: what was
observed}, "unknown": {rule: why it could not be observed}}. Exit 0 whenever the JSON was written (a rule that could
not be observed is null with its reason in "unknown"); exit 2 when DLIO cannot be imported at all.

How each rule is observed (one process, no MPI launch: DLIO's MPI wrapper initialises a singleton communicator):
  keys                 each key alone through DLIO's own LoadConfig on a fresh ConfigArguments, the value read back
                       from the attribute the option sets (chunking and chunk size: from the generated file instead,
                       because a release may read them and its generator ignore them)
  sampler_shuffles     DLIO's PyTorch dlio_sampler built for 1 rank of 64 samples, asked to shuffle with a seed
                       (when its constructor takes a shuffle argument): does it yield other than 0..63?
  libver_low           a tiny DLIO run (its DLIOBenchmark, generate + train, 5 files of 1 sample, batch 2, 1 step,
  track_times          read_threads 0) in a temporary folder; its first file's superblock version (0/1: earliest,
  indexed_records      2/3: latest), whether the records dataset stores object times, 'records' or 'records_<k>',
  file_ext             and the files' extension
  trim_files_to_steps  the same run: does DLIO keep fewer training files (len(file_list_train)) than the 5 it made?
  cap_checked_on_fetch the same run: samples opened for reading with a cap of 1 step of 2 samples: 2 (the cap is
                       checked after the step) or 4 (checked when the next batch arrives)
  slice_clamped        DLIO's own get_global_map_index for rank 1 of 2 over 3 one-sample files: IndexError (its
                       slice [2, 4) is not clamped at 3) or not
  sample_read          the tiny run's reads of its data files: h5py.File opens ("h5py") or Python open(..., 'rb')
                       reads of every byte of the file with no h5py open ("whole_file")
  prewarm              the tiny run: samples read outside DLIOBenchmark._train (a loader pre-warm) or none
  file_reshuffle       a run of 5 one-sample files, batch 1, 2 epochs, file_shuffle seed (seed 4), sample_shuffle off:
                       are the files read in another order than DLIO lists them? (3.x reshuffles in reconfigure with
                       numpy seeded seed+epoch, then seed+epoch+31*rank: with 1 rank and seed 4 the two shuffles of 5
                       files do not cancel; with seed 123 they happen to)
  file_sharding        that data set listed by DLIO's own DLIOBenchmark.initialize as rank 0 of 2 (the rank and size
                       it keeps set by hand; one process): every file ("index_slice": each rank reads its slice of the
                       global sample index) or files 0 and 2 ("round_robin": r, r+R, ... trimmed to floor(5/2))
  gen_seed_per_rank    generation of 4 files with record_length_stdev > 0, once as rank 0 of 1 and once as rank 1 of
                       2 (files 1 and 3): the same sizes (one seed for every rank) or others (a seed per rank)
  checkpoint_stream    what DLIO's own PyTorchCheckpointing would write a checkpoint file with: no _get_streaming
                       ("torch_save": torch.save of real tensors), or the class its _get_streaming() builds on local
                       storage (3.x pytorch_checkpointing.py:90-138): SimpleStreamingCheckpointing ("simple_streaming")
                       or mlpstorage_py's StreamingCheckpointing ("mlpstorage_streaming", when mlpstorage imports)
  reader_context       a fresh ConfigArguments' multiprocessing_context: how DLIO starts its PyTorch reader processes
                       when the workload names none ("fork" in 2.0.0, "spawn" in 3.x; the memory they need here)
"""
from __future__ import annotations

import builtins
import inspect
import io
import json
import os
import shutil
import sys
import tempfile
import time
import types
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

# option -> ConfigArguments attribute it sets (observed through LoadConfig)
ATTRS = {"record-length": "record_length", "record-length-stdev": "record_length_stdev",
         "record-length-resize": "record_length_resize", "record-dims": "record_dims",
         "num-dset-per-record": "num_dset_per_record", "chunk-dims": "chunk_dims",
         # checkpoint and model keys (2.0.0: checkpoint.*; 2.0.0-52 on: model.*, the checkpoint-only workflow's).
         # checkpoint.fsync lands in checkpoint_sync, which DLIO's checkpointing never reads (392621b
         # utils/config.py:879): the key is read, its effect is nil (h5dlio.checkpoint-fsync is the kernel's own)
         "model-size": "model_size", "optimization-groups": "optimization_groups", "num-layers": "num_layers",
         "layer-parameters": "layer_parameters", "tensor-parallelism": "tensor_parallelism",
         "pipeline-parallelism": "pipeline_parallelism", "model-type": "model_type",
         "model-datatype": "model_datatype", "optimizer-datatype": "optimizer_datatype",
         "data-parallelism": "data_parallelism", "zero-stage": "zero_stage", "vocab-size": "vocab_size",
         "hidden-size": "hidden_size", "ffn-hidden-size": "ffn_hidden_size",
         "num-attention-heads": "num_attention_heads", "num-kv-heads": "num_kv_heads",
         "checkpoint-mode": "checkpoint_mode", "num-checkpoints-write": "num_checkpoints_write",
         "num-checkpoints-read": "num_checkpoints_read", "time-between-checkpoints": "time_between_checkpoints",
         "checkpoint-rank-sync": "checkpoint_rank_sync", "checkpoint-randomize-tensor": "checkpoint_randomize_tensor",
         "checkpoint-fsync-yaml": "checkpoint_sync"}
# option -> how the generated file shows it is honoured (the run sets enable_chunking and chunk_size 1024 on 4096-byte
# records: (1, 32, 32) chunks when both are honoured)
FROM_FILE = {"chunking", "chunk-size"}
SENTINELS = {"record_length": 4099, "record_length_stdev": 17, "record_length_resize": 8191, "record_dims": [3, 5],
             "num_dset_per_record": 3, "chunk_dims": [1, 3, 5], "model_size": 4097, "optimization_groups": [3, 5],
             "num_layers": 7, "layer_parameters": [5, 7], "tensor_parallelism": 3, "pipeline_parallelism": 5,
             "model_type": "probe", "model_datatype": "bf16", "optimizer_datatype": "fp64", "data_parallelism": 9,
             "zero_stage": 2, "vocab_size": 4111, "hidden_size": 4127, "ffn_hidden_size": 4129,
             "num_attention_heads": 11, "num_kv_heads": 13, "checkpoint_mode": "subset", "num_checkpoints_write": 19,
             "num_checkpoints_read": 17, "time_between_checkpoints": 0.25, "checkpoint_rank_sync": True,
             "checkpoint_randomize_tensor": False, "checkpoint_sync": True}
NFILES, BATCH, CAP = 5, 2, 1
RULES = ("libver_low", "track_times", "indexed_records", "sampler_shuffles", "cap_checked_on_fetch",
         "trim_files_to_steps", "slice_clamped", "file_ext", "sample_read", "prewarm", "file_reshuffle",
         "file_sharding", "gen_seed_per_rank", "checkpoint_stream", "reader_context")


def _fresh_args():
    from dlio_benchmark.utils.config import ConfigArguments
    ConfigArguments.reset()
    return ConfigArguments.get_instance()


def _set(d: dict, dotted: str, value) -> dict:
    node = d
    parts = dotted.split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value
    return d


def probe_keys(versioned: list[dict], out: dict) -> None:
    from dlio_benchmark.utils.config import LoadConfig
    for k in versioned:
        yaml, opt = k["yaml"], k["option"]
        if opt in FROM_FILE:
            continue
        attr = ATTRS.get(opt)
        if attr is None:
            out["keys"][yaml] = None
            out["unknown"][f"key {yaml}"] = f"the probe has no way to observe option {opt}"
            continue
        want = SENTINELS[attr]
        args = _fresh_args()
        before = getattr(args, attr, None)
        try:
            LoadConfig(args, _set({}, yaml, want))
        except Exception as e:  # noqa: BLE001 - DLIO refusing the key is an observation too
            out["keys"][yaml] = None
            out["unknown"][f"key {yaml}"] = f"DLIO's LoadConfig raised {type(e).__name__}: {e}"[:300]
            continue
        got = getattr(args, attr, None)
        got = getattr(got, "value", got)  # an enumeration (checkpoint_mode): its YAML value
        norm = list(got) if isinstance(got, list | tuple) else got
        out["keys"][yaml] = norm == want and before != want
    _fresh_args()


def probe_sampler(out: dict) -> None:
    try:
        from dlio_benchmark.common.enumerations import Shuffle
        from dlio_benchmark.data_loader.torch_data_loader import dlio_sampler
    except Exception as e:  # noqa: BLE001
        out["unknown"]["sampler_shuffles"] = f"DLIO's PyTorch dlio_sampler cannot be imported: {e}"[:300]
        return
    args = _fresh_args()
    args.sample_shuffle, args.seed = Shuffle.SEED, 123
    given = {"rank": 0, "size": 1, "num_samples": 64, "shuffle": Shuffle.SEED, "epochs": 1, "seed": 123}
    params = inspect.signature(dlio_sampler.__init__).parameters
    missing = [p for p in params if p != "self" and p not in given and params[p].default is inspect.Parameter.empty]
    if missing:
        out["unknown"]["sampler_shuffles"] = f"dlio_sampler{inspect.signature(dlio_sampler.__init__)}: " \
                                             f"no value known for {', '.join(missing)}"
        return
    s = dlio_sampler(**{p: given[p] for p in params if p in given})
    order = list(iter(s))
    out["rules"]["sampler_shuffles"] = order != list(range(64))
    asked = "asked to shuffle with seed 123" if "shuffle" in params else "its constructor takes no shuffle argument"
    out["how"]["sampler_shuffles"] = f"dlio_sampler (1 rank, 64 samples, {asked}) yielded " + \
        ("another order" if order != list(range(64)) else "0..63 in order")


def _superblock_version(path: Path) -> int:
    with open(path, "rb") as f:
        head = f.read(4096)
    for off in (0, 512, 1024, 2048):  # the signature is at 0 or a power of two from 512
        if head[off:off + 8] == b"\x89HDF\r\n\x1a\n":
            return head[off + 8]
    raise ValueError(f"{path}: no HDF5 superblock signature")


def _stores_times(dset) -> bool:
    """The object header's store-times flag as HDF5 reads it back (v1 headers: always set; v2: as created)."""
    return bool(dset.id.get_create_plist().get_obj_track_times())


def _config(data: Path, outdir: Path, nfiles: int, train: bool, reader: dict | None = None,
            train_cfg: dict | None = None, **dataset) -> dict:
    return {"model": "h5dlio_probe", "framework": "pytorch",
            "workflow": {"generate_data": True, "train": train, "evaluation": False, "checkpoint": False},
            "dataset": {"data_folder": str(data), "format": "hdf5", "num_files_train": nfiles, "num_files_eval": 0,
                        "num_samples_per_file": 1, "keep_files": True,
                        "generation_buffer_size": 65536,  # 2.0.0 draws a buffer this big (default: 2 GiB)
                        # both names: whichever this DLIO honours (4096 bytes: 64x64 records)
                        "record_length": 4096, "record_length_stdev": 0,
                        "record_length_bytes": 4096, "record_length_bytes_stdev": 0, **dataset},
            "reader": {"data_loader": "pytorch", "batch_size": BATCH, "read_threads": 0, "file_shuffle": "off",
                       "sample_shuffle": "off", **(reader or {})},
            "train": {"epochs": 1, "computation_time": 0, **({"total_training_steps": CAP} if train else {}),
                      **(train_cfg or {})},
            "output": {"folder": str(outdir)}}


def _dlio_run(cfg: dict, log: io.StringIO, train: bool, before=None, run: bool = True):
    """DLIO's own DLIOBenchmark on cfg, in this process: (benchmark, training files kept after initialize).
    before(bench) runs between construction and initialize; run=False stops after initialize."""
    from dlio_benchmark.main import DLIOBenchmark
    from dlio_benchmark.utils.utility import DLIOMPI
    _fresh_args()
    mpi = DLIOMPI.get_instance()
    saved = dict(vars(mpi))  # a training run leaves DLIO's MPI wrapper in child mode (its loader unpickles the config,
    # whose __setstate__ replaces the singleton: utils/config.py, DLIOMPI.reset()): both restored for the next run
    try:
        with redirect_stdout(log), redirect_stderr(log):
            bench = DLIOBenchmark(cfg)
            if before:
                before(bench)
            bench.initialize()
            kept = len(bench.args.file_list_train) if train else None
            if train and run:
                bench.run()
    except SystemExit as e:  # DLIO calls exit() on some configurations
        raise RuntimeError(f"DLIO exited ({e.code}): {log.getvalue()[-300:]}") from None
    finally:
        vars(mpi).update(saved)
        DLIOMPI._DLIOMPI__instance = mpi  # type: ignore[attr-defined]  # the singleton's private slot
    return bench, kept


class _Tap:
    """A file DLIO opened with Python's open(..., 'rb'): the bytes it reads, recorded when it is closed."""

    def __init__(self, f, path: str, reads: _Reads):
        self._f, self._path, self._reads, self._n = f, path, reads, 0

    def read(self, *a):
        b = self._f.read(*a)
        self._n += len(b)
        return b

    def readinto(self, buf):
        n = self._f.readinto(buf)
        self._n += n or 0
        return n

    def close(self):
        if not self._f.closed:
            self._reads.add("raw", self._path, self._n == os.path.getsize(self._path))
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getattr__(self, name):
        return getattr(self._f, name)


class _Reads:
    """Every read-only open of a file under `data` while installed (h5py.File and Python's open in 'rb'), with whether
    it happened inside DLIOBenchmark._train and in which epoch."""

    def __init__(self, data: Path):
        self.data, self.events, self.epoch = str(data), [], None  # (kind, path, whole file read, epoch or None)

    def add(self, kind: str, path: str, whole: bool | None = None) -> None:
        self.events.append((kind, path, whole, self.epoch))

    def mine(self, name) -> bool:
        return isinstance(name, str | os.PathLike) and str(name).startswith(self.data)

    def __enter__(self):
        import h5py
        reads, real_file, real_open = self, h5py.File, builtins.open

        class Counting(real_file):  # type: ignore[misc,valid-type]
            def __init__(self, name, mode="r", *a, **kw):
                if str(mode) == "r" and reads.mine(name):
                    reads.add("h5py", str(name))
                super().__init__(name, mode, *a, **kw)

        def counting_open(file, mode="r", *a, **kw):
            f = real_open(file, mode, *a, **kw)
            if reads.mine(file) and "r" in mode and "b" in mode and "+" not in mode:
                return _Tap(f, str(file), reads)
            return f

        self._saved = (h5py, real_file, real_open)
        h5py.File, builtins.open = Counting, counting_open
        return self

    def __exit__(self, *exc):
        h5py, real_file, real_open = self._saved
        h5py.File, builtins.open = real_file, real_open

    def watch_train(self, bench) -> None:
        """Mark reads inside bench._train(epoch) with the epoch (before bench.run())."""
        real = bench._train

        def train(epoch, *a, **kw):
            self.epoch = epoch
            try:
                return real(epoch, *a, **kw)
            finally:
                self.epoch = None
        bench._train = train

    def samples(self, inside: bool) -> list[tuple]:
        return [e for e in self.events if (e[3] is not None) == inside]


def probe_run(out: dict) -> None:
    import h5py
    real_file = h5py.File
    with tempfile.TemporaryDirectory(prefix="h5dlio-probe-") as tmp:
        data = Path(tmp) / "data"
        log = io.StringIO()
        reads = _Reads(data)
        try:
            with reads:
                _, kept = _dlio_run(_config(data, Path(tmp) / "out", NFILES, True), log, True, reads.watch_train)
        except Exception as e:  # noqa: BLE001
            why = f"a tiny DLIO run failed: {type(e).__name__}: {e}"[:300]
            for r in ("libver_low", "track_times", "indexed_records", "file_ext", "cap_checked_on_fetch",
                      "trim_files_to_steps", "sample_read", "prewarm"):
                out["unknown"].setdefault(r, why)
            out["log_tail"] = log.getvalue()[-2000:]
            return
        files = sorted(p for p in data.rglob("*") if p.is_file())
        if not files:
            for r in ("libver_low", "track_times", "indexed_records", "file_ext"):
                out["unknown"][r] = f"the tiny DLIO run wrote no file under {data}"
        else:
            first = files[0]
            exts = sorted({p.suffix.lstrip(".") for p in files})
            out["rules"]["file_ext"] = exts[0] if len(exts) == 1 else None
            if len(exts) != 1:
                out["unknown"]["file_ext"] = f"files with extensions {exts}"
            out["how"]["file_ext"] = f"{len(files)} files, e.g. {first.name}"
            sb = _superblock_version(first)
            out["rules"]["libver_low"] = "earliest" if sb < 2 else "latest"
            out["how"]["libver_low"] = f"superblock version {sb} in {first.name}"
            with real_file(first, "r") as f:
                names = sorted(f.keys())
                recs = [n for n in names if n.startswith("records")]
                if recs == ["records"]:
                    out["rules"]["indexed_records"] = False
                elif recs and all(n.removeprefix("records_").isdigit() for n in recs):
                    out["rules"]["indexed_records"] = True
                else:
                    out["unknown"]["indexed_records"] = f"datasets {names}"
                out["how"]["indexed_records"] = f"datasets {names}"
                if recs:
                    out["rules"]["track_times"] = _stores_times(f[recs[0]])
                    out["how"]["track_times"] = f"{recs[0]}: object times " + \
                        ("tracked" if out["rules"]["track_times"] else "not tracked")
                else:
                    out["unknown"]["track_times"] = f"no records dataset in {first.name}: {names}"
        out["rules"]["trim_files_to_steps"] = kept < NFILES
        out["how"]["trim_files_to_steps"] = f"{NFILES} files made, {kept} kept for training (batch {BATCH}, 1 rank)"
        inside, outside = reads.samples(True), reads.samples(False)
        kinds = {e[0] for e in inside}
        if kinds == {"h5py"}:
            out["rules"]["sample_read"] = "h5py"
        elif kinds == {"raw"} and all(e[2] for e in inside):
            out["rules"]["sample_read"] = "whole_file"
        else:
            out["unknown"]["sample_read"] = f"reads in training: {sorted(kinds) or 'none'}, whole files: " \
                                            f"{sorted({e[2] for e in inside if e[0] == 'raw'})}"
        out["how"]["sample_read"] = f"{len(inside)} opens in training: " + \
            ", ".join(f"{k} {sum(e[0] == k for e in inside)}" for k in sorted(kinds)) + \
            ("" if "raw" not in kinds else f" (whole file read: {all(e[2] for e in inside if e[0] == 'raw')})")
        out["rules"]["prewarm"] = bool(outside)
        out["how"]["prewarm"] = f"{len(outside)} samples read outside DLIOBenchmark._train"
        n = len(inside)
        if n == CAP * BATCH:
            out["rules"]["cap_checked_on_fetch"] = False
        elif n == (CAP + 1) * BATCH:
            out["rules"]["cap_checked_on_fetch"] = True
        else:
            out["unknown"]["cap_checked_on_fetch"] = f"{n} samples opened: neither {CAP * BATCH} nor " \
                                                     f"{(CAP + 1) * BATCH}"
        out["how"]["cap_checked_on_fetch"] = f"{n} samples read in training with a cap of {CAP} step of {BATCH}"


def probe_files(out: dict) -> None:
    """file_reshuffle (5 one-sample files, batch 1, 2 epochs, file_shuffle seed) and file_sharding (that data set
    listed by DLIO's initialize as rank 0 of 2)."""
    n = NFILES
    with tempfile.TemporaryDirectory(prefix="h5dlio-probe-") as tmp:
        data = Path(tmp) / "data"
        log = io.StringIO()
        reads = _Reads(data)
        cfg = _config(data, Path(tmp) / "out", n, True, reader={"batch_size": 1, "file_shuffle": "seed"},
                      train_cfg={"epochs": 2, "seed": 4, "total_training_steps": -1})
        try:
            with reads:
                _dlio_run(cfg, log, True, reads.watch_train)
        except Exception as e:  # noqa: BLE001
            out["unknown"]["file_reshuffle"] = f"a 2-epoch DLIO run failed: {type(e).__name__}: {e}"[:300]
            out["log_tail_files"] = log.getvalue()[-2000:]
            return
        order = {ep: [Path(e[1]).name for e in reads.samples(True) if e[3] == ep] for ep in (1, 2)}
        if len(order[1]) != n or sorted(order[1]) != sorted(order[2]):
            out["unknown"]["file_reshuffle"] = f"epochs read {order}: not each file once per epoch"
        else:
            out["rules"]["file_reshuffle"] = order[1] != sorted(order[1]) or order[2] != sorted(order[2])
        out["how"]["file_reshuffle"] = f"file_shuffle seed, epoch 1 read {order[1]}, epoch 2 {order[2]}"
        files = sorted(p.name for p in data.rglob("*") if p.is_file())
        cfg["workflow"]["generate_data"] = False

        def as_rank0_of2(bench) -> None:
            bench.my_rank = bench.args.my_rank = 0
            bench.comm_size = bench.args.comm_size = 2
        try:
            bench, _ = _dlio_run(cfg, log, True, as_rank0_of2, run=False)
        except Exception as e:  # noqa: BLE001
            out["unknown"]["file_sharding"] = f"DLIO's initialize as rank 0 of 2 failed: {type(e).__name__}: " \
                                              f"{e}"[:300]
            return
        mine = [Path(f).name for f in bench.args.file_list_train]
        if mine == [files[0], files[2]]:
            out["rules"]["file_sharding"] = "round_robin"
        elif len(mine) > (n + 1) // 2 and mine == files[:len(mine)]:
            out["rules"]["file_sharding"] = "index_slice"
        else:
            out["unknown"]["file_sharding"] = f"rank 0 of 2 holds {mine} of {files}"
        out["how"]["file_sharding"] = f"initialize as rank 0 of 2 over {n} files: file_list_train {mine}"


def probe_gen_seed(out: dict) -> None:
    """gen_seed_per_rank: 4 files with record_length_stdev > 0 generated as rank 0 of 1, then as rank 1 of 2 (the
    generator writes files 1 and 3): their sizes equal when every rank seeds alike."""
    def sizes(data: Path) -> dict:
        return {p.name: p.stat().st_size for p in data.rglob("*") if p.is_file()}

    with tempfile.TemporaryDirectory(prefix="h5dlio-probe-") as tmp:
        log = io.StringIO()
        got = {}
        for rank, size in ((0, 1), (1, 2)):
            data = Path(tmp) / f"data{rank}"
            for sub in ("train", "valid"):  # rank 0 makes the folders in DLIO; here rank 1 runs alone
                (data / sub).mkdir(parents=True)

            def as_rank(bench, rank=rank, size=size) -> None:
                for o in (bench, bench.args, bench.data_generator):
                    o.my_rank, o.comm_size = rank, size
            try:
                _dlio_run(_config(data, Path(tmp) / f"out{rank}", 4, False, record_length=4096,
                                  record_length_stdev=1024, record_length_bytes=4096,
                                  record_length_bytes_stdev=1024), log, False, as_rank)
            except Exception as e:  # noqa: BLE001
                out["unknown"]["gen_seed_per_rank"] = f"generation as rank {rank} of {size} failed: " \
                                                      f"{type(e).__name__}: {e}"[:300]
                return
            got[rank] = sizes(data)
        common = sorted(set(got[0]) & set(got[1]))
        if len(got[1]) != 2 or len(common) != 2 or len(set(got[0].values())) < 2:
            out["unknown"]["gen_seed_per_rank"] = f"sizes {got}: rank 1 of 2 did not write 2 of the 4 files, or " \
                                                  "the sizes do not vary"
            return
        out["rules"]["gen_seed_per_rank"] = any(got[0][f] != got[1][f] for f in common)
        out["how"]["gen_seed_per_rank"] = "sizes as rank 0 of 1 " + str({f: got[0][f] for f in common}) + \
            ", as rank 1 of 2 " + str({f: got[1][f] for f in common})


def probe_checkpoint(out: dict) -> None:
    """checkpoint_stream: DLIO's own decision, made by its own code on an instance it did not initialise (no MPI, no
    storage): PyTorchCheckpointing._get_streaming() on local storage, or torch.save when there is none."""
    try:
        from dlio_benchmark.checkpointing import pytorch_checkpointing as pc
        cls = pc.PyTorchCheckpointing
        if not hasattr(cls, "_get_streaming"):
            out["rules"]["checkpoint_stream"] = "torch_save"
            out["how"]["checkpoint_stream"] = "PyTorchCheckpointing has no _get_streaming: save_state calls torch.save"
            return
        obj = object.__new__(cls)
        obj.args = types.SimpleNamespace(storage_type=None)  # local storage: not direct_fs
        sc = obj._get_streaming()
    except Exception as e:  # noqa: BLE001 - an observation that failed is recorded, not guessed
        out["unknown"]["checkpoint_stream"] = f"PyTorchCheckpointing._get_streaming() failed: {type(e).__name__}: {e}"
        return
    name = f"{type(sc).__module__}.{type(sc).__qualname__}"
    out["rules"]["checkpoint_stream"] = ("simple_streaming" if type(sc).__name__ == "SimpleStreamingCheckpointing"
                                         else "mlpstorage_streaming" if name.startswith("mlpstorage") else name)
    out["how"]["checkpoint_stream"] = f"PyTorchCheckpointing._get_streaming() built {name}"


def probe_chunking(out: dict) -> None:
    """Generation of one file with dataset.enable_chunking and chunk_size 1024 on 64x64 records: chunked (1, 32, 32)
    when both are honoured; an error the plain run did not raise also shows the generator acting on them."""
    import h5py
    with tempfile.TemporaryDirectory(prefix="h5dlio-probe-") as tmp:
        data = Path(tmp) / "data"
        log = io.StringIO()
        try:
            _dlio_run(_config(data, Path(tmp) / "out", 1, False, enable_chunking=True, chunk_size=1024), log, False)
        except Exception as e:  # noqa: BLE001
            err = f"{type(e).__name__}: {e}"[:200]
            try:
                _dlio_run(_config(Path(tmp) / "plain", Path(tmp) / "out2", 1, False), log, False)
            except Exception as e2:  # noqa: BLE001
                out["unknown"]["key dataset.enable_chunking"] = f"generation fails with and without it ({err}; " \
                                                                f"{type(e2).__name__}: {e2})"[:300]
                return
            out["keys"]["dataset.enable_chunking"] = out["keys"]["dataset.chunk_size"] = True
            out["how"]["chunking"] = f"generation with dataset.enable_chunking fails ({err}), without it " \
                                     "succeeds: its generator acts on the key"
            return
        files = sorted(p for p in data.rglob("*") if p.is_file())
        if not files:
            out["unknown"]["key dataset.enable_chunking"] = "generation with chunking wrote no file"
            return
        with h5py.File(files[0], "r") as f:
            recs = sorted(n for n in f if n.startswith("records"))
            chunks = f[recs[0]].chunks if recs else None
        out["keys"]["dataset.enable_chunking"] = chunks is not None
        out["keys"]["dataset.chunk_size"] = chunks is not None and list(chunks) == [1, 32, 32]
        out["how"]["chunking"] = f"generation with dataset.enable_chunking, chunk_size 1024: chunks {chunks}"


def probe_reader_context(out: dict) -> None:
    """reader_context: how DLIO starts its PyTorch reader processes when the workload names no
    reader.multiprocessing_context (a fresh ConfigArguments' multiprocessing_context): "fork" (each reader shares its
    rank's pages) or "spawn" (each reader a fresh interpreter importing DLIO): what harness/resources.py counts per
    reader. Kernel entries carry no such rule: it decides memory here, not the I/O replayed."""
    ctx = getattr(_fresh_args(), "multiprocessing_context", None)
    if not isinstance(ctx, str) or not ctx:
        out["unknown"]["reader_context"] = f"ConfigArguments has no multiprocessing_context string ({ctx!r})"
        return
    out["rules"]["reader_context"] = ctx
    out["how"]["reader_context"] = f"a fresh ConfigArguments' multiprocessing_context is {ctx!r}"


def probe_index_map(out: dict) -> None:
    """slice_clamped: DLIO's own index map (ConfigArguments.get_global_map_index) for rank 1 of 2 over 3 one-sample
    files: ceil(3/2) = 2 samples from 2, past the last one unless the slice is clamped (IndexError otherwise)."""
    args = _fresh_args()
    fn = getattr(args, "get_global_map_index", None)
    if fn is None:
        out["unknown"]["slice_clamped"] = "DLIO's ConfigArguments has no get_global_map_index"
        return
    from dlio_benchmark.common.enumerations import Shuffle
    args.comm_size, args.my_rank, args.num_samples_per_file, args.sample_shuffle = 2, 1, 1, Shuffle.OFF
    given = {"file_list": ["f0.hdf5", "f1.hdf5", "f2.hdf5"], "total_samples": 3, "epoch_number": 1}
    params = [p for p in inspect.signature(fn).parameters if p in given]
    try:
        fn(**{p: given[p] for p in params})
        out["rules"]["slice_clamped"] = True
    except IndexError:
        out["rules"]["slice_clamped"] = False
    except Exception as e:  # noqa: BLE001
        out["unknown"]["slice_clamped"] = f"get_global_map_index raised {type(e).__name__}: {e}"[:300]
        return
    finally:
        _fresh_args()
    out["how"]["slice_clamped"] = "get_global_map_index, rank 1 of 2, 3 one-sample files: " + \
        ("no error (clamped at 3)" if out["rules"]["slice_clamped"] else "IndexError (slice [2, 4) not clamped)")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: probe.py KEYS_JSON", file=sys.stderr)
        return 2
    versioned = json.loads(argv[1])
    os.environ.setdefault("DFTRACER_ENABLE", "0")
    out: dict = {"rules": {}, "keys": {}, "how": {}, "unknown": {}, "seconds": {}}
    try:
        import dlio_benchmark
    except ImportError as e:
        print(f"probe: cannot import dlio_benchmark: {e}", file=sys.stderr)
        return 2
    out["module"] = str(Path(dlio_benchmark.__file__).parent)
    from dlio_benchmark.utils.utility import DLIOMPI
    DLIOMPI.get_instance().initialize()  # a singleton communicator: no MPI launch
    real_stdout = sys.stdout
    here = tempfile.mkdtemp(prefix="h5dlio-probe-cwd-")  # whatever DLIO writes relative to the cwd lands here
    os.chdir(here)
    with redirect_stdout(sys.stderr):  # DLIO prints; only the JSON goes to stdout
        for name, step in (("keys", lambda: probe_keys(versioned, out)), ("sampler", lambda: probe_sampler(out)),
                           ("reader", lambda: probe_reader_context(out)),
                           ("index map", lambda: probe_index_map(out)),
                           ("chunking", lambda: probe_chunking(out)), ("gen seed", lambda: probe_gen_seed(out)),
                           ("run", lambda: probe_run(out)), ("files", lambda: probe_files(out)),
                           ("checkpoint", lambda: probe_checkpoint(out))):
            t0 = time.monotonic()
            step()
            out["seconds"][name] = round(time.monotonic() - t0, 2)
    for r in RULES:
        out["rules"].setdefault(r, None)
        if out["rules"][r] is None:
            out["unknown"].setdefault(r, "not observed")
    for k in versioned:
        out["keys"].setdefault(k["yaml"], None)
    json.dump(out, real_stdout, indent=1, sort_keys=True)
    real_stdout.write("\n")
    real_stdout.flush()
    os.chdir("/")
    shutil.rmtree(here, ignore_errors=True)
    os._exit(0)  # DLIO's MPI and loader threads: no interpreter teardown to hang on


if __name__ == "__main__":
    sys.exit(main(sys.argv))
