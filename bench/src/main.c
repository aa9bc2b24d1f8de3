/* h5dlio: DLIO Benchmark's HDF5 I/O (generation, training and evaluation reads) without an ML stack. */
#define _GNU_SOURCE
#include "config.h"
#include "gen.h"
#include "layout.h"
#include "reader.h"
#include "report.h"
#include "run.h"
#include "trace.h"
#include "util.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *config;
    char **sets;
    int nsets, dry_run, help, version, dry_ranks; /* dry_ranks: --ranks N, validate as for N ranks (--dry-run) */
    char argerr[512];
} args_t;

static void parse_args(int argc, char **argv, args_t *a)
{
    memset(a, 0, sizeof *a);
    a->sets = calloc((size_t)argc + 1, sizeof *a->sets);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--help") || !strcmp(s, "-h"))
            a->help = 1;
        else if (!strcmp(s, "--version"))
            a->version = 1;
        else if (!strcmp(s, "--dry-run"))
            a->dry_run = 1;
        else if (!strcmp(s, "--ranks")) {
            char *end = NULL;
            long n = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
            if (!end || *end || n < 1 || n > 1 << 24) {
                snprintf(a->argerr, sizeof a->argerr, "--ranks needs a rank count in [1, %d]", 1 << 24);
                return;
            }
            a->dry_ranks = (int)n, i++;
        }
        else if (!strcmp(s, "--log-vfd"))
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
        else {
            snprintf(a->argerr, sizeof a->argerr, "unknown argument '%s' (see --help)", s);
            return;
        }
    }
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

