/* Options table, defaults, file/--set parsing and whole-config validation. Nothing else parses config. */
#include "config.h"
#include "npz.h"
#include "mutate.h"
#include "tree.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hdf5.h>
#include "dlio.h"
#include "tfsplit.h"
#include "util.h"
#include "torchsave.h"

enum opt_type {
    T_BOOL, T_INT, T_DBL, T_STR, T_SHUFFLE, T_ORDER, T_NAMING, T_COMPRESSION, T_VERSION, T_DIMS, T_LOADER, T_LIST,
    T_CKPT_TYPE
};

enum opt_flag {
    OPT_EMPTY_OK = 1,    /* T_STR: an empty value is allowed (output-folder: the current directory) */
    OPT_STRIP_SLASH = 2, /* T_STR: trailing slashes are removed, as DLIO removes them (data-folder) */
};

/* One option: everything the parsers, the validator, --help and the resolved-config JSON need to know about it. */
typedef struct {
    const char *name;     /* canonical key (h5bench style) */
    const char *yaml;     /* DLIO workload YAML path, or NULL (then only under the YAML's `h5dlio:` section); names
                             that depend on the DLIO release are in DLIO_KEYS[] (dlio.c) */
    enum opt_type type;
    size_t off, size;     /* where the value lives in config_t */
    const char *def_h5;   /* default for h5bench JSON / no config file */
    const char *def_dlio; /* default for a DLIO YAML (DLIO 2.0.0's own defaults, except generation buffer) */
    double min, max;      /* T_INT/T_DBL/T_LIST items: range; T_DIMS: how many dimensions */
    const char *help;
    unsigned flags;       /* enum opt_flag */
    size_t count;         /* T_DIMS/T_LIST: offset of the int counting the values given */
    const char *stdev;    /* the YAML value may be a distribution {mean, stdev, type: normal}: the option its stdev
                             sets */
} opt_t;

#define F(f) offsetof(config_t, f), sizeof(((config_t *)0)->f)
#define BIG 9.2e18
static const opt_t OPTS[] = {
    {"generate-data", "workflow.generate_data", T_BOOL, F(generate_data), "false", "false", 0, 1,
     .help = "generate the dataset"},
    {"train", "workflow.train", T_BOOL, F(train), "false", "true", 0, 1, .help = "run training epochs"},
    {"evaluation", "workflow.evaluation", T_BOOL, F(evaluation), "false", "false", 0, 1,
     .help = "run evaluation after epochs"},
    /* record-length*, chunking, chunk-size, record-dims, chunk-dims, num-dset-per-record: their DLIO YAML names
     * depend on the release (DLIO_KEYS[], dlio.c) */
    {"record-length", NULL, T_INT, F(record_length), "67108864", "65536", 1, BIG,
     .help = "bytes per sample; samples are int(sqrt(n)) x int(sqrt(n)) uint8"},
    {"record-length-stdev", NULL, T_INT, F(record_length_stdev), "0", "0", 0, BIG,
     .help = "stdev of the sample size in bytes (per-file dimensions drawn as DLIO draws them)"},
    {"record-length-resize", NULL, T_INT, F(record_length_resize), "0", "0", 0, BIG,
     .help = "DLIO's resize target (no I/O effect; kept for the record)"},
    {"record-dims", NULL, T_DIMS, F(record_dims), "", "", 2, 2,
     .help = "DLIO >= 2.0.1: sample dimensions d1,d2 (uint8; "
     "instead of record-length)", .count = offsetof(config_t, nrecord_dims)},
    {"num-dset-per-record", NULL, T_INT, F(num_dset_per_record), "1", "1", 1, 1e6,
     .help = "DLIO >= 2.0.1: samples datasets per file (records_0..); each holds d1/n x d2 of a sample"},
    {"num-files-train", "dataset.num_files_train", T_INT, F(num_files_train), "32", "8", 0, 1e9,
     .help = "training files"},
    {"num-files-eval", "dataset.num_files_eval", T_INT, F(num_files_eval), "8", "0", 0, 1e9,
     .help = "evaluation files"},
    /* data_generator/data_generator.py:91-105 (2.0.0; the same at v2.0.1, 392621b, e1919d7): n > 1 puts file i in
     * <folder>/<i mod n, zero-padded to the digits of n>/; main.py:176-190 lists them sorted by file name, i.e. in
     * index order, so only the paths change */
    {"num-subfolders-train", "dataset.num_subfolders_train", T_INT, F(num_subfolders_train), "0", "0", 0, 1e6,
     .help = "training sub-folders: n > 1 puts file i in train/<i mod n>/ (DLIO's layout)"},
    {"num-subfolders-eval", "dataset.num_subfolders_eval", T_INT, F(num_subfolders_eval), "0", "0", 0, 1e6,
     .help = "evaluation sub-folders: n > 1 puts file i in valid/<i mod n>/ (DLIO's layout)"},
    {"num-samples-per-file", "dataset.num_samples_per_file", T_INT, F(num_samples_per_file), "4", "1", 1, 1e9,
     .help = "samples per file"},
    {"data-folder", "dataset.data_folder", T_STR, F(data_folder), "./data", "./data", 0, 0,
     .help = "dataset root folder", .flags = OPT_STRIP_SLASH},
    {"file-prefix", "dataset.file_prefix", T_STR, F(file_prefix), "img", "img", 0, 0, .help = "file name prefix"},
    /* hdf5 (every entry) | npz (DLIO 3.x: np.savez files, data_generator/npz_generator.py:95-101 at f6796ed, read
     * whole as its HDF5 files are: reader/npz_reader_iterable.py:50-54) */
    {"odirect", "reader.odirect", T_BOOL, F(odirect), "false", "false", 0, 1,
     .help = "DLIO 3.x, format npz: each sample's file read with O_DIRECT (npy_reader_odirect.py: a 4096-aligned "
     "readv of the size rounded up)"},
    /* DLIO 3.x main.py:280-305: no listing; rank r names its files r, r+R, ... in index order (shard.c) */
    {"skip-listing", "dataset.skip_listing", T_BOOL, F(skip_listing), "false", "false", 0, 1,
     .help = "DLIO 3.x: no directory listing, files dealt to the ranks in index order (sub-folders or not)"},
    {"format", "dataset.format", T_STR, F(format), "hdf5", "hdf5", 0, 0,
     .help = "dataset format: hdf5 | npz | jpeg | png (npz, jpeg, png: DLIO 3.x entries, files written as 3.x writes them)"},
    {"train-data-folder", NULL, T_STR, F(train_data_folder), "train", "train", 0, 0, .help = "training sub-folder"},
    {"valid-data-folder", NULL, T_STR, F(valid_data_folder), "valid", "valid", 0, 0, .help = "evaluation sub-folder"},
    {"records-dataset-name", NULL, T_STR, F(records_dataset_name), "records", "records", 0, 0,
     .help = "samples dataset"},
    {"labels-dataset-name", NULL, T_STR, F(labels_dataset_name), "labels", "labels", 0, 0, .help = "labels dataset"},
    {"chunking", NULL, T_BOOL, F(chunking), "false", "false", 0, 1, .help = "chunked layout (1,c,c)"},
    {"chunk-size", NULL, T_INT, F(chunk_size), "1024", "1024", 1, BIG,
     .help = "chunk bytes; c = ceil(sqrt(chunk-size)) capped at the sample dimension"},
    {"chunk-dims", NULL, T_DIMS, F(chunk_dims), "", "", 3, 3,
     .help = "DLIO >= 2.0.1: explicit chunk shape n,d1,d2 (chunked "
     "layout)", .count = offsetof(config_t, nchunk_dims)},
    {"compression", "dataset.compression", T_COMPRESSION, F(compression), "none", "none", 0, 1,
     .help = "none | gzip (true = gzip); needs chunking"},
    {"compression-level", "dataset.compression_level", T_INT, F(compression_level), "4", "4", 1, 9,
     .help = "gzip level"},
    {"keep-files", "dataset.keep_files", T_BOOL, F(keep_files), "false", "true", 0, 1,
     .help = "keep the files this run generated (false: delete them, and only them, at the end)"},
    {"generation-buffer-size", "dataset.generation_buffer_size", T_INT, F(generation_buffer_size), "16777216",
     "16777216", 1, BIG, .help = "bytes written per H5Dwrite during generation (DLIO's default is 2 GiB per rank)"},
    {"batch-size", "reader.batch_size", T_INT, F(batch_size), "7", "1", 1, 1e9, .help = "training batch size"},
    {"batch-size-eval", "reader.batch_size_eval", T_INT, F(batch_size_eval), "2", "1", 1, 1e9,
     .help = "evaluation batch size"},
    {"read-threads", "reader.read_threads", T_INT, F(read_threads), "4", "1", 0, 256,
     .help = "reader processes per rank (0: the rank reads itself)"},
    {"prefetch-size", "reader.prefetch_size", T_INT, F(prefetch_size), "2", "2", 0, 1e6,
     .help = "DLIO's prefetch_size (PyTorch prefetch factor = ceil(prefetch/read-threads))"},
    {"framework", "framework", T_LOADER, F(framework), "pytorch", "pytorch", 0, 0,
     .help = "DLIO's framework: pytorch | tensorflow (tensorflow needs data-loader tensorflow, DLIO 2.0.0)"},
    {"data-loader", "reader.data_loader", T_LOADER, F(data_loader), "pytorch", "pytorch", 0, 0,
     .help = "DLIO's data loader: pytorch (torch DataLoader) | tensorflow (tf.data, DLIO 2.0.0's HDF5 path)"},
    {"shuffle", "reader.sample_shuffle", T_SHUFFLE, F(sample_shuffle), "off", "off", 0, 0,
     .help = "sample shuffle: off | seed | random (true = seed)"},
    {"file-shuffle", "reader.file_shuffle", T_SHUFFLE, F(file_shuffle), "off", "off", 0, 0,
     .help = "file shuffle (no effect on DLIO's PyTorch path)"},
    {"preprocess-time", "reader.preprocess_time", T_DBL, F(preprocess_time), "0", "0", 0, 1e6,
     .help = "seconds per sample"},
    {"preprocess-time-stdev", "reader.preprocess_time_stdev", T_DBL, F(preprocess_time_stdev), "0", "0", 0, 1e6,
     .help = "seconds"},
    {"epochs", "train.epochs", T_INT, F(epochs), "5", "1", 1, 1e6, .help = "training epochs"},
    {"total-training-steps", "train.total_training_steps", T_INT, F(total_training_steps), "-1", "-1", -1, BIG,
     .help = "cap on steps per epoch (-1: all)"},
    {"computation-time", "train.computation_time", T_DBL, F(computation_time), "0.323", "0", 0, 1e6,
     .help = "emulated compute seconds per training batch (YAML: a number or {mean, stdev})",
     .stdev = "computation-time-stdev"},
    {"computation-time-stdev", "train.computation_time_stdev", T_DBL, F(computation_time_stdev), "0", "0", 0, 1e6,
     .help = "seconds"},
    {"random-seed", "train.seed", T_INT, F(random_seed), "42", "123", 0, 4294967295.0, .help = "shuffle seed"},
    {"seed-change-epoch", "train.seed_change_epoch", T_BOOL, F(seed_change_epoch), "false", "true", 0, 1,
     .help = "reseed with seed+epoch (h5bench ordering only; DLIO's PyTorch sampler ignores it)"},
    {"eval-time", "evaluation.eval_time", T_DBL, F(eval_time), "0.323", "0", 0, 1e6,
     .help = "emulated compute seconds per evaluation batch", .stdev = "eval-time-stdev"},
    {"eval-time-stdev", "evaluation.eval_time_stdev", T_DBL, F(eval_time_stdev), "0", "0", 0, 1e6, .help = "seconds"},
    {"epochs-between-evals", "evaluation.epochs_between_evals", T_INT, F(epochs_between_evals), "1", "1", 1, 1e9,
     .help = "evaluate every N epochs"},
    {"eval-after-epoch", "evaluation.eval_after_epoch", T_INT, F(eval_after_epoch), "1", "1", 1, 1e9,
     .help = "first epoch followed by an evaluation"},
    {"au", "metric.au", T_DBL, F(au), "0.90", "0.90", 0, 1, .help = "accelerator-utilization expectation (fraction)"},
    {"checkpoint", "workflow.checkpoint", T_BOOL, F(checkpoint), "false", "false", 0, 1,
     .help = "write DLIO's checkpoints during training (DLIO 2.0.0's rules)"},
    {"checkpoint-folder", "checkpoint.checkpoint_folder", T_STR, F(checkpoint_folder), "./checkpoints",
     "./checkpoints", 0, 0, .help = "where checkpoints are written", .flags = OPT_STRIP_SLASH},
    {"checkpoint-after-epoch", "checkpoint.checkpoint_after_epoch", T_INT, F(checkpoint_after_epoch), "1", "1", -1e9,
     1e9, .help = "first epoch followed by a checkpoint (steps-between-checkpoints < 0)"},
    {"epochs-between-checkpoints", "checkpoint.epochs_between_checkpoints", T_INT, F(epochs_between_checkpoints), "1",
     "1", -1e9, 1e9, .help = "then a checkpoint every N epochs (<= 0: only that one)"},
    {"steps-between-checkpoints", "checkpoint.steps_between_checkpoints", T_INT, F(steps_between_checkpoints), "-1",
     "-1", -1e9, 1e9, .help = "> 0: a checkpoint after every N-th step of each epoch instead (-1: by epochs)"},
    {"checkpoint-type", "checkpoint.type", T_CKPT_TYPE, F(checkpoint_type), "rank_zero", "rank_zero", 0, 0,
     .help = "rank_zero: rank 0 writes | all_ranks: every rank writes"},
    {"model-size", NULL, T_INT, F(model_size), "10240", "10240", -1e15, 1e15,
     .help = "bytes of the model state file (model-<epoch>-<step>-<rank>.pt; <= 0: none)"},
    {"optimization-groups", NULL, T_LIST, F(optimization_groups), "", "", -1e15, 1e15,
     .help = "optimizer state sizes g: tensors a, b of g bytes each and one of their sum (optimizer-*.pt)",
     .count = offsetof(config_t, n_optimization_groups)},
    {"num-layers", NULL, T_INT, F(num_layers), "1", "1", -1e9, 1e9,
     .help = "layer files per checkpoint (layer-<l>-<epoch>-<step>-<rank>.pt)"},
    {"layer-parameters", NULL, T_LIST, F(layer_parameters), "17371,24740228",
     "17371,24740228", -1e15, 1e15, .help = "tensor sizes of each layer file (DLIO's default: 17371, 24740228)",
     .count = offsetof(config_t, n_layer_parameters)},
    {"tensor-parallelism", NULL, T_INT, F(tensor_parallelism), "1", "1", 1, 1e6,
     .help = "> 1: that many more layer files"},
    {"pipeline-parallelism", NULL, T_INT, F(pipeline_parallelism), "1", "1", 1, 1e6,
     .help = "layer files are written by ranks r with r % N == 0"},
    /* DLIO 2.0.0-52 (mlperf_storage_v2.0, 392621b) and later: model.* and the checkpoint-only workflow's keys; their
     * YAML names are in DLIO_KEYS (dlio.c); defaults from its utils/config.py:105-136 */
    {"model-type", NULL, T_STR, F(model_type), "none", "none", 0, 0,
     .help = "DLIO >= 2.0.0-52: model.type (transformer: no model_states file, the layer states instead)"},
    {"model-datatype", NULL, T_STR, F(model_datatype), "fp16", "fp16", 0, 0,
     .help = "DLIO >= 2.0.0-52: layer tensors' dtype (int8 | uint8 | fp16 | bf16 | fp32 | fp64)"},
    {"optimizer-datatype", NULL, T_STR, F(optimizer_datatype), "fp32", "fp32", 0, 0,
     .help = "DLIO >= 2.0.0-52: optimizer tensors' dtype"},
    {"data-parallelism", NULL, T_INT, F(data_parallelism), "-1", "-1", -1, 1e9,
     .help = "DLIO >= 2.0.0-52: subset mode's data parallelism (-1: ranks / (tensor x pipeline))"},
    {"zero-stage", NULL, T_INT, F(zero_stage), "0", "0", 0, 3, .help = "DLIO >= 2.0.0-52: ZeRO stage 0..3"},
    {"vocab-size", NULL, T_INT, F(vocab_size), "32000", "32000", 0, 1e12, .help = "DLIO >= 2.0.0-52: transformer"},
    {"hidden-size", NULL, T_INT, F(hidden_size), "2048", "2048", 1, 1e12, .help = "DLIO >= 2.0.0-52: transformer"},
    {"ffn-hidden-size", NULL, T_INT, F(ffn_hidden_size), "8192", "8192", 0, 1e12,
     .help = "DLIO >= 2.0.0-52: transformer"},
    {"num-attention-heads", NULL, T_INT, F(num_attention_heads), "32", "32", 1, 1e9,
     .help = "DLIO >= 2.0.0-52: transformer"},
    {"num-kv-heads", NULL, T_INT, F(num_kv_heads), "8", "8", 0, 1e9, .help = "DLIO >= 2.0.0-52: transformer"},
    {"checkpoint-mode", NULL, T_STR, F(checkpoint_mode), "default", "default", 0, 0,
     .help = "DLIO >= 2.0.0-52: default | subset (data-parallelism set, fewer ranks than the model's)"},
    {"num-checkpoints-write", NULL, T_INT, F(num_checkpoints_write), "-1", "-1", -1e9, 1e9,
     .help = "DLIO >= 2.0.0-52, checkpoint without train: checkpoints written (global_epoch1_step<i>/)"},
    {"num-checkpoints-read", NULL, T_INT, F(num_checkpoints_read), "-1", "-1", -1e9, 1e9,
     .help = "DLIO >= 2.0.0-52, checkpoint without train: then checkpoints read back (torch.load; 3.x: streamed reads)"},
    {"time-between-checkpoints", NULL, T_DBL, F(time_between_checkpoints), "-1", "-1", -1e6, 1e6,
     .help = "DLIO >= 2.0.0-52: seconds slept before each checkpoint (|t|: DLIO sleeps abs(t), -1 sleeps 1 s)"},
    {"checkpoint-rank-sync", NULL, T_BOOL, F(checkpoint_rank_sync), "false", "false", 0, 1,
     .help = "DLIO >= 2.0.0-52: a barrier after each checkpoint"},
    {"checkpoint-randomize-tensor", NULL, T_BOOL, F(checkpoint_randomize_tensor), "true", "true", 0, 1,
     .help = "DLIO >= 2.0.0-52: random tensors (torch.rand/randint; else torch.ones; 3.x writes zeros either way)"},
    {"checkpoint-fsync-yaml", NULL, T_BOOL, F(checkpoint_fsync_yaml), "false", "false", 0, 1,
     .help = "DLIO >= 2.0.0-52's checkpoint.fsync as written (read by nothing: 2.0.0-52 never fsyncs, 3.x always)"},
    {"checkpoint-fsync", NULL, T_BOOL, F(checkpoint_fsync), "false", "false", 0, 1,
     .help = "kernel: fsync each checkpoint file before closing it (what checkpoint.fsync means to do; 3.x: always)"},
    {"checkpoint-format", NULL, T_STR, F(checkpoint_format), "torch", "torch", 0, 0,
     .help = "kernel: torch (DLIO's torch.save files) | hdf5 (the same tensors, one HDF5 file per writing rank)"},
    {"checkpoint-mpiio", NULL, T_STR, F(checkpoint_mpiio), "off", "off", 0, 0,
     .help = "kernel, checkpoint-format hdf5: off | independent | collective (one shared file per checkpoint, MPI-IO)"},
    {"checkpoint-subfiling", NULL, T_BOOL, F(checkpoint_subfiling), "false", "false", 0, 1,
     .help = "kernel, checkpoint-format hdf5: one shared file per checkpoint through HDF5's Subfiling VFD"},
    {"checkpoint-buffer-size", NULL, T_INT, F(checkpoint_buffer_size), "16777216", "16777216", 4096, 1073741824,
     .help = "kernel, checkpoint-format hdf5: bytes per H5Dwrite/H5Dread (the tensors stream through this buffer)"},
    {"collective-meta", NULL, T_BOOL, F(collective_meta), "false", "false", 0, 1,
     .help = "collective metadata (MPI-IO)"},
    {"collective-data", NULL, T_BOOL, F(collective_data), "false", "false", 0, 1, .help = "collective data (MPI-IO)"},
    {"subfiling", NULL, T_BOOL, F(subfiling), "false", "false", 0, 1, .help = "HDF5 Subfiling VFD (HDF5 >= 1.14)"},
    {"log-vfd", NULL, T_BOOL, F(log_vfd), "false", "false", 0, 1,
     .help = "read through the HDF5 Log VFD (LOC_IO|ALLOC records on stderr)"},
    {"vol-connector", NULL, T_STR, F(vol_connector), "", "", 0, 0,
     .help = "HDF5 VOL connector, as HDF5_VOL_CONNECTOR takes it (\"name [info]\"; HDF5 >= 1.14; empty: "
             "HDF5_VOL_CONNECTOR, else native); the results name the stack HDF5 uses", .flags = OPT_EMPTY_OK},
    {"vol-async-prefetch", NULL, T_BOOL, F(vol_async_prefetch), "false", "false", 0, 1,
     .help = "with the async VOL connector: read the next batch with H5Dread_async and event sets behind the step's "
             "compute, wait at the next step (docs/vol.md)"},
    {"ordering", NULL, T_ORDER, F(ordering), "dlio", "dlio", 0, 0,
     .help = "dlio: DLIO's PyTorch sampler | h5bench: the thesis kernel's global shuffle, bugs fixed"},
    {"naming", NULL, T_NAMING, F(naming), "h5bench", "dlio", 0, 0,
     .help = "dlio: <prefix>_<i>_of_<N>.hdf5 | h5bench: <prefix>_<i+1>_of_<N>.h5"},
    {"dlio-version", NULL, T_VERSION, F(dlio_version), "2.0.0", "2.0.0", 0, 0,
     .help = "DLIO release to emulate (X.Y.Z or X.Y.Z-N past a tag; no entry of its own: the nearest entry, with a "
             "warning)"},
    {"output-folder", "output.folder", T_STR, F(output_folder), ".", "output", 0, 0,
     .help = "where results are written", .flags = OPT_EMPTY_OK},
    {"output-csv-name", NULL, T_STR, F(output_csv_name), "output", "output", 0, 0,
     .help = "results basename: <name>.csv and <name>.json"},
    {"output-ranks-data", NULL, T_BOOL, F(output_ranks_data), "false", "false", 0, 1,
     .help = "also write per-rank results"},
    {"record-samples", NULL, T_BOOL, F(record_samples), "false", "false", 0, 1,
     .help = "write every sample read, in order, to <name>.samples.rank<R>.csv"},
    {"overwrite", NULL, T_BOOL, F(overwrite), "false", "false", 0, 1,
     .help = "let generation replace existing dataset files (default: refuse)"},
    {"reuse-data-folder", NULL, T_BOOL, F(reuse_data_folder), "false", "false", 0, 1,
     .help = "let generation write into a data folder holding other files (never touched; default: refuse)"},
    {"fault-skip-read", NULL, T_INT, F(fault_skip_read), "0", "0", 0, BIG,
     .help = "fault injection for validation tests: rank 0 skips its N-th sample read (0: off)"},
    {"quiet", NULL, T_BOOL, F(quiet), "false", "false", 0, 1, .help = "no human summary on stdout"},
};
#define NOPTS (sizeof OPTS / sizeof OPTS[0])

