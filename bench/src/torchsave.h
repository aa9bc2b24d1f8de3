/* torch.save(state, f) as DLIO's PyTorch checkpointing calls it (f: a Python file opened "wb"), for DLIO's states:
 * dicts whose values are 1-D tensors or dicts of them. The file is the zip container torch 2.x writes (records
 * 64-byte aligned, a data descriptor after each, zip64 end records), with the pickle torch writes for that state,
 * and its bytes reach the file system through CPython's buffered writer, so the write calls are DLIO's too. What is
 * not byte-identical: the 40-digit serialization id (torch derives it from C++ std::hash values). */
#ifndef H5DLIO_TORCHSAVE_H
#define H5DLIO_TORCHSAVE_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int parent;      /* index of the dict holding it; -1: the root dict (node 0 is the root) */
    char key[40];
    int key_literal; /* the key is spelled in DLIO's code ('a', 'b', 'combined'): one str object, pickled once */
    int is_dict;
    int64_t numel;   /* tensor elements */
} ts_node_t;

typedef struct {
    ts_node_t *n;
    int nn, cap;
} ts_state_t;

void ts_init(ts_state_t *s); /* the empty root dict */
void ts_free(ts_state_t *s);
int ts_dict(ts_state_t *s, int parent, const char *key, int literal); /* returns the new dict's index */
void ts_tensor(ts_state_t *s, int parent, const char *key, int literal, int64_t numel);
int ts_empty(const ts_state_t *s); /* the root dict holds nothing (DLIO: a falsy state, not saved) */

/* The bytes torch.save writes for the state (int8 tensors). */
int64_t ts_file_size(const ts_state_t *s);

typedef struct {
    int64_t writes, bytes; /* write(2) calls and bytes */
} ts_io_t;

/* Write the file to fd (opened for writing, empty) through a buffer of bufsize bytes (CPython: the file's
 * st_blksize). Tensor bytes are zeros (DLIO 2.0.0: torch.randint(high=1)); they are read from a read-only anonymous
 * mapping, so a tensor of any size costs no memory. Returns 0, or -1 with errno set. */
int ts_save(const ts_state_t *s, int fd, size_t bufsize, ts_io_t *io);
#endif
