/* The options table (OPTS), the DLIO keys accepted without an option (KNOWN), and the typed setters: one key's value,
 * checked and stored in config_t, its defaults, and the look-up of a key by any of its spellings. */
#include "config_int.h"
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

#define F(f) offsetof(config_t, f), sizeof(((config_t *)0)->f)
#define BIG 9.2e18
// clang-format off: a table, kept as written
const opt_t OPTS[] = {
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
             "instead of record-length)",
     .count = offsetof(config_t, nrecord_dims)},
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
     .help = "dataset format: hdf5 | npz | jpeg | png (npz, jpeg, png: DLIO 3.x entries, files written as 3.x writes "
             "them)"},
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
             "layout)",
     .count = offsetof(config_t, nchunk_dims)},
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
    {"cpu-count", NULL, T_INT, F(cpu_count), "0", "0", 0, 1e6,
     .help = "kernel, DLIO 3.x entries: the CPU count read_threads 1 is sized by (0: the node's online CPUs, as "
             "Python's os.cpu_count())"},
    {"ranks-per-node", NULL, T_INT, F(ranks_per_node), "0", "0", 0, 1e6,
     .help = "kernel, DLIO 3.x entries: the ranks per node read_threads 1 is sized by (0: MPI's shared-memory "
             "communicator, counted as DLIO counts it)"},
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
    {"checkpoint-folder", "checkpoint.checkpoint_folder", T_STR, F(checkpoint_folder), "./checkpoints", "./checkpoints",
     0, 0, .help = "where checkpoints are written", .flags = OPT_STRIP_SLASH},
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
    {"layer-parameters", NULL, T_LIST, F(layer_parameters), "17371,24740228", "17371,24740228", -1e15, 1e15,
     .help = "tensor sizes of each layer file (DLIO's default: 17371, 24740228)",
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
     .help =
         "DLIO >= 2.0.0-52, checkpoint without train: then checkpoints read back (torch.load; 3.x: streamed reads)"},
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
             "HDF5_VOL_CONNECTOR, else native); the results name the stack HDF5 uses",
     .flags = OPT_EMPTY_OK},
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
    {"generation-atomic-rename", NULL, T_BOOL, F(generation_atomic_rename), "false", "false", 0, 1,
     .help = "write each generated file as <name>.partial.<pid> and rename it when whole (a rename per file DLIO "
             "does not make; default: written in place, as DLIO, with one completion record per job)"},
    {"fault-skip-read", NULL, T_INT, F(fault_skip_read), "0", "0", 0, BIG,
     .help = "fault injection for validation tests: rank 0 skips its N-th sample read (0: off)"},
    {"quiet", NULL, T_BOOL, F(quiet), "false", "false", 0, 1, .help = "no human summary on stdout"},
};
// clang-format on
const size_t NOPTS = sizeof OPTS / sizeof OPTS[0];

