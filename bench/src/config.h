/* One configuration struct, one options table, parsed and validated in one place
 * (options.c the table, config_json.c/config_yaml.c/config_argv.c the front-ends, config_load.c, config_check.c
 * the validation, help.c, config_out.c the resolved JSON; config_int.h their private header). */
#ifndef H5DLIO_CONFIG_H
#define H5DLIO_CONFIG_H
#include <stdint.h>
#include <stddef.h>
#include "dlio.h"

enum shuffle_mode { SHUFFLE_OFF = 0, SHUFFLE_SEED = 1, SHUFFLE_RANDOM = 2 };
enum ordering_mode { ORDER_DLIO = 0, ORDER_H5BENCH = 1 };
enum naming_mode { NAMING_DLIO = 0, NAMING_H5BENCH = 1 };
enum ckpt_type { CKPT_RANK_ZERO = 0, CKPT_ALL_RANKS = 1 };
#define CKPT_MAX_LIST 64
enum loader_kind { LOADER_PYTORCH = 0, LOADER_TENSORFLOW = 1 }; /* framework, reader.data_loader */
enum config_source { SRC_DEFAULTS = 0, SRC_H5BENCH_JSON = 1, SRC_DLIO_YAML = 2 };

typedef struct {
    /* workflow */
    int generate_data, train, evaluation;
    /* dataset */
    int64_t record_length, record_length_stdev, record_length_resize;
    int64_t record_dims[2], chunk_dims[3], num_dset_per_record; /* DLIO >= 2.0.1: dataset.record_dims, dataset.hdf5.* */
    int nrecord_dims, nchunk_dims;
    int64_t num_files_train, num_files_eval, num_samples_per_file;
    int64_t num_subfolders_train, num_subfolders_eval; /* > 1: file i lives in <folder>/<i mod n, padded>/ */
    char format[16];                                   /* hdf5 | npz (DLIO 3.x) */
    char data_folder[4096], file_prefix[256], train_data_folder[256], valid_data_folder[256];
    char records_dataset_name[256], labels_dataset_name[256];
    int chunking;
    int64_t chunk_size;
    int keep_files, compression;
    int64_t compression_level, generation_buffer_size;
    /* reader */
    int64_t batch_size, batch_size_eval, read_threads, prefetch_size;
    int sample_shuffle, file_shuffle; /* enum shuffle_mode */
    int odirect;                      /* reader.odirect (DLIO 3.x npz: reader.c read_odirect) */
    int skip_listing;                 /* dataset.skip_listing (DLIO 3.x: files in index order, shard.c) */
    int file_shuffle_given;           /* reader.file_shuffle was given, whatever its value: MLCommons DLIO 3.x keeps the
                                       * YAML string (utils/config.py:1671-1672), so `is not Shuffle.OFF` holds even
                                       * for "off" (:1137) and only an absent key leaves the files unresharded */
    int framework, data_loader;       /* enum loader_kind: DLIO's framework and reader.data_loader */
    int64_t cpu_count, ranks_per_node; /* planted inputs of DLIO 3.x's reader auto-sizing (autoread.c; 0: measured) */
    struct {                           /* DLIO 3.x's machine-sized readers as the kernel derived them (autoread.c) */
        int on, applied;               /* the entry auto-sizes; read_threads changed */
        int64_t asked, cpus, rpn, cap, forked;
        char cpus_from[24], rpn_from[32], cap_from[48];
    } rt_auto;
    double preprocess_time, preprocess_time_stdev;
    /* train / evaluation */
    int64_t epochs, total_training_steps, random_seed, epochs_between_evals, eval_after_epoch;
    int seed_change_epoch;
    double computation_time, computation_time_stdev, eval_time, eval_time_stdev, au;
    /* checkpointing (DLIO 2.0.0's checkpoint section) */
    int checkpoint, checkpoint_type; /* enum ckpt_type */
    char checkpoint_folder[4096];
    int64_t checkpoint_after_epoch, epochs_between_checkpoints, steps_between_checkpoints;
    int64_t model_size, num_layers, tensor_parallelism, pipeline_parallelism;
    int64_t optimization_groups[CKPT_MAX_LIST], layer_parameters[CKPT_MAX_LIST];
    int n_optimization_groups, n_layer_parameters;
    /* DLIO 2.0.0-52's (392621b) checkpoint and model keys (checkpoint_rules 2) */
    char model_type[64], model_datatype[16], optimizer_datatype[16], checkpoint_mode[16];
    int64_t data_parallelism, zero_stage, vocab_size, hidden_size, ffn_hidden_size, num_attention_heads, num_kv_heads;
    int64_t num_checkpoints_write, num_checkpoints_read;
    double time_between_checkpoints;
    int checkpoint_rank_sync, checkpoint_randomize_tensor, checkpoint_fsync, checkpoint_fsync_yaml;
    /* the kernel's own checkpoint format (ckpth5.c): torch (DLIO's) | hdf5; its MPI-IO mode and subfiling */
    char checkpoint_format[16], checkpoint_mpiio[16];
    int checkpoint_subfiling;
    int64_t checkpoint_buffer_size;
    /* HDF5 features */
    int collective_meta, collective_data, subfiling, log_vfd;
    /* the HDF5 VOL connector asked for by key (vol.c applies it as HDF5_VOL_CONNECTOR; "" = not asked by key), and
     * the plugin folder of an h5bench configuration's `vol` block (`path`; not an option: HDF5_PLUGIN_PATH's job) */
    char vol_connector[1024], vol_plugin_path[4096];
    int vol_async_prefetch; /* explicit async reads, one batch ahead (prefetch.c; needs the async connector) */
    /* kernel behaviour */
    int ordering, naming; /* enum ordering_mode, enum naming_mode */
    char dlio_version[32];
    char dlio_entry[32]; /* the kernel entry used: dlio-version's own, or the nearest one (dlio_nearest) */
    int dlio_nearest;
    char warnings[2048]; /* one line each: printed once by rank 0, kept in the JSON summary */
    /* output */
    char output_folder[4096], output_csv_name[256];
    int output_ranks_data, quiet, record_samples, overwrite, reuse_data_folder;
    int generation_atomic_rename; /* write each generated file as <name>.partial.<pid>, then rename it (gen.c) */
    int64_t fault_skip_read;
    int mutant; /* mutate.h: a divergence injected on purpose (H5DLIO_MUTATE, validator tests only); 0: none */
    /* where the values came from (not options) */
    int source;
    char config_path[4096];
    /* while loading only: the --set overrides that follow the file (a file value the kernel refuses is not an error
     * when a --set replaces it: `--config unet3d_h100.yaml --set workflow.checkpoint=false`) */
    int nset;
    char *const *sets;
    /* the --set overrides as given, kept for output.json's comparability (coreconfig.c: the hashed workload is the
     * file with its overrides, as mlpstorage hashes a template with its overrides): nover strings one after the
     * other, each with its NUL; -1: they did not fit */
    int nover;
    char over[8192];
} config_t;