/* Rank 0 checks the dataset is there before anyone reads (DLIO: "Not enough training dataset is found"). */
static void check_dataset(const layout_t *L, int rank)
{
    const config_t *c = L->cfg;
    char msg[CHECK_MSG] = "";
    if (rank == 0) {
        for (int ph = 0; ph < 2 && !*msg; ph++) {
            if ((ph == PH_TRAIN && !c->train) || (ph == PH_EVAL && !c->evaluation))
                continue;
            for (int64_t i = 0; i < L->nfiles[ph]; i++) {
                char path[4600];
                struct stat st;
                layout_path(L, ph, i, path, sizeof path);
                if (stat(path, &st) != 0) {
                    snprintf(msg, sizeof msg, "key 'data-folder': %s: %s (generate it with generate-data=true)",
                             path, strerror(errno));
                    break;
                }
                if (!S_ISREG(st.st_mode)) {
                    snprintf(msg, sizeof msg, "key 'data-folder': %s is not a regular file", path);
                    break;
                }
            }
        }
    }
    agree_or_exit(msg, rank);
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

int main(int argc, char **argv)
{
    args_t a;
    parse_args(argc, argv, &a);
    if (a.help && !*a.argerr) {
        config_print_help(argv[0]);
        free(a.sets);
        return 0;
    }
    if (a.version && !*a.argerr) {
        unsigned maj, min, rel;
        H5get_libversion(&maj, &min, &rel);
        printf("h5dlio %s (git %s) HDF5 %u.%u.%u subfiling %s dlio-versions %s\n", H5DLIO_VERSION, H5DLIO_GIT, maj,
               min, rel,
#ifdef H5_HAVE_SUBFILING_VFD
               "yes",
#else
               "no",
#endif
               dlio_entry_list());
        free(a.sets);
        return 0;
    }
    static config_t cfg;
    char err[CFG_ERRLEN] = "";
    int bad = *a.argerr ? (snprintf(err, sizeof err, "%s", a.argerr), 1) : config_load(&cfg, a.config, a.nsets, a.sets, err) != 0;
    free(a.sets); /* the --set strings are argv's; only config_load needed the list */
    if (!bad && a.dry_ranks && !a.dry_run)
        bad = (snprintf(err, sizeof err, "--ranks is for --dry-run (mpirun sets the rank count)"), 1);
    /* everything the rank count does not change is checked before any allocation or fork (1 rank is the most
     * permissive count): a bad config never costs memory or time */
    if (!bad)
        bad = config_validate(&cfg, 1, err) != 0;
    signal(SIGXFSZ, SIG_IGN); /* a file-size limit: a write fails with EFBIG and is reported, not a silent kill */
    cleanup_on_signals();     /* a killed generation leaves no partial file behind (see gen.c) */
    trace_init();
    /* Reader processes are forked before MPI_Init (forking an MPI process is unsafe); they never call MPI. */
    layout_t L;
    pool_t pool = {0};
    if (!bad) {
        layout_init(&L, &cfg);
        if (cfg.read_threads > 0 && cfg.train && !a.dry_run && !cfg.subfiling && !cfg.collective_data &&
            !cfg.collective_meta)
            pool_fork(&pool, &cfg, &L);
    }
    int provided = 0;
    int want = (!bad && cfg.subfiling) ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
    if (MPI_Init_thread(&argc, &argv, want, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "h5dlio: error: MPI_Init_thread failed\n");
        return EXIT_RUNTIME;
    }
    g_mpi_up = 1;
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    g_rank = rank;
    if (bad)
        return input_error(rank, err);
    if (config_validate(&cfg, a.dry_ranks ? a.dry_ranks : nranks, err) != 0) {
        pool_stop(&pool);
        return input_error(rank, err);
    }
    if (rank == 0 && cfg.warnings[0]) /* release-specific keys ignored as DLIO ignores them; nearest DLIO entry */
        for (const char *w = cfg.warnings; *w;) {
            const char *nl = strchr(w, '\n');
            int n = nl ? (int)(nl - w) : (int)strlen(w);
            fprintf(stderr, "h5dlio: warning: %.*s\n", n, w);
            w += n + (nl ? 1 : 0);
        }
    if (cfg.subfiling && provided < MPI_THREAD_MULTIPLE) {
        pool_stop(&pool);
        return input_error(rank, "key 'subfiling': the MPI library does not provide MPI_THREAD_MULTIPLE");
    }
    if (a.dry_run) {
        if (rank == 0) {
            char *j = config_to_json(&cfg);
            printf("%s\n", j);
            free(j);
        }
        layout_free(&L);
        MPI_Finalize();
        return 0;
    }
    if (pool.n)
        pool_start(&pool, rank);
    void *tr_rank = trace_begin("rank_info"); /* lets a trace reader map this process to its rank */
    trace_int(tr_rank, "rank", rank);
    trace_end(tr_rank);
    prepare_output(&cfg, rank);
    double t_start = now();

    results_t res = {0};
    gen_result_t gen = {0};
    res.cfg = &cfg;
    res.rank = rank;
    res.nranks = nranks;
    res.gen = &gen;
    if (cfg.generate_data) {
        if (rank == 0 && !cfg.quiet)
            printf("h5dlio: generating %lld + %lld files in %s\n", (long long)cfg.num_files_train,
                   (long long)cfg.num_files_eval, cfg.data_folder);
        generate(&L, rank, nranks, &gen);
        res.did_gen = 1;
    }
    if (cfg.train) {
        check_dataset(&L, rank);
        uint32_t rseed = (uint32_t)time(NULL) ^ (uint32_t)getpid();
        MPI_CHECK(MPI_Bcast(&rseed, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD));
        runner_t R;
        runner_init(&R, &cfg, &L, rank, nranks, pool.n ? &pool : NULL, rseed);
        char samples[4600] = "", samples_tmp[4700] = ""; /* written under a temporary name, renamed when whole */
        if (cfg.record_samples) {
            snprintf(samples, sizeof samples, "%s/%s.samples.rank%d.csv", cfg.output_folder, cfg.output_csv_name, rank);
            snprintf(samples_tmp, sizeof samples_tmp, "%s.tmp.%d", samples, (int)getpid());
            R.samples_log = fopen(samples_tmp, "w");
            if (!R.samples_log)
                die(EXIT_BADINPUT, "key 'record-samples': cannot write %s: %s", samples_tmp, strerror(errno));
            fprintf(R.samples_log, "phase,epoch,step,sample,file,index,use\n");
        }
        res.nepochs = cfg.epochs;
        res.train = calloc((size_t)cfg.epochs, sizeof *res.train);
        res.eval = calloc((size_t)cfg.epochs, sizeof *res.eval);
        res.eval_epoch = calloc((size_t)cfg.epochs, sizeof *res.eval_epoch);
        if (!res.train || !res.eval || !res.eval_epoch)
            die(EXIT_RUNTIME, "out of memory for the statistics of %lld epochs", (long long)cfg.epochs);
        int64_t next_eval = cfg.eval_after_epoch;
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (int64_t e = 1; e <= cfg.epochs; e++) {
            if (rank == 0 && !cfg.quiet)
                printf("h5dlio: epoch %lld/%lld: training\n", (long long)e, (long long)cfg.epochs), fflush(stdout);
            run_train_epoch(&R, e, &res.train[e - 1]);
            if (cfg.evaluation && e >= next_eval) {
                next_eval += cfg.epochs_between_evals;
                if (rank == 0 && !cfg.quiet)
                    printf("h5dlio: epoch %lld/%lld: evaluation\n", (long long)e, (long long)cfg.epochs), fflush(stdout);
                res.eval_epoch[res.neval] = e;
                run_eval_epoch(&R, e, &res.eval[res.neval++]);
            }
        }
        int samples_bad = R.samples_log && (ferror(R.samples_log) || fflush(R.samples_log));
        runner_free(&R);
        if (*samples_tmp && (samples_bad || rename(samples_tmp, samples) != 0))
            die(EXIT_RUNTIME, "key 'record-samples': cannot write %s: %s", samples, strerror(errno));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    res.wall_s = now() - t_start;
    int rc = report_write(&res);
    if (cfg.generate_data && !cfg.keep_files && cfg.train)
        cleanup_generated(&L, &gen, rank);
    if (pool.n)
        pool_stop(&pool);
    layout_free(&L);
    gen_result_free(&gen);
    free(res.train), free(res.eval), free(res.eval_epoch);
    int rc_all = 0;
    MPI_Allreduce(&rc, &rc_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc_all ? EXIT_RUNTIME : 0;
}
