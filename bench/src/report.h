/* Results: gathered once to rank 0 as data, then written from one table of metrics as CSV (h5bench rows), JSON (SI
 * units + DLIO's metrics), per-rank CSV and a human summary. */
#ifndef H5DLIO_REPORT_H
#define H5DLIO_REPORT_H
#include "gen.h"
#include "run.h"
#include "vol.h"

typedef struct {
    const config_t *cfg;
    int nranks, rank;
    int did_gen;
    const gen_result_t *gen;
    phase_log_t read[NPHASES]; /* the epochs each read phase ran on this rank */
    double clock_offset;       /* this rank's now() minus rank 0's (clock_offset()): phase spans across ranks */
    double wall_s;
    double t_start;         /* this rank's now() when the job started (the launch's start, as it sees it) */
    const ckpt_t *ckpt;     /* the checkpoints this rank took part in (NULL: checkpointing off) */
    const runner_t *runner; /* the read phases' runner (its pre-warm reads: DLIO 3.x entries), or NULL */
    const vol_t *vol;       /* the VOL connector stack HDF5 reported (vol_probe) */
} results_t;

/* Collective: every rank calls it; rank 0 writes the files. Returns 0, or -1 if an output could not be written. */
int report_write(const results_t *r);
#endif