/* DLIO keys the kernel accepts without emulating them, and keys whose value must be one it emulates. */
typedef struct {
    const char *path;
    const char *allowed; /* NULL: accepted and ignored (with a warning naming why, when why is set); else
                          * '|'-separated accepted values */
    const char *why;
} known_t;
/* why of the keys DLIO's bundled dlrm.yaml holds and no DLIO release reads (utils/config.py LoadConfig at 2.0.0,
 * v2.0.1, 392621b, e1919d7: evaluation is workflow.evaluation, :564 at 2.0.0; the evaluation files hold
 * num_samples_per_file samples; evaluation runs once per epochs_between_evals, main.py:343-344 at 2.0.0) */
#define NOT_READ_BY_DLIO "no DLIO release reads it (utils/config.py LoadConfig)"
static const known_t KNOWN[] = {
    {"model", NULL, NULL},
    {"reader.read_type", "on_demand", "only ON_DEMAND reads are emulated"},
    {"reader.file_access", "multi", "only one-file-per-sample-group access is emulated"},
    {"reader.multiprocessing_context", NULL, NULL},
    {"reader.dont_use_mmap", NULL, NULL},
    {"reader.computation_threads", NULL, NULL},
    {"reader.transfer_size", NULL, NULL},
    {"reader.shuffle_size", NULL, NULL},
    {"checkpoint.checkpoint_mechanism_classname", "", "a custom checkpointing class is not emulated"},
    {"model.name", NULL, NULL},
    {"model.ksm", NULL, NULL},
    {"checkpoint.ksm", NULL, NULL},                   /* KSM page merging: memory only */
    {"checkpoint.recovery_rank_shift", NULL, NULL},   /* 2.0.0-52 stores it in a misspelt attribute (utils/config.py:887) */
    {"workflow.profiling", NULL, NULL},
    {"workflow.debug", NULL, NULL},
    {"profiling", NULL, NULL},
    {"storage.storage_type", "local_fs", "only local/parallel file systems are supported"},
    {"storage.storage_root", NULL, NULL},
    {"output.log_file", NULL, NULL},
    /* DLIO >= 2.0.1 keys with no I/O effect on the HDF5 PyTorch path */
    {"output.metric", NULL, NULL},                  /* exclude_start_steps/exclude_end_steps: metrics only */
    {"reader.pin_memory", NULL, NULL},
    {"reader.transformed_record_dims", NULL, NULL}, /* the resized image handed to the framework */
    {"reader.transformed_record_element_type", NULL, NULL},
    {"dataset.record_element_bytes", NULL, NULL},   /* recomputed from the type (utils/config.py:448-449 at v2.0.1) */
    {"storage.storage_options", NULL, NULL},
    /* in DLIO's dlrm.yaml, read by no DLIO release: ignored with a warning, as DLIO ignores them */
    {"workflow.do_eval", NULL, NOT_READ_BY_DLIO ": evaluation is workflow.evaluation"},
    {"dataset.eval_num_samples_per_file", NULL, NOT_READ_BY_DLIO ": evaluation files hold num_samples_per_file"},
    {"train.total_eval_steps", NULL, NOT_READ_BY_DLIO ": evaluation reads every evaluation batch"},
    {"evaluation.steps_between_evals", NULL, NOT_READ_BY_DLIO ": evaluation follows epochs, epochs_between_evals"},
    {"dataset.record_element_type", "uint8", "the kernel writes and reads uint8 samples"},
    {"dataset.hdf5.max_shape", "", "resizable (maxshape) datasets are not emulated"},
    {"dataset.listing_validation_interval", NULL, NULL}, /* DLIO 3.x skip_listing: rank 0's existence checks */
};
#define NKNOWN (sizeof KNOWN / sizeof KNOWN[0])

