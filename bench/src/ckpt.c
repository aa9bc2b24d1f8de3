/* DLIO 2.0.0's checkpoints (checkpointing/base_checkpointing.py, pytorch_checkpointing.py; main.py:274-302). Later
 * releases checkpoint differently (transformer-sized states, checkpoint folders per step, fsync, reads): the kernel
 * refuses workflow.checkpoint for their entries (config.c) until they are emulated. */
#define _GNU_SOURCE
#include "ckpt.h"
#include "trace.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* base_checkpointing.py:35-56 (2.0.0): the checkpointing rank builds
 *   model_state        {"a": T(model_size)}                                    if model_size > 0
 *   optimization_state {str(i): {"a": T(g), "b": T(g)} for g > 0, "combined": T(sum of g > 0)}  if groups given
 *   layer_state        {str(i): T(p) for p > 0}                                  if layer_parameters given
 * T(n): torch.randint(high=1, size=(n,), dtype=torch.int8) (pytorch_checkpointing.py:134-135): n zero bytes. */
static void build_states(ckpt_t *k)
{
    const config_t *c = k->cfg;
    ts_init(&k->model), ts_init(&k->optimizer), ts_init(&k->layer);
    if (c->model_size > 0)
        ts_tensor(&k->model, 0, "a", 1, c->model_size);
    if (c->n_optimization_groups > 0) {
        int64_t total = 0;
        for (int i = 0; i < c->n_optimization_groups; i++) {
            int64_t g = c->optimization_groups[i];
            if (g <= 0)
                continue;
            char key[24];
            snprintf(key, sizeof key, "%d", i);
            int d = ts_dict(&k->optimizer, 0, key, 0);
            ts_tensor(&k->optimizer, d, "a", 1, g);
            ts_tensor(&k->optimizer, d, "b", 1, g);
            total += g;
        }
        ts_tensor(&k->optimizer, 0, "combined", 1, total);
    }
    for (int i = 0; i < c->n_layer_parameters; i++)
        if (c->layer_parameters[i] > 0) {
            char key[24];
            snprintf(key, sizeof key, "%d", i);
            ts_tensor(&k->layer, 0, key, 0, c->layer_parameters[i]);
        }
}

void ckpt_init(ckpt_t *k, const config_t *c, int rank, int nranks)
{
    memset(k, 0, sizeof *k);
    k->cfg = c, k->rank = rank, k->nranks = nranks;
    /* base_checkpointing.py:34-37: rank_zero -> rank 0 writes; all_ranks -> every rank */
    k->writer = c->checkpoint_type == CKPT_ALL_RANKS || rank == 0;
    if (mkdir_p(c->checkpoint_folder) < 0) /* storage/file_storage.py create_namespace: makedirs(exist_ok=True) */
        die(EXIT_BADINPUT, "key 'checkpoint-folder': cannot create '%s': %s", c->checkpoint_folder, strerror(errno));
    if (k->writer)
        build_states(k);
}

void ckpt_free(ckpt_t *k)
{
    if (k->writer)
        ts_free(&k->model), ts_free(&k->optimizer), ts_free(&k->layer);
    free(k->ev);
    memset(k, 0, sizeof *k);
}

int ckpt_after_step(const config_t *c, int64_t step)
{
    /* main.py:274-283: next_checkpoint_step starts at steps_between_checkpoints each epoch (main.py:335) and grows
     * by it after each checkpoint: checkpoints after steps s, 2s, ... (s > 0; s = 0 never matches a step >= 1) */
    return c->checkpoint && c->steps_between_checkpoints > 0 && step % c->steps_between_checkpoints == 0;
}

int ckpt_after_epoch(const config_t *c, int64_t epoch)
{
    /* main.py:296-301, 327: next_checkpoint_epoch starts at checkpoint_after_epoch and grows by
     * epochs_between_checkpoints after each checkpoint (0 or less: it never moves, one checkpoint) */
    int64_t a = c->checkpoint_after_epoch, b = c->epochs_between_checkpoints;
    return c->checkpoint && c->steps_between_checkpoints < 0 &&
           (epoch == a || (b > 0 && epoch > a && (epoch - a) % b == 0));
}

