/* h5dlio: DLIO Benchmark's HDF5 I/O (generation, training and evaluation reads) without an ML stack. */
#define _GNU_SOURCE
#include "coreconfig.h"
#include "sha256.h"
#include "config.h"
#include "autoread.h"
#include "discover.h"
#include "gen.h"
#include "layout.h"
#include "mutate.h"
#include "reader.h"
#include "report.h"
#include "run.h"
#include "trace.h"
#include "util.h"
#include "prefetch.h"
#include "vol.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *config;
    char **sets; /* --set strings (argv's) and h5bench runner-form arguments as "key=value" (owned, in own[]) */
    char **own;
    int nsets, nown, entry, dry_run, help, version, dlio_entries, mutants, core_config, sha256;
    int dry_ranks; /* --ranks N: validate as for N ranks (--dry-run) */
    char argerr[CFG_ERRLEN];
} args_t;

static void parse_args(int argc, char **argv, args_t *a)
{
    memset(a, 0, sizeof *a);
    a->sets = xcalloc((size_t)argc + 1, sizeof *a->sets, "the argument list");
    a->own = xcalloc((size_t)argc + 1, sizeof *a->own, "the argument list");
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h"))
            a->help = 1;
        else if (!strcmp(s, "--version"))
            a->version = 1;
        else if (!strcmp(s, "--dry-run"))
            a->dry_run = 1;
        else if (!strcmp(s, "--dlio-entries"))
            a->dlio_entries = 1;
        else if (!strcmp(s, "--core-config"))
            a->core_config = 1;
        else if (!strcmp(s, "--sha256")) /* not in --help: SHA-256 of stdin, for its test vectors (sha256.h) */
            a->sha256 = 1;
        else if (!strcmp(s, "--mutants")) /* not in --help: the mutants' table, for `make mutants` (mutate.h) */
            a->mutants = 1;
        else if (!strcmp(s, "--ranks")) {
            char *end = NULL;
            long n = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (!end || *end || n < 1 || n > 1 << 24) {
                snprintf(a->argerr, sizeof a->argerr, "--ranks needs a rank count in [1, %d]", 1 << 24);
                return;
            }
            a->dry_ranks = (int)n, i++;
        } else if (!strcmp(s, "--entry")) {
            char *end = NULL;
            long n = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (!end || *end || n < 1 || n > 1 << 20) {
                snprintf(a->argerr, sizeof a->argerr, "--entry needs an entry number of 'benchmarks' (1, 2, ...)");
                return;
            }
            a->entry = (int)n, i++;
        } else if (!strcmp(s, "--log-vfd"))
            a->sets[a->nsets++] = "log-vfd=true";
        else if (!strcmp(s, "--config") || !strcmp(s, "--set")) {
            if (i + 1 >= argc) {
                snprintf(a->argerr, sizeof a->argerr, "%s needs a value", s);
                return;
            }
            if (!strcmp(s, "--config")) {
                if (a->config) {
                    snprintf(a->argerr, sizeof a->argerr, "--config given twice");
                    return;
                }
                a->config = argv[++i];
            } else
                a->sets[a->nsets++] = argv[++i];
        } else if (!strncmp(s, "--config=", 9))
            a->config = s + 9;
        else if (!strncmp(s, "--set=", 6))
            a->sets[a->nsets++] = (char *)s + 6;
        else { /* h5bench's runner form: --KEY VALUE, or a bare --KEY for its yes/no keys */
            char set[8300], err[CFG_ERRLEN];
            int used = config_runner_arg(argc, argv, i, set, sizeof set, err);
            if (used < 0) {
                memcpy(a->argerr, err, sizeof a->argerr);
                return;
            }
            if (*set)
                a->sets[a->nsets++] = a->own[a->nown++] = strcpy(xmalloc(strlen(set) + 1, "the argument list"), set);
            i += used - 1;
        }
    }
}

static void args_free(args_t *a)
{
    for (int i = 0; i < a->nown; i++) free(a->own[i]);
    free(a->own);
    free(a->sets);
}

/* Bad input found before or right after MPI_Init: every rank found the same thing; rank 0 says it once and all
 * ranks leave with status 2 (no MPI_Abort needed, nobody waits). */
static int input_error(int rank, const char *msg)
{
    if (rank <= 0) {
        fprintf(stderr, "h5dlio: error: %s\n", msg);
        fflush(stderr);
    }
    MPI_Finalize();
    return EXIT_BADINPUT;
}

