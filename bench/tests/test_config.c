/* Config parsing and every error path: each case is an input and the words its error must contain. */
#include "config.h"
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0, cases = 0;

static const char *write_tmp(const char *ext, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/h5dlio_test_config_%d%s", (int)getpid(), ext);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* expect == NULL: must load (and validate with nranks) fine; else the error must contain every '|'-separated word */
static void check(const char *name, const char *ext, const char *text, int nset, char **sets, int nranks,
                  const char *expect)
{
    config_t c;
    char err[CFG_ERRLEN] = "";
    const char *path = text ? write_tmp(ext, text) : NULL;
    int rc = config_load(&c, path, nset, sets, err);
    if (rc == 0)
        rc = config_validate(&c, nranks, err);
    if (path)
        unlink(path);
    cases++;
    if (!expect) {
        if (rc) {
            failures++;
            fprintf(stderr, "FAIL %s: unexpected error: %s\n", name, err);
        }
        return;
    }
    if (!rc) {
        failures++;
        fprintf(stderr, "FAIL %s: accepted, expected an error containing '%s'\n", name, expect);
        return;
    }
    char words[512];
    snprintf(words, sizeof words, "%s", expect);
    for (char *w = strtok(words, "|"); w; w = strtok(NULL, "|"))
        if (!strstr(err, w)) {
            failures++;
            fprintf(stderr, "FAIL %s: error '%s' lacks '%s'\n", name, err, w);
            return;
        }
    if (strchr(err, '\n')) {
        failures++;
        fprintf(stderr, "FAIL %s: error is not one line: %s\n", name, err);
    }
}

static void check_values(void)
{
    config_t c;
    char err[CFG_ERRLEN];
    const char *p = write_tmp(
        ".json",
        "{\"benchmarks\": [{\"benchmark\": \"write\", \"configuration\": {}},\n"
        "  {\"benchmark\": \"dlio\", \"configuration\": {\"generate-data\": \"true\", \"train\": true,\n"
        "\t\"record-length\": \"1048576\", \"num-files-train\": 8, \"shuffle\": \"true\", \"read-threads\": \"0\",\n"
        "   \"computation-time\": \"0.5\", \"data-folder\": \"/tmp/x///\"}}]}\n");
    int rc = config_load(&c, p, 0, NULL, err);
    unlink(p);
    cases++;
    if (rc || c.generate_data != 1 || c.train != 1 || c.record_length != 1048576 || c.num_files_train != 8 ||
        c.sample_shuffle != SHUFFLE_SEED || c.read_threads != 0 || c.computation_time != 0.5 ||
        strcmp(c.data_folder, "/tmp/x") || c.batch_size != 7 || c.naming != NAMING_H5BENCH ||
        c.source != SRC_H5BENCH_JSON) {
        failures++;
        fprintf(stderr, "FAIL h5bench json values (rc=%d %s)\n", rc, err);
    }
    p = write_tmp(".yaml", "dataset:\n  record_length: 4096\n  format: hdf5\nreader:\n  batch_size: 3\n"
                           "train:\n  computation_time:\n    mean: 0.2\n    stdev: 0.05\n  seed: 7\n"
                           "h5dlio:\n  collective-meta: true\n");
    char *sets[] = {"reader.read_threads=2", "epochs=3", "h5dlio.record_samples=yes"};
    rc = config_load(&c, p, 3, sets, err);
    unlink(p);
    cases++;
    if (rc || c.record_length != 4096 || c.batch_size != 3 || c.computation_time != 0.2 ||
        c.computation_time_stdev != 0.05 || c.random_seed != 7 || c.collective_meta != 1 ||
        /* 2 reader processes asked for with collective-meta: each rank reads its own samples, said in a warning */
        c.read_threads != 0 ||
        !strstr(c.warnings, "key 'read-threads': 2 reader process(es) asked for with collective-meta") ||
        c.epochs != 3 || c.record_samples != 1 || c.train != 1 || c.keep_files != 1 || c.naming != NAMING_DLIO ||
        c.source != SRC_DLIO_YAML) {
        failures++;
        fprintf(stderr, "FAIL dlio yaml values (rc=%d %s)\n", rc, err);
    }
}

/* h5bench's runner form (PR #124 src/h5bench.py run_dlio: `--KEY VALUE`, a bare `--KEY` for the yes/no keys it lists,
 * `--data-folder <directory>/<value>`, `--output-data-folder <directory>/<id>`): the argv it builds, mapped. */
static void runner_fail(const char *name, char **argv, int argc, const char *expect)
{
    char set[512], err[CFG_ERRLEN] = "";
    int rc = config_runner_arg(argc, argv, 1, set, sizeof set, err);
    cases++;
    char words[256];
    snprintf(words, sizeof words, "%s", expect);
    for (char *w = strtok(words, "|"); rc < 0 && w; w = strtok(NULL, "|"))
        if (!strstr(err, w))
            rc = 0;
    if (rc >= 0) {
        failures++;
        fprintf(stderr, "FAIL runner %s: rc=%d error '%s' lacks '%s'\n", name, rc, err, expect);
    }
}

static void check_runner(void)
{
    char *argv[] = {"h5bench_dlio",
                    "--generate-data",
                    "--train",
                    "--keep-files",
                    "--shuffle",
                    "--record-length",
                    "4096",
                    "--data-folder",
                    "st/data",
                    "--total-training-steps",
                    "-1",
                    "--compression",
                    "--chunking",
                    "--drop-last",
                    "--collective-meta",
                    "false",
                    "--output-data-folder",
                    "st/1a2b3c4d",
                    "--output-csv-name",
                    "out",
                    "--read-threads",
                    "0"};
    int argc = (int)(sizeof argv / sizeof *argv), nset = 0;
    char bufs[32][512], *sets[32], err[CFG_ERRLEN] = "";
    for (int i = 1; i < argc;) {
        int used = config_runner_arg(argc, argv, i, bufs[nset], sizeof bufs[nset], err);
        if (used < 1) {
            cases++, failures++;
            fprintf(stderr, "FAIL runner argv: %s: %s\n", argv[i], err);
            return;
        }
        if (*bufs[nset])
            sets[nset] = bufs[nset], nset++;
        i += used;
    }
    config_t c;
    int rc = config_load(&c, NULL, nset, sets, err);
    cases++;
    if (rc || nset != 13 || /* 14 keys, drop-last sets nothing */ !c.generate_data || !c.train || !c.keep_files ||
        c.sample_shuffle != SHUFFLE_SEED || c.record_length != 4096 || strcmp(c.data_folder, "st/data") ||
        c.total_training_steps != -1 || !c.compression || !c.chunking || c.collective_meta ||
        strcmp(c.output_folder, "st/1a2b3c4d") || strcmp(c.output_csv_name, "out") || c.read_threads != 0 ||
        c.evaluation) {
        failures++;
        fprintf(stderr, "FAIL runner argv values (rc=%d nset=%d %s)\n", rc, nset, err);
    }
    char *unknown[] = {"x", "--num-files-trian", "3"}, *maybe[] = {"x", "--train", "maybe"},
         *last[] = {"x", "--epochs"}, *novalue[] = {"x", "--epochs", "--train"},
         *dotted[] = {"x", "--dataset.num_files_train", "3"}, *eq[] = {"x", "--epochs=3"},
         *drop[] = {"x", "--drop-last", "false"}, *range[] = {"x", "--epochs", "0"},
         *comp[] = {"x", "--compression", "lz4"};
    runner_fail("unknown key", unknown, 3, "'--num-files-trian'|'--num-files-train'");
    runner_fail("yes/no key given maybe", maybe, 3, "--train|'train'|maybe|boolean");
    runner_fail("value missing at the end", last, 2, "'epochs'|needs a value");
    runner_fail("value missing before a key", novalue, 3, "'epochs'|needs a value");
    runner_fail("a DLIO path is not an h5bench key", dotted, 3, "'--dataset.num_files_train'");
    runner_fail("--key=value is not the runner's form", eq, 2, "'--epochs=3'");
    runner_fail("drop-last false", drop, 3, "'drop-last'|false");
    runner_fail("out of range", range, 3, "'epochs'|out of range");
    runner_fail("compression lz4", comp, 3, "'compression'|lz4");

    /* a suite file with several dlio entries: --entry N, read as the runner reads it */
    const char *suite =
        "{\"mpi\": {}, \"vol\": {}, \"file-system\": {}, \"directory\": \"st\", \"benchmarks\": [\n"
        " {\"benchmark\": \"dlio\", \"configuration\": {\"generate-data\": \"true\", \"data-folder\": \"d\"}},\n"
        " {\"benchmark\": \"write\", \"configuration\": {}},\n"
        " {\"benchmark\": \"dlio\", \"configuration\": {\"train\": \"true\", \"data-folder\": \"d\"}}]}\n";
    const char *p = write_tmp(".json", suite);
    int e1 = config_load_entry(&c, p, 1, 0, NULL, err);
    int ok1 = !e1 && c.generate_data && !c.train && !strcmp(c.data_folder, "st/d");
    int e3 = config_load_entry(&c, p, 3, 0, NULL, err);
    int ok3 = !e3 && !c.generate_data && c.train && !strcmp(c.data_folder, "st/d");
    cases++;
    if (!ok1 || !ok3) {
        failures++;
        fprintf(stderr, "FAIL --entry 1/3 values (%d %d %s)\n", e1, e3, err);
    }
    struct {
        int entry;
        const char *expect;
    } bad[] = {{0, "more than one dlio|entries 1, 3|--entry"},
               {2, "--entry 2|not a dlio benchmark|1, 3"},
               {4, "--entry 4|3 entries"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        cases++;
        rc = config_load_entry(&c, p, bad[k].entry, 0, NULL, err);
        char words[256];
        snprintf(words, sizeof words, "%s", bad[k].expect);
        for (char *w = strtok(words, "|"); rc && w; w = strtok(NULL, "|"))
            if (!strstr(err, w))
                rc = 0;
        if (!rc) {
            failures++;
            fprintf(stderr, "FAIL --entry %d: '%s' lacks '%s'\n", bad[k].entry, err, bad[k].expect);
        }
    }
    unlink(p);
    p = write_tmp(".json", "{\"benchmarks\": [{\"benchmark\": \"dlio\", \"configuration\": {\"train\": true}}]}\n");
    rc = config_load_entry(&c, p, 1, 0, NULL, err);
    unlink(p);
    cases++;
    if (!rc || !strstr(err, "key 'directory'")) {
        failures++;
        fprintf(stderr, "FAIL --entry without directory: %s\n", err);
    }
    p = write_tmp(".yaml", "train:\n  epochs: 1\n");
    rc = config_load_entry(&c, p, 1, 0, NULL, err);
    unlink(p);
    cases++;
    if (!rc || !strstr(err, "--entry 1") || !strstr(err, "h5bench JSON")) {
        failures++;
        fprintf(stderr, "FAIL --entry with a YAML: %s\n", err);
    }
}

/* The VOL connector: the vol-connector key, and an h5bench configuration's `vol` block as h5bench's runner reads it
 * (src/h5bench.py prepare_vol/enable_vol: connector, path, library, preload) */
static void vol_case(const char *name, const char *json, const char *conn, const char *path, const char *warning,
                     const char *expect)
{
    config_t c;
    char err[CFG_ERRLEN] = "";
    const char *p = write_tmp(".json", json);
    int rc = config_load_entry(&c, p, 1, 0, NULL, err);
    unlink(p);
    cases++;
    if (expect) {
        char words[256];
        snprintf(words, sizeof words, "%s", expect);
        int ok = rc != 0;
        for (char *w = strtok(words, "|"); ok && w; w = strtok(NULL, "|")) ok = strstr(err, w) != NULL;
        if (!ok) {
            failures++;
            fprintf(stderr, "FAIL vol %s: rc=%d error '%s' lacks '%s'\n", name, rc, err, expect);
        }
        return;
    }
    if (rc || strcmp(c.vol_connector, conn) || strcmp(c.vol_plugin_path, path) ||
        (warning && !strstr(c.warnings, warning)) || (!warning && *c.warnings)) {
        failures++;
        fprintf(stderr, "FAIL vol %s: rc=%d err '%s' connector '%s' path '%s' warnings '%s'\n", name, rc, err,
                c.vol_connector, c.vol_plugin_path, c.warnings);
    }
}

static void check_vol(void)
{
    char *s_key[] = {"train=true", "vol-connector=pass_through under_vol=0;under_info={}"};
    config_t c;
    char err[CFG_ERRLEN] = "";
    int rc = config_load(&c, NULL, 2, s_key, err);
    cases++;
    if (rc || strcmp(c.vol_connector, "pass_through under_vol=0;under_info={}") || *c.vol_plugin_path) {
        failures++;
        fprintf(stderr, "FAIL vol-connector key: rc=%d '%s' (%s)\n", rc, c.vol_connector, err);
    }
    rc = config_load(&c, NULL, 0, NULL, err);
    cases++;
    if (rc || *c.vol_connector) {
        failures++;
        fprintf(stderr, "FAIL vol-connector default is not empty: '%s'\n", c.vol_connector);
    }
    /* HDF5 without a VOL layer the kernel uses (Debian's 1.10 fallback): the key is refused naming it */
    char *s_vol[] = {"train=true", "num-files-train=4", "batch-size=2", "read-threads=0", "vol-connector=pass_through"};
#if H5_VERSION_GE(1, 14, 0)
    check("vol-connector with a VOL layer", NULL, NULL, 5, s_vol, 1, NULL);
#else
    check("vol-connector without a VOL layer", NULL, NULL, 5, s_vol, 1, "'vol-connector'|has no VOL layer");
#endif
#define SUITE(VOL, CONF)                                                                                               \
    "{\"mpi\": {}, \"vol\": " VOL ", \"file-system\": {}, \"directory\": \"st\", "                                     \
    "\"benchmarks\": [{\"benchmark\": \"dlio\", \"configuration\": {\"train\": \"true\"" CONF "}}]}\n"
    vol_case("empty block", SUITE("{}", ""), "", "", NULL, NULL);
    vol_case("connector and path",
             SUITE("{\"connector\": \"async under_vol=0;under_info={}\", \"path\": \"/opt/vol\"}", ""),
             "async under_vol=0;under_info={}", "/opt/vol", NULL, NULL);
    vol_case("the same connector as the entry's key",
             SUITE("{\"connector\": \"pass_through\"}", ", \"vol-connector\": \"pass_through\""), "pass_through", "",
             NULL, NULL);
    vol_case("library: acts at process start", SUITE("{\"library\": \"/opt/vol/lib\"}", ""), "", "",
             "key 'vol.library' is ignored: it acts at process start", NULL);
    vol_case("unknown vol key", SUITE("{\"conector\": \"async\"}", ""), NULL, NULL, NULL,
             "unknown key 'vol.conector'|connector, path");
    vol_case("vol not an object", SUITE("\"async\"", ""), NULL, NULL, NULL, "key 'vol'|object");
    vol_case("vol.connector not a string", SUITE("{\"connector\": [1]}", ""), NULL, NULL, NULL,
             "'vol.connector'|string");
    vol_case("two different connectors", SUITE("{\"connector\": \"async\"}", ", \"vol-connector\": \"pass_through\""),
             NULL, NULL, NULL, "'vol.connector'|'async'|'vol-connector'|'pass_through'");
#undef SUITE
}

int main(void)
{
    check_values();
    check_vol();
    check_runner();
    char *s_unknown[] = {"batch-sise=3"};
    char *s_noeq[] = {"batch-size"};
    char *s_badint[] = {"batch-size=abc"};
    char *s_zero[] = {"batch-size=0"};
    char *s_neg[] = {"num-files-train=-1"};
    char *s_overflow[] = {"record-length=99999999999999999999999"};
    char *s_seed[] = {"random-seed=4294967296"};
    char *s_bool[] = {"train=maybe"};
    char *s_shuffle[] = {"shuffle=sometimes"};
    char *s_comp[] = {"compression=lz4"};
    char *s_ok[] = {"train=true", "num-files-train=4", "batch-size=2", "read-threads=0"};
    char *s_batch[] = {"train=true", "num-files-train=2", "num-samples-per-file=2", "batch-size=3"};
    char *s_ranks[] = {"train=true", "num-files-train=1", "num-samples-per-file=2", "batch-size=1"};
    char *s_steps[] = {"train=true", "num-files-train=4", "batch-size=2", "total-training-steps=100"};
    char *s_gzip[] = {"generate-data=true", "compression=gzip"};
    char *s_nothing[] = {"record-length=10"};
    char *s_rt_mpio[] = {"train=true", "num-files-train=4", "batch-size=1", "collective-data=true"};
    char *s_sample_overflow[] = {"generate-data=true", "record-length=4611686018427387904",
                                 "num-samples-per-file=1000"};
    char *s_version[] = {"generate-data=true", "dlio-version=nine"};
    char *s_nearest[] = {"generate-data=true", "dlio-version=2.9"};
    char *s_v3[] = {"generate-data=true", "dlio-version=3.0.2"};
    char *s_v3_eval[] = {"train=true", "evaluation=true", "dlio-version=3.0.2"};
    char *s_v3_few[] = {"train=true", "num-files-train=9", "num-samples-per-file=1", "batch-size=3",
                        "dlio-version=3.0.2"};
    char *s_dset_200[] = {"generate-data=true", "num-dset-per-record=2"};
    char *s_dset_nodims[] = {"generate-data=true", "dlio-version=2.0.1", "num-dset-per-record=2"};
    char *s_trim[] = {"train=true", "dlio-version=2.0.1-17", "num-files-train=13", "batch-size=7"};
    char *s_empty[] = {"data-folder="};
    char *s_eval[] = {"evaluation=true"};
    check("defaults + sets ok", NULL, NULL, 4, s_ok, 2, NULL);
    check("unknown key with suggestion", NULL, NULL, 1, s_unknown, 1, "unknown key 'batch-sise'|'batch-size'");
    check("set without =", NULL, NULL, 1, s_noeq, 1, "key=value");
    check("wrong type int", NULL, NULL, 1, s_badint, 1, "'batch-size'|abc|integer");
    check("zero batch", NULL, NULL, 1, s_zero, 1, "'batch-size'|out of range");
    check("negative files", NULL, NULL, 1, s_neg, 1, "'num-files-train'|out of range");
    check("int overflow", NULL, NULL, 1, s_overflow, 1, "'record-length'|out of range");
    check("seed > 2^32-1", NULL, NULL, 1, s_seed, 1, "'random-seed'|out of range");
    check("bad bool", NULL, NULL, 1, s_bool, 1, "'train'|maybe|boolean");
    check("bad shuffle", NULL, NULL, 1, s_shuffle, 1, "'shuffle'|sometimes");
    check("bad compression", NULL, NULL, 1, s_comp, 1, "'compression'|lz4");
    check("batch larger than rank share", NULL, NULL, 4, s_batch, 2, "'batch-size'|no full batch");
    check("more ranks than samples", NULL, NULL, 4, s_ranks, 3, "'num-files-train'|3 ranks");
    check("steps beyond dataset", NULL, NULL, 4, s_steps, 1, "'total-training-steps'|100");
    check("gzip without chunking", NULL, NULL, 2, s_gzip, 1, "'compression'|chunking");
    check("nothing to do", NULL, NULL, 1, s_nothing, 1, "nothing to do");
    check("reader processes + MPI-IO: each rank reads (a warning, not an error)", NULL, NULL, 4, s_rt_mpio, 1, NULL);
    check("file size overflow", NULL, NULL, 3, s_sample_overflow, 1, "'num-samples-per-file'|overflow");
    check("not a dlio version", NULL, NULL, 2, s_version, 1, "'dlio-version'|nine|not a DLIO version");
    check("unknown dlio version: nearest entry", NULL, NULL, 2, s_nearest, 1, NULL);
    /* MLCommons 3.x (f6796ed): replayed for training; its evaluation is not; each rank holds floor(N/R) files
     * (main.py:483-484): 9 files over 4 ranks give 2 files per rank, fewer samples than a batch of 3 */
    check("3.x entry replayed", NULL, NULL, 2, s_v3, 1, NULL);
    check("3.x evaluation refused", NULL, NULL, 3, s_v3_eval, 1, "'evaluation'|3.0.2|not replayed yet");
    check("3.x floor(N/R) files per rank", NULL, NULL, 5, s_v3_few, 4, "'num-files-train'|floor(9 / 4) = 2|batch of 3");
    check("2.0.0 has one records dataset", NULL, NULL, 2, s_dset_200, 1, "'num-dset-per-record'|2.0.0");
    check("2.0.1 datasets need record dims", NULL, NULL, 3, s_dset_nodims, 1, "'num-dset-per-record'|record-dims");
    check("main trims files to none", NULL, NULL, 4, s_trim, 2, "'num-files-train'|trims|56");
    check("empty string", NULL, NULL, 1, s_empty, 1, "'data-folder'|empty");
    check("evaluation without train", NULL, NULL, 1, s_eval, 1, "'evaluation'|train");
    check("json syntax", ".json", "{\"train\": true,, }\n", 0, NULL, 1, ".json:1");
    check("json unknown key", ".json", "{\"train\": true,\n \"epoch\": 3}\n", 0, NULL, 1, ".json:2|'epoch'|'epochs'");
    check("json duplicate key", ".json", "{\"train\": true, \"train\": false}\n", 0, NULL, 1, "duplicate key 'train'");
    check("json non-scalar", ".json", "{\"epochs\": [1, 2]}\n", 0, NULL, 1, "'epochs'|scalar");
    check("json no dlio benchmark", ".json", "{\"benchmarks\": [{\"benchmark\": \"write\"}]}\n", 0, NULL, 1, "dlio");
    check("json unknown top-level", ".json", "{\"benchmarks\": [], \"foo\": 1}\n", 0, NULL, 1, "'foo'");
    check("yaml syntax", ".yaml", "dataset:\n  record_length: [1, 2\n", 0, NULL, 1, ".yaml:");
    check("yaml unknown key", ".yaml", "dataset:\n  record_lenght: 10\n", 0, NULL, 1,
          ".yaml:2|'dataset.record_lenght'|'dataset.record_length'");
    check("yaml format", ".yaml", "dataset:\n  format: npz\n", 0, NULL, 1, "'dataset.format'|npz|hdf5");
    check("yaml framework", ".yaml", "framework: tensorflow\n", 0, NULL, 1, "'framework'|tensorflow");
    check("yaml checkpoint 2.0.0", ".yaml",
          "workflow:\n  checkpoint: True\ncheckpoint:\n  optimization_groups: [1, 2]\n  layer_parameters: []\n", 0,
          NULL, 1, NULL);
    {
        config_t w;
        char werr[CFG_ERRLEN] = "";
        char *s_ck[] = {"checkpoint=true", "train=false"};
        cases++;
        if (config_load(&w, NULL, 2, s_ck, werr) != 0 || !strstr(w.warnings, "train is off")) {
            failures++;
            fprintf(stderr, "FAIL checkpoint without train: no warning (%s)\n", werr);
        }
    }
    check("yaml checkpoint tensorflow refused", ".yaml",
          "framework: tensorflow\nreader:\n  data_loader: tensorflow\nworkflow:\n  checkpoint: True\n", 0, NULL, 1,
          "'checkpoint'|tf_checkpointing");
    check("yaml checkpoint 2.0.1 refused", ".yaml", "workflow:\n  checkpoint: True\nh5dlio:\n  dlio_version: 2.0.1\n",
          0, NULL, 1, "'checkpoint'|2.0.1|not emulated");
    check("yaml checkpoint layers vs pipeline", ".yaml", "checkpoint:\n  num_layers: 3\n  pipeline_parallelism: 2\n", 0,
          NULL, 1, "'num-layers'|pipeline-parallelism|231-238");
    check("yaml checkpoint type", ".yaml", "checkpoint:\n  type: some_ranks\n", 0, NULL, 1,
          "'checkpoint-type'|some_ranks|rank_zero|all_ranks");
    check("yaml checkpoint list", ".yaml", "checkpoint:\n  layer_parameters: [1, x]\n", 0, NULL, 1,
          "'layer-parameters'|list of integers");
    check("yaml checkpoint class", ".yaml", "checkpoint:\n  checkpoint_mechanism_classname: a.B\n", 0, NULL, 1,
          "checkpoint_mechanism_classname|not emulated");
    check("yaml not a mapping", ".yaml", "- 1\n- 2\n", 0, NULL, 1, "mapping");
    check("yaml empty file", ".yaml", "", 0, NULL, 1, "empty");
    check("yaml bad distribution", ".yaml", "train:\n  computation_time:\n    type: uniform\n", 0, NULL, 1,
          "'train.computation_time.type'|uniform");
    check("yaml type error", ".yaml", "reader:\n  batch_size: seven\n", 0, NULL, 1, ".yaml:2|'batch-size'|seven");
    check("yaml ignored keys ok", ".yaml",
          "model: x\nframework: pytorch\ncheckpoint:\n  checkpoint_folder: c\n  model_size: 5\nworkflow:\n"
          "  generate_data: true\n  train: false\n  checkpoint: false\nprofiling:\n  profiler: iostat\n",
          0, NULL, 1, NULL);
    config_t c;
    char err[CFG_ERRLEN];
    cases++;
    if (config_load(&c, "/nonexistent/h5dlio.yaml", 0, NULL, err) == 0 || !strstr(err, "/nonexistent/h5dlio.yaml")) {
        failures++;
        fprintf(stderr, "FAIL missing config file: %s\n", err);
    }
    printf("test_config: %d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
