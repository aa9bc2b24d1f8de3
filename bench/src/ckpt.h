/* DLIO's checkpoints during training, as the emulated DLIO entry writes them: which ranks write which files, at
 * which points of the training loop, with which bytes and write calls (ckpt.c; the container: torchsave.c). */
#ifndef H5DLIO_CKPT_H
#define H5DLIO_CKPT_H
#include "config.h"
#include "torchsave.h"
#include "ckpth5.h"

/* One checkpoint as this rank saw it (every rank takes part in every checkpoint, writing or not). */
typedef struct {
    int64_t epoch, step;
    int load;                     /* 0: a save (torch.save), 1: a load (torch.load, 2.0.0-52's checkpoint-only reads) */
    int64_t files, bytes, writes; /* a load: files read, bytes read, read(2) calls */
    int64_t fsyncs;
    double start, end; /* this rank's first open .. last rename (start == end: it wrote nothing) */
} ckpt_event_t;

typedef struct {
    const config_t *cfg;
    int rank, nranks;
    int writer;                         /* this rank writes (DLIO: rank_to_checkpoint == my_rank) */
    int rules;                          /* the entry's checkpoint_rules: 1 (2.0.0), 2 (2.0.0-52), 3 (3.x: the
                                           * states of 2, streamed as raw bytes: SimpleStreamingCheckpointing, or
                                           * mlpstorage's StreamingCheckpointing when mlps) */
    ts_state_t model, optimizer, layer; /* DLIO's model_state, optimization_state, layer_state */
    /* rules 2: 3-D parallel ranks (base_checkpointing.py:57-67), the layers of this rank, one state per layer
     * (ZeRO 1/2 with pipeline parallelism saves layer by layer), what the tensors hold (enum ts_fill) */
    int64_t dp, mp, dp_rank, mp_rank, pp_rank, start_layer, end_layer;
    ts_state_t *layers;
    int fill;
    ckpt_event_t *ev;
    int64_t nev, cap;
    int hdf5; /* checkpoint-format hdf5: the states go to one HDF5 file (ckpth5.c) instead of torch.save files */
    h5ck_t h5;
    int mutated; /* a checkpoint mutant (mutate.h) has fired on this rank */
    /* rules 3: the bounded buffers of the stream (one chunk each, whatever the checkpoint's size): a read-only
     * mapping of zeros for the writes, one chunk to read into, one CPython read buffer (st_blksize) */
    uint8_t *zeros, *rbuf, *pybuf;
    size_t pybuf_len;
    /* rules 3, checkpoint_stream mlpstorage_streaming (MLPerf v3.0's StreamingCheckpointing): one chunk of random
     * bytes for the writes and its generator's state, one 128 MiB mapping the reader threads pread into */
    int mlps;
    uint8_t *rnd, *rread;
    uint64_t rng;
} ckpt_t;

/* Every rank: the folder (DLIO: os.makedirs(exist_ok=True) on every rank), this rank's states. */
void ckpt_init(ckpt_t *k, const config_t *c, int rank, int nranks);
void ckpt_free(ckpt_t *k);
/* DLIO's checkpoint(epoch, step_number): this rank's files, written; logged as one event. */
void ckpt_save(ckpt_t *k, int64_t epoch, int64_t step);
/* DLIO 2.0.0-52's load_checkpoint(epoch, step_number): this rank's files read back as torch.load reads them. */
void ckpt_load(ckpt_t *k, int64_t epoch, int64_t step);
/* DLIO 2.0.0-52's checkpoint-only workflow (main.py:257-310): write N checkpoints, then read N back. */
void ckpt_only_run(ckpt_t *k);
/* After training step `step` (1-based, within the epoch): does DLIO checkpoint here (steps-between-checkpoints)? */
int ckpt_after_step(const config_t *c, int64_t step);
/* After the training loop of `epoch` (epochs-between-checkpoints, steps-between-checkpoints < 0)? */
int ckpt_after_epoch(const config_t *c, int64_t epoch);
#endif
