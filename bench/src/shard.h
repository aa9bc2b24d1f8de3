/* MLCommons DLIO 3.x's file sharding (entries with file_sharding "round_robin"): rank 0 lists the files, rank r
 * keeps files r, r+R, ... trimmed to floor(N/R) (main.py:256-260, :274-278, :478-484 at f6796ed), and with
 * file_reshuffle every reconfigure(epoch) reshards them (utils/config.py:1067-1110): each rank shuffles its list after
 * np.random.seed(seed + epoch) (seed without seed_change_epoch), deals it round-robin into buckets (i + rank) % R,
 * the buckets go to their ranks by alltoall (received in source-rank order), and each rank shuffles what it received
 * after np.random.seed(seed + epoch + 31 * rank). Every rank computes every rank's list (no communication): the
 * result of the alltoall is determined by the lists, which every rank knows. */
#ifndef H5DLIO_SHARD_H
#define H5DLIO_SHARD_H
#include <stdint.h>

typedef struct {
    int nranks;
    int64_t per_rank; /* floor(N/R): files each rank holds */
    int64_t *lists;   /* nranks x per_rank: rank q's files (global file indices) in order */
    int64_t *tmp;     /* the same size: the exchange */
    int64_t epoch;    /* the epoch the lists were last reconfigured for (0: the initial listing) */
} shard_t;

/* The initial listing of nfiles files over nranks ranks: rank q holds listing positions q, q+R, ..., per_rank of
 * them. subfolders > 1: rank 0 lists the sub-folders sorted and the whole listing sorted by path (main.py:371-419 at
 * f6796ed), file i living in sub-folder i mod S: position p holds the files of sub-folder 0 in index order, then
 * sub-folder 1's, ... (flat, or S <= 1: file p). */
void shard_init(shard_t *s, int64_t nfiles, int nranks, int64_t subfolders);
/* The file at listing position p of nfiles files in S sub-folders (as above). */
int64_t shard_listing_file(int64_t p, int64_t nfiles, int64_t subfolders);
/* One reconfigure(epoch): the alltoall reshard of every rank's list (seed_change_epoch: the first shuffle's seed is
 * seed + epoch, else seed; the local shuffle's is seed + epoch + 31 x rank). */
void shard_reshuffle(shard_t *s, int64_t epoch, uint32_t seed, int seed_change_epoch);
/* Rank q's list: s->lists + q * s->per_rank */
static inline const int64_t *shard_list(const shard_t *s, int q) { return s->lists + (int64_t)q * s->per_rank; }
void shard_free(shard_t *s);
#endif
