/* Validation: the rules a resolved configuration must pass before any I/O (config_validate), and the rank-count
 * notes and file counts they share with the run. */
#include "config_int.h"
#include "npz.h"
#include "mutate.h"
#include "tree.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hdf5.h>
#include "dlio.h"
#include "tfsplit.h"
#include "util.h"
#include "torchsave.h"

static int64_t dim_of(int64_t record_length) { return (int64_t)sqrt((double)record_length); }

/* One phase of DLIO 2.0.0's TF path: the shapes DLIO raises on (always) and those whose reads the kernel does not
 * emulate (reads: the phase is read). */
static int config_validate_tf_phase(const config_t *c, int phase, int nranks, int reads, char *err)
{
    const phase_cfg_t p = config_phase(c, phase);
    int64_t total = p.num_files * c->num_samples_per_file;
    tf_split_t s = tf_split(total, nranks, c->read_threads);
    if (s.spt < 1)
        return fail(
            err,
            "key 'read-threads': %lld reader threads for %lld %s samples per rank: DLIO 2.0.0 raises "
            "ZeroDivisionError (utils/config.py:323 samples_per_thread = %lld // %lld = 0, divided by at :342%s); "
            "use at most %lld threads",
            (long long)s.nt, (long long)s.spp, p.what, (long long)s.spp, (long long)s.nt,
            phase == PH_EVAL ? ", building the evaluation map even with evaluation off" : "", (long long)s.spp);
    if (!reads)
        return 0;
    /* reader/reader_handler.py:96-99: at a thread's last sample `while len(batch) is not self.batch_size` pads the
     * batch; `is` compares int objects and CPython shares only those up to 256, so above 256 it never ends */
    if (p.batch_size > 256)
        return fail(err,
                    "key '%s': %lld on DLIO 2.0.0's tf.data path: at each reader thread's last sample DLIO pads "
                    "with `while len(batch) is not self.batch_size` (reader/reader_handler.py:98), an identity test "
                    "that never holds for counts above 256, and appends until memory runs out (measured: resnet50 at "
                    "batch 400, DLIO killed by the OOM killer at 12.7 GB); use at most 256",
                    p.batch_key, (long long)p.batch_size);
    /* Several tf.data threads of a rank reading the same file share it: they run in one process, where HDF5 opens a
     * file once (H5F's shared file struct) and h5py's lock orders the calls, so how many opens, and which metadata
     * reads, depend on the threads' timing (measured: resnet50-like 4 files x 64 samples, 8 threads: fewer opens and
     * metadata reads than the per-thread rule). The kernel's reader processes cannot share a file: refused. */
    if (s.nt > 1) {
        int64_t F = p.num_files, spf = c->num_samples_per_file, fpr = (F / nranks) % F, clash = -1, at = 0;
        int32_t *owner = malloc((size_t)F * sizeof *owner);
        if (!owner)
            return fail(err, "out of memory checking %lld files", (long long)F);
        for (int64_t i = 0; i < F; i++) owner[i] = -1;
        for (int r = 0; r < nranks && clash < 0; r++) {
            for (int64_t k = 0; k < s.spp && clash < 0; k++) { /* utils/config.py:337-348 */
                int64_t f = k == 0 ? (int64_t)r * fpr : (k / spf) % F, t = tf_thread_of(&s, k);
                if (owner[f] >= 0 && owner[f] != t)
                    clash = f, at = r;
                owner[f] = (int32_t)t;
            }
            for (int64_t k = 0; k < s.spp; k++) owner[k == 0 ? (int64_t)r * fpr : (k / spf) % F] = -1;
        }
        free(owner);
        if (clash >= 0)
            return fail(err,
                        "key 'read-threads': %lld tf.data threads of rank %d would read %s file %lld together (%lld "
                        "samples per file, %lld per thread): DLIO's threads share an open HDF5 file inside one "
                        "process, with opens and metadata reads that depend on their timing; not emulated (use "
                        "samples per thread that are a multiple of samples per file, or read-threads 0 or 1)",
                        (long long)s.nt, at, p.what, (long long)clash, (long long)spf, (long long)s.spt);
    }
    int64_t batches = tf_batches(&s, p.batch_size);
    /* main.py:252 max_steps and :287 the break (training); :224 total and :239 the break (evaluation) */
    int64_t steps = total / p.batch_size / nranks;
    int capped = phase == PH_TRAIN && c->total_training_steps > 0 && c->total_training_steps < steps;
    if (capped)
        steps = c->total_training_steps;
    if (steps < 1)
        steps = 1;
    if (steps < batches)
        return fail(
            err,
            "key '%s': each rank's tf.data %s pipeline yields %lld batches (%lld reader thread(s) of ~%lld "
            "samples, each padding its last batch: reader/reader_handler.py:96-99) but DLIO takes %lld steps "
            "(main.py:%s): the batches past the last step are read ahead by tf.data's prefetch and "
            "interleave buffers, as far as timing lets them (measured on DLIO 2.0.0, 1 thread, batch 1, 3 steps: "
            "5 samples more were read), which the kernel does not emulate; choose a shape whose batches per "
            "rank equal its steps",
            capped ? "total-training-steps" : p.batch_key, p.what, (long long)batches, (long long)s.nt,
            (long long)s.spt, (long long)steps, phase == PH_TRAIN ? "252, :287" : "224, :239");
    return 0;
}