#define NOT_READ_BY_DLIO "no DLIO release reads it (utils/config.py LoadConfig)"
// clang-format off: a table, kept as written
const known_t KNOWN[] = {
    {"model", NULL, NULL},
    {"reader.read_type", "on_demand", "only ON_DEMAND reads are emulated"},
    {"reader.file_access", "multi", "only one-file-per-sample-group access is emulated"},
    /* how DLIO's PyTorch loader starts its reader processes (torch_data_loader.py:759 at f6796ed): the reads of each
     * are the same under every context (docs/fidelity-dlio3.md, row 8), so nothing changes in the replay; torch's
     * DataLoader hands the name to multiprocessing.get_context, which raises for any other */
    {"reader.multiprocessing_context", "fork|spawn|forkserver",
     "torch's DataLoader starts reader processes by multiprocessing.get_context(name), which knows fork, spawn and "
     "forkserver only"},
    {"reader.dont_use_mmap", NULL, NULL},
    {"reader.computation_threads", NULL, NULL},
    {"reader.transfer_size", NULL, NULL},
    {"reader.shuffle_size", NULL, NULL},
    {"checkpoint.checkpoint_mechanism_classname", "", "a custom checkpointing class is not emulated"},
    {"model.name", NULL, NULL},
    {"model.ksm", NULL, NULL},
    {"checkpoint.ksm", NULL, NULL}, /* KSM page merging: memory only */
    {"checkpoint.recovery_rank_shift", NULL,
     NULL}, /* 2.0.0-52 stores it in a misspelt attribute (utils/config.py:887) */
    {"workflow.profiling", NULL, NULL},
    {"workflow.debug", NULL, NULL},
    {"profiling", NULL, NULL},
    {"storage.storage_type", "local_fs", "only local/parallel file systems are supported"},
    {"storage.storage_root", NULL, NULL},
    {"output.log_file", NULL, NULL},
    /* DLIO >= 2.0.1 keys with no I/O effect on the HDF5 PyTorch path */
    {"output.metric", NULL, NULL}, /* exclude_start_steps/exclude_end_steps: metrics only */
    {"reader.pin_memory", NULL, NULL},
    {"reader.transformed_record_dims", NULL, NULL}, /* the resized image handed to the framework */
    {"reader.transformed_record_element_type", NULL, NULL},
    {"dataset.record_element_bytes", NULL, NULL}, /* recomputed from the type (utils/config.py:448-449 at v2.0.1) */
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
// clang-format on
const size_t NKNOWN = sizeof KNOWN / sizeof KNOWN[0];

void warn(config_t *c, const char *fmt, ...)
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
        if ((unsigned char)*p < 0x20 && *p != '\n')
            *p = ' ';
    c->warnings[n] = '\n';
    c->warnings[n + 1] = 0;
}

const char *shuffle_name(int m) { return m == SHUFFLE_SEED ? "seed" : m == SHUFFLE_RANDOM ? "random" : "off"; }

/* One line, whatever the input held (keys and values are quoted into messages). */
void one_line(char *err)
{
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20)
            *p = ' ';
}

int fail(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, CFG_ERRLEN, fmt, ap);
    va_end(ap);
    one_line(err);
    return -1;
}

int lowereq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

int parse_bool(const char *s, int *out)
{
    static const char *t[] = {"true", "yes", "on", "1"}, *f[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (lowereq(s, t[i]))
            return *out = 1, 0;
        if (lowereq(s, f[i]))
            return *out = 0, 0;
    }
    return -1;
}

int parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    while (isspace((unsigned char)*s)) s++;
    if (!*s)
        return -1;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return -2;
    if (*end == '.') { /* accept 1.0e6-style integers written as floats if exact */
        double d = strtod(s, &end);
        while (isspace((unsigned char)*end)) end++;
        if (*end || d != floor(d) || fabs(d) > 9.2e18)
            return -1;
        *out = (int64_t)d;
        return 0;
    }
    if (*end == 'e' || *end == 'E') {
        double d = strtod(s, &end);
        while (isspace((unsigned char)*end)) end++;
        if (*end || d != floor(d))
            return -1;
        if (fabs(d) > 9.2e18)
            return -2;
        *out = (int64_t)d;
        return 0;
    }
    while (isspace((unsigned char)*end)) end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

int parse_dbl(const char *s, double *out)
{
    char *end;
    errno = 0;
    while (isspace((unsigned char)*s)) s++;
    if (!*s)
        return -1;
    double v = strtod(s, &end);
    while (isspace((unsigned char)*end)) end++;
    if (*end || errno == ERANGE || !isfinite(v))
        return -1;
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
/* T_DIMS: "a,b,c" or "[a, b, c]", exactly the number of dimensions the option wants (or none) */
static int set_dims(config_t *c, const opt_t *o, char *p, const char *v, const char *where, char *err)
{
    int64_t *dims = (int64_t *)p;
    int *count = (int *)((char *)c + o->count);
    int n = 0, want = (int)o->max;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *q = buf; *q; q++)
        if (*q == '[' || *q == ']')
            *q = ' ';
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (n == want)
            return fail(err, "%s: key '%s': '%s' has more than %d dimensions", where, o->name, v, want);
        int r = parse_i64(t, &dims[n]);
        if (r || dims[n] < 1 || dims[n] > (int64_t)1e12)
            return fail(err, "%s: key '%s': '%s' is not %d positive integers", where, o->name, v, want);
        n++;
    }
    if (n != want && n != 0)
        return fail(err, "%s: key '%s': '%s' has %d dimensions, the kernel's datasets need %d", where, o->name, v, n,
                    want);
    *count = n;
    return 0;
}