/* Rank 0 checks that no generation of this kernel was interrupted in the data folder (gen.h GEN_RECORD; no record:
 * a dataset made by DLIO or another tool, read as it is); then every rank discovers the dataset as DLIO does
 * (discover.h: its listings, its probe and "Not enough training dataset is found"). */
static void check_dataset(const layout_t *L, int rank)
{
    const config_t *c = L->cfg;
    char msg[CHECK_MSG] = "";
    if (rank == 0 && gen_record_state(c, NULL, 0) == REC_INTERRUPTED)
        snprintf(msg, sizeof msg,
                 "key 'data-folder': '%s' holds an interrupted generation (its " GEN_RECORD
                 " says it never completed: a run was "
                 "killed or failed mid-way, so its files may be incomplete): generate it again with "
                 "generate-data=true overwrite=true before reading it",
                 c->data_folder);
    agree_or_exit(msg, rank);
    discover_dataset(L, rank);
}

static void prepare_output(const config_t *c, int rank)
{
    char msg[CHECK_MSG] = "";
    if (rank == 0) {
        if (mkdir_p(c->output_folder) < 0)
            snprintf(msg, sizeof msg, "key 'output-folder': cannot create '%s': %s", c->output_folder, strerror(errno));
        else if (access(c->output_folder, W_OK) != 0)
            snprintf(msg, sizeof msg, "key 'output-folder': '%s' is not writable", c->output_folder);
    }
    agree_or_exit(msg, rank);
}

/* ---------- what runs before MPI: --help, --version, --dlio-entries ---------- */

static void print_version(void)
{
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    printf("h5dlio %s (git %s) HDF5 %u.%u.%u subfiling %s dlio-versions %s\n", H5DLIO_VERSION, H5DLIO_GIT, maj, min,
           rel,
#ifdef H5_HAVE_SUBFILING_VFD
           "yes",
#else
           "no",
#endif
           dlio_entry_list());
}

/* The kernel's DLIO entries and release-specific keys as JSON; with a config or --set (dlio-version=V), also the
 * entry that configuration selects. Returns the exit status. */
static int print_dlio_entries(const args_t *a)
{
    static config_t cfg;
    char err[CFG_ERRLEN] = "", warning[512] = "";
    const dlio_entry_t *e = NULL;
    if (a->config || a->nsets) {
        if (config_load_entry(&cfg, a->config, a->entry, a->nsets, a->sets, err) != 0) {
            fprintf(stderr, "h5dlio: error: %s\n", err);
            return EXIT_BADINPUT;
        }
        e = dlio_entry(cfg.dlio_entry);
        if (e && cfg.dlio_nearest)
            dlio_nearest_warning(warning, sizeof warning, cfg.dlio_version, e);
    }
    char *j = dlio_entries_json(e, cfg.dlio_version, cfg.dlio_nearest, warning);
    fputs(j, stdout);
    free(j);
    return 0;
}

/* MLPerf Storage's comparability of the configuration (output.json's "comparability", coreconfig.h), no I/O */
static int print_core_config(const args_t *a)
{
    static config_t cfg;
    char err[CFG_ERRLEN] = "";
    if (config_load_entry(&cfg, a->config, a->entry, a->nsets, a->sets, err) != 0) {
        fprintf(stderr, "h5dlio: error: %s\n", err);
        return EXIT_BADINPUT;
    }
    char *j = coreconfig_json(&cfg);
    printf("%s\n", j);
    free(j);
    return 0;
}

static void print_sha256(void)
{
    size_t len = 0, cap = 1 << 16, r;
    unsigned char *in = xcalloc(cap, 1, "stdin");
    while ((r = fread(in + len, 1, cap - len, stdin)) > 0)
        if ((len += r) == cap && !(in = realloc(in, cap *= 2)))
            die(EXIT_RUNTIME, "out of memory reading stdin");
    char hex[65];
    sha256_hex(in, len, hex);
    printf("%s\n", hex);
    free(in);
}

/* Options answered without MPI. Returns 1 (and *rc) when one was given. */
static int front_end(const args_t *a, const char *prog, int *rc)
{
    if (*a->argerr)
        return 0;
    *rc = 0;
    if (a->help)
        config_print_help(prog);
    else if (a->version)
        print_version();
    else if (a->dlio_entries)
        *rc = print_dlio_entries(a);
    else if (a->core_config)
        *rc = print_core_config(a);
    else if (a->sha256)
        print_sha256();
    else if (a->mutants) {
        char *j = mutants_json();
        fputs(j, stdout);
        free(j);
    } else
        return 0;
    return 1;
}