/* DLIO 2.0.0's TensorFlow loader (framework: tensorflow, reader.data_loader: tensorflow): what it does with a shape,
 * and what the kernel emulates of it. Everything refused here says why. */
static int config_validate_tf(const config_t *c, const dlio_entry_t *e, int nranks, int ranks_known, char *err)
{
    static const char *NAMES[] = {"pytorch", "tensorflow"};
    if (c->framework != c->data_loader)
        return fail(err,
                    "key 'framework': %s with reader.data_loader %s: DLIO refuses the pair (\"Imcompatible between "
                    "framework and data_loader setup\", utils/config.py:211-213)",
                    NAMES[c->framework], NAMES[c->data_loader]);
    if (c->data_loader != LOADER_TENSORFLOW)
        return 0;
    if (strcmp(e->version, "2.0.0"))
        return fail(err,
                    "key 'data-loader': tensorflow is emulated for DLIO 2.0.0 only (its build_sample_map_iter, "
                    "utils/config.py:317-349, and tf.data loader); entry %s's differs (2.0.0-52 clamps the slice)",
                    e->version);
    if (c->ordering != ORDER_DLIO)
        return fail(err, "key 'ordering': the tensorflow loader has DLIO's order only (ordering=dlio)");
    if (c->subfiling || c->collective_data || c->collective_meta)
        return fail(err, "key 'data-loader': tensorflow with an MPI-IO mode: DLIO's tf.data threads read through h5py "
                         "independently; not emulated");
    if (!c->train || !ranks_known) /* the rest depends on the rank count: checked once it is known */
        return 0;
    /* reconfigure() builds both maps whenever DLIO trains, evaluation on or off (utils/config.py:378-380): the
     * evaluation map's ZeroDivisionError is DLIO's too; its reads are checked only when evaluation runs */
    if (config_validate_tf_phase(c, PH_TRAIN, nranks, 1, err) ||
        (c->num_files_eval > 0 && config_validate_tf_phase(c, PH_EVAL, nranks, c->evaluation, err)))
        return -1;
    return 0;
}

/* DLIO 2.0.0-52's checkpoint rules (392621b): its utils/config.py:284-304 validate(), and what its checkpointing
 * cannot do (the shapes it raises on are refused, naming the line). */
/* DLIO 2.0.0-52's checks (392621b utils/config.py:284-302, the line numbers cited); 3.x (rules 3) makes the same ones at
 * f6796ed utils/config.py:452-470, and reads back what 2.0.0-52 cannot (its load_state takes no fsync argument) */
/* The checkpoint shape and parallelism DLIO accepts (utils/config.py:284-302) */
static int ckpt2_shape(const config_t *c, int nranks, int ranks_known, char *err)
{
    const char *dts[3][2] = {{"model-datatype", c->model_datatype}, {"optimizer-datatype", c->optimizer_datatype}};
    for (int i = 0; i < 2; i++)
        if (ts_dtype_parse(dts[i][1]) < 0)
            return fail(err,
                        "key '%s': '%s' is not int8, uint8, fp16, bf16, fp32 or fp64 (base_checkpointing.py:33-43)",
                        dts[i][0], dts[i][1]);
    int subset = !strcmp(c->checkpoint_mode, "subset");
    if (!subset && strcmp(c->checkpoint_mode, "default"))
        return fail(err, "key 'checkpoint-mode': '%s' is not default or subset", c->checkpoint_mode);
    int64_t tp = c->tensor_parallelism, pp = c->pipeline_parallelism, mp = tp * pp;
    if (c->num_layers > 0 && c->num_layers < pp)
        return fail(err,
                    "key 'num-layers': %lld is smaller than pipeline-parallelism %lld (DLIO refuses it: "
                    "utils/config.py:284-287)",
                    (long long)c->num_layers, (long long)pp);
    if (pp > 1 && c->zero_stage == 3)
        return fail(err,
                    "key 'zero-stage': ZeRO stage 3 with pipeline-parallelism %lld (DLIO refuses it: "
                    "utils/config.py:288-289)",
                    (long long)pp);
    if (c->data_parallelism > 0 && !subset)
        return fail(err, "key 'data-parallelism': set only in checkpoint-mode subset (DLIO refuses it: "
                         "utils/config.py:290-291)");
    if (subset && c->data_parallelism <= 0)
        return fail(err, "key 'data-parallelism': checkpoint-mode subset needs it (utils/config.py:292-294)");
    if (ranks_known && subset && c->data_parallelism * mp < nranks)
        return fail(err,
                    "key 'data-parallelism': %d ranks are more than data x tensor x pipeline = %lld "
                    "(utils/config.py:295-296)",
                    nranks, (long long)(c->data_parallelism * mp));
    if (ranks_known && !subset && nranks % mp)
        return fail(err,
                    "key 'tensor-parallelism': %d ranks are not a multiple of tensor x pipeline = %lld "
                    "(utils/config.py:297-299)",
                    nranks, (long long)mp);
    if (c->num_checkpoints_write > 0 && c->num_checkpoints_read > c->num_checkpoints_write)
        return fail(err,
                    "key 'num-checkpoints-read': %lld is more than num-checkpoints-write %lld (DLIO refuses it: "
                    "utils/config.py:300-302)",
                    (long long)c->num_checkpoints_read, (long long)c->num_checkpoints_write);
    return 0;
}

