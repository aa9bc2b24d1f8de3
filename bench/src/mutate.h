/* Mutants: one named divergence from DLIO injected into the kernel, to attack the validator (`make mutants`,
 * docs/mutants.md). Chosen only by the environment variable H5DLIO_MUTATE (the harness never sets it; no --set key,
 * not in --help); a mutated run warns on rank 0 and names its mutant in output.json ("mutant"). The table below is
 * the one list of mutants: each one's name, what it does, the checks meant to catch it and the workload families it
 * applies to (`h5dlio --mutants` prints it as JSON for the driver, fidelity/mutants.py). Each hook is one `if` at the
 * single point of the kernel where its divergence belongs. */
#ifndef H5DLIO_MUTATE_H
#define H5DLIO_MUTATE_H

// clang-format off: a table, kept as written
typedef enum {
    MUT_NONE = 0,
    MUT_SKIP_READ,       /* run.c   read_batch */
    MUT_EXTRA_READ,      /* run.c   read_batch */
    MUT_SWAP_SAMPLES,    /* run.c   read_batch */
    MUT_SWAP_BATCHES,    /* run.c   read_batch */
    MUT_TF_PADDING,      /* run.c   read_batch */
    MUT_EVAL_STEP,       /* run.c   run_read_phase */
    MUT_RANK_SEED,       /* run.c   runner_init, shard_to */
    MUT_PREWARM_DROP,    /* run.c   run_prewarm */
    MUT_READ_OFFSET,     /* reader.c read_dataset */
    MUT_EXTRA_OPEN,      /* reader.c sample_reader_read / tf_thread_read */
    MUT_DATA_WRITE,      /* main.c  phase_train */
    MUT_CWD_WRITE,       /* main.c  phase_train */
    MUT_DATA_STAT,       /* main.c  phase_train */
    MUT_GEN_CHUNK,       /* gen.c   write_one */
    MUT_GEN_DIMS,        /* gen.c   write_one */
    MUT_CKPT_STRAY,      /* ckpt.c  save_file, stream_save */
    MUT_CKPT_SHORT,      /* ckpt.c  save_file -> torchsave.c ts_save_fill; stream_save */
    MUT_CKPT_SPLIT,      /* ckpt.c  save_file -> torchsave.c raw_write; stream_save */
    MUT_CKPT_FSYNC,      /* ckpt.c  save_file, stream_save (a second fsync) */
    MUT_ASYNC_LOST_READ, /* prefetch.c issue_sample */
    MUT_COMPUTE_SKIP,    /* run.c   run_step */
    MUT_NO_SHUFFLE,      /* run.c   runner_init, shard_to */
    MUT_EPOCH_SEED,      /* run.c   run_read_phase, shard_to */
    MUT_SWAP_SLICES,     /* run.c   mutant_slice */
    MUT_WRONG_FILE,      /* run.c   read_batch */
    MUT_GEN_RENAME,      /* gen.c   generate */
    MUT_COMPRESSION,     /* gen.c   write_one */
    MUT_ODIRECT_DROP,    /* reader.c read_odirect */
    MUT_READV_SIZE,      /* reader.c read_odirect */
    MUT_FSYNC_DROP,      /* ckpt.c  close_partial (3.x streams) */
    MUT_FADVISE_DROP,    /* ckpt.c  mlps_save */
    MUT_DISC_STAT_ALL,   /* discover.c discover_dataset */
    MUT_COUNT
} mutant_id_t;
// clang-format on

typedef struct {
    const char *name;
    const char *what;     /* the divergence, as it happens */
    const char *checks;   /* the checks meant to catch it: verdict check names, '*' a wildcard, space-separated */
    const char *families; /* space-separated: pytorch (DLIO 2.0.0 PyTorch: unet3d), tf (DLIO 2.0.0 TensorFlow: bert),
                           * tf-eval (the same with evaluation: cosmoflow_eval), checkpoint (unet3d_checkpoint),
                           * dlio3 (MLCommons DLIO 3.x: unet3d_b200, O_DIRECT), dlio3-checkpoint (3.x's
                           * SimpleStreamingCheckpointing: llama3_8b_v3), dlio3-mlps (3.x with mlpstorage's
                           * StreamingCheckpointing: llama3_8b_v3), fixed-size (one-sample files of one size:
                           * imagenet_files) */
} mutant_t;

extern const mutant_t MUTANTS[MUT_COUNT];

/* The mutant named `name` (MUT_NONE for NULL or ""), or -1: no such mutant. */
int mutant_lookup(const char *name);
/* The table as JSON (malloc'd). */
char *mutants_json(void);
#endif