/* ---------- the job ---------- */

typedef struct {
    config_t cfg;
    layout_t L;
    pool_t pool;
    int rank, nranks;
    runner_t R;                            /* the read phases' runner (training) */
    ckpt_t ckpt;                           /* checkpointing (cfg.checkpoint) */
    char samples[4600], samples_tmp[4700]; /* record-samples: written under a temporary name, renamed whole */
    gen_result_t gen;
    results_t res;
    vol_t vol; /* the VOL connector stack HDF5 uses (vol.c) */
    double t_start;
} job_t;

/* The configuration's warnings on stderr, one line each */
static void print_warnings(const config_t *c)
{
    for (const char *w = c->warnings; *w;) {
        const char *nl = strchr(w, '\n');
        int n = nl ? (int)(nl - w) : (int)strlen(w);
        fprintf(stderr, "h5dlio: warning: %.*s\n", n, w);
        w += n + (nl ? 1 : 0);
    }
}

/* --dry-run, everything checked: rank 0 prints the resolved configuration, the job ends (0) */
static int dry_run_end(job_t *J)
{
    if (J->rank == 0) {
        char *j = config_to_json(&J->cfg);
        printf("%s\n", j);
        free(j);
    }
    layout_free(&J->L);
    MPI_Finalize();
    return 0;
}

/* The reader processes, forked before MPI_Init (forking an MPI process is unsafe; they never call MPI): as many as
 * DLIO 3.x's machine-sized count can reach with 1 rank per node (autoread.c), the surplus ended by readers_sized.
 * -1: bad input (err). */
static int readers_fork(job_t *J, const args_t *a, char *err, size_t errlen)
{
    config_t *c = &J->cfg;
    int64_t n = autoread_begin(c, err, errlen);
    if (n < 0)
        return -1;
    layout_init(&J->L, c);
    if (n > 0 && c->train && !a->dry_run) /* 0 with an MPI-IO mode (config_load_entry) */
        pool_fork(&J->pool, c, &J->L, (int)n);
    return 0;
}

/* After MPI_Init: read_threads as DLIO 3.x sizes it (the ranks per node known now), the surplus processes ended */
static void readers_sized(job_t *J, const args_t *a)
{
    autoread_end(&J->cfg, a->dry_run ? a->dry_ranks : 0);
    if (J->pool.n > J->cfg.read_threads)
        pool_trim(&J->pool, (int)J->cfg.read_threads);
}

/* Configuration, reader processes (forked before MPI_Init: forking an MPI process is unsafe; they never call MPI),
 * MPI, validation for the rank count, output folder. Returns an exit status, or -1: the job goes on. */
