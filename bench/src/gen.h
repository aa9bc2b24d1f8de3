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
    int record_written;            /* rank 0: this run wrote the completion record (GEN_RECORD) */
} gen_result_t;

/* The completion record: one file at the top of the data folder, written by rank 0 with state "generating" before
 * any rank writes a dataset file and rewritten with state "complete" after every rank has closed its last one. A
 * record still "generating" (or cut short) is an interrupted generation: reads refuse the folder, generation refuses
 * it unless overwrite=true. No per-file metadata operation: two small writes of one file per job. */
#define GEN_RECORD "h5dlio-generation.json"
enum { REC_ABSENT = 0, REC_COMPLETE = 1, REC_INTERRUPTED = -1, REC_FOREIGN = -2 };
/* The record's state in c's data folder; path (may be NULL) gets its path. */
int gen_record_state(const config_t *c, char *path, size_t len);

/* Generate this rank's share of the dataset (files i = rank, rank+R, ... over train then valid, as DLIO). */
void generate(const layout_t *L, int rank, int nranks, gen_result_t *out);
/* keep-files=false: delete exactly the files this run created, then the folders it created if empty. */
void cleanup_generated(const layout_t *L, gen_result_t *g, int rank);
void gen_result_free(gen_result_t *g);
#endif
