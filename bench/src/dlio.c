/* DLIO release knowledge: the entry table, the release-specific workload keys, version order and the JSON the
 * harness reads (h5dlio --dlio-entries). Adding a DLIO release = one entry in DLIO_ENTRIES[] below (plus its renamed
 * or new keys in DLIO_KEYS[]); validate/model.py keeps its own RELEASES on purpose (the independent second opinion). */
#include "dlio.h"
#include "util.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_str_or_null(sb_t *b, const char *s);

/* One entry per DLIO release. Paths are relative to the dlio_benchmark package of the named revision.
 * Shared by every entry (unchanged from 2.0.0 to main): file names <prefix>_<i zero-padded to the digits of N>_of_<N>
 * .hdf5 (data_generator/data_generator.py:109-120 at v2.0.1), per-file dimensions numpy normal draws after
 * np.random.seed(10) (data_generator.py:66-67, hdf5_generator.py:58 at v2.0.1), 'labels' int64 zeros created after
 * the records, one h5py.File(path, 'r') per sample (reader/reader_handler.py:106-120 at v2.0.1: ON_DEMAND), the
 * rank slice [r*ceil(T/R), (r+1)*ceil(T/R)) (data_loader/torch_data_loader.py:90-95 at v2.0.1), drop_last. */
// clang-format off: a table, kept as written
static const dlio_entry_t DLIO_ENTRIES[] = {
    /* PyPI 2.0.0 = git ec22aec (v2.0.0-3; the v2.0.0 tag, 866828c, has another sampler).
     * data_generator/hdf5_generator.py:56 h5py.File(path, 'w'): h5py defaults, superblock v0 (libver earliest);
     * :69 one 'records' dataset, :79 'labels'. reader/hdf5_reader.py:47 reads ['records'][i].
     * data_loader/torch_data_loader.py:104-108: dlio_sampler shuffles its persistent slice in place after
     * np.random.seed(seed) at every epoch (the permutation compounds); its slice is not clamped at T (IndexError).
     * utils/config.py:352-366 get_global_map_index maps [r*ceil(T/R), (r+1)*ceil(T/R)) unclamped, for the training
     * and (whenever the valid folder holds files, evaluation on or off: main.py:175-207, :330) the evaluation
     * samples, at the start of every epoch: with T not a multiple of R, file_list[g // samples_per_file] raises
     * IndexError on the ranks whose slice passes T, before the first step; the others wait at its barrier (:273).
     * main.py:287 the step cap is checked after the step (compute, barrier): exactly min(cap, batches) loaded;
     * main.py:239 evaluation likewise (at least one step). utils/config.py:407-412 dataset.record_length*. */
    {.version = "2.0.0",
     .since = "0",
     .source = "PyPI dlio-benchmark 2.0.0 (git ec22aec)",
     .commit = "ec22aec74eb9a547a9007b7a915dde2a80497828",
     .libver_low = H5F_LIBVER_EARLIEST,
     .track_times = 1,
     .indexed_records = 0,
     .sampler_shuffles = 1,
     .cap_checked_on_fetch = 0,
     .trim_files_to_steps = 0,
     .slice_clamped = 0,
     .checkpoint_rules = 1, /* checkpointing/base_checkpointing.py, pytorch_checkpointing.py; main.py:274-302 */
     .file_ext = "hdf5",
     .sample_read = "h5py",
     .file_sharding = "index_slice",
     .file_reshuffle = 0,
     .prewarm = 0,
     .gen_seed_per_rank = 0,
     .checkpoint_stream = "torch_save"},
    /* MLPerf Storage v2.0's DLIO: branch mlperf_storage_v2.0 at 392621b (v2.0.0-52, off the main line: its number
     * says nothing of its behaviour, which mixes 2.0.0 and 2.0.1).
     * data_generator/hdf5_generator.py:68 h5py.File(path, 'w'): superblock v0, v1 object headers (they keep the
     * store-times flag although :69 creates with data=); :69 one 'records' dataset, :71 'labels'; :51-55 chunks
     * (1, c, c) from enable_chunking/chunk_size, as 2.0.0. reader/hdf5_reader.py:47 reads ['records'][i].
     * data_loader/torch_data_loader.py:88-107: dlio_sampler(rank, size, num_samples, epochs) takes no shuffle and
     * clamps its slice at T (:96-99), as 2.0.1. main.py:347-348 the step cap is checked after the step (step += 1,
     * then the test), :250-252 evaluation likewise, as 2.0.0; no trimming (main.py:218-226); utils/config.py:439-440
     * the index map clamps the slice at T, as 2.0.1.
     * utils/config.py:721-726 dataset.record_length_bytes* only (record_length* silently ignored), as 2.0.1; no
     * record_dims or hdf5.* keys (DLIO_KEYS: `also`/`except`). */
    {.version = "2.0.0-52",
     .since = "2.0.0-52",
     .source = "git branch mlperf_storage_v2.0 392621b (v2.0.0-52)",
     .commit = "392621b230472c4206e4299ece689700e07544a4",
     .libver_low = H5F_LIBVER_EARLIEST,
     .track_times = 1,
     .indexed_records = 0,
     .sampler_shuffles = 0,
     .cap_checked_on_fetch = 0,
     .trim_files_to_steps = 0,
     .slice_clamped = 1,
     .checkpoint_rules = 2, /* checkpointing/base_checkpointing.py, pytorch_checkpointing.py; main.py:257-310 */
     .file_ext = "hdf5",
     .sample_read = "h5py",
     .file_sharding = "index_slice",
     .file_reshuffle = 0,
     .prewarm = 0,
     .gen_seed_per_rank = 0,
     .checkpoint_stream = "torch_save"},
    /* v2.0.1 (b56c741; its setup.py still says 2.0.0).
     * data_generator/hdf5_generator.py:44 h5py.File(name, 'w', libver='latest'): superblock v3, v2 object headers;
     * :45-47 datasets records_0..records_{num_dset_per_record-1}, created with data= (h5py's create_dataset sets
     * track_times=False, which v2 object headers honour), :48 'labels'. reader/hdf5_reader.py:47-48 reads
     * ['records_<k>'][i] for every k inside one open. data_loader/torch_data_loader.py:84-103: dlio_sampler no
     * longer shuffles (no sample_shuffle argument) and clamps its slice at T; utils/config.py:499-527: the index map
     * clamps the slice at T (:510-511) and shuffles only the insertion order of a dict from global index to (file, index): the PyTorch read order is the
     * rank's slice in order whatever sample_shuffle says. main.py:328 and :242: the step cap is checked when a batch
     * arrives, before compute: one batch more than the cap is loaded when the loader has one.
     * utils/config.py:792-797 dataset.record_length_bytes* (record_length* silently ignored), :831-839
     * dataset.record_dims and dataset.hdf5.{chunk_dims, num_dset_per_record}; enable_chunking/chunk_size are read
     * (:813-816) but no longer used by the HDF5 generator. */
    {.version = "2.0.1",
     .since = "2.0.1",
     .source = "git tag v2.0.1 (b56c741)",
     .commit = "b56c74183c6490ae84096645498281e21d9cabfe",
     .libver_low = H5F_LIBVER_LATEST,
     .track_times = 0,
     .indexed_records = 1,
     .sampler_shuffles = 0,
     .cap_checked_on_fetch = 1,
     .trim_files_to_steps = 0,
     .slice_clamped = 1,
     .file_ext = "hdf5",
     .sample_read = "h5py",
     .file_sharding = "index_slice",
     .file_reshuffle = 0,
     .prewarm = 0,
     .gen_seed_per_rank = 0,
     .checkpoint_stream = "torch_save"},
    /* main at e1919d7 (v2.0.1-17). As 2.0.1, plus main.py:224-246 (ad8ce8b, v2.0.1-12, "prevent barrier deadlock"):
     * when training, num_files_train is trimmed to a multiple of num_samples_per_file x batch_size x ranks (files
     * compared with samples), num_files_eval likewise with batch_size_eval; only the first files are read. */
    {.version = "2.0.1-17",
     .since = "2.0.1-12",
     .source = "git main e1919d7 (v2.0.1-17)",
     .commit = "e1919d7b6ccffbe15143cd616517da9e5d7b26a7",
     .libver_low = H5F_LIBVER_LATEST,
     .track_times = 0,
     .indexed_records = 1,
     .sampler_shuffles = 0,
     .cap_checked_on_fetch = 1,
     .trim_files_to_steps = 1,
     .slice_clamped = 1,
     .file_ext = "hdf5",
     .sample_read = "h5py",
     .file_sharding = "index_slice",
     .file_reshuffle = 0,
     .prewarm = 0,
     .gen_seed_per_rank = 0,
     .checkpoint_stream = "torch_save"},
    /* MLCommons DLIO 3.x: mlcommons/DLIO_local_changes main f6796ed (pyproject 3.0.2, setup.py 3.0.0; no git tag).
     * data_generator/hdf5_generator.py:46 h5py.File(name, 'w', libver='latest'), :47-53 records_<k> created with
     * data= (no times in v2 headers), 'labels'; data_generator/data_generator.py:359 <prefix>_<i>_of_<N>.<format>.
     * gen_seed_per_rank (layout.c layout_ranks): hdf5_generator.py:70 np.random.seed(10 + rank), :73
     * get_dimension(total), :83 rank r writes files r, r+R, ... with draws 2i, 2i+1 of its own stream.
     * sample_read whole_file (reader.c read_whole_file): reader/hdf5_reader.py:61-63 read_index ->
     * reader/_local_fs_iterable_mixin.py:348-359 _localfs_ensure_cached -> :150-153 `with open(path, 'rb') as fh:
     * len(fh.read())`: each sample one POSIX open, the file read whole, close; no HDF5 call (CPython 3.12's system
     * calls, strace: openat, fstat, ioctl TCGETS, lseek x2, fstat, read(size + 1), read(1) = 0, close).
     * file_sharding round_robin (run.c plan_round_robin, shard.c): main.py:260-278 rank 0 lists and broadcasts, rank r
     * keeps positions r, r+R, ..., :483-484 trimmed to floor(N/R); data_loader/torch_data_loader.py:545-549
     * dlio_sampler yields range(allreduce_min(local samples)) in order; utils/config.py:75-79 sample i is file
     * list[i // spf] (the VirtualIndexMap's sample_shuffle permutation is never consulted by read_index).
     * file_reshuffle (shard.c): utils/config.py:1135-1138 reconfigure(epoch) reshards whenever reader.file_shuffle is
     * given (LoadConfig :1671-1672 stores the YAML string, `is not Shuffle.OFF` holds even for "off"): :1067-1110
     * numpy legacy seed(seed + epoch) (seed without seed_change_epoch) shuffle of the rank's list, buckets
     * (i + rank) % R, alltoall, then seed(seed + epoch + 31 * rank) shuffle; called before epoch 1 (main.py:699) and
     * after every epoch (:802); with read_threads 0 the in-rank reader keeps reconfigure(1)'s lists for good
     * (torch_data_loader.py:174-175 worker_init(-1) copies the config singleton, utils/config.py:308-313; measured
     * with strace). Steps: main.py:607 max_steps = training_steps, the minimum over ranks (utils/config.py
     * :759-762, :1121-1122); the cap is checked when a batch arrives (main.py:619), a barrier after every step (:631).
     * prewarm (run.c run_prewarm, main.c PHASES): main.py:705-719 next(iter(loader)) before epoch 1 and :809-820 after
     * every epoch (the last included), each on the epoch reconfigured last; worker 0 reads its whole share of the
     * iterator's window (batches 0, W, ..., prefetch_factor - 1 of them: torch_data_loader.py:741-752), in the rank
     * batch 0 (measured: 2 batches per pre-warm at read_threads 1). format npz (npz.c, layout.c, config_check.c):
     * data_generator/npz_generator.py:88-101 np.savez(x=(d1, d2, n) uint8, y=[0] * n), read whole like HDF5
     * (reader/npz_reader_iterable.py:50-54); reader.odirect (reader.c read_odirect): reader/npy_reader_odirect.py
     * :49-69. Sub-folders: main.py:377-419 sorts the listing by path (shard.c shard_listing_file).
     * main.py:740-760 rank 0 tries `sudo -n` drop_caches each epoch (no I/O on the data; not emulated). Evaluation
     * (file_list_eval resharded alike) is not replayed: refused by config_check.c. */
    {.version = "3.0.2",
     .since = "3.0.0",
     .source = "git mlcommons/DLIO_local_changes main f6796ed (pyproject 3.0.2)",
     .commit = "f6796ed281e39ccc83a450e2b1f21b9c909d8fd0",
     .libver_low = H5F_LIBVER_LATEST,
     .track_times = 0,
     .indexed_records = 1,
     .sampler_shuffles = 0,
     .cap_checked_on_fetch = 1,
     .trim_files_to_steps = 0,
     .slice_clamped = 1,
     .file_ext = "hdf5",
     .sample_read = "whole_file",
     .file_sharding = "round_robin",
     .file_reshuffle = 1,
     .prewarm = 1,
     .gen_seed_per_rank = 1,
     .auto_read_threads = 1, /* utils/config.py:853-876 (autoread.c) */
     /* checkpointing/base_checkpointing.py:47-179 the ranks and states of 2.0.0-52, :385-460 its files; main.py:542-597
      * the checkpoint-only workflow; pytorch_checkpointing.py:231-253 each file streamed as its raw byte count by
      * SimpleStreamingCheckpointing (mlpstorage_py not importable, :114-119): 32 MiB zero chunks, fsync, 32 MiB reads */
     .checkpoint_rules = 3,
     .checkpoint_stream = "simple_streaming",
     .unsupported = NULL},
    /* 3.0.2 as MLPerf Storage v3.0 runs it: mlpstorage installs DLIO as its dependency, so mlpstorage_py imports and
     * _get_streaming() (pytorch_checkpointing.py:114-137) builds mlpstorage_py.checkpointing.StreamingCheckpointing
     * (chunk_size 32 MiB, num_buffers 4, use_dgen, backend 'file', fadvise_mode 'dontneed', num_parallel_readers 4).
     * mlcommons/storage mlpstorage_py/checkpointing/streaming_checkpoint.py (3e5a631) save(): dgen-py random bytes
     * into 4 shared-memory buffers, a writer process (forkserver) with storage_writers FileStorageWriter: os.open
     * O_WRONLY|O_CREAT|O_TRUNC 0644, os.write of min(remaining, 32 MiB) per chunk, posix_fadvise(DONTNEED) over each
     * write, fsync, close; load(): 4 FileStorageReaders (storage_readers/file_reader.py, a815ef8: os.open O_RDONLY,
     * posix_fadvise(0, 0, RANDOM)), the file cut into 4 blocks of ceil(size / 4), each read by one thread with
     * os.pread of min(128 MiB, left) (read_chunk_size = 4 x chunk_size) and posix_fadvise(DONTNEED) over each read
     * (ckpt.c mlps_save, mlps_load). The other rules are 3.0.2's. A local label: chosen by name or by behaviour
     * (the probe's checkpoint_stream), never as another version's nearest entry. */
    {.version = "3.0.2+mlpstorage",
     .since = "3.0.0",
     .source = "git mlcommons/DLIO_local_changes main f6796ed (pyproject 3.0.2) with mlcommons/storage's mlpstorage_py",
     .commit = "f6796ed281e39ccc83a450e2b1f21b9c909d8fd0",
     .libver_low = H5F_LIBVER_LATEST,
     .track_times = 0,
     .indexed_records = 1,
     .sampler_shuffles = 0,
     .cap_checked_on_fetch = 1,
     .trim_files_to_steps = 0,
     .slice_clamped = 1,
     .file_ext = "hdf5",
     .sample_read = "whole_file",
     .file_sharding = "round_robin",
     .file_reshuffle = 1,
     .prewarm = 1,
     .gen_seed_per_rank = 1,
     .auto_read_threads = 1, /* utils/config.py:853-876 (autoread.c) */
     .checkpoint_rules = 3,
     .checkpoint_stream = "mlpstorage_streaming",
     .unsupported = NULL},
    /* The next release: one entry here (and its renamed or new keys in DLIO_KEYS below). */
};
// clang-format on
#define NENTRIES (sizeof DLIO_ENTRIES / sizeof DLIO_ENTRIES[0])