#define CFG_ERRLEN 1024

/* The read phases. Everything that differs between training and evaluation reads comes from config_phase(): the
 * batch size, file count and compute time of a phase are written once. */
enum phase { PH_TRAIN = 0, PH_EVAL = 1, NPHASES = 2 };
typedef struct {
    const char *name;                  /* "train" | "eval": output names */
    const char *what;                  /* "training" | "evaluation": messages */
    const char *files_key, *batch_key; /* the options, for messages */
    const char *trim_lines;            /* DLIO main.py lines trimming this phase's files (2.0.1-12 on) */
    const char *folder;                /* train-data-folder | valid-data-folder */
    const char *subfolders_key;        /* num-subfolders-train | num-subfolders-eval */
    int64_t subfolders;                /* > 1: file i in <folder>/<i mod n zero-padded to the digits of n>/ */
    int enabled;                       /* train | evaluation */
    int64_t num_files, batch_size;
    double compute_time, compute_time_stdev; /* computation-time(-stdev) | eval-time(-stdev) */
} phase_cfg_t;
static inline phase_cfg_t config_phase(const config_t *c, int phase)
{
    if (phase == PH_TRAIN)
        return (phase_cfg_t){.name = "train",
                             .what = "training",
                             .files_key = "num-files-train",
                             .batch_key = "batch-size",
                             .trim_lines = "230-237",
                             .folder = c->train_data_folder,
                             .subfolders_key = "num-subfolders-train",
                             .subfolders = c->num_subfolders_train,
                             .enabled = c->train,
                             .num_files = c->num_files_train,
                             .batch_size = c->batch_size,
                             .compute_time = c->computation_time,
                             .compute_time_stdev = c->computation_time_stdev};
    return (phase_cfg_t){.name = "eval",
                         .what = "evaluation",
                         .files_key = "num-files-eval",
                         .batch_key = "batch-size-eval",
                         .trim_lines = "239-246",
                         .folder = c->valid_data_folder,
                         .subfolders_key = "num-subfolders-eval",
                         .subfolders = c->num_subfolders_eval,
                         .enabled = c->evaluation,
                         .num_files = c->num_files_eval,
                         .batch_size = c->batch_size_eval,
                         .compute_time = c->eval_time,
                         .compute_time_stdev = c->eval_time_stdev};
}

/* Fill defaults for the given source, then apply a file (may be NULL) and the --set overrides in order.
 * On error returns -1 with a one-line message in err (naming the key and the file). */
int config_load(config_t *c, const char *path, int nset, char *const sets[], char *err);
/* The same, reading entry N (1-based) of an h5bench JSON file's `benchmarks` list as h5bench's runner reads it
 * (`directory` required and prefixed to the entry's data-folder); entry 0: config_load. */
int config_load_entry(config_t *c, const char *path, int entry, int nset, char *const sets[], char *err);
/* h5bench's runner form (PR #124 src/h5bench.py run_dlio): argv[i] is "--KEY"; KEY an option's h5bench name (or
 * output-data-folder, drop-last), followed by its VALUE, or bare for a yes/no key. Writes "name=value" for the --set
 * list into set ("" when the key sets nothing) and returns the argv entries used (1 or 2); -1 + message naming the
 * key on error. */
int config_runner_arg(int argc, char *const argv[], int i, char *set, size_t setlen, char *err);
/* Whole-config validation against the run (ranks, HDF5 features); -1 + message on error. */
int config_validate(const config_t *c, int nranks, char *err);
/* The same before the rank count is known (before MPI_Init): what 1 rank allows, without the checks whose outcome
 * the rank count can turn either way (the TF loader's per-rank shape). */
int config_validate_early(const config_t *c, char *err);
void config_print_help(const char *prog);
/* Resolved configuration as JSON object text (for the summary). Caller frees. */
char *config_to_json(const config_t *c);
const char *shuffle_name(int m);
/* Files of a phase the release's training run uses for nranks ranks (DLIO main trims them, see trim_files_to_steps). */
int64_t config_files_used(const config_t *c, const dlio_entry_t *e, int phase, int nranks);
/* Adds a warning when the emulated DLIO entry cannot run this shape at nranks (see config_check.c). */
void config_note_rank_shape(config_t *c, int nranks);

#endif