/* pytorch_checkpointing.py:137-141: open(name, "wb") and torch.save(state, f). Written under <name>.partial.<pid>
 * and renamed when whole, so a checkpoint under its final name is always complete (a failure removes the partial
 * file; a killed rank leaves it under the partial name only). */
static void save_file(ckpt_t *k, const ts_state_t *s, const char *name, ckpt_event_t *ev)
{
    char tmp[4700];
    snprintf(tmp, sizeof tmp, "%s.partial.%d", name, (int)getpid());
    if (!k->cfg->overwrite && access(name, F_OK) == 0)
        die(EXIT_BADINPUT,
            "key 'checkpoint-folder': %s exists (another run's checkpoint?): remove it, use another folder, or set "
            "overwrite=true to replace it",
            name);
    void *tr = trace_begin("save_state");
    err_ctx()->partial = tmp; /* die() and the signal handlers remove it */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        die(EXIT_RUNTIME, "checkpoint %s: open: %s", tmp, strerror(errno));
    struct stat st;
    /* CPython's open(): the buffer is st_blksize when it is > 1, else io.DEFAULT_BUFFER_SIZE (8192) */
    size_t bufsize = fstat(fd, &st) == 0 && st.st_blksize > 1 ? (size_t)st.st_blksize : 8192;
    (void)lseek(fd, 0, SEEK_CUR); /* BufferedWriter asks the position at open, as Python's open does */
    ts_io_t io = {0};
    if (ts_save(s, fd, bufsize, &io) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: write failed after %lld of %lld bytes: %s", tmp, (long long)io.bytes,
            (long long)ts_file_size(s), strerror(errno));
    if (close(fd) != 0)
        die(EXIT_RUNTIME, "checkpoint %s: close: %s", tmp, strerror(errno));
    if (rename(tmp, name) != 0)
        die(EXIT_RUNTIME, "checkpoint: rename %s -> %s: %s", tmp, name, strerror(errno));
    err_ctx()->partial = NULL;
    trace_end(tr);
    ev->files++;
    ev->bytes += io.bytes;
    ev->writes += io.writes;
}

void ckpt_save(ckpt_t *k, int64_t epoch, int64_t step)
{
    const config_t *c = k->cfg;
    if (k->nev == k->cap)
        k->ev = xrealloc(k->ev, (size_t)(k->cap = k->cap ? 2 * k->cap : 8) * sizeof *k->ev, "the checkpoint log");
    ckpt_event_t *ev = &k->ev[k->nev++];
    *ev = (ckpt_event_t){.epoch = epoch, .step = step};
    void *tr = trace_begin("checkpoint");
    trace_int(tr, "epoch", epoch);
    trace_int(tr, "step", step);
    ev->start = now();
    if (k->writer) {
        char name[4600];
        const char *f = c->checkpoint_folder;
        long long e = (long long)epoch, s = (long long)step;
        /* base_checkpointing.py:70-86 (2.0.0): model, optimizer, then the layers (ranks r % pipeline_parallelism
         * == 0; num_layers files, plus tensor_parallelism more when it is > 1), each a whole state */
        if (!ts_empty(&k->model)) {
            snprintf(name, sizeof name, "%s/model-%lld-%lld-%d.pt", f, e, s, k->rank);
            save_file(k, &k->model, name, ev);
        }
        if (!ts_empty(&k->optimizer)) {
            snprintf(name, sizeof name, "%s/optimizer-%lld-%lld-%d.pt", f, e, s, k->rank);
            save_file(k, &k->optimizer, name, ev);
        }
        if (k->rank % c->pipeline_parallelism == 0 && !ts_empty(&k->layer) && c->num_layers > 0) {
            int64_t layers = c->num_layers + (c->tensor_parallelism > 1 ? c->tensor_parallelism : 0);
            for (int64_t l = 0; l < layers; l++) {
                snprintf(name, sizeof name, "%s/layer-%lld-%lld-%lld-%d.pt", f, (long long)l, e, s, k->rank);
                save_file(k, &k->layer, name, ev);
            }
        }
    }
    ev->end = now();
    trace_end(tr);
}
