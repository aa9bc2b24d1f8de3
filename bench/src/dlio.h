/* Everything the kernel knows about DLIO releases, in one place (dlio.c): the entry table (one entry per release,
 * each choice with the DLIO source lines it comes from), the workload keys only some releases read, and version
 * order. The harness asks this table (`h5dlio --dlio-entries`) instead of keeping its own. */
#ifndef H5DLIO_DLIO_H
#define H5DLIO_DLIO_H
#include <hdf5.h>
#include <stddef.h>

/* DLIO-release-specific choices of the kernel. Supporting the next release = one new entry in DLIO_ENTRIES[]
 * (dlio.c); a new behaviour = a new field here, used in one place (gen.c, reader.c, run.c); an unknown release uses
 * the nearest entry. */
typedef struct {
    const char *version;      /* release, or `git describe` past a tag without its hash: "2.0.1-17" */
    const char *since;        /* first DLIO revision whose HDF5 I/O this entry describes (nearest-entry range) */
    const char *source;       /* the DLIO source the entry was derived from */
    const char *commit;       /* its full git commit: the revision output.json's comparability names (coreconfig.c) */
    H5F_libver_t libver_low;  /* h5py.File(libver=...) low bound used by DLIO's generator */
    int track_times;          /* dataset creation/modification times recorded */
    int indexed_records;      /* samples datasets named <records>_<k>, k < num-dset-per-record (else <records>) */
    int sampler_shuffles;     /* PyTorch path: sample_shuffle changes the read order */
    int cap_checked_on_fetch; /* the step cap is checked after a batch is fetched (one more batch loaded) */
    int trim_files_to_steps;  /* initialize() trims the file counts to multiples of samples x batch x ranks */
    int slice_clamped;        /* PyTorch path: the index map clamps a rank's slice of ceil(T/R) samples at T (else
                               * the ranks whose slice passes T raise IndexError and the others wait forever) */
    int checkpoint_rules;     /* the kernel writes this release's checkpoints (1: 2.0.0's; 2: 2.0.0-52's; 3: 3.x's
                               * streamed raw bytes; 0: refused) */
    const char *file_ext;     /* DLIO names files <prefix>_<i>_of_<N>.<ext> */
    /* MLCommons DLIO 3.x's rules (issue 13). An entry whose values the kernel cannot replay yet is refused by
     * dlio_entry_unsupported() with the rule named. */
    const char *sample_read;   /* "h5py": one h5py.File open per sample, reading its records; "whole_file": one POSIX
                               * open + read of the whole file per sample, no HDF5 library call */
    const char *file_sharding; /* "index_slice": every rank lists every file and reads its slice of the global sample
                                * index; "round_robin": rank r keeps files r, r+R, ... trimmed to floor(N/R) */
    int file_reshuffle;        /* file_shuffle on: the ranks' file lists are reshuffled across ranks every epoch */
    int prewarm;               /* one batch is read before each epoch and after the last (the loader's pre-warm) */
    int gen_seed_per_rank;     /* generation's size RNG is seeded 10 + rank (else 10 on every rank) */
    int auto_read_threads;     /* read_threads 1 becomes min(CPUs // ranks per node, DLIO_MAX_AUTO_THREADS or 8)
                                * reader processes when that is > 1 (autoread.c) */
    const char *checkpoint_stream; /* how PyTorch checkpoint files are written: "torch_save" (torch.save of real
                                    * tensors), "simple_streaming" (DLIO 3.x's SimpleStreamingCheckpointing: raw zero
                                    * bytes), "mlpstorage_streaming" (MLCommons' mlpstorage StreamingCheckpointing,
                                    * MLPerf v3.0: random bytes, fadvise, 4 reader threads; ckpt.c mlps_save/load) */
    const char *unsupported; /* NULL: the kernel replays this entry; else the rules it cannot replay yet (a run with
                               * the entry is refused by config_validate naming them; --dlio-entries still lists it) */
} dlio_entry_t;

/* The entry of exactly this version, or NULL. */
const dlio_entry_t *dlio_entry(const char *version);
/* The entry for a version: exact, else the nearest (the newest entry whose `since` is not after the version; the
 * oldest entry before every `since`), *nearest set to 1. NULL if the version is not a version string. */
const dlio_entry_t *dlio_entry_resolve(const char *version, int *nearest);
/* Version order (numeric, then the commit count past the tag); -2 if either is not a version string. */
int dlio_version_cmp(const char *a, const char *b);
/* The warning a nearest-entry fallback prints (stderr, output.json, --dlio-entries). */
void dlio_nearest_warning(char *out, size_t len, const char *version, const dlio_entry_t *e);
/* "2.0.0, 2.0.1, ..." (static buffer) */
const char *dlio_entry_list(void);

/* A DLIO workload key read only by some releases: DLIO reads `yaml` in releases [since, until) (NULL: open) and
 * silently ignores it in the others; the kernel does the same, with a warning. It sets the option `opt`. A branch off
 * the main line is not ordered by its number: `also` names entries that read the key outside the range, `except`
 * entries inside it that do not (comma-separated entry versions, NULL: none). */
typedef struct {
    const char *yaml, *opt, *since, *until, *note, *also, *except;
} dlio_key_t;
extern const dlio_key_t DLIO_KEYS[];
extern const size_t NDLIO_KEYS;
const dlio_key_t *dlio_key(const char *yaml); /* NULL: not a release-specific key */
int dlio_key_read_by(const dlio_key_t *k, const dlio_entry_t *e);
/* The YAML name entry e reads for option opt among the release-specific keys (NULL: none). */
const char *dlio_key_name(const char *opt, const dlio_entry_t *e);

/* JSON (caller frees): {"entries": [...], "versioned_keys": [...]}, and when `selected` is not NULL a "selected"
 * object: the version asked, the entry used, whether it is a nearest-entry fallback and its warning, and for each
 * option with release-specific keys the name that entry reads. */
char *dlio_entries_json(const dlio_entry_t *selected, const char *version, int nearest, const char *warning);
#endif