static int job_start(job_t *J, args_t *a, int *argc, char ***argv)
{
    config_t *c = &J->cfg;
    char err[CFG_ERRLEN] = "";
    int bad = *a->argerr ? (snprintf(err, sizeof err, "%s", a->argerr), 1)
                         : config_load_entry(c, a->config, a->entry, a->nsets, a->sets, err) != 0;
    if (!bad && a->dry_ranks && !a->dry_run)
        bad = (snprintf(err, sizeof err, "--ranks is for --dry-run (mpirun sets the rank count)"), 1);
    /* everything the rank count does not change is checked before any allocation or fork (1 rank is the most
     * permissive count): a bad config never costs memory or time */
    if (!bad)
        bad = config_validate_early(c, err) != 0;
    /* the connector goes into HDF5's own variable before any HDF5 call and before the reader processes are forked */
    if (!bad)
        bad = vol_select(&J->vol, c, err) != 0;
    signal(SIGXFSZ, SIG_IGN); /* a file-size limit: a write fails with EFBIG and is reported, not a silent kill */
    cleanup_on_signals();     /* a killed generation leaves no partial file behind (see gen.c) */
    trace_init();
    if (!bad)
        bad = readers_fork(J, a, err, sizeof err) != 0;
    int provided = 0;
    int threads = !bad && (c->subfiling || c->checkpoint_subfiling) ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    if (MPI_Init_thread(argc, argv, threads, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "h5dlio: error: MPI_Init_thread failed\n");
        return EXIT_RUNTIME;
    }
    err_ctx()->mpi_up = 1;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &J->rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &J->nranks));
    err_ctx()->rank = J->rank;
    if (bad)
        return input_error(J->rank, err);
    readers_sized(J, a); /* before anything reads read_threads */
    if (config_validate(c, a->dry_ranks ? a->dry_ranks : J->nranks, err) != 0) {
        pool_stop(&J->pool);
        return input_error(J->rank, err);
    }
    config_note_rank_shape(c, a->dry_ranks ? a->dry_ranks : J->nranks);
    layout_ranks(&J->L, a->dry_ranks ? a->dry_ranks : J->nranks);
    if (J->rank == 0 && c->warnings[0]) /* keys ignored as DLIO ignores them; nearest entry; shapes DLIO cannot run */
        print_warnings(c);
    if ((c->subfiling || c->checkpoint_subfiling) && provided < MPI_THREAD_MULTIPLE) {
        pool_stop(&J->pool);
        return input_error(J->rank, c->subfiling
                                        ? "key 'subfiling': the MPI library does not provide MPI_THREAD_MULTIPLE"
                                        : "key 'checkpoint-subfiling': the MPI library does not provide "
                                          "MPI_THREAD_MULTIPLE");
    }
    if (vol_probe(&J->vol, c, J->rank) != 0) { /* HDF5's first call: a connector it cannot load ends the job (2) */
        pool_stop(&J->pool);
        if (J->vol.h5_failed) { /* HDF5's state after a failed start can be corrupt (a double free in 1.14.5's
                                 * pass-through info copy): MPI_Finalize would run HDF5's termination on it and
                                 * crash, so leave without it, every rank together */
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
            fflush(stdout), fflush(stderr);
            _exit(EXIT_BADINPUT);
        }
        MPI_Finalize();
        return EXIT_BADINPUT;
    }
    if (prefetch_check(c, &J->L, &J->vol, err, sizeof err) != 0) { /* never silently synchronous */
        pool_stop(&J->pool);
        return input_error(J->rank, err);
    }
    if (a->dry_run)
        return dry_run_end(J);
    if (J->pool.n)
        pool_start(&J->pool, J->rank);
    void *tr_rank = trace_begin("rank_info"); /* lets a trace reader map this process to its rank */
    trace_int(tr_rank, "rank", J->rank);
    trace_end(tr_rank);
    prepare_output(c, J->rank);
    J->res = (results_t){.cfg = c, .rank = J->rank, .nranks = J->nranks, .gen = &J->gen, .vol = &J->vol};
    J->res.clock_offset = clock_offset(); /* phase spans compare stamps of different ranks (IOR's clock delta) */
    J->t_start = now();
    return -1;
}

/* ---------- phases ---------- */

static int want_generate(const job_t *J, int64_t epoch) { return (void)epoch, J->cfg.generate_data; }
static int want_train(const job_t *J, int64_t epoch) { return (void)epoch, J->cfg.train; }
static int want_eval(const job_t *J, int64_t epoch)
{
    const config_t *c = &J->cfg; /* after epoch eval-after-epoch, then every epochs-between-evals */
    return c->evaluation && epoch >= c->eval_after_epoch &&
           (epoch - c->eval_after_epoch) % c->epochs_between_evals == 0;
}

static void phase_generate(job_t *J, int64_t epoch)
{
    (void)epoch;
    const config_t *c = &J->cfg;
    if (J->rank == 0 && !c->quiet)
        printf("h5dlio: generating %lld + %lld files in %s\n", (long long)c->num_files_train,
               (long long)c->num_files_eval, c->data_folder);
    generate(&J->L, J->rank, J->nranks, &J->gen);
    J->res.did_gen = 1;
}

/* one epoch of a read phase, logged in the results */
static void read_epoch(job_t *J, int phase, int64_t epoch)
{
    phase_log_t *log = &J->res.read[phase];
    if (J->rank == 0 && !J->cfg.quiet)
        printf("h5dlio: epoch %lld/%lld: %s\n", (long long)epoch, (long long)J->cfg.epochs,
               config_phase(&J->cfg, phase).what),
            fflush(stdout);
    log->epoch[log->n] = epoch;
    run_read_phase(&J->R, phase, epoch, &log->st[log->n++]);
}

