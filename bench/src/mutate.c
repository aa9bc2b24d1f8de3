/* The mutants' table (mutate.h). Hooks live where each divergence belongs; nothing here runs in a normal run. */
#include "mutate.h"
#include "util.h"
#include <string.h>

#define READS "counts.kernel.* logvfd.* dftracer.per_file darshan.per_file"
/* which file each process of a rank opened, in order (DFTracer's opens by name) */
#define ORDER "dftracer.order.*"

// clang-format off: a table, kept as written
const mutant_t MUTANTS[MUT_COUNT] = {
    [MUT_NONE] = {"", "", "", ""},
    [MUT_SKIP_READ] = {"skip-read", "rank 0 does not read the first sample of its 2nd training batch of epoch 1", READS,
                       "pytorch tf"},
    [MUT_EXTRA_READ] = {"extra-read", "rank 0 reads the first sample of its 2nd training batch of epoch 1 twice", READS,
                        "pytorch tf"},
    [MUT_SWAP_SAMPLES] = {"swap-samples",
                          "rank 0 reads the first two samples of its 2nd training batch of epoch 1 in swapped order",
                          "logvfd.sequence.*", "pytorch tf"},
    [MUT_SWAP_BATCHES] = {"swap-batches",
                          "rank 0 reads the samples of its 1st and 2nd training batches of epoch 1 in "
                          "swapped order (each batch's samples in their own order)",
                          "logvfd.sequence.*", "pytorch tf"},
    [MUT_TF_PADDING] = {"tf-padding",
                        "rank 0's last batch of each TF reader thread in epoch 1 has one padding slot "
                        "that reads (the batch's first sample again) instead of reading nothing (DLIO pads with the "
                        "resized image; the tiny TF workloads have no partial batch, so this adds one)",
                        READS, "tf"},
    [MUT_EVAL_STEP] = {"eval-step-dropped",
                       "rank 0 takes one evaluation step fewer in epoch 1 (its last batch is not "
                       "read)",
                       READS, "tf-eval"},
    [MUT_RANK_SEED] = {"rank-seed",
                       "the last rank shuffles with random_seed + 1 (its sampler, the TF file and "
                       "sample lists, DLIO 3.x's file reshard)",
                       READS " dftracer.order.*", "pytorch tf fixed-size dlio3 dlio3-jpeg"},
    [MUT_PREWARM_DROP] = {"prewarm-dropped",
                          "rank 0 skips the reads of DLIO 3.x's loader pre-warm before epoch 1 "
                          "(the barrier is kept)",
                          "counts.dftracer.* dftracer.per_file dftracer.batches.*", "dlio3 dlio3-jpeg"},
    [MUT_READ_OFFSET] = {"read-offset",
                         "rank 0's 2nd sample read selects from one element further into the sample: "
                         "its first byte read at offset + 1, one row element fewer",
                         READS, "pytorch tf"},
    [MUT_EXTRA_OPEN] = {"extra-open",
                        "before rank 0's 2nd sample read its data file is opened and closed once more "
                        "through HDF5 (nothing read but what H5Fopen reads)",
                        READS, "pytorch tf"},
    [MUT_DATA_WRITE] = {"data-write",
                        "after its first training epoch rank 0 creates h5dlio-mutant.tmp in the training "
                        "data folder and writes one byte to it",
                        "dftracer.explained dftracer.per_file dataset.files darshan.explained", "pytorch tf"},
    [MUT_CWD_WRITE] =
        {"cwd-write",
         "after its first training epoch rank 0 creates h5dlio-mutant.tmp in its working "
         "directory (the launch's folder) and writes one byte to it: I/O outside the data, checkpoint and "
         "output folders",
         "dftracer.explained darshan.explained", "pytorch checkpoint"},
    [MUT_DATA_STAT] = {"data-stat",
                       "after its first training epoch rank 0 calls stat(2) on training file 0 once: a "
                       "call on a data file outside the compared reads (DFTracer's tables explain a data file's "
                       "stat as a status probe: the system calls compare it)",
                       "strace.per_file", "pytorch checkpoint"},
    [MUT_GEN_CHUNK] = {"gen-chunk",
                       "training file 0 is generated with another chunk shape (one chunk per sample "
                       "where DLIO writes it contiguous; else half the chunk's last dimension)",
                       "dataset.structure", "pytorch tf checkpoint"},
    [MUT_GEN_DIMS] = {"gen-dims", "training file 0 is generated with its samples' last dimension one larger",
                      "dataset.structure", "pytorch tf"},
    [MUT_CKPT_STRAY] = {"ckpt-stray",
                        "after rank 0's first checkpoint file, a 1-byte file h5dlio-mutant.stray is "
                        "written into the checkpoint folder",
                        "counts.checkpoints dftracer.checkpoints darshan.checkpoints", "checkpoint"},
    [MUT_CKPT_SHORT] = {"ckpt-short",
                        "rank 0's first checkpoint file is written one byte short (its zip end record "
                        "without its last byte)",
                        "counts.checkpoints dftracer.checkpoints darshan.checkpoints", "checkpoint"},
    [MUT_CKPT_SPLIT] = {"ckpt-split",
                        "the first write(2) of rank 0's first checkpoint file is split in two calls "
                        "(same bytes, same offsets)",
                        "dftracer.checkpoints darshan.checkpoints", "checkpoint"},
    [MUT_CKPT_FSYNC] = {"ckpt-fsync",
                        "rank 0 fsyncs its first checkpoint file before the close (DLIO 2.0.0 never "
                        "fsyncs a checkpoint)",
                        "dftracer.checkpoints darshan.checkpoints", "checkpoint"},
    [MUT_ASYNC_LOST_READ] = {"async-lost-read",
                             "with vol-async-prefetch, rank 0's 2nd sample read is never put into "
                             "its batch's event set, though it is counted as read (the kernel's counts do not change; "
                             "only a trace of the reads sees it)",
                             "logvfd.sequence.rt0.rank0 counts.kernel.logvfd-rt0.rank0", "async"},
    [MUT_COMPUTE_SKIP] = {"skip-compute",
                          "rank 0 skips the emulated computation of its 2nd training step of epoch 1 (its I/O "
                          "unchanged; the AU and throughput it reports move)",
                          "compute.rank0 metrics.formula.kernel", "pytorch fixed-size dlio3-jpeg"},
    [MUT_NO_SHUFFLE] = {"no-shuffle",
                        "every rank reads its samples unshuffled (its sampler's order as listed, every epoch; DLIO "
                        "3.x: no file reshard)",
                        ORDER, "pytorch fixed-size dlio3 dlio3-jpeg"},
    [MUT_EPOCH_SEED] = {"epoch-seed",
                        "every rank's training shuffle of epoch 2 is seeded with random_seed + 1 (epoch 1 as "
                        "DLIO's; DLIO 3.x: the file reshard to epoch 2, which its pre-warm after epoch 1 reads)",
                        ORDER, "pytorch fixed-size dlio3 dlio3-jpeg"},
    [MUT_SWAP_SLICES] = {"swap-rank-slices",
                         "ranks 0 and 1 take each other's slice of the sampler or DLIO 3.x's file shard (each "
                         "reads what the other rank reads in DLIO, in that rank's order)",
                         ORDER, "pytorch fixed-size dlio3 dlio3-jpeg"},
    [MUT_WRONG_FILE] = {"wrong-file",
                        "rank 0's 2nd training batch of epoch 1 reads, in place of its first sample, the same "
                        "sample of the next file (a file of the same size on a fixed-size workload)",
                        ORDER " dftracer.per_file darshan.per_file", "pytorch fixed-size dlio3 dlio3-jpeg"},
    [MUT_GEN_RENAME] = {"gen-rename",
                        "training file 0 is generated the old way, as <name>.partial.<pid> then renamed (an unlink "
                        "and a rename DLIO does not make), while the output still says generate mode in_place",
                        "strace.generate", "pytorch"},
    [MUT_COMPRESSION] = {"compression-level",
                         "training file 0 is generated with another gzip level (the workload's level % 9 + 1; a "
                         "workload without compression: gzip level 1 on one chunk per sample)",
                         "dataset.structure", "pytorch"},
    /* the system calls only strace sees (DFTracer records no readv and drops open flags) */
    [MUT_ODIRECT_DROP] = {"odirect-dropped",
                          "rank 0's 2nd sample read (reader.odirect: npz read whole) opens its file without O_DIRECT: "
                          "the same stat, readv and bytes, through the page cache",
                          "strace.per_file", "dlio3"},
    [MUT_READV_SIZE] =
        {"readv-size",
         "rank 0's 2nd sample read (reader.odirect) asks readv for 4096 bytes more than DLIO (the file's "
         "size rounded up to 4096, plus 4096): the same bytes returned",
         "strace.per_file", "dlio3"},
    [MUT_FSYNC_DROP] = {"fsync-dropped",
                        "rank 0's first checkpoint file of a 3.x stream is closed without its fsync (the kernel "
                        "still counts it, as behind a preloaded no-op fsync)",
                        "strace.per_file dftracer.checkpoints counts.checkpoint_io.kernel",
                        "dlio3-checkpoint dlio3-mlps"},
    [MUT_FADVISE_DROP] = {"fadvise-dropped",
                          "rank 0's first checkpoint file written through mlpstorage's stream makes none of its "
                          "posix_fadvise(DONTNEED) calls (one per chunk written)",
                          "strace.per_file dftracer.checkpoints counts.checkpoint_io.kernel", "dlio3-mlps"},
    [MUT_DISC_STAT_ALL] = {"discovery-stat-all",
                           "after DLIO's discovery (its listings and probe) rank 0 also stats every data file "
                           "of each enabled phase before its first open (the kernel's check before it discovered "
                           "as DLIO does)",
                           "strace.discovery", "pytorch fixed-size dlio3 dlio3-jpeg"},
};
// clang-format on

int mutant_lookup(const char *name)
{
    if (!name || !*name)
        return MUT_NONE;
    for (int i = 1; i < MUT_COUNT; i++)
        if (!strcmp(MUTANTS[i].name, name))
            return i;
    return -1;
}

char *mutants_json(void)
{
    sb_t b = {0};
    sb_printf(&b, "[");
    for (int i = 1; i < MUT_COUNT; i++) {
        sb_printf(&b, "%s\n {\"name\": ", i > 1 ? "," : "");
        sb_json_str(&b, MUTANTS[i].name);
        sb_printf(&b, ", \"what\": ");
        sb_json_str(&b, MUTANTS[i].what);
        sb_printf(&b, ", \"checks\": ");
        sb_json_str(&b, MUTANTS[i].checks);
        sb_printf(&b, ", \"families\": ");
        sb_json_str(&b, MUTANTS[i].families);
        sb_printf(&b, "}");
    }
    sb_printf(&b, "\n]\n");
    return b.s;
}