/* T_LIST: "a,b,c" or "[a, b, c]"; "" or "[]": empty */
static int set_list(config_t *c, const opt_t *o, char *p, const char *v, const char *where, char *err)
{
    int64_t *vals = (int64_t *)p;
    int *count = (int *)((char *)c + o->count), n = 0;
    char buf[2048];
    if (strlen(v) >= sizeof buf)
        return fail(err, "%s: key '%s': list longer than %zu characters", where, o->name, sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", v);
    for (char *q = buf; *q; q++)
        if (*q == '[' || *q == ']')
            *q = ' ';
    if (strspn(buf, " \t") == strlen(buf)) { /* "" or "[]" */
        *count = 0;
        return 0;
    }
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        int64_t x;
        if (n == CKPT_MAX_LIST)
            return fail(err, "%s: key '%s': more than %d values", where, o->name, CKPT_MAX_LIST);
        if (parse_i64(t, &x) || (double)x < o->min || (double)x > o->max)
            return fail(err, "%s: key '%s': '%s' is not a list of integers in [%.0f, %.0f]", where, o->name, v, o->min,
                        o->max);
        vals[n++] = x;
    }
    *count = n;
    return 0;
}

/* The keys whose value is one word of a few (shuffle, loader, order, naming, checkpoint type, compression) */
static int set_choice(config_t *c, const opt_t *o, char *p, const char *v, const char *where, char *err)
{
    switch (o->type) {
    case T_SHUFFLE:
        if (lowereq(v, "off") || lowereq(v, "false") || lowereq(v, "no") || lowereq(v, "0"))
            *(int *)p = SHUFFLE_OFF;
        else if (lowereq(v, "seed") || lowereq(v, "true") || lowereq(v, "yes") || lowereq(v, "1"))
            *(int *)p = SHUFFLE_SEED;
        else if (lowereq(v, "random"))
            *(int *)p = SHUFFLE_RANDOM;
        else
            goto bad;
        if (p == (void *)&c->file_shuffle) /* DLIO 3.x reshards whenever the key is given (see file_shuffle_given) */
            c->file_shuffle_given = 1;
        return 0;
    case T_LOADER:
        if (lowereq(v, "pytorch"))
            *(int *)p = LOADER_PYTORCH;
        else if (lowereq(v, "tensorflow"))
            *(int *)p = LOADER_TENSORFLOW;
        else
            return fail(err,
                        "%s: key '%s': value '%s' is not supported (expected pytorch|tensorflow: DLIO's "
                        "dali, native_dali and custom loaders are not emulated)",
                        where, o->name, v);
        return 0;
    case T_ORDER:
    case T_NAMING:
        if (lowereq(v, "dlio"))
            *(int *)p = 0;
        else if (lowereq(v, "h5bench"))
            *(int *)p = 1;
        else
            goto bad;
        return 0;
    case T_CKPT_TYPE:
        if (lowereq(v, "rank_zero"))
            *(int *)p = CKPT_RANK_ZERO;
        else if (lowereq(v, "all_ranks"))
            *(int *)p = CKPT_ALL_RANKS;
        else
            goto bad;
        return 0;
    case T_COMPRESSION:
        if (lowereq(v, "none") || lowereq(v, "false") || lowereq(v, "0"))
            *(int *)p = 0;
        else if (lowereq(v, "gzip") || lowereq(v, "true") || lowereq(v, "1"))
            *(int *)p = 1;
        else
            return fail(err, "%s: key '%s': '%s' is not supported (none | gzip)", where, o->name, v);
        return 0;
    default: break;
    }
bad:
    return fail(err, "%s: key '%s': '%s' is not %s", where, o->name, v, type_name(o->type));
}