/* What the kernel replays of a checkpointing run (the release's rules): the model, the workflow, the reads */
static int ckpt2_replayed(const config_t *c, int rules, char *err)
{
    int64_t pp = c->pipeline_parallelism;
    if (c->num_attention_heads < 1 || c->hidden_size < 1)
        return fail(err, "key 'num-attention-heads': must be >= 1");
    if (c->n_layer_parameters > 0 && c->num_layers > 0)
        return fail(err, "key 'layer-parameters': DLIO 2.0.0-52 shares one dict of tensors between all layers "
                         "(base_checkpointing.py:113-119): a pickle of shared objects is not emulated; use the "
                         "transformer keys (hidden-size, ...)");
    if (c->train && (c->num_checkpoints_write > 0 || c->num_checkpoints_read > 0))
        return fail(err, "key 'num-checkpoints-write': read only without training (DLIO's checkpoint-only workflow, "
                         "main.py:257-268); with train on, checkpoints follow checkpoint-after-epoch/steps");
    int model_state = c->model_size > 0 && strcmp(c->model_type, "transformer");
    int reads = !c->train && c->num_checkpoints_read > 0 && rules == 2;
    if (rules == 3 && c->train)
        return fail(err, "key 'train': DLIO 3.x's checkpoints during training (main.py:632-658) are not replayed yet; "
                         "its checkpoint-only workflow (workflow.train false, main.py:542-597) is");
    if (rules == 3 && !c->train && c->num_checkpoints_read > 0 && c->num_layers > 0 && c->zero_stage == 0 && pp > 1)
        return fail(err, "key 'num-checkpoints-read': DLIO 3.x asserts pipeline-parallelism 1 when it reads ZeRO "
                         "stage 0 checkpoints (base_checkpointing.py:449)");
    if (reads && model_state)
        return fail(err,
                    "key 'num-checkpoints-read': DLIO 2.0.0-52 cannot read the model_states file it writes for a "
                    "non-transformer model: load_state() takes no fsync argument (base_checkpointing.py:434, "
                    "pytorch_checkpointing.py:140: TypeError). Set model-type transformer, model-size 0, or no reads");
    if (reads && c->num_layers > 0 && c->zero_stage > 0 && c->zero_stage < 3 && pp == 1)
        return fail(err,
                    "key 'num-checkpoints-read': DLIO 2.0.0-52 cannot read ZeRO stage %lld checkpoints without "
                    "pipeline parallelism: load_state() takes no fsync argument (base_checkpointing.py:446, "
                    "pytorch_checkpointing.py:140: TypeError)",
                    (long long)c->zero_stage);
    if (reads && c->num_layers > 0 && c->zero_stage == 0 && pp > 1)
        return fail(err, "key 'num-checkpoints-read': DLIO 2.0.0-52 asserts pipeline-parallelism 1 when it reads ZeRO "
                         "stage 0 checkpoints (base_checkpointing.py:449)");
    if (strlen(c->checkpoint_folder) + 200 > 4095)
        return fail(err, "key 'checkpoint-folder': checkpoint paths would exceed 4095 characters");
    return 0;
}

static int ckpt2_validate(const config_t *c, int rules, int nranks, int ranks_known, char *err)
{
    if (ckpt2_shape(c, nranks, ranks_known, err))
        return -1;
    return c->checkpoint ? ckpt2_replayed(c, rules, err) : 0;
}

