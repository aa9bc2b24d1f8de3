/* Config parsing and every error path: each case is an input and the words its error must contain. */
#include "config.h"
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
    const char *p = write_tmp(".json",
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
        c.computation_time_stdev != 0.05 || c.random_seed != 7 || c.collective_meta != 1 || c.read_threads != 2 ||
        c.epochs != 3 || c.record_samples != 1 || c.train != 1 || c.keep_files != 1 || c.naming != NAMING_DLIO ||
        c.source != SRC_DLIO_YAML) {
        failures++;
        fprintf(stderr, "FAIL dlio yaml values (rc=%d %s)\n", rc, err);
    }
}

int main(void)
{
    check_values();
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
    char *s_sample_overflow[] = {"generate-data=true", "record-length=4611686018427387904", "num-samples-per-file=1000"};
    char *s_version[] = {"generate-data=true", "dlio-version=nine"};
    char *s_nearest[] = {"generate-data=true", "dlio-version=9.9"};
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
    check("reader processes + MPI-IO", NULL, NULL, 4, s_rt_mpio, 1, "'read-threads'|MPI-IO");
    check("file size overflow", NULL, NULL, 3, s_sample_overflow, 1, "'num-samples-per-file'|overflow");
    check("not a dlio version", NULL, NULL, 2, s_version, 1, "'dlio-version'|nine|not a DLIO version");
    check("unknown dlio version: nearest entry", NULL, NULL, 2, s_nearest, 1, NULL);
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
    check("yaml checkpoint", ".yaml", "workflow:\n  checkpoint: True\n", 0, NULL, 1, "'workflow.checkpoint'");
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
