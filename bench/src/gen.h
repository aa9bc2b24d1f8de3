#ifndef H5DLIO_GEN_H
#define H5DLIO_GEN_H
#include "layout.h"
#include <stdint.h>

typedef struct {
    int64_t files, bytes;
    double seconds;    /* this rank's generation time */
    double start, end; /* this rank's generation start and end (now()) */
    char **created;    /* files this rank created in this run (for keep-files=false) */
    int64_t ncreated;
    int created_dirs[3];           /* rank 0: data folder, train, valid created by this run */
    unsigned char *created_sub[2]; /* rank 0, per phase with sub-folders: sub-folder k created by this run */
} gen_result_t;

/* Generate this rank's share of the dataset (files i = rank, rank+R, ... over train then valid, as DLIO). */
void generate(const layout_t *L, int rank, int nranks, gen_result_t *out);
/* keep-files=false: delete exactly the files this run created, then the folders it created if empty. */
void cleanup_generated(const layout_t *L, gen_result_t *g, int rank);
void gen_result_free(gen_result_t *g);
#endif