static void warn(config_t *c, const char *fmt, ...)
{
    size_t n = strlen(c->warnings);
    if (n + 2 >= sizeof c->warnings)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->warnings + n, sizeof c->warnings - n - 1, fmt, ap);
    va_end(ap);
    n = strlen(c->warnings);
    for (char *p = c->warnings; *p; p++) /* one line per warning, whatever the input held */
        if ((unsigned char)*p < 0x20 && *p != '\n') *p = ' ';
    c->warnings[n] = '\n';
    c->warnings[n + 1] = 0;
}

const char *shuffle_name(int m) { return m == SHUFFLE_SEED ? "seed" : m == SHUFFLE_RANDOM ? "random" : "off"; }

/* One line, whatever the input held (keys and values are quoted into messages). */
static void one_line(char *err)
{
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
}

static int fail(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, CFG_ERRLEN, fmt, ap);
    va_end(ap);
    one_line(err);
    return -1;
}

static int lowereq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

static int parse_bool(const char *s, int *out)
{
    static const char *t[] = {"true", "yes", "on", "1"}, *f[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (lowereq(s, t[i])) return *out = 1, 0;
        if (lowereq(s, f[i])) return *out = 0, 0;
    }
    return -1;
}

static int parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return -1;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE) return -2;
    if (*end == '.' ) { /* accept 1.0e6-style integers written as floats if exact */
        double d = strtod(s, &end);
        while (isspace((unsigned char)*end)) end++;
        if (*end || d != floor(d) || fabs(d) > 9.2e18) return -1;
        *out = (int64_t)d;
        return 0;
    }
    if (*end == 'e' || *end == 'E') {
        double d = strtod(s, &end);
        while (isspace((unsigned char)*end)) end++;
        if (*end || d != floor(d)) return -1;
        if (fabs(d) > 9.2e18) return -2;
        *out = (int64_t)d;
        return 0;
    }
    while (isspace((unsigned char)*end)) end++;
    if (*end) return -1;
    *out = v;
    return 0;
}

static int parse_dbl(const char *s, double *out)
{
    char *end;
    errno = 0;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return -1;
    double v = strtod(s, &end);
    while (isspace((unsigned char)*end)) end++;
    if (*end || errno == ERANGE || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static const char *type_name(enum opt_type t)
{
    switch (t) {
    case T_BOOL: return "a boolean (true/false)";
    case T_INT: return "an integer";
    case T_DBL: return "a number";
    case T_STR: return "a string";
    case T_SHUFFLE: return "one of off|seed|random";
    case T_ORDER: return "one of dlio|h5bench";
    case T_NAMING: return "one of dlio|h5bench";
    case T_COMPRESSION: return "one of none|gzip";
    case T_VERSION: return "a DLIO version such as 2.0.0";
    case T_DIMS: return "a list of positive integers";
    case T_LIST: return "a list of integers";
    case T_CKPT_TYPE: return "one of rank_zero|all_ranks";
    case T_LOADER: return "one of pytorch|tensorflow";
    }
    return "?";
}

/* Set one option from text. where = "FILE:LINE" or "--set" for messages. */
static int set_opt(config_t *c, const opt_t *o, const char *v, const char *where, char *err)
{
    char *p = (char *)c + o->off;
    int b;
    int64_t i;
    double d;
    switch (o->type) {
    case T_BOOL:
        if (parse_bool(v, &b)) goto bad;
        *(int *)p = b;
        return 0;
    case T_INT: {
        int r = parse_i64(v, &i);
        if (r == -2 || (r == 0 && ((double)i > o->max || (double)i < o->min)))
            return fail(err, "%s: key '%s': value %s out of range [%.0f, %.0f]", where, o->name, v, o->min, o->max);
        if (r) goto bad;
        *(int64_t *)p = i;
        return 0;
    }
    case T_DBL:
        if (parse_dbl(v, &d)) goto bad;
        if (d < o->min || d > o->max)
            return fail(err, "%s: key '%s': value %s out of range [%g, %g]", where, o->name, v, o->min, o->max);
        *(double *)p = d;
        return 0;
    case T_STR:
    case T_VERSION:
        if (strlen(v) >= o->size)
            return fail(err, "%s: key '%s': value longer than %zu characters", where, o->name, o->size - 1);
        if (o->type == T_STR && !*v && !(o->flags & OPT_EMPTY_OK))
            return fail(err, "%s: key '%s': empty value", where, o->name);
        strcpy(p, v);
        if (o->flags & OPT_STRIP_SLASH) {
            size_t n = strlen(p);
            while (n > 1 && p[n - 1] == '/') p[--n] = 0;
        }
        return 0;
    case T_SHUFFLE:
        if (lowereq(v, "off") || lowereq(v, "false") || lowereq(v, "no") || lowereq(v, "0")) *(int *)p = SHUFFLE_OFF;
        else if (lowereq(v, "seed") || lowereq(v, "true") || lowereq(v, "yes") || lowereq(v, "1")) *(int *)p = SHUFFLE_SEED;
        else if (lowereq(v, "random")) *(int *)p = SHUFFLE_RANDOM;
        else goto bad;
        if (p == (void *)&c->file_shuffle) /* DLIO 3.x reshards whenever the key is given (see file_shuffle_given) */
            c->file_shuffle_given = 1;
        return 0;
    case T_LOADER:
        if (lowereq(v, "pytorch")) *(int *)p = LOADER_PYTORCH;
        else if (lowereq(v, "tensorflow")) *(int *)p = LOADER_TENSORFLOW;
        else return fail(err, "%s: key '%s': value '%s' is not supported (expected pytorch|tensorflow: DLIO's "
                         "dali, native_dali and custom loaders are not emulated)", where, o->name, v);
        return 0;
    case T_ORDER:
    case T_NAMING:
        if (lowereq(v, "dlio")) *(int *)p = 0;
        else if (lowereq(v, "h5bench")) *(int *)p = 1;
        else goto bad;
        return 0;
    case T_DIMS: { /* "a,b,c" or "[a, b, c]" */
        int64_t *dims = (int64_t *)p;
        int *count = (int *)((char *)c + o->count);
        int n = 0, want = (int)o->max;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", v);
        for (char *q = buf; *q; q++)
            if (*q == '[' || *q == ']') *q = ' ';
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
            if (n == want) return fail(err, "%s: key '%s': '%s' has more than %d dimensions", where, o->name, v, want);
            int r = parse_i64(t, &dims[n]);
            if (r || dims[n] < 1 || dims[n] > (int64_t)1e12)
                return fail(err, "%s: key '%s': '%s' is not %d positive integers", where, o->name, v, want);
            n++;
        }
        if (n != want && n != 0)
            return fail(err, "%s: key '%s': '%s' has %d dimensions, the kernel's datasets need %d", where, o->name, v,
                        n, want);
        *count = n;
        return 0;
    }
    case T_LIST: { /* "a,b,c" or "[a, b, c]"; "" or "[]": empty */
        int64_t *vals = (int64_t *)p;
        int *count = (int *)((char *)c + o->count), n = 0;
        char buf[2048];
        if (strlen(v) >= sizeof buf) return fail(err, "%s: key '%s': list longer than %zu characters", where, o->name,
                                                  sizeof buf - 1);
        snprintf(buf, sizeof buf, "%s", v);
        for (char *q = buf; *q; q++)
            if (*q == '[' || *q == ']') *q = ' ';
        if (strspn(buf, " \t") == strlen(buf)) { /* "" or "[]" */
            *count = 0;
            return 0;
        }
        for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
            int64_t x;
            if (n == CKPT_MAX_LIST)
                return fail(err, "%s: key '%s': more than %d values", where, o->name, CKPT_MAX_LIST);
            if (parse_i64(t, &x) || (double)x < o->min || (double)x > o->max)
                return fail(err, "%s: key '%s': '%s' is not a list of integers in [%.0f, %.0f]", where, o->name, v,
                            o->min, o->max);
            vals[n++] = x;
        }
        *count = n;
        return 0;
    }
    case T_CKPT_TYPE:
        if (lowereq(v, "rank_zero")) *(int *)p = CKPT_RANK_ZERO;
        else if (lowereq(v, "all_ranks")) *(int *)p = CKPT_ALL_RANKS;
        else goto bad;
        return 0;
    case T_COMPRESSION:
        if (lowereq(v, "none") || lowereq(v, "false") || lowereq(v, "0")) *(int *)p = 0;
        else if (lowereq(v, "gzip") || lowereq(v, "true") || lowereq(v, "1")) *(int *)p = 1;
        else return fail(err, "%s: key '%s': '%s' is not supported (none | gzip)", where, o->name, v);
        return 0;
    }
bad:
    return fail(err, "%s: key '%s': '%s' is not %s", where, o->name, v, type_name(o->type));
}

/* The one look-up of an option. by: which spellings count: BY_NAME the canonical name (h5bench JSON), BY_YAML the
 * DLIO path (a DLIO YAML), BY_ALIAS also h5dlio.<name> and underscores for hyphens (--set, a YAML's h5dlio: section). */
enum { BY_NAME = 1, BY_YAML = 2, BY_ALIAS = 4 };
static const opt_t *find_opt(const char *key, unsigned by)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (((by & BY_NAME) && !strcmp(OPTS[i].name, key)) ||
            ((by & BY_YAML) && OPTS[i].yaml && !strcmp(OPTS[i].yaml, key)))
            return &OPTS[i];
    if (!(by & BY_ALIAS))
        return NULL;
    const char *k = !strncmp(key, "h5dlio.", 7) ? key + 7 : key;
    char tmp[128];
    if (strlen(k) >= sizeof tmp) return NULL;
    size_t j = 0;
    for (; k[j]; j++) tmp[j] = k[j] == '_' ? '-' : k[j];
    tmp[j] = 0;
    return find_opt(tmp, BY_NAME);
}
#define BY_ANY (BY_NAME | BY_YAML | BY_ALIAS)

static size_t lev(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), prev[128], cur[128];
    if (la > 120 || lb > 120) return 999;
    for (size_t j = 0; j <= lb; j++) prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t s = prev[j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t dl = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = s < dl ? (s < ins ? s : ins) : (dl < ins ? dl : ins);
        }
        memcpy(prev, cur, (lb + 1) * sizeof *prev);
    }
    return prev[lb];
}

/* names_only: the canonical (h5bench) names alone, the spellings h5bench's runner form takes */
static const char *closest_key(const char *key, int names_only)
{
    const char *best = NULL;
    size_t bd = 999;
    for (size_t i = 0; i < NOPTS; i++) {
        size_t d = lev(key, OPTS[i].name);
        if (d < bd) bd = d, best = OPTS[i].name;
        if (!names_only && OPTS[i].yaml && (d = lev(key, OPTS[i].yaml)) < bd) bd = d, best = OPTS[i].yaml;
    }
    for (size_t i = 0; i < NDLIO_KEYS && !names_only; i++) {
        size_t d = lev(key, DLIO_KEYS[i].yaml);
        if (d < bd) bd = d, best = DLIO_KEYS[i].yaml;
    }
    return best;
}

static int unknown_key(const char *where, const char *key, char *err)
{
    return fail(err, "%s: unknown key '%s' (did you mean '%s'? see h5dlio --help)", where, key, closest_key(key, 0));
}

static const known_t *find_known(const char *path)
{
    for (size_t i = 0; i < NKNOWN; i++) {
        size_t n = strlen(KNOWN[i].path);
        if (!strcmp(KNOWN[i].path, path) || (!KNOWN[i].allowed && !strncmp(KNOWN[i].path, path, n) && path[n] == '.'))
            return &KNOWN[i];
    }
    return NULL;
}

/* Does a --set that follows the file name this DLIO key path? */
static int set_later(const config_t *c, const char *path)
{
    size_t n = strlen(path);
    for (int i = 0; i < c->nset; i++)
        if (!strncmp(c->sets[i], path, n) && c->sets[i][n] == '=') return 1;
    return 0;
}

static int check_known(const known_t *k, const char *path, const char *v, const char *where, char *err)
{
    if (!k->allowed) return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", k->allowed);
    for (char *s = strtok(buf, "|"); s; s = strtok(NULL, "|")) {
        int bv;
        if (lowereq(v, s) || (!strcmp(s, "false") && !parse_bool(v, &bv) && !bv) || (!strcmp(s, "0") && !strcmp(v, "0")))
            return 0;
    }
    return fail(err, "%s: key '%s': value '%s' is not supported (expected %s: %s)", where, path, v, k->allowed, k->why);
}

