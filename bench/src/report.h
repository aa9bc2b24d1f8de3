/* Results: gathered once to rank 0 as data, then written as CSV (h5bench rows), JSON (SI units + DLIO's
 * metrics) and a human summary. */
#ifndef H5DLIO_REPORT_H
#define H5DLIO_REPORT_H
#include "gen.h"
#include "run.h"

typedef struct {
    const config_t *cfg;
    int nranks, rank;
    int did_gen;
    gen_result_t *gen;
    int64_t nepochs;          /* training epochs run */
    epoch_stats_t *train;     /* [epoch] on this rank */
    epoch_stats_t *eval;      /* [k] evaluations on this rank */
    int64_t *eval_epoch;      /* epoch after which evaluation k ran */
    int64_t neval;
    double wall_s;
} results_t;

/* Collective: every rank calls it; rank 0 writes the files. Returns 0, or -1 if an output could not be written. */
int report_write(const results_t *r);
#endif