int set_opt(config_t *c, const opt_t *o, const char *v, const char *where, char *err)
{
    char *p = (char *)c + o->off;
    int b;
    int64_t i;
    double d;
    switch (o->type) {
    case T_BOOL:
        if (parse_bool(v, &b))
            goto bad;
        *(int *)p = b;
        return 0;
    case T_INT: {
        int r = parse_i64(v, &i);
        if (r == -2 || (r == 0 && ((double)i > o->max || (double)i < o->min)))
            return fail(err, "%s: key '%s': value %s out of range [%.0f, %.0f]", where, o->name, v, o->min, o->max);
        if (r)
            goto bad;
        *(int64_t *)p = i;
        return 0;
    }
    case T_DBL:
        if (parse_dbl(v, &d))
            goto bad;
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
    case T_DIMS: return set_dims(c, o, p, v, where, err);
    case T_LIST: return set_list(c, o, p, v, where, err);
    case T_SHUFFLE:
    case T_LOADER:
    case T_ORDER:
    case T_NAMING:
    case T_CKPT_TYPE:
    case T_COMPRESSION: return set_choice(c, o, p, v, where, err);
    }
bad:
    return fail(err, "%s: key '%s': '%s' is not %s", where, o->name, v, type_name(o->type));
}

const opt_t *find_opt(const char *key, unsigned by)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (((by & BY_NAME) && !strcmp(OPTS[i].name, key)) ||
            ((by & BY_YAML) && OPTS[i].yaml && !strcmp(OPTS[i].yaml, key)))
            return &OPTS[i];
    if (!(by & BY_ALIAS))
        return NULL;
    const char *k = !strncmp(key, "h5dlio.", 7) ? key + 7 : key;
    char tmp[128];
    if (strlen(k) >= sizeof tmp)
        return NULL;
    size_t j = 0;
    for (; k[j]; j++) tmp[j] = k[j] == '_' ? '-' : k[j];
    tmp[j] = 0;
    return find_opt(tmp, BY_NAME);
}

static size_t lev(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), prev[128], cur[128];
    if (la > 120 || lb > 120)
        return 999;
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
const char *closest_key(const char *key, int names_only)
{
    const char *best = NULL;
    size_t bd = 999;
    for (size_t i = 0; i < NOPTS; i++) {
        size_t d = lev(key, OPTS[i].name);
        if (d < bd)
            bd = d, best = OPTS[i].name;
        if (!names_only && OPTS[i].yaml && (d = lev(key, OPTS[i].yaml)) < bd)
            bd = d, best = OPTS[i].yaml;
    }
    for (size_t i = 0; i < NDLIO_KEYS && !names_only; i++) {
        size_t d = lev(key, DLIO_KEYS[i].yaml);
        if (d < bd)
            bd = d, best = DLIO_KEYS[i].yaml;
    }
    return best;
}

int unknown_key(const char *where, const char *key, char *err)
{
    return fail(err, "%s: unknown key '%s' (did you mean '%s'? see h5dlio --help)", where, key, closest_key(key, 0));
}

const known_t *find_known(const char *path)
{
    for (size_t i = 0; i < NKNOWN; i++) {
        size_t n = strlen(KNOWN[i].path);
        if (!strcmp(KNOWN[i].path, path) || (!KNOWN[i].allowed && !strncmp(KNOWN[i].path, path, n) && path[n] == '.'))
            return &KNOWN[i];
    }
    return NULL;
}

/* Does a --set that follows the file name this DLIO key path? */
int set_later(const config_t *c, const char *path)
{
    size_t n = strlen(path);
    for (int i = 0; i < c->nset; i++)
        if (!strncmp(c->sets[i], path, n) && c->sets[i][n] == '=')
            return 1;
    return 0;
}

int check_known(const known_t *k, const char *path, const char *v, const char *where, char *err)
{
    if (!k->allowed)
        return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", k->allowed);
    for (char *s = strtok(buf, "|"); s; s = strtok(NULL, "|")) {
        int bv;
        if (lowereq(v, s) || (!strcmp(s, "false") && !parse_bool(v, &bv) && !bv) ||
            (!strcmp(s, "0") && !strcmp(v, "0")))
            return 0;
    }
    return fail(err, "%s: key '%s': value '%s' is not supported (expected %s: %s)", where, path, v, k->allowed, k->why);
}

/* A release-specific DLIO key (DLIO_KEYS): applied when the entry's release reads it, else ignored with a warning
 * (as DLIO ignores it). e == NULL: the first pass, which only looks for dlio-version: skipped. */
int apply_versioned(config_t *c, const dlio_key_t *k, const char *v, const char *where, char *err,
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

void set_defaults(config_t *c, int dlio)
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