/* A release-specific DLIO key (DLIO_KEYS): applied when the entry's release reads it, else ignored with a warning
 * (as DLIO ignores it). e == NULL: the first pass, which only looks for dlio-version: skipped. */
static int apply_versioned(config_t *c, const dlio_key_t *k, const char *v, const char *where, char *err,
                           const dlio_entry_t *e)
{
    if (!e)
        return 0;
    if (!dlio_key_read_by(k, e)) {
        warn(c, "%s: key '%s' is ignored by DLIO %s (%s): ignored here too", where, k->yaml, e->version, k->note);
        return 0;
    }
    return set_opt(c, find_opt(k->opt, BY_NAME), v, where, err);
}

/* ---------- DLIO YAML ---------- */
static int apply_dlio_map(config_t *c, const node_t *n, const char *prefix, const char *file, char *err,
                          const dlio_entry_t *e);

/* An option whose YAML value is a distribution {mean: x, stdev: y, type: normal} (computation_time, eval_time): the
 * mean sets the option, the stdev the option its table entry names. */
static int apply_dist(config_t *c, const opt_t *o, const node_t *n, const char *path, const char *file, char *err)
{
    char where[4200];
    for (size_t i = 0; i < n->n; i++) {
        const node_t *v = n->items[i];
        snprintf(where, sizeof where, "%s:%d", file, v->line);
        if (v->kind != NODE_SCALAR)
            return fail(err, "%s: key '%s.%s' must be a scalar", where, path, n->keys[i]);
        if (!strcmp(n->keys[i], "mean")) {
            if (set_opt(c, o, v->text, where, err)) return -1;
        } else if (!strcmp(n->keys[i], "stdev")) {
            if (set_opt(c, find_opt(o->stdev, BY_NAME), v->text, where, err)) return -1;
        } else if (!strcmp(n->keys[i], "type")) {
            if (!lowereq(v->text, "normal"))
                return fail(err, "%s: key '%s.type': distribution '%s' is not supported (normal)", where, path, v->text);
        } else
            return fail(err, "%s: unknown key '%s.%s' (expected mean, stdev, type)", where, path, n->keys[i]);
    }
    return 0;
}

static int apply_dlio_node(config_t *c, const node_t *v, const char *path, const char *file, char *err,
                           const dlio_entry_t *e)
{
    char where[4200];
    snprintf(where, sizeof where, "%s:%d", file, v->line);
    const dlio_key_t *vk = dlio_key(path);
    if (vk) {
        char list[512] = "";
        const char *text = v->text;
        if (v->kind == NODE_SEQ) { /* dimension lists: [a, b, c] */
            size_t n = 0;
            for (size_t i = 0; i < v->n && n < sizeof list; i++) {
                if (v->items[i]->kind != NODE_SCALAR)
                    return fail(err, "%s: key '%s' must be a list of integers", where, path);
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? "," : "", v->items[i]->text);
            }
            text = list;
        } else if (v->kind != NODE_SCALAR)
            return fail(err, "%s: key '%s' must be a scalar", where, path);
        return apply_versioned(c, vk, text, where, err, e);
    }
    int kernel_only = !strncmp(path, "h5dlio.", 7);
    const opt_t *o = find_opt(path, kernel_only ? BY_ANY : BY_YAML);
    if (!o && kernel_only) return unknown_key(where, path, err);
    if (o) {
        if (v->kind == NODE_MAP && o->stdev && !kernel_only) /* DLIO's {mean, stdev} syntax: under its own path */
            return apply_dist(c, o, v, path, file, err);
        if (v->kind == NODE_SEQ && o->type == T_LIST) { /* checkpoint.layer_parameters: [a, b] */
            char list[2048] = "";
            size_t n = 0;
            for (size_t i = 0; i < v->n && n < sizeof list; i++) {
                if (v->items[i]->kind != NODE_SCALAR)
                    return fail(err, "%s: key '%s' must be a list of integers", where, path);
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? "," : "", v->items[i]->text);
            }
            return set_opt(c, o, list, where, err);
        }
        if (v->kind != NODE_SCALAR) return fail(err, "%s: key '%s' must be a scalar", where, path);
        return set_opt(c, o, v->text, where, err);
    }
    if (v->kind == NODE_MAP && (!strcmp(path, "model") || !strncmp(path, "model.", 6))) /* >= 2.0.0-52: model.* */
        return apply_dlio_map(c, v, path, file, err, e);
    const known_t *k = find_known(path);
    if (k) {
        if (!k->allowed && k->why && !set_later(c, path))
            warn(c, "%s: key '%s' is ignored: %s; ignored here too", where, path, k->why);
        if (!k->allowed || set_later(c, path)) return 0; /* a --set of the same key decides (and is checked) */
        if (!*k->allowed) return fail(err, "%s: key '%s' is not emulated: %s", where, path, k->why);
        if (v->kind != NODE_SCALAR) return fail(err, "%s: key '%s' must be a scalar", where, path);
        return check_known(k, path, v->text, where, err);
    }
    if (v->kind == NODE_MAP) return apply_dlio_map(c, v, path, file, err, e);
    if (!strncmp(path, "checkpoint.", 11)) { /* later releases' checkpoint keys (num_checkpoints_write, ...) */
        if (e) /* the second pass: warned once */
            warn(c, "%s: key '%s' is not read by DLIO 2.0.0's checkpointing: ignored", where, path);
        return 0;
    }
    return unknown_key(where, path, err);
}

static int apply_dlio_map(config_t *c, const node_t *n, const char *prefix, const char *file, char *err,
                          const dlio_entry_t *e)
{
    for (size_t i = 0; i < n->n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", n->keys[i]);
        if (apply_dlio_node(c, n->items[i], path, file, err, e)) return -1;
    }
    return 0;
}

/* ---------- h5bench JSON ---------- */
/* An h5bench configuration's `vol` block, as h5bench's runner reads it (src/h5bench.py prepare_vol, enable_vol):
 * `connector` becomes HDF5_VOL_CONNECTOR, `path` HDF5_PLUGIN_PATH, `library` is added to LD_LIBRARY_PATH and
 * `preload` to LD_PRELOAD of the launched job. The kernel takes `connector` as its vol-connector key and `path` as the
 * plugin folder (vol.c applies both); `library` and `preload` act only at process start, where the runner puts them:
 * accepted with a warning. Runs after the entry's configuration, so both naming different connectors is an error. */
static int apply_h5bench_vol(config_t *c, const node_t *vol, const char *file, char *err)
{
    char where[4200];
    if (vol->kind != NODE_MAP)
        return fail(err, "%s:%d: key 'vol': must be an object (h5bench: connector, path, library, preload)", file,
                    vol->line);
    for (size_t i = 0; i < vol->n; i++) {
        const char *k = vol->keys[i];
        const node_t *v = vol->items[i];
        snprintf(where, sizeof where, "%s:%d", file, v->line);
        int known = !strcmp(k, "connector") || !strcmp(k, "path") || !strcmp(k, "library") || !strcmp(k, "preload");
        if (!known)
            return fail(err, "%s: unknown key 'vol.%s' (h5bench's runner reads connector, path, library, preload)",
                        where, k);
        if (v->kind != NODE_SCALAR)
            return fail(err, "%s: key 'vol.%s' must be a string", where, k);
        if (!strcmp(k, "connector")) {
            if (*c->vol_connector && strcmp(c->vol_connector, v->text))
                return fail(err, "%s: key 'vol.connector' ('%s') and key 'vol-connector' ('%s') name different VOL "
                            "connectors", where, v->text, c->vol_connector);
            if (set_opt(c, find_opt("vol-connector", BY_NAME), v->text, where, err)) return -1;
        } else if (!strcmp(k, "path")) {
            if (strlen(v->text) >= sizeof c->vol_plugin_path)
                return fail(err, "%s: key 'vol.path': longer than %zu characters", where, sizeof c->vol_plugin_path - 1);
            strcpy(c->vol_plugin_path, v->text);
        } else if (*v->text)
            warn(c, "%s: key 'vol.%s' is ignored: it acts at process start (h5bench's runner adds it to %s of the "
                 "launched job)", where, k, !strcmp(k, "library") ? "LD_LIBRARY_PATH" : "LD_PRELOAD");
    }
    return 0;
}

/* entry 0: the file's one dlio benchmark (or a bare object of its keys). entry N >= 1: the N-th item of
 * `benchmarks`, read as h5bench's runner (PR #124, src/h5bench.py) reads it: `directory` is required (validate_json,
 * h5bench.py:161-175) and prefixed to a data-folder the configuration gives (run_dlio, h5bench.py:993-995). */
static int apply_h5bench(config_t *c, const node_t *root, const char *file, int entry, char *err)
{
    char where[4200];
    const node_t *conf = root, *dir = NULL;
    const node_t *bm = tree_get(root, "benchmarks");
    if (entry && !bm)
        return fail(err, "--entry %d: %s has no 'benchmarks' list (an h5bench configuration file)", entry, file);
    if (bm) {
        static const char *top[] = {"mpi", "vol", "file-system", "directory", "benchmarks"};
        for (size_t i = 0; i < root->n; i++) {
            int ok = 0;
            for (size_t j = 0; j < 5; j++) ok |= !strcmp(root->keys[i], top[j]);
            snprintf(where, sizeof where, "%s:%d", file, root->items[i]->line);
            if (!ok) return fail(err, "%s: unknown top-level key '%s' (h5bench: mpi, vol, file-system, directory, benchmarks)",
                                 where, root->keys[i]);
        }
        if (bm->kind != NODE_SEQ) return fail(err, "%s:%d: 'benchmarks' must be a list", file, bm->line);
        conf = NULL;
        char dlio_items[256] = "";
        size_t ndlio = 0, dl = 0;
        for (size_t i = 0; i < bm->n; i++) {
            const node_t *b = tree_get(bm->items[i], "benchmark");
            int is_dlio = b && b->kind == NODE_SCALAR && !strcmp(b->text, "dlio");
            if (is_dlio && dl < sizeof dlio_items - 16)
                dl += (size_t)snprintf(dlio_items + dl, sizeof dlio_items - dl, "%s%zu", ndlio ? ", " : "", i + 1);
            ndlio += is_dlio;
            if (!is_dlio || (entry && (size_t)entry != i + 1) || (!entry && conf)) continue;
            conf = tree_get(bm->items[i], "configuration");
            if (!conf) return fail(err, "%s:%d: dlio benchmark without 'configuration'", file, bm->items[i]->line);
        }
        if (entry && (size_t)entry > bm->n)
            return fail(err, "--entry %d: 'benchmarks' in %s has %zu entries", entry, file, bm->n);
        if (entry && !conf)
            return fail(err, "--entry %d: entry %d of 'benchmarks' in %s is not a dlio benchmark (dlio entries: %s)",
                        entry, entry, file, ndlio ? dlio_items : "none");
        if (!entry && ndlio > 1)
            return fail(err, "%s:%d: more than one dlio benchmark in 'benchmarks' (entries %s): choose one with "
                        "--entry N, as h5bench's runner runs each in its own job", file, bm->line, dlio_items);
        if (!conf) return fail(err, "%s: no benchmark with \"benchmark\": \"dlio\" in 'benchmarks'", file);
        if (entry) {
            dir = tree_get(root, "directory");
            if (!dir)
                return fail(err, "%s: key 'directory': missing (--entry runs an entry as h5bench's runner does, which "
                            "requires it and puts the data folder under it)", file);
            if (dir->kind != NODE_SCALAR || !*dir->text)
                return fail(err, "%s:%d: key 'directory': must be a non-empty string", file, dir->line);
        }
    }
    if (conf->kind != NODE_MAP) return fail(err, "%s:%d: configuration must be an object", file, conf->line);
    for (size_t i = 0; i < conf->n; i++) {
        const node_t *v = conf->items[i];
        snprintf(where, sizeof where, "%s:%d", file, v->line);
        const opt_t *o = find_opt(conf->keys[i], BY_NAME);
        if (!o) return unknown_key(where, conf->keys[i], err);
        if (v->kind != NODE_SCALAR) return fail(err, "%s: key '%s' must be a scalar", where, conf->keys[i]);
        if (dir && !strcmp(o->name, "data-folder")) {
            char joined[8192];
            snprintf(joined, sizeof joined, "%s/%s", dir->text, v->text);
            if (set_opt(c, o, joined, where, err)) return -1;
        } else if (set_opt(c, o, v->text, where, err))
            return -1;
    }
    const node_t *vol = bm ? tree_get(root, "vol") : NULL;
    return vol ? apply_h5bench_vol(c, vol, file, err) : 0;
}

/* ---------- h5bench's runner form: --KEY VALUE, a bare --KEY for its yes/no keys ---------- */
/* Keys h5bench's runner passes that are not options: its output argument, and a flag of the thesis kernel's parser. */
static const struct {
    const char *name, *opt, *fixed, *why;
} RUNNER_KEYS[] = {
    /* run_dlio appends it (h5bench.py:999); the thesis kernel writes <it>/<output-csv-name>.csv (dlio/stats.c:436) */
    {"output-data-folder", "output-folder", NULL, NULL},
    /* dlio/utils.c:301-302 at PR #124: the flag can only restate its default (true); no option of its own here */
    {"drop-last", NULL, "true",
     "the thesis kernel's --drop-last can only restate its default (dlio/utils.c:58,301-302 at h5bench PR #124); "
     "which batches are kept follows 'ordering'"},
};
#define NRUNNER_KEYS (sizeof RUNNER_KEYS / sizeof RUNNER_KEYS[0])