/* "X[.Y[.Z[.W]]][-N[-gHASH]][+local]" -> v[0..3] numeric parts, v[4] = N (commits past the tag). -1: not a version */
static int parse_version(const char *s, long v[5])
{
    memset(v, 0, 5 * sizeof *v);
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    const char *p = s;
    for (int i = 0; i < 4; i++) {
        char *end;
        v[i] = strtol(p, &end, 10);
        if (end == p || v[i] < 0 || v[i] > 1000000)
            return -1;
        p = end;
        if (*p != '.')
            break;
        p++;
        if (i == 3 || !isdigit((unsigned char)*p))
            return -1;
    }
    if (*p == '-') {
        char *end;
        v[4] = strtol(p + 1, &end, 10);
        if (end == p + 1 || v[4] < 0 || v[4] > 1000000)
            return -1;
        p = end;
        if (*p == '-') { /* -gHASH */
            if (p[1] != 'g' || !p[2])
                return -1;
            for (p += 2; isxdigit((unsigned char)*p); p++)
                ;
        }
    }
    if (*p == '+') /* a local version label: ignored */
        return p[1] ? 0 : -1;
    return *p ? -1 : 0;
}

int dlio_version_cmp(const char *a, const char *b)
{
    long x[5], y[5];
    if (parse_version(a, x) || parse_version(b, y))
        return -2;
    for (int i = 0; i < 5; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

const dlio_entry_t *dlio_entry(const char *version)
{
    for (size_t i = 0; i < NENTRIES; i++)
        if (!strcmp(DLIO_ENTRIES[i].version, version))
            return &DLIO_ENTRIES[i];
    return NULL;
}

const dlio_entry_t *dlio_entry_resolve(const char *version, int *nearest)
{
    *nearest = 0;
    const dlio_entry_t *e = dlio_entry(version);
    if (e)
        return e;
    long v[5];
    if (parse_version(version, v))
        return NULL;
    *nearest = 1;
    for (size_t i = NENTRIES; i-- > 0;) /* entries in release order: the newest whose range has begun (an entry with
                                         * a local label, a release in another environment, is never a nearest) */
        if (!strchr(DLIO_ENTRIES[i].version, '+') && dlio_version_cmp(DLIO_ENTRIES[i].since, version) <= 0)
            return &DLIO_ENTRIES[i];
    return &DLIO_ENTRIES[0];
}

void dlio_nearest_warning(char *out, size_t len, const char *version, const dlio_entry_t *e)
{
    snprintf(out, len, "dlio-version %s has no kernel entry: nearest entry %s used for %s (%s)", version, e->version,
             version, e->source);
}

const char *dlio_entry_list(void)
{
    static char buf[256];
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NENTRIES && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", DLIO_ENTRIES[i].version);
    return buf;
}

/* Release-specific DLIO workload keys (see dlio_key_t); releases compare with the entry in use. */
// clang-format off: a table, kept as written
const dlio_key_t DLIO_KEYS[] = {
    /* utils/config.py:407-412 (2.0.0) -> :792-797 (v2.0.1): renamed, the old names ignored; the mlperf_storage_v2.0
     * branch (2.0.0-52) reads the new names (its utils/config.py:721-726) */
    {.yaml = "dataset.record_length",
     .opt = "record-length",
     .until = "2.0.1",
     .except = "2.0.0-52",
     .note = "renamed dataset.record_length_bytes in 2.0.1"},
    {.yaml = "dataset.record_length_stdev",
     .opt = "record-length-stdev",
     .until = "2.0.1",
     .except = "2.0.0-52",
     .note = "renamed dataset.record_length_bytes_stdev in 2.0.1"},
    {.yaml = "dataset.record_length_resize",
     .opt = "record-length-resize",
     .until = "2.0.1",
     .except = "2.0.0-52",
     .note = "renamed dataset.record_length_bytes_resize in 2.0.1"},
    {.yaml = "dataset.record_length_bytes",
     .opt = "record-length",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "2.0.0 reads dataset.record_length"},
    {.yaml = "dataset.record_length_bytes_stdev",
     .opt = "record-length-stdev",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "2.0.0 reads dataset.record_length_stdev"},
    {.yaml = "dataset.record_length_bytes_resize",
     .opt = "record-length-resize",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "2.0.0 reads dataset.record_length_resize"},
    /* hdf5_generator.py:58-67 (2.0.0) chunks from enable_chunking/chunk_size; v2.0.1 :54-55 from hdf5.chunk_dims */
    {.yaml = "dataset.enable_chunking",
     .opt = "chunking",
     .until = "2.0.1",
     .note = "2.0.1's HDF5 generator chunks only with dataset.hdf5.chunk_dims"},
    {.yaml = "dataset.chunk_size",
     .opt = "chunk-size",
     .until = "2.0.1",
     .note = "2.0.1's HDF5 generator chunks only with dataset.hdf5.chunk_dims"},
    {.yaml = "dataset.hdf5.chunk_dims", .opt = "chunk-dims", .since = "2.0.1", .note = "a DLIO 2.0.1 key"},
    {.yaml = "dataset.hdf5.num_dset_per_record",
     .opt = "num-dset-per-record",
     .since = "2.0.1",
     .note = "a DLIO 2.0.1 key"},
    {.yaml = "dataset.record_dims", .opt = "record-dims", .since = "2.0.1", .note = "a DLIO 2.0.1 key"},
    /* utils/config.py:528-539 (2.0.0): the model under checkpoint.*; 392621b utils/config.py:906-943 (v2.0.1 likewise):
     * under model.* (model.parallelism.*, model.transformer.*), the checkpoint.* names ignored */
    {.yaml = "checkpoint.model_size",
     .opt = "model-size",
     .until = "2.0.1",
     .except = "2.0.0-52",
     .note = "read as model.model_size_bytes from 2.0.0-52 on"},
    {.yaml = "model.model_size_bytes",
     .opt = "model-size",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "2.0.0 reads checkpoint.model_size"},
    {.yaml = "checkpoint.optimization_groups",
     .opt = "optimization-groups",
     .until = "2.0.1",
     .except = "2.0.0-52",
     .note = "read as model.optimization_groups from 2.0.0-52 on"},
    {.yaml = "model.optimization_groups",
     .opt = "optimization-groups",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "2.0.0 reads checkpoint.optimization_groups"},
    {.yaml = "checkpoint.num_layers",
     .opt = "num-layers",
     .until = "2.0.1",
     .except = "2.0.0-52",
     .note = "read as model.num_layers from 2.0.0-52 on"},
    {.yaml = "model.num_layers",
     .opt = "num-layers",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "2.0.0 reads checkpoint.num_layers"},
    {.yaml = "checkpoint.layer_parameters",
     .opt = "layer-parameters",
     .until = "2.0.1",
     .except = "2.0.0-52",
     .note = "read as model.layer_parameters from 2.0.0-52 on"},
    {.yaml = "model.layer_parameters",
     .opt = "layer-parameters",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "2.0.0 reads checkpoint.layer_parameters"},
    {.yaml = "checkpoint.tensor_parallelism",
     .opt = "tensor-parallelism",
     .until = "2.0.1",
     .except = "2.0.0-52",
     .note = "read as model.parallelism.tensor from 2.0.0-52 on"},
    {.yaml = "model.parallelism.tensor",
     .opt = "tensor-parallelism",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "2.0.0 reads checkpoint.tensor_parallelism"},
    {.yaml = "checkpoint.pipeline_parallelism",
     .opt = "pipeline-parallelism",
     .until = "2.0.1",
     .except = "2.0.0-52",
     .note = "read as model.parallelism.pipeline from 2.0.0-52 on"},
    {.yaml = "model.parallelism.pipeline",
     .opt = "pipeline-parallelism",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "2.0.0 reads checkpoint.pipeline_parallelism"},
    {.yaml = "model.type", .opt = "model-type", .since = "2.0.1", .also = "2.0.0-52", .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "model.model_datatype",
     .opt = "model-datatype",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "model.optimizer_datatype",
     .opt = "optimizer-datatype",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "model.parallelism.data",
     .opt = "data-parallelism",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "model.parallelism.zero_stage",
     .opt = "zero-stage",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "model.transformer.vocab_size",
     .opt = "vocab-size",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "model.transformer.hidden_size",
     .opt = "hidden-size",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "model.transformer.ffn_hidden_size",
     .opt = "ffn-hidden-size",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "model.transformer.num_attention_heads",
     .opt = "num-attention-heads",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "model.transformer.num_kv_heads",
     .opt = "num-kv-heads",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "checkpoint.mode",
     .opt = "checkpoint-mode",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "checkpoint.num_checkpoints_write",
     .opt = "num-checkpoints-write",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "checkpoint.num_checkpoints_read",
     .opt = "num-checkpoints-read",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "checkpoint.time_between_checkpoints",
     .opt = "time-between-checkpoints",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "checkpoint.rank_sync",
     .opt = "checkpoint-rank-sync",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "checkpoint.randomize_tensor",
     .opt = "checkpoint-randomize-tensor",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
    {.yaml = "checkpoint.fsync",
     .opt = "checkpoint-fsync-yaml",
     .since = "2.0.1",
     .also = "2.0.0-52",
     .note = "a DLIO 2.0.0-52 key"},
};
// clang-format on
const size_t NDLIO_KEYS = sizeof DLIO_KEYS / sizeof DLIO_KEYS[0];

const dlio_key_t *dlio_key(const char *yaml)
{
    for (size_t i = 0; i < NDLIO_KEYS; i++)
        if (!strcmp(DLIO_KEYS[i].yaml, yaml))
            return &DLIO_KEYS[i];
    return NULL;
}

/* version is one of the comma-separated entry versions of list */
static int in_list(const char *list, const char *version)
{
    size_t n = strlen(version);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, version, n))
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

int dlio_key_read_by(const dlio_key_t *k, const dlio_entry_t *e)
{
    if (in_list(k->except, e->version))
        return 0;
    if (in_list(k->also, e->version))
        return 1;
    return (!k->since || dlio_version_cmp(k->since, e->version) <= 0) &&
           (!k->until || dlio_version_cmp(e->version, k->until) < 0);
}

const char *dlio_key_name(const char *opt, const dlio_entry_t *e)
{
    for (size_t i = 0; i < NDLIO_KEYS; i++)
        if (!strcmp(DLIO_KEYS[i].opt, opt) && dlio_key_read_by(&DLIO_KEYS[i], e))
            return DLIO_KEYS[i].yaml;
    return NULL;
}

static void json_str_or_null(sb_t *b, const char *s)
{
    if (s)
        sb_json_str(b, s);
    else
        sb_printf(b, "null");
}

char *dlio_entries_json(const dlio_entry_t *selected, const char *version, int nearest, const char *warning)
{
    sb_t b = {0};
    sb_printf(&b, "{\"entries\": [");
    for (size_t i = 0; i < NENTRIES; i++) {
        const dlio_entry_t *e = &DLIO_ENTRIES[i];
        sb_printf(&b, "%s\n  {\"version\": ", i ? "," : "");
        sb_json_str(&b, e->version);
        sb_printf(&b, ", \"since\": ");
        sb_json_str(&b, e->since);
        sb_printf(&b, ", \"source\": ");
        sb_json_str(&b, e->source);
        sb_printf(&b,
                  ", \"libver_low\": \"%s\", \"track_times\": %s, \"indexed_records\": %s, "
                  "\"sampler_shuffles\": %s, \"cap_checked_on_fetch\": %s, \"trim_files_to_steps\": %s, "
                  "\"slice_clamped\": %s, \"file_ext\": ",
                  e->libver_low == H5F_LIBVER_EARLIEST ? "earliest" : "latest", e->track_times ? "true" : "false",
                  e->indexed_records ? "true" : "false", e->sampler_shuffles ? "true" : "false",
                  e->cap_checked_on_fetch ? "true" : "false", e->trim_files_to_steps ? "true" : "false",
                  e->slice_clamped ? "true" : "false");
        sb_json_str(&b, e->file_ext);
        sb_printf(&b, ", \"sample_read\": ");
        sb_json_str(&b, e->sample_read);
        sb_printf(&b, ", \"file_sharding\": ");
        sb_json_str(&b, e->file_sharding);
        sb_printf(&b,
                  ", \"file_reshuffle\": %s, \"prewarm\": %s, \"gen_seed_per_rank\": %s, "
                  "\"checkpoint_stream\": ",
                  e->file_reshuffle ? "true" : "false", e->prewarm ? "true" : "false",
                  e->gen_seed_per_rank ? "true" : "false");
        sb_json_str(&b, e->checkpoint_stream);
        sb_printf(&b, ", \"unsupported\": ");
        json_str_or_null(&b, e->unsupported);
        sb_printf(&b, "}");
    }
    sb_printf(&b, "],\n \"versioned_keys\": [");
    for (size_t i = 0; i < NDLIO_KEYS; i++) {
        const dlio_key_t *k = &DLIO_KEYS[i];
        sb_printf(&b, "%s\n  {\"yaml\": ", i ? "," : "");
        sb_json_str(&b, k->yaml);
        sb_printf(&b, ", \"option\": ");
        sb_json_str(&b, k->opt);
        sb_printf(&b, ", \"since\": ");
        json_str_or_null(&b, k->since);
        sb_printf(&b, ", \"until\": ");
        json_str_or_null(&b, k->until);
        sb_printf(&b, ", \"also\": ");
        json_str_or_null(&b, k->also);
        sb_printf(&b, ", \"except\": ");
        json_str_or_null(&b, k->except);
        sb_printf(&b, ", \"note\": ");
        sb_json_str(&b, k->note);
        sb_printf(&b, "}");
    }
    sb_printf(&b, "]");
    if (selected) {
        sb_printf(&b, ",\n \"selected\": {\"version\": ");
        sb_json_str(&b, version);
        sb_printf(&b, ", \"entry\": ");
        sb_json_str(&b, selected->version);
        sb_printf(&b, ", \"nearest\": %s, \"warning\": ", nearest ? "true" : "false");
        sb_json_str(&b, warning ? warning : "");
        sb_printf(&b, ", \"keys\": {");
        int n = 0;
        for (size_t i = 0; i < NDLIO_KEYS; i++) { /* each option once, in table order */
            size_t j = 0;
            while (j < i && strcmp(DLIO_KEYS[j].opt, DLIO_KEYS[i].opt)) j++;
            if (j < i)
                continue;
            sb_printf(&b, "%s", n++ ? ", " : "");
            sb_json_str(&b, DLIO_KEYS[i].opt);
            sb_printf(&b, ": ");
            json_str_or_null(&b, dlio_key_name(DLIO_KEYS[i].opt, selected));
        }
        sb_printf(&b, "}}");
    }
    sb_printf(&b, "\n}\n");
    return b.s;
}