static void phase_train(job_t *J, int64_t epoch)
{
    read_epoch(J, PH_TRAIN, epoch);
    const config_t *c = &J->cfg;
    /* MUTANTS data-stat, data-write, cwd-write (mutate.h) */
    if (c->mutant == MUT_DATA_STAT && J->rank == 0 && epoch == 1) {
        char path[4600];
        struct stat st;
        layout_path(&J->L, PH_TRAIN, 0, path, sizeof path);
        if (stat(path, &st) != 0)
            die(EXIT_RUNTIME, "MUTANT data-stat: %s: %s", path, strerror(errno));
    }
    if ((c->mutant == MUT_DATA_WRITE || c->mutant == MUT_CWD_WRITE) && J->rank == 0 && epoch == 1) {
        char path[8600] = "h5dlio-mutant.tmp";
        if (c->mutant == MUT_DATA_WRITE)
            snprintf(path, sizeof path, "%s/%s/h5dlio-mutant.tmp", c->data_folder, c->train_data_folder);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0 || write(fd, "x", 1) != 1 || close(fd) != 0)
            die(EXIT_RUNTIME, "MUTANT %s: %s: %s", MUTANTS[c->mutant].name, path, strerror(errno));
    }
}

static int want_checkpoint(const job_t *J, int64_t epoch) { return ckpt_after_epoch(&J->cfg, epoch); }

/* DLIO 2.0.0 main.py:296-302: after the training loop's barrier, checkpoint(epoch, overall_step), then a barrier */
static void phase_checkpoint(job_t *J, int64_t epoch)
{
    ckpt_save(&J->ckpt, epoch, J->R.last_step);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}
static void phase_eval(job_t *J, int64_t epoch) { read_epoch(J, PH_EVAL, epoch); }

/* DLIO 3.x main.py:802-820: at the end of every epoch (the last included), the next epoch's loader pre-warm */
static int want_prewarm(const job_t *J, int64_t epoch) { return (void)epoch, J->L.dlio->prewarm && J->cfg.train; }
static void phase_prewarm(job_t *J, int64_t epoch) { run_prewarm(&J->R, epoch + 1); }

/* The job's phases, in the order they run: once (before the epochs), then in each epoch the per-epoch phases that
 * want it, in table order. A new phase is its function above plus one line here, at the place in the epoch where it
 * runs (DLIO checkpoints after training, before evaluation; its per-step checkpoints run inside training, run.c). */
static const struct {
    const char *name;
    int per_epoch; /* 0: once, before the epochs; 1: in every epoch it wants */
    int (*wanted)(const job_t *J, int64_t epoch);
    void (*run)(job_t *J, int64_t epoch);
} PHASES[] = {
    {"generate", 0, want_generate, phase_generate},       {"train", 1, want_train, phase_train},
    {"checkpoint", 1, want_checkpoint, phase_checkpoint}, {"eval", 1, want_eval, phase_eval},
    {"prewarm", 1, want_prewarm, phase_prewarm},
};
#define NPHASE_DEFS (sizeof PHASES / sizeof PHASES[0])