int config_runner_arg(int argc, char *const argv[], int i, char *set, size_t setlen, char *err)
{
    const char *arg = argv[i], *key = arg + 2;
    const opt_t *o = NULL;
    const char *fixed = NULL, *why = NULL;
    *set = 0;
    if (strncmp(arg, "--", 2) || !*key || strchr(key, '='))
        return fail(err, "unknown argument '%s' (see --help)", arg);
    for (size_t k = 0; k < NRUNNER_KEYS && !o && !fixed; k++)
        if (!strcmp(RUNNER_KEYS[k].name, key)) {
            if (RUNNER_KEYS[k].opt) o = find_opt(RUNNER_KEYS[k].opt, BY_NAME);
            fixed = RUNNER_KEYS[k].fixed, why = RUNNER_KEYS[k].why;
        }
    if (!o && !fixed) o = find_opt(key, BY_NAME);
    if (!o && !fixed)
        return fail(err, "unknown argument '%s': no key '%s' (did you mean '--%s'? see --help)", arg, key,
                    closest_key(key, 1));
    /* h5bench's yes/no keys (h5bench.py:972-991): bare when true, absent when false; a value is taken if one follows */
    int flag = fixed || o->type == T_BOOL || o->type == T_SHUFFLE || o->type == T_COMPRESSION;
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    int has_value = next && strncmp(next, "--", 2);
    if (!flag && !has_value)
        return fail(err, "%s: key '%s' needs a value", arg, key);
    const char *v = has_value ? next : "true";
    if (fixed) {
        int b;
        if (parse_bool(v, &b) || !b)
            return fail(err, "%s: key '%s': '%s' is not accepted: %s", arg, key, v, why);
        return has_value ? 2 : 1; /* nothing to set */
    }
    static config_t scratch; /* the value is checked here, so the message names the argument */
    if (set_opt(&scratch, o, v, arg, err)) return -1;
    if ((size_t)snprintf(set, setlen, "%s=%s", o->name, v) >= setlen)
        return fail(err, "%s: key '%s': value too long", arg, key);
    return has_value ? 2 : 1;
}

static void set_defaults(config_t *c, int dlio)
{
    char err[CFG_ERRLEN];
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < NOPTS; i++)
        if (set_opt(c, &OPTS[i], dlio ? OPTS[i].def_dlio : OPTS[i].def_h5, "default", err)) {
            fprintf(stderr, "h5dlio: internal error: %s\n", err);
            abort();
        }
    c->file_shuffle_given = 0; /* a default is not given */
}