/* The kernel's checkpoint format keys (ckpth5.c): values, and what each needs */
static int ckpt_format_validate(const config_t *c, char *err)
{
    int hdf5 = !strcmp(c->checkpoint_format, "hdf5"), mpiio = strcmp(c->checkpoint_mpiio, "off") != 0;
    if (!hdf5 && strcmp(c->checkpoint_format, "torch"))
        return fail(err, "key 'checkpoint-format': '%s' is not torch or hdf5", c->checkpoint_format);
    if (mpiio && strcmp(c->checkpoint_mpiio, "independent") && strcmp(c->checkpoint_mpiio, "collective"))
        return fail(err, "key 'checkpoint-mpiio': '%s' is not off, independent or collective", c->checkpoint_mpiio);
    if (!hdf5 && (mpiio || c->checkpoint_subfiling))
        return fail(err,
                    "key '%s': only with checkpoint-format hdf5 (torch.save files are written with POSIX calls, as "
                    "DLIO writes them)",
                    mpiio ? "checkpoint-mpiio" : "checkpoint-subfiling");
    if (mpiio && c->checkpoint_subfiling)
        return fail(err,
                    "key 'checkpoint-subfiling': cannot be combined with checkpoint-mpiio %s (subfiling is its own "
                    "file driver)",
                    c->checkpoint_mpiio);
#ifndef H5_HAVE_SUBFILING_VFD
    if (c->checkpoint_subfiling)
        return fail(err,
                    "key 'checkpoint-subfiling': this HDF5 (%d.%d.%d) was built without the Subfiling VFD: build "
                    "HDF5 >= 1.14 with -DHDF5_ENABLE_PARALLEL=ON -DHDF5_ENABLE_SUBFILING_VFD=ON (HDF5_DIR=<prefix>)",
                    H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
#endif
    if (c->checkpoint_subfiling && c->checkpoint_fsync)
        return fail(err,
                    "key 'checkpoint-fsync': not with checkpoint-subfiling (the subfiles are written by HDF5's I/O "
                    "concentrators; the kernel cannot fsync them)");
    return 0;
}

static int validate(const config_t *c, int nranks, int ranks_known, char *err);
int config_validate(const config_t *c, int nranks, char *err) { return validate(c, nranks, 1, err); }
int config_validate_early(const config_t *c, char *err) { return validate(c, 1, 0, err); }

/* What runs, and a kernel entry for the DLIO release that replays it. */
static int check_workflow_and_entry(const config_t *c, char *err)
{
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    int ckpt_only = c->checkpoint && !c->train && e && e->checkpoint_rules >= 2;
    if (!c->generate_data && !c->train && !c->evaluation && !ckpt_only)
        return fail(err, "nothing to do: set generate-data, train or evaluation (workflow.*) to true");
    if (c->evaluation && !c->train)
        return fail(err, "key 'evaluation': evaluation runs after training epochs; set train=true too");
    if (e && e->unsupported)
        return fail(err, "key 'dlio-version': kernel entry %s (%s) is listed but not replayed yet: %s", e->version,
                    e->source, e->unsupported);
    if (!e)
        return fail(err, "key 'dlio-version': '%s' has no kernel entry (entries: %s)", c->dlio_version,
                    dlio_entry_list());
    return 0;
}

/* The records of a file: datasets per record and their dimensions, as the entry's DLIO writes them. */
static int check_records(const config_t *c, const dlio_entry_t *e, char *err)
{
    if (!e->indexed_records && c->num_dset_per_record > 1)
        return fail(err,
                    "key 'num-dset-per-record': DLIO %s writes one '%s' dataset per file (records_0.. and "
                    "dataset.hdf5.num_dset_per_record came with 2.0.1)",
                    e->version, c->records_dataset_name);
    if (!e->indexed_records && (c->nrecord_dims || c->nchunk_dims))
        return fail(err, "key '%s': a DLIO 2.0.1 key; DLIO %s does not read it",
                    c->nrecord_dims ? "record-dims" : "chunk-dims", e->version);
    if (c->num_dset_per_record > 1 && !c->nrecord_dims)
        return fail(err,
                    "key 'num-dset-per-record': %lld datasets per file need record-dims (dataset.record_dims): "
                    "DLIO %s's HDF5 generator fails without them (hdf5_generator.py:64 subscripts an integer "
                    "dimension)",
                    (long long)c->num_dset_per_record, e->version);
    if (c->nrecord_dims && c->record_dims[0] % c->num_dset_per_record)
        return fail(err,
                    "key 'record-dims': %lld is not divisible by num-dset-per-record %lld (DLIO refuses it: "
                    "utils/config.py:327-329 at v2.0.1)",
                    (long long)c->record_dims[0], (long long)c->num_dset_per_record);
    if (c->nrecord_dims && c->record_length_stdev > 0)
        return fail(err, "key 'record-dims': cannot be combined with record-length-stdev (DLIO refuses it: "
                         "utils/config.py:340-341 at v2.0.1)");
    if (c->nrecord_dims && c->record_dims[0] / c->num_dset_per_record == 1)
        return fail(err, "key 'record-dims': a first dimension of 1 per dataset makes DLIO write 2-D datasets "
                         "(hdf5_generator.py:66-67 at v2.0.1): not emulated");
    return 0;
}

/* The format itself: one the kernel does not write, or one this DLIO entry does not replay (the first reason a
 * workload is refused: config_load.c names it before an error in a key of the same file). */
int format_refusal(const char *format, const dlio_entry_t *e, char *err)
{
    if (strcmp(format, "hdf5") && strcmp(format, "npz") && strcmp(format, "jpeg") && strcmp(format, "png"))
        return fail(err,
                    "key 'dataset.format' (format): '%s' is not replayed: the kernel writes and reads hdf5, "
                    "and npz, jpeg, png for DLIO 3.x (entry 3.0.2)",
                    format);
    if (strcmp(format, "hdf5") && strcmp(e->sample_read, "whole_file"))
        return fail(err,
                    "key 'dataset.format' (format): %s is replayed for DLIO 3.x only (entries reading whole "
                    "files, 3.0.2): DLIO %s decodes %s files (np.load, PIL), which the kernel does not replay; its "
                    "HDF5 path is replayed (format hdf5)",
                    format, e->version, format);
    return 0;
}

/* The file format, DLIO 3.x's skip_listing and O_DIRECT, and what npz files can hold. */
static int check_format(const config_t *c, const dlio_entry_t *e, char *err)
{
    if (format_refusal(c->format, e, err))
        return -1;
    if (c->skip_listing && strcmp(e->file_sharding, "round_robin"))
        return fail(err,
                    "key 'skip-listing' (dataset.skip_listing): a DLIO 3.x key (main.py:280-305 at f6796ed); "
                    "DLIO %s lists the files",
                    e->version);
    /* main.py:294-298 pads sub-folder k to len(str(S - 1)) digits, the generator to len(str(S)) (data_generator.py
     * :325, :355): with S a power of 10 DLIO names files that are not there */
    if (c->skip_listing && c->num_subfolders_train > 1) {
        char a[32], b[32];
        if (snprintf(a, sizeof a, "%lld", (long long)c->num_subfolders_train) !=
            snprintf(b, sizeof b, "%lld", (long long)c->num_subfolders_train - 1))
            return fail(err,
                        "key 'skip-listing': with %lld sub-folders DLIO 3.x names sub-folder k with %d digits "
                        "(main.py:294-298) where its generator wrote %d (data_generator.py:325, :355): its files are "
                        "not found",
                        (long long)c->num_subfolders_train, (int)strlen(b), (int)strlen(a));
    }
    if (c->odirect && (strcmp(e->sample_read, "whole_file") || strcmp(c->format, "npz")))
        return fail(err,
                    "key 'odirect' (reader.odirect): replayed for DLIO 3.x's npz reader only (reader/"
                    "reader_factory.py:94-96 at f6796ed); DLIO's %s reader %s",
                    c->format,
                    strcmp(c->format, "npz") ? "refuses it (reader_factory.py:42-43, :68-69 at f6796ed)"
                                             : "with O_DIRECT is not replayed");
    if (strcmp(c->format, "hdf5")) { /* npz, jpeg, png: DLIO 3.x's generators (npz.c, image.c) */
        const char *bad = c->naming == NAMING_H5BENCH                                ? "naming"
                          : c->nrecord_dims                                          ? "record-dims"
                          : c->num_dset_per_record > 1                               ? "num-dset-per-record"
                          : c->chunking                                              ? "chunking"
                          : c->nchunk_dims                                           ? "chunk-dims"
                          : c->compression                                           ? "compression"
                          : c->subfiling                                             ? "subfiling"
                          : strcmp(c->format, "npz") && c->num_samples_per_file != 1 ? "num-samples-per-file"
                                                                                     : NULL;
        if (bad)
            return fail(err,
                        "key '%s': not with format %s (DLIO 3.x writes np.savez(x=(d1, d2, n) uint8, y=zeros) "
                        "uncompressed: npz_generator.py:88-101, and one d1 x d2 image of raw bytes per jpeg/png file "
                        "whatever num_samples_per_file: jpeg_generator.py:73-98)",
                        bad, c->format);
        int64_t d1 = dim_of(c->record_length);
        double big =
            (double)d1 +
            4.0 * (c->record_length_stdev > 0 ? (double)c->record_length_stdev / 2.0 / (double)(d1 > 0 ? d1 : 1) : 0.0);
        if (!strcmp(c->format, "npz") && big * big * (double)c->num_samples_per_file > (double)NPZ_MAX_FILE)
            return fail(err,
                        "key 'record-length': npz files of up to %.0f bytes (mean + 4 stdev): CPython's zipfile "
                        "writes zip64 central records past 2^31 - 1 bytes, which the kernel does not write",
                        big * big * (double)c->num_samples_per_file);
    }
    return 0;
}

/* Counts that must not overflow, plain names inside the data folder, sub-folders. */
static int check_sizes_and_names(const config_t *c, const dlio_entry_t *e, char *err)
{
    int64_t d = dim_of(c->record_length);
    if (d > 0 && (double)c->num_samples_per_file * (double)d * (double)d > 9.0e18)
        return fail(err, "key 'num-samples-per-file': %lld samples of %lld bytes overflow a 64-bit file size",
                    (long long)c->num_samples_per_file, (long long)(d * d));
    if ((double)c->num_files_train * (double)c->num_samples_per_file > 9.0e15 ||
        (double)c->num_files_eval * (double)c->num_samples_per_file > 9.0e15)
        return fail(err, "key 'num-samples-per-file': total sample count overflows");
    /* names inside the data folder: plain names, so every file the kernel writes or deletes stays inside it */
    const char *names[3][2] = {{"file-prefix", c->file_prefix},
                               {"train-data-folder", c->train_data_folder},
                               {"valid-data-folder", c->valid_data_folder}};
    for (int k = 0; k < 3; k++)
        if (strchr(names[k][1], '/') || !strcmp(names[k][1], ".") || !strcmp(names[k][1], ".."))
            return fail(err,
                        "key '%s': '%s' must be a plain name (no '/', not '.' or '..'): files stay inside the "
                        "data folder",
                        names[k][0], names[k][1]);
    if (c->num_files_eval > 0 && (c->generate_data || c->evaluation) &&
        !strcmp(c->train_data_folder, c->valid_data_folder))
        return fail(err,
                    "key 'valid-data-folder': '%s' is also the train-data-folder: training and evaluation files "
                    "would share names",
                    c->valid_data_folder);
    if (c->generate_data && !strcmp(c->records_dataset_name, c->labels_dataset_name))
        return fail(err, "key 'labels-dataset-name': '%s' is also the records-dataset-name", c->labels_dataset_name);
    for (int ph = 0; ph < NPHASES; ph++) {
        phase_cfg_t p = config_phase(c, ph);
        if (!p.subfolders)
            continue;
        if (c->naming == NAMING_H5BENCH)
            return fail(err, "key '%s': h5bench's naming has no sub-folders (naming=dlio)", p.subfolders_key);
        if (strcmp(e->file_sharding, "index_slice") && ph != PH_TRAIN)
            return fail(err, "key '%s': DLIO %s's evaluation is not replayed", p.subfolders_key, e->version);
        /* data_generator.py:91 writes the files flat when n = 1; main.py:183-190 then sees a file, not a folder,
         * and fails assert (num_subfolders == 0) on every rank, whether it goes on to read or not (2.0.0) */
        /* DLIO 3.x likewise: data_generator.py:350-358 writes flat when n = 1, main.py:377-381 then globs
         * train/<each file>/ for *.<format> files and raises "Not enough dataset is found" (:469-472) */
        if (p.subfolders == 1 && p.num_files > 0)
            return fail(err,
                        "key '%s': 1 sub-folder: DLIO writes the %s files flat (data_generator/data_generator.py:91) "
                        "and then fails its own assertion num_subfolders == 0 on every rank (main.py:190 at 2.0.0); "
                        "use 0 (flat) or at least 2",
                        p.subfolders_key, p.what);
    }
    return 0;
}

/* Path lengths, and the layouts and file drivers this HDF5 can combine. */
static int check_paths_and_drivers(const config_t *c, char *err)
{
    size_t sub = strlen(c->train_data_folder) > strlen(c->valid_data_folder) ? strlen(c->train_data_folder)
                                                                             : strlen(c->valid_data_folder);
    if (strlen(c->data_folder) + sub + strlen(c->file_prefix) + 90 >
        4095) /* 90: /<sub-folder>/, _<i>_of_<N>.hdf5.partial.<pid> */
        return fail(err, "key 'data-folder': file paths would exceed 4095 characters (data-folder, sub-folders and "
                         "file-prefix are too long)");
    /* record-length-stdev > 0: per-file dimensions are drawn in sequence and kept (16 bytes per file per rank) */
    if (c->record_length_stdev > 0 && (double)c->num_files_train + (double)c->num_files_eval > 1e8)
        return fail(err, "key 'num-files-train': more than 10^8 files with record-length-stdev > 0 (their drawn "
                         "dimensions would take more than 1.6 GB per rank)");
    if (c->compression && !c->chunking && !c->nchunk_dims)
        return fail(err, "key 'compression': gzip needs a chunked layout: set chunking=true (DLIO >= 2.0.1: "
                         "chunk-dims); h5py's guessed chunk shape is not reproduced");
    if (c->subfiling && (c->collective_data || c->collective_meta))
        return fail(err, "key 'subfiling': cannot be combined with collective-meta/collective-data");
    if (c->subfiling && c->generation_atomic_rename && c->generate_data)
        return fail(err, "key 'generation-atomic-rename': the Subfiling VFD names its subfiles after the file, so a "
                         "file cannot be renamed into place: set generation-atomic-rename=false with subfiling");
#ifndef H5_HAVE_SUBFILING_VFD
    if (c->subfiling)
        return fail(err, "key 'subfiling': this HDF5 (%d.%d.%d) was built without the Subfiling VFD", H5_VERS_MAJOR,
                    H5_VERS_MINOR, H5_VERS_RELEASE);
#endif
#ifndef H5_HAVE_PARALLEL
    if (c->subfiling || c->collective_data || c->collective_meta)
        return fail(err, "key 'collective-data': this HDF5 was built without parallel (MPI-IO) support");
#endif
#if !H5_VERSION_GE(1, 14, 0)
    if (*c->vol_connector)
        return fail(err,
                    "key 'vol-connector': this HDF5 (%d.%d.%d) has no VOL layer the kernel can use (VOL connectors "
                    "need HDF5 >= 1.14 here): build with the project's HDF5 (make build, without HDF5_DIR)",
                    H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
#endif
    if (c->log_vfd && (c->subfiling || c->collective_data || c->collective_meta))
        return fail(err,
                    "key 'log-vfd': the Log VFD replaces the file driver; it cannot be combined with MPI-IO modes");
    return 0;
}

/* Checkpointing: the entry's rules, the model's layers and parallelism, the folder, the format. */
static int check_checkpoint(const config_t *c, const dlio_entry_t *e, int nranks, int ranks_known, char *err)
{
    if (e->checkpoint_rules >= 2 && ckpt2_validate(c, e->checkpoint_rules, nranks, ranks_known, err))
        return -1;
    /* utils/config.py:231-238 (2.0.0, validate(), checkpointing or not) */
    if (e->checkpoint_rules < 2 && (c->num_layers % c->pipeline_parallelism || c->num_layers % c->tensor_parallelism))
        return fail(
            err,
            "key 'num-layers': %lld is not a multiple of %s %lld (DLIO refuses it: utils/config.py:231-238 "
            "at 2.0.0)",
            (long long)c->num_layers,
            c->num_layers % c->pipeline_parallelism ? "pipeline-parallelism" : "tensor-parallelism",
            (long long)(c->num_layers % c->pipeline_parallelism ? c->pipeline_parallelism : c->tensor_parallelism));
    if (c->checkpoint && c->framework == LOADER_TENSORFLOW)
        return fail(
            err,
            "key 'checkpoint': DLIO's TensorFlow checkpoints (tf.train.Checkpoint, "
            "checkpointing/tf_checkpointing.py) are not emulated; the kernel writes PyTorch's (framework: pytorch)");
    if (c->checkpoint && !e->checkpoint_rules)
        return fail(err,
                    "key 'checkpoint': DLIO %s's checkpointing (transformer-sized states, one folder per "
                    "checkpoint, fsync, reads) is not emulated yet; DLIO 2.0.0's is (dlio-version=2.0.0)",
                    e->version);
    if (c->checkpoint && strlen(c->checkpoint_folder) + 120 > 4095)
        return fail(err, "key 'checkpoint-folder': checkpoint paths would exceed 4095 characters");
    if (ckpt_format_validate(c, err))
        return -1;
    return 0;
}

/* DLIO 3.x's round-robin file sharding: what of it is replayed. */
static int check_round_robin(const config_t *c, const dlio_entry_t *e, int nranks, int ranks_known, char *err)
{
    int rr = strcmp(e->file_sharding, "round_robin") == 0;
    if (rr && c->evaluation)
        return fail(err,
                    "key 'evaluation': DLIO %s's evaluation over round-robin sharded files (main.py _eval, "
                    "utils/config.py:1067-1110 for file_list_eval) is not replayed yet",
                    e->version);
    if (rr && (c->framework == LOADER_TENSORFLOW || c->data_loader == LOADER_TENSORFLOW))
        return fail(err, "key 'framework': DLIO %s's TensorFlow loader is not replayed (the PyTorch path is)",
                    e->version);
    if (rr && c->ordering != ORDER_DLIO)
        return fail(err, "key 'ordering': DLIO %s's round-robin file sharding is DLIO's ordering (ordering=dlio)",
                    e->version);
    if (rr && ranks_known && c->train && c->num_files_train / nranks * c->num_samples_per_file < c->batch_size)
        return fail(err,
                    "key 'num-files-train': DLIO %s gives each rank floor(%lld / %d) = %lld files (main.py:483-484): "
                    "%lld samples, fewer than a batch of %lld",
                    e->version, (long long)c->num_files_train, nranks, (long long)(c->num_files_train / nranks),
                    (long long)(c->num_files_train / nranks * c->num_samples_per_file), (long long)c->batch_size);
    return 0;
}

/* Each enabled phase: files, samples per rank, full batches, training steps. */
static int check_phases(const config_t *c, const dlio_entry_t *e, int nranks, char *err)
{
    int rr = strcmp(e->file_sharding, "round_robin") == 0;
    for (int ph = 0; ph < NPHASES; ph++) {
        phase_cfg_t p = config_phase(c, ph);
        if (!p.enabled)
            continue;
        if (p.num_files < 1)
            return fail(err, "key '%s': %s needs at least one file", p.files_key, p.what);
        int64_t used = config_files_used(c, e, ph, nranks);
        if (used < 1)
            return fail(err,
                        "key '%s': DLIO %s trims %lld %s files to a multiple of num-samples-per-file x %s x ranks "
                        "= %lld (main.py:%s), i.e. to none: it would read nothing",
                        p.files_key, e->version, (long long)p.num_files, p.what, p.batch_key,
                        (long long)(c->num_samples_per_file * p.batch_size * nranks), p.trim_lines);
        int64_t total = used * c->num_samples_per_file;
        if (total < nranks)
            return fail(err, "key '%s': %lld %s samples for %d ranks: every rank needs a sample", p.files_key,
                        (long long)total, p.what, nranks);
        int64_t per = c->ordering == ORDER_DLIO ? (total + nranks - 1) / nranks : total / nranks;
        if (p.batch_size > per)
            return fail(err, "key '%s': %lld is larger than the %lld samples of a rank (no full batch)", p.batch_key,
                        (long long)p.batch_size, (long long)per);
        if (ph != PH_TRAIN)
            continue;
        int64_t max_steps =
            rr ? used / nranks * c->num_samples_per_file / c->batch_size : total / c->batch_size / nranks;
        if (c->total_training_steps == 0)
            return fail(err, "key 'total-training-steps': must be -1 (all) or >= 1");
        if (c->total_training_steps > max_steps)
            return fail(err, "key 'total-training-steps': %lld wanted but the dataset has only %lld steps per epoch",
                        (long long)c->total_training_steps, (long long)max_steps);
    }
    return 0;
}

/* The rules, one group of a concern each, in the order they are checked: the first broken rule is the message. */
static int validate(const config_t *c, int nranks, int ranks_known, char *err)
{
    if (check_workflow_and_entry(c, err))
        return -1;
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    if (check_records(c, e, err) || check_format(c, e, err) || check_sizes_and_names(c, e, err) ||
        check_paths_and_drivers(c, err) || check_checkpoint(c, e, nranks, ranks_known, err))
        return -1;
    if (check_round_robin(c, e, nranks, ranks_known, err) || check_phases(c, e, nranks, err))
        return -1;
    return config_validate_tf(c, e, nranks, ranks_known, err);
}

/* DLIO's index map at R ranks: an entry that does not clamp a rank's slice of ceil(T/R) samples at T raises
 * IndexError on every rank whose slice passes T (the others wait forever at the first step's barrier). The kernel
 * clamps, as later DLIO releases do; this names the shape, what DLIO does with it and what the kernel does instead.
 * DLIO builds the evaluation map whenever the valid folder holds files, evaluation on or off: checked when
 * evaluating, and when this run generates evaluation files. */
void config_note_rank_shape(config_t *c, int nranks)
{
    const dlio_entry_t *e = dlio_entry(c->dlio_entry);
    if (!e || e->slice_clamped || c->ordering != ORDER_DLIO || !c->train || nranks < 2)
        return;
    for (int ph = 0; ph < NPHASES; ph++) {
        phase_cfg_t p = config_phase(c, ph);
        int64_t files = config_files_used(c, e, ph, nranks);
        /* evaluation off: DLIO still maps the valid folder's files, which exist when this run generates them */
        if (!p.enabled && !(c->generate_data && files > 0))
            continue;
        int64_t total = files * c->num_samples_per_file;
        if (total <= 0 || total % nranks == 0)
            continue;
        int64_t spp = (total + nranks - 1) / nranks, first = total / spp; /* rank r fails iff (r+1)*spp > T */
        int64_t reads_first = total - first * spp > 0 ? total - first * spp : 0;
        char ranks[64], instead[256];
        if (first == nranks - 1)
            snprintf(ranks, sizeof ranks, "rank %lld", (long long)first);
        else
            snprintf(ranks, sizeof ranks, "ranks %lld-%d", (long long)first, nranks - 1);
        if (p.enabled)
            snprintf(instead, sizeof instead,
                     "The kernel clamps instead (as DLIO 2.0.1 does): rank %lld reads %lld %s "
                     "samples%s.",
                     (long long)first, (long long)reads_first, p.what,
                     first < nranks - 1 ? ", the ranks after it none" : "");
        else
            snprintf(instead, sizeof instead,
                     "DLIO maps them with %s off, once this run has generated them; the "
                     "kernel does not read them.",
                     p.what);
        warn(c,
             "DLIO %s cannot run this at %d ranks: %lld %s samples (%lld file%s x %lld) are not a multiple of the "
             "ranks, so its index map (utils/config.py get_global_map_index) gives each rank ceil(%lld/%d) = %lld "
             "samples; %s, whose slice runs past the last sample (%lld), raise%s IndexError before the first step "
             "and the other ranks wait forever at its barrier. %s A rank count that divides %lld runs on both.",
             e->version, nranks, (long long)total, p.what, (long long)files, files == 1 ? "" : "s",
             (long long)c->num_samples_per_file, (long long)total, nranks, (long long)spp, ranks, (long long)total - 1,
             first == nranks - 1 ? "s" : "", instead, (long long)total);
    }
}

int64_t config_files_used(const config_t *c, const dlio_entry_t *e, int phase, int nranks)
{
    phase_cfg_t p = config_phase(c, phase);
    int64_t n = p.num_files;
    if (!e->trim_files_to_steps || !c->train || c->ordering == ORDER_H5BENCH)
        return n;
    /* main.py:230-246: samples_per_step = num_samples_per_file x batch x ranks; files // that x that */
    int64_t per = c->num_samples_per_file * p.batch_size * nranks;
    return per > 0 ? n / per * per : n;
}