/* Before the first epoch: the dataset is there, the runner (sampler seeds agreed), the sample log, the statistics. */
static void epochs_begin(job_t *J)
{
    const config_t *c = &J->cfg;
    check_dataset(&J->L, J->rank);
    uint32_t rseed = (uint32_t)time(NULL) ^ (uint32_t)getpid();
    MPI_CHECK(MPI_Bcast(&rseed, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD));
    runner_init(&J->R, c, &J->L, J->rank, J->nranks, J->pool.n ? &J->pool : NULL,
                c->vol_async_prefetch ? &LOADER_ASYNC_PREFETCH : NULL, rseed);
    J->res.runner = &J->R;
    if (c->checkpoint) {
        ckpt_init(&J->ckpt, c, J->rank, J->nranks);
        J->R.ckpt = &J->ckpt;
    }
    if (c->record_samples) {
        snprintf(J->samples, sizeof J->samples, "%s/%s.samples.rank%d.csv", c->output_folder, c->output_csv_name,
                 J->rank);
        snprintf(J->samples_tmp, sizeof J->samples_tmp, "%s.tmp.%d", J->samples, (int)getpid());
        J->R.samples_log = fopen(J->samples_tmp, "w");
        if (!J->R.samples_log)
            die(EXIT_BADINPUT, "key 'record-samples': cannot write %s: %s", J->samples_tmp, strerror(errno));
        fprintf(J->R.samples_log, "phase,epoch,step,sample,file,index,use\n");
    }
    for (int ph = 0; ph < NPHASES; ph++) {
        J->res.read[ph].st = xcalloc((size_t)c->epochs, sizeof *J->res.read[ph].st, "the epoch statistics");
        J->res.read[ph].epoch = xcalloc((size_t)c->epochs, sizeof *J->res.read[ph].epoch, "the epoch statistics");
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (want_prewarm(J, 0)) /* DLIO 3.x main.py:705-719: the pre-warm before epoch 1 */
        run_prewarm(&J->R, 1);
}

static void epochs_end(job_t *J)
{
    FILE *log = J->R.samples_log;
    int bad = log && (ferror(log) || fflush(log));
    if (log && fclose(log) != 0)
        bad = 1;
    runner_free(&J->R);
    if (*J->samples_tmp && (bad || rename(J->samples_tmp, J->samples) != 0))
        die(EXIT_RUNTIME, "key 'record-samples': cannot write %s: %s", J->samples, strerror(errno));
}

static void job_run(job_t *J)
{
    for (size_t i = 0; i < NPHASE_DEFS; i++)
        if (!PHASES[i].per_epoch && PHASES[i].wanted(J, 0))
            PHASES[i].run(J, 0);
    if (!J->cfg.train) {         /* the epochs are training epochs */
        if (J->cfg.checkpoint) { /* DLIO 2.0.0-52: checkpoint without train is its checkpoint-only workflow */
            ckpt_init(&J->ckpt, &J->cfg, J->rank, J->nranks);
            ckpt_only_run(&J->ckpt);
        }
        return;
    }
    epochs_begin(J);
    for (int64_t e = 1; e <= J->cfg.epochs; e++)
        for (size_t i = 0; i < NPHASE_DEFS; i++)
            if (PHASES[i].per_epoch && PHASES[i].wanted(J, e))
                PHASES[i].run(J, e);
    epochs_end(J);
}

/* Results, the generated files this run must delete, the reader processes; the exit status every rank agrees on. */
static int job_finish(job_t *J)
{
    const config_t *c = &J->cfg;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    J->res.wall_s = now() - J->t_start;
    J->res.t_start = J->t_start;
    J->res.ckpt = J->cfg.checkpoint && (J->cfg.train || J->ckpt.rules >= 2) ? &J->ckpt : NULL;
    int rc = report_write(&J->res);
    prefetch_free(&J->R);
    if (c->generate_data && !c->keep_files && c->train)
        cleanup_generated(&J->L, &J->gen, J->rank);
    if (J->pool.n)
        pool_stop(&J->pool);
    layout_free(&J->L);
    gen_result_free(&J->gen);
    if (J->res.ckpt)
        ckpt_free(&J->ckpt);
    for (int ph = 0; ph < NPHASES; ph++) free(J->res.read[ph].st), free(J->res.read[ph].epoch);
    int rc_all = 0;
    MPI_CHECK(MPI_Allreduce(&rc, &rc_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    MPI_Finalize();
    return rc_all ? EXIT_RUNTIME : 0;
}

/* `h5dlio sizing ...`, `h5dlio runs ...`: the installed Python tools (`make install`: <prefix>/libexec/h5dlio/
 * h5dlio-<command>, found from this program's own path), run as git runs its subcommands; the kernel never takes a
 * bare word as its first argument. Exit 2 when the tool is not installed beside this program (a build tree). */
static void run_tool(int argc, char **argv)
{
    static const char *const tools[] = {"sizing", "runs"};
    for (size_t t = 0; argc > 1 && t < sizeof tools / sizeof *tools; t++) {
        if (strcmp(argv[1], tools[t]) != 0)
            continue;
        char self[4096], path[4200];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        char *slash = n > 0 ? (self[n] = 0, strrchr(self, '/')) : NULL;
        if (slash) {
            *slash = 0;
            snprintf(path, sizeof path, "%s/../libexec/h5dlio/h5dlio-%s", self, tools[t]);
            argv[1] = path;
            execv(path, argv + 1);
        }
        int err = errno;
        fprintf(stderr,
                "h5dlio %s: not installed beside this program (%s: %s); `make install PREFIX=<dir>` installs it, "
                "in a checkout: make %s\n",
                tools[t], slash ? path : "/proc/self/exe", strerror(err), tools[t]);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    static args_t a;
    run_tool(argc, argv);
    parse_args(argc, argv, &a);
    int rc;
    if (front_end(&a, argv[0], &rc)) {
        args_free(&a);
        return rc;
    }
    static job_t J;
    rc = job_start(&J, &a, &argc, &argv);
    args_free(&a); /* only config_load needed the list */
    if (rc >= 0)
        return rc;
    job_run(&J);
    return job_finish(&J);
}