static char *read_file(const char *path, size_t *len, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(err, "%s: cannot open config file: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *buf = xmalloc(cap, "reading the config file");
    for (;;) {
        if (n == cap) {
            if (cap > (64u << 20)) {
                fclose(f);
                free(buf);
                fail(err, "%s: config file larger than 64 MiB", path);
                return NULL;
            }
            buf = xrealloc(buf, cap *= 2, "reading the config file");
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (!r) break;
        n += r;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fail(err, "%s: read error", path);
        return NULL;
    }
    if (memchr(buf, 0, n)) {
        free(buf);
        fail(err, "%s: not a text file (NUL byte)", path);
        return NULL;
    }
    *len = n;
    return buf;
}

/* One pass over the defaults, the file and the --set overrides. e: the DLIO entry whose key names apply (NULL: the
 * first pass, which only finds dlio-version; release-specific keys are skipped). */
static int load_pass(config_t *c, const char *path, int entry, int nset, char *const sets[], char *err,
                     const dlio_entry_t *e, int nearest)
{
    int source = SRC_DEFAULTS, is_json = 0;
    char *text = NULL;
    size_t len = 0;
    if (path) {
        if (!(text = read_file(path, &len, err))) return -1;
        size_t i = 0;
        while (i < len && isspace((unsigned char)text[i])) i++;
        const char *dot = strrchr(path, '.');
        is_json = (dot && lowereq(dot, ".json")) || (i < len && text[i] == '{');
        source = is_json ? SRC_H5BENCH_JSON : SRC_DLIO_YAML;
    }
    if (entry && !is_json) {
        free(text);
        return fail(err, "--entry %d: needs an h5bench JSON configuration file (--config FILE.json)", entry);
    }
    set_defaults(c, source == SRC_DLIO_YAML);
    if (e && e->checkpoint_rules >= 2) /* 392621b utils/config.py:132-133, f6796ed :204-205: num_layers -1, [] */
        c->num_layers = -1, c->n_layer_parameters = 0;
    c->source = source;
    if (e) {
        snprintf(c->dlio_entry, sizeof c->dlio_entry, "%s", e->version);
        c->dlio_nearest = nearest;
    }
    if (path) {
        snprintf(c->config_path, sizeof c->config_path, "%s", path);
        node_t *root = NULL;
        int rc = tree_parse(text, len, is_json, path, &root, err, CFG_ERRLEN);
        free(text);
        if (rc) return one_line(err), -1;
        if (root->kind != NODE_MAP) {
            tree_free(root);
            return fail(err, "%s: top level must be a mapping/object", path);
        }
        c->nset = nset, c->sets = sets;
        rc = is_json ? apply_h5bench(c, root, path, entry, err) : apply_dlio_map(c, root, "", path, err, e);
        c->nset = 0, c->sets = NULL;
        tree_free(root);
        if (rc) return -1;
    }
    for (int i = 0; i < nset; i++) {
        const char *eq = strchr(sets[i], '=');
        if (!eq || eq == sets[i]) return fail(err, "--set '%s': expected key=value", sets[i]);
        char key[256];
        size_t kl = (size_t)(eq - sets[i]);
        if (kl >= sizeof key) return fail(err, "--set: key too long");
        memcpy(key, sets[i], kl);
        key[kl] = 0;
        const opt_t *o = find_opt(key, BY_ANY);
        if (o) {
            if (set_opt(c, o, eq + 1, "--set", err)) return -1;
            continue;
        }
        const dlio_key_t *vk = dlio_key(key);
        if (vk) {
            if (apply_versioned(c, vk, eq + 1, "--set", err, e)) return -1;
            continue;
        }
        const known_t *k = find_known(key);
        if (k) {
            if (k->allowed && !*k->allowed) return fail(err, "--set: key '%s' is not emulated: %s", key, k->why);
            if (!k->allowed && k->why) warn(c, "--set: key '%s' is ignored: %s; ignored here too", key, k->why);
            if (check_known(k, key, eq + 1, "--set", err)) return -1;
            continue;
        }
        return unknown_key("--set", key, err);
    }
    return 0;
}

int config_load(config_t *c, const char *path, int nset, char *const sets[], char *err)
{
    return config_load_entry(c, path, 0, nset, sets, err);
}

int config_load_entry(config_t *c, const char *path, int entry, int nset, char *const sets[], char *err)
{
    /* the key names of a DLIO workload depend on the release: find dlio-version first, then read for real */
    if (load_pass(c, path, entry, nset, sets, err, NULL, 0)) return -1;
    int nearest = 0;
    const dlio_entry_t *e = dlio_entry_resolve(c->dlio_version, &nearest);
    if (!e)
        return fail(err, "key 'dlio-version': '%s' is not a DLIO version (X.Y.Z, or X.Y.Z-N for N commits past a "
                    "release tag; entries: %s)", c->dlio_version, dlio_entry_list());
    if (load_pass(c, path, entry, nset, sets, err, e, nearest)) return -1;
    /* a mutant (mutate.h): only from the environment, never from a config, a --set or the harness */
    const char *mut = getenv("H5DLIO_MUTATE");
    if ((c->mutant = mutant_lookup(mut)) < 0)
        return fail(err, "environment variable H5DLIO_MUTATE: '%s' is not a mutant (h5dlio --mutants lists them)", mut);
    if (c->mutant)
        warn(c, "MUTANT '%s' INJECTED (H5DLIO_MUTATE): %s. This run diverges from DLIO on purpose: a test of the "
             "validator, never a measurement", MUTANTS[c->mutant].name, MUTANTS[c->mutant].what);
    if (nearest) {
        char w[512];
        dlio_nearest_warning(w, sizeof w, c->dlio_version, e);
        warn(c, "%s", w);
    }
    /* reader processes are forked before MPI_Init and have no MPI: an MPI-IO mode needs the rank's own reads. The
     * thesis kernel set read-threads to 0 for subfiling (h5bench_dlio.c, "Multiprocessing can't be used with
     * subfiling") and h5bench's sample asks for collective I/O with a reader: both run, read-threads 0, said so */
    if (c->read_threads > 0 && (c->subfiling || c->collective_data || c->collective_meta)) {
        warn(c, "key 'read-threads': %lld reader process(es) asked for with %s; reader processes have no MPI, so "
             "each rank reads its own samples (read-threads 0)", (long long)c->read_threads,
             c->subfiling ? "subfiling" : c->collective_data ? "collective-data" : "collective-meta");
        c->read_threads = 0;
    }
    if (e->checkpoint_rules == 2 && c->checkpoint && c->checkpoint_fsync_yaml && !c->checkpoint_fsync)
        warn(c, "key 'checkpoint.fsync': DLIO %s stores it in args.checkpoint_sync, which nothing reads "
             "(utils/config.py:879; its checkpointing reads checkpoint_fsync, default False): no fsync, as DLIO; "
             "h5dlio.checkpoint-fsync=true fsyncs each file", e->version);
    if (e->checkpoint_rules == 3 && c->checkpoint && c->checkpoint_fsync_yaml && !c->checkpoint_fsync)
        warn(c, "key 'checkpoint.fsync': DLIO %s stores it in args.checkpoint_sync, which nothing reads "
             "(utils/config.py:1767-1768); its SimpleStreamingCheckpointing fsyncs every file whatever it says "
             "(simple_streaming_checkpointing.py:305-306): so does the kernel", e->version);
    if (c->checkpoint && !c->train && e->checkpoint_rules < 2) /* DLIO checkpoints inside its training loop (main.py:274-302) */
        warn(c, "key 'checkpoint': checkpoints are written during training, and train is off: none will be written");
    return 0;
}

static int64_t dim_of(int64_t record_length) { return (int64_t)sqrt((double)record_length); }

/* One phase of DLIO 2.0.0's TF path: the shapes DLIO raises on (always) and those whose reads the kernel does not
 * emulate (reads: the phase is read). */
static int config_validate_tf_phase(const config_t *c, int phase, int nranks, int reads, char *err)
{
    const phase_cfg_t p = config_phase(c, phase);
    int64_t total = p.num_files * c->num_samples_per_file;
    tf_split_t s = tf_split(total, nranks, c->read_threads);
    if (s.spt < 1)
        return fail(err, "key 'read-threads': %lld reader threads for %lld %s samples per rank: DLIO 2.0.0 raises "
                    "ZeroDivisionError (utils/config.py:323 samples_per_thread = %lld // %lld = 0, divided by at :342%s); "
                    "use at most %lld threads", (long long)s.nt, (long long)s.spp, p.what, (long long)s.spp,
                    (long long)s.nt, phase == PH_EVAL ? ", building the evaluation map even with evaluation off" : "",
                    (long long)s.spp);
    if (!reads)
        return 0;
    /* reader/reader_handler.py:96-99: at a thread's last sample `while len(batch) is not self.batch_size` pads the
     * batch; `is` compares int objects and CPython shares only those up to 256, so above 256 it never ends */
    if (p.batch_size > 256)
        return fail(err, "key '%s': %lld on DLIO 2.0.0's tf.data path: at each reader thread's last sample DLIO pads "
                    "with `while len(batch) is not self.batch_size` (reader/reader_handler.py:98), an identity test "
                    "that never holds for counts above 256, and appends until memory runs out (measured: resnet50 at "
                    "batch 400, DLIO killed by the OOM killer at 12.7 GB); use at most 256", p.batch_key,
                    (long long)p.batch_size);
    /* Several tf.data threads of a rank reading the same file share it: they run in one process, where HDF5 opens a
     * file once (H5F's shared file struct) and h5py's lock orders the calls, so how many opens, and which metadata
     * reads, depend on the threads' timing (measured: resnet50-like 4 files x 64 samples, 8 threads: fewer opens and
     * metadata reads than the per-thread rule). The kernel's reader processes cannot share a file: refused. */
    if (s.nt > 1) {
        int64_t F = p.num_files, spf = c->num_samples_per_file, fpr = (F / nranks) % F, clash = -1, at = 0;
        int32_t *owner = malloc((size_t)F * sizeof *owner);
        if (!owner)
            return fail(err, "out of memory checking %lld files", (long long)F);
        for (int64_t i = 0; i < F; i++) owner[i] = -1;
        for (int r = 0; r < nranks && clash < 0; r++) {
            for (int64_t k = 0; k < s.spp && clash < 0; k++) { /* utils/config.py:337-348 */
                int64_t f = k == 0 ? (int64_t)r * fpr : (k / spf) % F, t = tf_thread_of(&s, k);
                if (owner[f] >= 0 && owner[f] != t)
                    clash = f, at = r;
                owner[f] = (int32_t)t;
            }
            for (int64_t k = 0; k < s.spp; k++) owner[k == 0 ? (int64_t)r * fpr : (k / spf) % F] = -1;
        }
        free(owner);
        if (clash >= 0)
            return fail(err, "key 'read-threads': %lld tf.data threads of rank %d would read %s file %lld together (%lld "
                        "samples per file, %lld per thread): DLIO's threads share an open HDF5 file inside one "
                        "process, with opens and metadata reads that depend on their timing; not emulated (use "
                        "samples per thread that are a multiple of samples per file, or read-threads 0 or 1)",
                        (long long)s.nt, at, p.what, (long long)clash, (long long)spf, (long long)s.spt);
    }
    int64_t batches = tf_batches(&s, p.batch_size);
    /* main.py:252 max_steps and :287 the break (training); :224 total and :239 the break (evaluation) */
    int64_t steps = total / p.batch_size / nranks;
    int capped = phase == PH_TRAIN && c->total_training_steps > 0 && c->total_training_steps < steps;
    if (capped)
        steps = c->total_training_steps;
    if (steps < 1)
        steps = 1;
    if (steps < batches)
        return fail(err, "key '%s': each rank's tf.data %s pipeline yields %lld batches (%lld reader thread(s) of ~%lld "
                    "samples, each padding its last batch: reader/reader_handler.py:96-99) but DLIO takes %lld steps "
                    "(main.py:%s): the batches past the last step are read ahead by tf.data's prefetch and "
                    "interleave buffers, as far as timing lets them (measured on DLIO 2.0.0, 1 thread, batch 1, 3 steps: "
                    "5 samples more were read), which the kernel does not emulate; choose a shape whose batches per "
                    "rank equal its steps", capped ? "total-training-steps" : p.batch_key, p.what, (long long)batches,
                    (long long)s.nt, (long long)s.spt, (long long)steps, phase == PH_TRAIN ? "252, :287" : "224, :239");
    return 0;
}

/* DLIO 2.0.0's TensorFlow loader (framework: tensorflow, reader.data_loader: tensorflow): what it does with a shape,
 * and what the kernel emulates of it. Everything refused here says why. */
static int config_validate_tf(const config_t *c, const dlio_entry_t *e, int nranks, int ranks_known, char *err)
{
    static const char *NAMES[] = {"pytorch", "tensorflow"};
    if (c->framework != c->data_loader)
        return fail(err, "key 'framework': %s with reader.data_loader %s: DLIO refuses the pair (\"Imcompatible between "
                    "framework and data_loader setup\", utils/config.py:211-213)", NAMES[c->framework],
                    NAMES[c->data_loader]);
    if (c->data_loader != LOADER_TENSORFLOW)
        return 0;
    if (strcmp(e->version, "2.0.0"))
        return fail(err, "key 'data-loader': tensorflow is emulated for DLIO 2.0.0 only (its build_sample_map_iter, "
                    "utils/config.py:317-349, and tf.data loader); entry %s's differs (2.0.0-52 clamps the slice)",
                    e->version);
    if (c->ordering != ORDER_DLIO)
        return fail(err, "key 'ordering': the tensorflow loader has DLIO's order only (ordering=dlio)");
    if (c->subfiling || c->collective_data || c->collective_meta)
        return fail(err, "key 'data-loader': tensorflow with an MPI-IO mode: DLIO's tf.data threads read through h5py "
                    "independently; not emulated");
    if (!c->train || !ranks_known) /* the rest depends on the rank count: checked once it is known */
        return 0;
    /* reconfigure() builds both maps whenever DLIO trains, evaluation on or off (utils/config.py:378-380): the
     * evaluation map's ZeroDivisionError is DLIO's too; its reads are checked only when evaluation runs */
    if (config_validate_tf_phase(c, PH_TRAIN, nranks, 1, err) ||
        (c->num_files_eval > 0 && config_validate_tf_phase(c, PH_EVAL, nranks, c->evaluation, err)))
        return -1;
    return 0;
}

/* DLIO 2.0.0-52's checkpoint rules (392621b): its utils/config.py:284-304 validate(), and what its checkpointing
 * cannot do (the shapes it raises on are refused, naming the line). */
/* DLIO 2.0.0-52's checks (392621b utils/config.py:284-302, the line numbers cited); 3.x (rules 3) makes the same ones at
 * f6796ed utils/config.py:452-470, and reads back what 2.0.0-52 cannot (its load_state takes no fsync argument) */
static int ckpt2_validate(const config_t *c, int rules, int nranks, int ranks_known, char *err)
{
    const char *dts[3][2] = {{"model-datatype", c->model_datatype}, {"optimizer-datatype", c->optimizer_datatype}};
    for (int i = 0; i < 2; i++)
        if (ts_dtype_parse(dts[i][1]) < 0)
            return fail(err, "key '%s': '%s' is not int8, uint8, fp16, bf16, fp32 or fp64 (base_checkpointing.py:33-43)",
                        dts[i][0], dts[i][1]);
    int subset = !strcmp(c->checkpoint_mode, "subset");
    if (!subset && strcmp(c->checkpoint_mode, "default"))
        return fail(err, "key 'checkpoint-mode': '%s' is not default or subset", c->checkpoint_mode);
    int64_t tp = c->tensor_parallelism, pp = c->pipeline_parallelism, mp = tp * pp;
    if (c->num_layers > 0 && c->num_layers < pp)
        return fail(err, "key 'num-layers': %lld is smaller than pipeline-parallelism %lld (DLIO refuses it: "
                    "utils/config.py:284-287)", (long long)c->num_layers, (long long)pp);
    if (pp > 1 && c->zero_stage == 3)
        return fail(err, "key 'zero-stage': ZeRO stage 3 with pipeline-parallelism %lld (DLIO refuses it: "
                    "utils/config.py:288-289)", (long long)pp);
    if (c->data_parallelism > 0 && !subset)
        return fail(err, "key 'data-parallelism': set only in checkpoint-mode subset (DLIO refuses it: "
                    "utils/config.py:290-291)");
    if (subset && c->data_parallelism <= 0)
        return fail(err, "key 'data-parallelism': checkpoint-mode subset needs it (utils/config.py:292-294)");
    if (ranks_known && subset && c->data_parallelism * mp < nranks)
        return fail(err, "key 'data-parallelism': %d ranks are more than data x tensor x pipeline = %lld "
                    "(utils/config.py:295-296)", nranks, (long long)(c->data_parallelism * mp));
    if (ranks_known && !subset && nranks % mp)
        return fail(err, "key 'tensor-parallelism': %d ranks are not a multiple of tensor x pipeline = %lld "
                    "(utils/config.py:297-299)", nranks, (long long)mp);
    if (c->num_checkpoints_write > 0 && c->num_checkpoints_read > c->num_checkpoints_write)
        return fail(err, "key 'num-checkpoints-read': %lld is more than num-checkpoints-write %lld (DLIO refuses it: "
                    "utils/config.py:300-302)", (long long)c->num_checkpoints_read, (long long)c->num_checkpoints_write);
    if (!c->checkpoint)
        return 0;
    if (c->num_attention_heads < 1 || c->hidden_size < 1)
        return fail(err, "key 'num-attention-heads': must be >= 1");
    if (c->n_layer_parameters > 0 && c->num_layers > 0)
        return fail(err, "key 'layer-parameters': DLIO 2.0.0-52 shares one dict of tensors between all layers "
                    "(base_checkpointing.py:113-119): a pickle of shared objects is not emulated; use the "
                    "transformer keys (hidden-size, ...)");
    if (c->train && (c->num_checkpoints_write > 0 || c->num_checkpoints_read > 0))
        return fail(err, "key 'num-checkpoints-write': read only without training (DLIO's checkpoint-only workflow, "
                    "main.py:257-268); with train on, checkpoints follow checkpoint-after-epoch/steps");
    int model_state = c->model_size > 0 && strcmp(c->model_type, "transformer");
    int reads = !c->train && c->num_checkpoints_read > 0 && rules == 2;
    if (rules == 3 && c->train)
        return fail(err, "key 'train': DLIO 3.x's checkpoints during training (main.py:632-658) are not replayed yet; "
                    "its checkpoint-only workflow (workflow.train false, main.py:542-597) is");
    if (rules == 3 && !c->train && c->num_checkpoints_read > 0 && c->num_layers > 0 && c->zero_stage == 0 && pp > 1)
        return fail(err, "key 'num-checkpoints-read': DLIO 3.x asserts pipeline-parallelism 1 when it reads ZeRO "
                    "stage 0 checkpoints (base_checkpointing.py:449)");
    if (reads && model_state)
        return fail(err, "key 'num-checkpoints-read': DLIO 2.0.0-52 cannot read the model_states file it writes for a "
                    "non-transformer model: load_state() takes no fsync argument (base_checkpointing.py:434, "
                    "pytorch_checkpointing.py:140: TypeError). Set model-type transformer, model-size 0, or no reads");
    if (reads && c->num_layers > 0 && c->zero_stage > 0 && c->zero_stage < 3 && pp == 1)
        return fail(err, "key 'num-checkpoints-read': DLIO 2.0.0-52 cannot read ZeRO stage %lld checkpoints without "
                    "pipeline parallelism: load_state() takes no fsync argument (base_checkpointing.py:446, "
                    "pytorch_checkpointing.py:140: TypeError)", (long long)c->zero_stage);
    if (reads && c->num_layers > 0 && c->zero_stage == 0 && pp > 1)
        return fail(err, "key 'num-checkpoints-read': DLIO 2.0.0-52 asserts pipeline-parallelism 1 when it reads ZeRO "
                    "stage 0 checkpoints (base_checkpointing.py:449)");
    if (strlen(c->checkpoint_folder) + 200 > 4095)
        return fail(err, "key 'checkpoint-folder': checkpoint paths would exceed 4095 characters");
    return 0;
}

/* The kernel's checkpoint format keys (ckpth5.c): values, and what each needs */
static int ckpt_format_validate(const config_t *c, char *err)
{
    int hdf5 = !strcmp(c->checkpoint_format, "hdf5"), mpiio = strcmp(c->checkpoint_mpiio, "off") != 0;
    if (!hdf5 && strcmp(c->checkpoint_format, "torch"))
        return fail(err, "key 'checkpoint-format': '%s' is not torch or hdf5", c->checkpoint_format);
    if (mpiio && strcmp(c->checkpoint_mpiio, "independent") && strcmp(c->checkpoint_mpiio, "collective"))
        return fail(err, "key 'checkpoint-mpiio': '%s' is not off, independent or collective", c->checkpoint_mpiio);
    if (!hdf5 && (mpiio || c->checkpoint_subfiling))
        return fail(err, "key '%s': only with checkpoint-format hdf5 (torch.save files are written with POSIX calls, as "
                    "DLIO writes them)", mpiio ? "checkpoint-mpiio" : "checkpoint-subfiling");
    if (mpiio && c->checkpoint_subfiling)
        return fail(err, "key 'checkpoint-subfiling': cannot be combined with checkpoint-mpiio %s (subfiling is its own "
                    "file driver)", c->checkpoint_mpiio);
#ifndef H5_HAVE_SUBFILING_VFD
    if (c->checkpoint_subfiling)
        return fail(err, "key 'checkpoint-subfiling': this HDF5 (%d.%d.%d) was built without the Subfiling VFD: build "
                    "HDF5 >= 1.14 with -DHDF5_ENABLE_PARALLEL=ON -DHDF5_ENABLE_SUBFILING_VFD=ON (HDF5_DIR=<prefix>)",
                    H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
#endif
    if (c->checkpoint_subfiling && c->checkpoint_fsync)
        return fail(err, "key 'checkpoint-fsync': not with checkpoint-subfiling (the subfiles are written by HDF5's I/O "
                    "concentrators; the kernel cannot fsync them)");
    return 0;
}

static int validate(const config_t *c, int nranks, int ranks_known, char *err);
int config_validate(const config_t *c, int nranks, char *err) { return validate(c, nranks, 1, err); }
int config_validate_early(const config_t *c, char *err) { return validate(c, 1, 0, err); }

static int validate(const config_t *c, int nranks, int ranks_known, char *err)
{
    const dlio_entry_t *e0 = dlio_entry(c->dlio_entry);
    int ckpt_only = c->checkpoint && !c->train && e0 && e0->checkpoint_rules >= 2;
    if (!c->generate_data && !c->train && !c->evaluation && !ckpt_only)
        return fail(err, "nothing to do: set generate-data, train or evaluation (workflow.*) to true");
    if (c->evaluation && !c->train)
        return fail(err, "key 'evaluation': evaluation runs after training epochs; set train=true too");
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    if (e && e->unsupported)
        return fail(err, "key 'dlio-version': kernel entry %s (%s) is listed but not replayed yet: %s", e->version,
                    e->source, e->unsupported);
    if (!e)
        return fail(err, "key 'dlio-version': '%s' has no kernel entry (entries: %s)", c->dlio_version,
                    dlio_entry_list());
    if (!e->indexed_records && c->num_dset_per_record > 1)
        return fail(err, "key 'num-dset-per-record': DLIO %s writes one '%s' dataset per file (records_0.. and "
                    "dataset.hdf5.num_dset_per_record came with 2.0.1)", e->version, c->records_dataset_name);
    if (!e->indexed_records && (c->nrecord_dims || c->nchunk_dims))
        return fail(err, "key '%s': a DLIO 2.0.1 key; DLIO %s does not read it", c->nrecord_dims ? "record-dims" :
                    "chunk-dims", e->version);
    if (c->num_dset_per_record > 1 && !c->nrecord_dims)
        return fail(err, "key 'num-dset-per-record': %lld datasets per file need record-dims (dataset.record_dims): "
                    "DLIO %s's HDF5 generator fails without them (hdf5_generator.py:64 subscripts an integer "
                    "dimension)", (long long)c->num_dset_per_record, e->version);
    if (c->nrecord_dims && c->record_dims[0] % c->num_dset_per_record)
        return fail(err, "key 'record-dims': %lld is not divisible by num-dset-per-record %lld (DLIO refuses it: "
                    "utils/config.py:327-329 at v2.0.1)", (long long)c->record_dims[0], (long long)c->num_dset_per_record);
    if (c->nrecord_dims && c->record_length_stdev > 0)
        return fail(err, "key 'record-dims': cannot be combined with record-length-stdev (DLIO refuses it: "
                    "utils/config.py:340-341 at v2.0.1)");
    if (c->nrecord_dims && c->record_dims[0] / c->num_dset_per_record == 1)
        return fail(err, "key 'record-dims': a first dimension of 1 per dataset makes DLIO write 2-D datasets "
                    "(hdf5_generator.py:66-67 at v2.0.1): not emulated");
    if (strcmp(c->format, "hdf5") && strcmp(c->format, "npz") && strcmp(c->format, "jpeg") && strcmp(c->format, "png"))
        return fail(err, "key 'dataset.format' (format): '%s' is not replayed: the kernel writes and reads hdf5, "
                    "and npz, jpeg, png for DLIO 3.x (entry 3.0.2)", c->format);
    if (c->skip_listing && strcmp(e->file_sharding, "round_robin"))
        return fail(err, "key 'skip-listing' (dataset.skip_listing): a DLIO 3.x key (main.py:280-305 at f6796ed); "
                    "DLIO %s lists the files", e->version);
    /* main.py:294-298 pads sub-folder k to len(str(S - 1)) digits, the generator to len(str(S)) (data_generator.py
     * :325, :355): with S a power of 10 DLIO names files that are not there */
    if (c->skip_listing && c->num_subfolders_train > 1) {
        char a[32], b[32];
        if (snprintf(a, sizeof a, "%lld", (long long)c->num_subfolders_train) !=
            snprintf(b, sizeof b, "%lld", (long long)c->num_subfolders_train - 1))
            return fail(err, "key 'skip-listing': with %lld sub-folders DLIO 3.x names sub-folder k with %d digits "
                        "(main.py:294-298) where its generator wrote %d (data_generator.py:325, :355): its files are "
                        "not found", (long long)c->num_subfolders_train, (int)strlen(b), (int)strlen(a));
    }
    if (c->odirect && (strcmp(e->sample_read, "whole_file") || strcmp(c->format, "npz")))
        return fail(err, "key 'odirect' (reader.odirect): replayed for DLIO 3.x's npz reader only (reader/"
                    "reader_factory.py:94-96 at f6796ed); DLIO's %s reader %s", c->format,
                    strcmp(c->format, "npz") ? "refuses it (reader_factory.py:42-43, :68-69 at f6796ed)"
                                             : "with O_DIRECT is not replayed");
    if (strcmp(c->format, "hdf5")) { /* npz, jpeg, png: DLIO 3.x's generators (npz.c, image.c) */
        if (strcmp(e->sample_read, "whole_file"))
            return fail(err, "key 'dataset.format' (format): %s is replayed for DLIO 3.x only (entries reading whole "
                        "files, 3.0.2): DLIO %s decodes %s files (np.load, PIL), which the kernel does not replay; its "
                        "HDF5 path is replayed (format hdf5)", c->format, e->version, c->format);
        const char *bad = c->naming == NAMING_H5BENCH ? "naming" : c->nrecord_dims ? "record-dims" :
                          c->num_dset_per_record > 1 ? "num-dset-per-record" : c->chunking ? "chunking" :
                          c->nchunk_dims ? "chunk-dims" : c->compression ? "compression" : c->subfiling ? "subfiling" :
                          strcmp(c->format, "npz") && c->num_samples_per_file != 1 ? "num-samples-per-file" : NULL;
        if (bad)
            return fail(err, "key '%s': not with format %s (DLIO 3.x writes np.savez(x=(d1, d2, n) uint8, y=zeros) "
                        "uncompressed: npz_generator.py:88-101, and one d1 x d2 image of raw bytes per jpeg/png file "
                        "whatever num_samples_per_file: jpeg_generator.py:73-98)", bad, c->format);
        int64_t d1 = dim_of(c->record_length);
        double big = (double)d1 + 4.0 * (c->record_length_stdev > 0 ? (double)c->record_length_stdev / 2.0 /
                                                                        (double)(d1 > 0 ? d1 : 1) : 0.0);
        if (!strcmp(c->format, "npz") && big * big * (double)c->num_samples_per_file > (double)NPZ_MAX_FILE)
            return fail(err, "key 'record-length': npz files of up to %.0f bytes (mean + 4 stdev): CPython's zipfile "
                        "writes zip64 central records past 2^31 - 1 bytes, which the kernel does not write",
                        big * big * (double)c->num_samples_per_file);
    }
    int64_t d = dim_of(c->record_length);
    if (d > 0 && (double)c->num_samples_per_file * (double)d * (double)d > 9.0e18)
        return fail(err, "key 'num-samples-per-file': %lld samples of %lld bytes overflow a 64-bit file size",
                    (long long)c->num_samples_per_file, (long long)(d * d));
    if ((double)c->num_files_train * (double)c->num_samples_per_file > 9.0e15 ||
        (double)c->num_files_eval * (double)c->num_samples_per_file > 9.0e15)
        return fail(err, "key 'num-samples-per-file': total sample count overflows");
    /* names inside the data folder: plain names, so every file the kernel writes or deletes stays inside it */
    const char *names[3][2] = {{"file-prefix", c->file_prefix}, {"train-data-folder", c->train_data_folder},
                               {"valid-data-folder", c->valid_data_folder}};
    for (int k = 0; k < 3; k++)
        if (strchr(names[k][1], '/') || !strcmp(names[k][1], ".") || !strcmp(names[k][1], ".."))
            return fail(err, "key '%s': '%s' must be a plain name (no '/', not '.' or '..'): files stay inside the "
                        "data folder", names[k][0], names[k][1]);
    if (c->num_files_eval > 0 && (c->generate_data || c->evaluation) &&
        !strcmp(c->train_data_folder, c->valid_data_folder))
        return fail(err, "key 'valid-data-folder': '%s' is also the train-data-folder: training and evaluation files "
                    "would share names", c->valid_data_folder);
    if (c->generate_data && !strcmp(c->records_dataset_name, c->labels_dataset_name))
        return fail(err, "key 'labels-dataset-name': '%s' is also the records-dataset-name", c->labels_dataset_name);
    for (int ph = 0; ph < NPHASES; ph++) {
        phase_cfg_t p = config_phase(c, ph);
        if (!p.subfolders)
            continue;
        if (c->naming == NAMING_H5BENCH)
            return fail(err, "key '%s': h5bench's naming has no sub-folders (naming=dlio)", p.subfolders_key);
        if (strcmp(e->file_sharding, "index_slice") && ph != PH_TRAIN)
            return fail(err, "key '%s': DLIO %s's evaluation is not replayed", p.subfolders_key, e->version);
        /* data_generator.py:91 writes the files flat when n = 1; main.py:183-190 then sees a file, not a folder,
         * and fails assert (num_subfolders == 0) on every rank, whether it goes on to read or not (2.0.0) */
        /* DLIO 3.x likewise: data_generator.py:350-358 writes flat when n = 1, main.py:377-381 then globs
         * train/<each file>/ for *.<format> files and raises "Not enough dataset is found" (:469-472) */
        if (p.subfolders == 1 && p.num_files > 0)
            return fail(err, "key '%s': 1 sub-folder: DLIO writes the %s files flat (data_generator/data_generator.py:91) "
                        "and then fails its own assertion num_subfolders == 0 on every rank (main.py:190 at 2.0.0); "
                        "use 0 (flat) or at least 2", p.subfolders_key, p.what);
    }
    size_t sub = strlen(c->train_data_folder) > strlen(c->valid_data_folder) ? strlen(c->train_data_folder)
                                                                             : strlen(c->valid_data_folder);
    if (strlen(c->data_folder) + sub + strlen(c->file_prefix) + 90 > 4095) /* 90: /<sub-folder>/, _<i>_of_<N>.hdf5.partial.<pid> */
        return fail(err, "key 'data-folder': file paths would exceed 4095 characters (data-folder, sub-folders and "
                    "file-prefix are too long)");
    /* record-length-stdev > 0: per-file dimensions are drawn in sequence and kept (16 bytes per file per rank) */
    if (c->record_length_stdev > 0 && (double)c->num_files_train + (double)c->num_files_eval > 1e8)
        return fail(err, "key 'num-files-train': more than 10^8 files with record-length-stdev > 0 (their drawn "
                    "dimensions would take more than 1.6 GB per rank)");
    if (c->compression && !c->chunking && !c->nchunk_dims)
        return fail(err, "key 'compression': gzip needs a chunked layout: set chunking=true (DLIO >= 2.0.1: "
                    "chunk-dims); h5py's guessed chunk shape is not reproduced");
    if (c->subfiling && (c->collective_data || c->collective_meta))
        return fail(err, "key 'subfiling': cannot be combined with collective-meta/collective-data");
#ifndef H5_HAVE_SUBFILING_VFD
    if (c->subfiling)
        return fail(err, "key 'subfiling': this HDF5 (%d.%d.%d) was built without the Subfiling VFD", H5_VERS_MAJOR,
                    H5_VERS_MINOR, H5_VERS_RELEASE);
#endif
#ifndef H5_HAVE_PARALLEL
    if (c->subfiling || c->collective_data || c->collective_meta)
        return fail(err, "key 'collective-data': this HDF5 was built without parallel (MPI-IO) support");
#endif
#if !H5_VERSION_GE(1, 14, 0)
    if (*c->vol_connector)
        return fail(err, "key 'vol-connector': this HDF5 (%d.%d.%d) has no VOL layer the kernel can use (VOL connectors "
                    "need HDF5 >= 1.14 here): build with the project's HDF5 (make build, without HDF5_DIR)",
                    H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
#endif
    if (c->log_vfd && (c->subfiling || c->collective_data || c->collective_meta))
        return fail(err, "key 'log-vfd': the Log VFD replaces the file driver; it cannot be combined with MPI-IO modes");
    if (e->checkpoint_rules >= 2 && ckpt2_validate(c, e->checkpoint_rules, nranks, ranks_known, err))
        return -1;
    /* utils/config.py:231-238 (2.0.0, validate(), checkpointing or not) */
    if (e->checkpoint_rules < 2 && (c->num_layers % c->pipeline_parallelism || c->num_layers % c->tensor_parallelism))
        return fail(err, "key 'num-layers': %lld is not a multiple of %s %lld (DLIO refuses it: utils/config.py:231-238 "
                    "at 2.0.0)", (long long)c->num_layers,
                    c->num_layers % c->pipeline_parallelism ? "pipeline-parallelism" : "tensor-parallelism",
                    (long long)(c->num_layers % c->pipeline_parallelism ? c->pipeline_parallelism
                                                                        : c->tensor_parallelism));
    if (c->checkpoint && c->framework == LOADER_TENSORFLOW)
        return fail(err, "key 'checkpoint': DLIO's TensorFlow checkpoints (tf.train.Checkpoint, "
                    "checkpointing/tf_checkpointing.py) are not emulated; the kernel writes PyTorch's (framework: pytorch)");
    if (c->checkpoint && !e->checkpoint_rules)
        return fail(err, "key 'checkpoint': DLIO %s's checkpointing (transformer-sized states, one folder per "
                    "checkpoint, fsync, reads) is not emulated yet; DLIO 2.0.0's is (dlio-version=2.0.0)", e->version);
    if (c->checkpoint && strlen(c->checkpoint_folder) + 120 > 4095)
        return fail(err, "key 'checkpoint-folder': checkpoint paths would exceed 4095 characters");
    if (ckpt_format_validate(c, err))
        return -1;
    int rr = strcmp(e->file_sharding, "round_robin") == 0;
    if (rr && c->evaluation)
        return fail(err, "key 'evaluation': DLIO %s's evaluation over round-robin sharded files (main.py _eval, "
                    "utils/config.py:1067-1110 for file_list_eval) is not replayed yet", e->version);
    if (rr && (c->framework == LOADER_TENSORFLOW || c->data_loader == LOADER_TENSORFLOW))
        return fail(err, "key 'framework': DLIO %s's TensorFlow loader is not replayed (the PyTorch path is)",
                    e->version);
    if (rr && c->ordering != ORDER_DLIO)
        return fail(err, "key 'ordering': DLIO %s's round-robin file sharding is DLIO's ordering (ordering=dlio)",
                    e->version);
    if (rr && ranks_known && c->train && c->num_files_train / nranks * c->num_samples_per_file < c->batch_size)
        return fail(err, "key 'num-files-train': DLIO %s gives each rank floor(%lld / %d) = %lld files (main.py:483-484): "
                    "%lld samples, fewer than a batch of %lld", e->version, (long long)c->num_files_train, nranks,
                    (long long)(c->num_files_train / nranks),
                    (long long)(c->num_files_train / nranks * c->num_samples_per_file), (long long)c->batch_size);
    for (int ph = 0; ph < NPHASES; ph++) {
        phase_cfg_t p = config_phase(c, ph);
        if (!p.enabled)
            continue;
        if (p.num_files < 1)
            return fail(err, "key '%s': %s needs at least one file", p.files_key, p.what);
        int64_t used = config_files_used(c, e, ph, nranks);
        if (used < 1)
            return fail(err, "key '%s': DLIO %s trims %lld %s files to a multiple of num-samples-per-file x %s x ranks "
                        "= %lld (main.py:%s), i.e. to none: it would read nothing", p.files_key, e->version,
                        (long long)p.num_files, p.what, p.batch_key,
                        (long long)(c->num_samples_per_file * p.batch_size * nranks), p.trim_lines);
        int64_t total = used * c->num_samples_per_file;
        if (total < nranks)
            return fail(err, "key '%s': %lld %s samples for %d ranks: every rank needs a sample", p.files_key,
                        (long long)total, p.what, nranks);
        int64_t per = c->ordering == ORDER_DLIO ? (total + nranks - 1) / nranks : total / nranks;
        if (p.batch_size > per)
            return fail(err, "key '%s': %lld is larger than the %lld samples of a rank (no full batch)", p.batch_key,
                        (long long)p.batch_size, (long long)per);
        if (ph != PH_TRAIN)
            continue;
        int64_t max_steps = rr ? used / nranks * c->num_samples_per_file / c->batch_size : total / c->batch_size / nranks;
        if (c->total_training_steps == 0)
            return fail(err, "key 'total-training-steps': must be -1 (all) or >= 1");
        if (c->total_training_steps > max_steps)
            return fail(err, "key 'total-training-steps': %lld wanted but the dataset has only %lld steps per epoch",
                        (long long)c->total_training_steps, (long long)max_steps);
    }
    return config_validate_tf(c, e, nranks, ranks_known, err);
}

/* Words separated by ", " into lines of at most 116 characters. */
static void print_list(const char *title, const char *const *items, size_t n)
{
    size_t col = (size_t)printf("%s", title);
    for (size_t i = 0; i < n; i++) {
        size_t w = strlen(items[i]) + (i + 1 < n ? 1 : 0);
        if (col + 1 + w > 116)
            col = (size_t)printf("\n ");
        col += (size_t)printf(" %s%s", items[i], i + 1 < n ? "," : "");
    }
    printf("\n");
}

void config_print_help(const char *prog)
{
    printf("usage: mpirun -np N %s [--config FILE [--entry N]] [--set KEY=VALUE]... [--KEY [VALUE]]... [--log-vfd]\n"
           "                  [--dry-run [--ranks N]]\n"
           "       %s --dlio-entries [--set dlio-version=V]\n\n"
           "Replays DLIO Benchmark's HDF5 dataset generation, training and evaluation reads without ML libraries.\n\n"
           "  --config FILE   h5bench JSON (a \"dlio\" benchmark entry or a bare object of its keys) or a DLIO\n"
           "                  workload YAML (dataset/reader/train/evaluation/workflow/output sections; kernel-only\n"
           "                  keys under an `h5dlio:` section)\n"
           "  --set KEY=VALUE override a key (h5bench name or its underscore spelling, DLIO dotted path, or\n"
           "                  h5dlio.<name>); repeatable\n"
           "  --entry N       a JSON file with several dlio benchmarks: run item N (1-based) of `benchmarks` as\n"
           "                  h5bench's runner does (`directory` required, put in front of data-folder)\n"
           "  --KEY VALUE     h5bench's runner form (PR #124, binary also installed as h5bench_dlio): KEY a name of\n"
           "                  the table below, a yes/no key bare (--train); --output-data-folder DIR = output-folder\n"
           "  --log-vfd       same as --set log-vfd=true\n"
           "  --dry-run       validate the configuration, print it resolved as JSON, do no I/O\n"
           "  --ranks N       with --dry-run: validate for N ranks (default: the ranks it runs with)\n"
           "  --dlio-entries  the kernel's DLIO release entries and release-specific keys as JSON; with\n"
           "                  --set dlio-version=V also the entry V selects and the key names it reads\n"
           "  --version       kernel version, git revision, HDF5 version and features\n"
           "  --help          this text\n\n"
           "Exit status: 0 success, 2 bad input (config, data folder, dataset), 1 runtime failure.\n\n",
           prog, prog);
    printf("%-24s %-34s %-10s %-10s %s\n", "KEY", "DLIO YAML KEY", "DEFAULT", "DLIO-YAML", "MEANING");
    for (size_t i = 0; i < NOPTS; i++) {
        const char *y = OPTS[i].yaml ? OPTS[i].yaml : "-";
        for (size_t k = NDLIO_KEYS; k-- > 0;) /* the newest release's name */
            if (!strcmp(DLIO_KEYS[k].opt, OPTS[i].name)) {
                y = DLIO_KEYS[k].yaml;
                break;
            }
        printf("%-24s %-34s %-10s %-10s %s\n", OPTS[i].name, y, OPTS[i].def_h5, OPTS[i].def_dlio, OPTS[i].help);
    }
    printf("\nDEFAULT applies to h5bench JSON and to runs without --config; DLIO-YAML to a DLIO workload YAML.\n");
    /* the DLIO keys of KNOWN[], by what the parser does with them */
    const char *ignored[NKNOWN], *checked[NKNOWN], *refused[NKNOWN];
    char pairs[NKNOWN][160];
    size_t ni = 0, nc = 0, nr = 0;
    for (size_t i = 0; i < NKNOWN; i++) {
        const known_t *k = &KNOWN[i];
        if (!k->allowed)
            ignored[ni++] = k->path;
        else if (*k->allowed) {
            snprintf(pairs[nc], sizeof pairs[nc], "%s=%s", k->path, k->allowed);
            checked[nc] = pairs[nc];
            nc++;
        } else
            refused[nr++] = k->path;
    }
    print_list("Accepted DLIO keys with no I/O effect (each with its sub-keys):", ignored, ni);
    print_list("Checked DLIO keys (the value the kernel emulates; '|': either):", checked, nc);
    print_list("Refused DLIO keys (not emulated):", refused, nr);
    printf("\nDLIO keys that depend on the release (read by DLIO in [since, until), ignored with a warning otherwise;\n"
           "dlio-version selects the release, entries: %s):\n", dlio_entry_list());
    for (size_t k = 0; k < NDLIO_KEYS; k++)
        printf("  %-36s -> %-22s [%s, %s)\n", DLIO_KEYS[k].yaml, DLIO_KEYS[k].opt,
               DLIO_KEYS[k].since ? DLIO_KEYS[k].since : "-", DLIO_KEYS[k].until ? DLIO_KEYS[k].until : "-");
}

char *config_to_json(const config_t *c)
{
    sb_t b = {0};
    sb_printf(&b, "{");
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &OPTS[i];
        const char *p = (const char *)c + o->off;
        sb_printf(&b, "%s\"%s\": ", i ? ", " : "", o->name);
        switch (o->type) {
        case T_BOOL: sb_printf(&b, "%s", *(const int *)p ? "true" : "false"); break;
        case T_INT: sb_printf(&b, "%lld", (long long)*(const int64_t *)p); break;
        case T_DBL: sb_printf(&b, "%.17g", *(const double *)p); break;
        case T_STR:
        case T_VERSION: sb_json_str(&b, p); break;
        case T_SHUFFLE: sb_printf(&b, "\"%s\"", shuffle_name(*(const int *)p)); break;
        case T_ORDER:
        case T_NAMING: sb_printf(&b, "\"%s\"", *(const int *)p ? "h5bench" : "dlio"); break;
        case T_LOADER: sb_printf(&b, "\"%s\"", *(const int *)p ? "tensorflow" : "pytorch"); break;
        case T_COMPRESSION: sb_printf(&b, "\"%s\"", *(const int *)p ? "gzip" : "none"); break;
        case T_CKPT_TYPE: sb_printf(&b, "\"%s\"", *(const int *)p ? "all_ranks" : "rank_zero"); break;
        case T_DIMS:
        case T_LIST: {
            int n = *(const int *)((const char *)c + o->count);
            sb_printf(&b, "[");
            for (int k = 0; k < n; k++)
                sb_printf(&b, "%s%lld", k ? ", " : "", (long long)((const int64_t *)p)[k]);
            sb_printf(&b, "]");
            break;
        }
        }
    }
    sb_printf(&b, ", \"dlio-entry\": ");
    sb_json_str(&b, c->dlio_entry);
    if (c->mutant) {
        sb_printf(&b, ", \"mutant\": ");
        sb_json_str(&b, MUTANTS[c->mutant].name);
    }
    sb_printf(&b, ", \"dlio-entry-nearest\": %s, \"warnings\": [", c->dlio_nearest ? "true" : "false");
    int first = 1;
    for (const char *w = c->warnings; *w;) {
        const char *nl = strchr(w, '\n');
        size_t wl = nl ? (size_t)(nl - w) : strlen(w);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(wl < sizeof line ? wl : sizeof line - 1), w);
        sb_printf(&b, "%s", first ? "" : ", ");
        sb_json_str(&b, line);
        first = 0;
        w += wl + (nl ? 1 : 0);
    }
    sb_printf(&b, "], \"config-source\": \"%s\", \"config-file\": ",
              c->source == SRC_H5BENCH_JSON ? "h5bench-json" : c->source == SRC_DLIO_YAML ? "dlio-yaml" : "defaults");
    sb_json_str(&b, c->config_path);
    sb_printf(&b, "}");
    return b.s;
}

/* DLIO's index map at R ranks: an entry that does not clamp a rank's slice of ceil(T/R) samples at T raises
 * IndexError on every rank whose slice passes T (the others wait forever at the first step's barrier). The kernel
 * clamps, as later DLIO releases do; this names the shape, what DLIO does with it and what the kernel does instead.
 * DLIO builds the evaluation map whenever the valid folder holds files, evaluation on or off: checked when
 * evaluating, and when this run generates evaluation files. */
void config_note_rank_shape(config_t *c, int nranks)
{
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    if (!e || e->slice_clamped || c->ordering != ORDER_DLIO || !c->train || nranks < 2)
        return;
    for (int ph = 0; ph < NPHASES; ph++) {
        phase_cfg_t p = config_phase(c, ph);
        int64_t files = config_files_used(c, e, ph, nranks);
        /* evaluation off: DLIO still maps the valid folder's files, which exist when this run generates them */
        if (!p.enabled && !(c->generate_data && files > 0))
            continue;
        int64_t total = files * c->num_samples_per_file;
        if (total <= 0 || total % nranks == 0)
            continue;
        int64_t spp = (total + nranks - 1) / nranks, first = total / spp; /* rank r fails iff (r+1)*spp > T */
        int64_t reads_first = total - first * spp > 0 ? total - first * spp : 0;
        char ranks[64], instead[256];
        if (first == nranks - 1)
            snprintf(ranks, sizeof ranks, "rank %lld", (long long)first);
        else
            snprintf(ranks, sizeof ranks, "ranks %lld-%d", (long long)first, nranks - 1);
        if (p.enabled)
            snprintf(instead, sizeof instead, "The kernel clamps instead (as DLIO 2.0.1 does): rank %lld reads %lld %s "
                     "samples%s.", (long long)first, (long long)reads_first, p.what,
                     first < nranks - 1 ? ", the ranks after it none" : "");
        else
            snprintf(instead, sizeof instead, "DLIO maps them with %s off, once this run has generated them; the "
                     "kernel does not read them.", p.what);
        warn(c, "DLIO %s cannot run this at %d ranks: %lld %s samples (%lld file%s x %lld) are not a multiple of the "
             "ranks, so its index map (utils/config.py get_global_map_index) gives each rank ceil(%lld/%d) = %lld "
             "samples; %s, whose slice runs past the last sample (%lld), raise%s IndexError before the first step "
             "and the other ranks wait forever at its barrier. %s A rank count that divides %lld runs on both.",
             e->version, nranks, (long long)total, p.what, (long long)files, files == 1 ? "" : "s",
             (long long)c->num_samples_per_file, (long long)total, nranks, (long long)spp, ranks,
             (long long)total - 1, first == nranks - 1 ? "s" : "", instead, (long long)total);
    }
}

int64_t config_files_used(const config_t *c, const dlio_entry_t *e, int phase, int nranks)
{
    phase_cfg_t p = config_phase(c, phase);
    int64_t n = p.num_files;
    if (!e->trim_files_to_steps || !c->train || c->ordering == ORDER_H5BENCH)
        return n;
    /* main.py:230-246: samples_per_step = num_samples_per_file x batch x ranks; files // that x that */
    int64_t per = c->num_samples_per_file * p.batch_size * nranks;
    return per > 0 ? n / per * per : n;
}
