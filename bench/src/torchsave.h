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
    int parent; /* index of the dict holding it; -1: the root dict (node 0 is the root) */
    char key[40];
    int key_literal; /* the key is spelled in DLIO's code ('a', 'b', 'combined'): one str object, pickled once */
    int is_dict;
    int64_t numel; /* tensor elements */
    int dtype;     /* enum ts_dtype */
} ts_node_t;

/* torch dtypes DLIO's checkpoints use (pytorch_checkpointing.py get_torch_datatype at 392621b) */
enum ts_dtype { TS_INT8, TS_UINT8, TS_FP16, TS_BF16, TS_FP32, TS_FP64, TS_NDTYPES };
/* DLIO's datatype names (int8, uint8, fp16, bf16, fp32, fp64) -> enum ts_dtype; -1: not one */
int ts_dtype_parse(const char *name);
const char *ts_dtype_name(int dtype);
int ts_dtype_size(int dtype); /* base_checkpointing.py:33-43 get_datatype_size (392621b) */

/* What the tensors hold: zeros (DLIO 2.0.0: torch.randint(high=1)), torch.ones, or torch.rand / torch.randint over
 * the dtype's range (392621b's checkpoint.randomize_tensor, its default) */
enum ts_fill { TS_ZEROS, TS_ONES, TS_RANDOM };

/* n bytes of the tensors' pattern for dtype (a whole number of elements): zeros, ones, or the random draws, the bytes
 * the periodic views of ts_save_fill repeat (the HDF5 checkpoints write from it, ckpth5.c) */
void ts_pattern(uint8_t *buf, size_t n, int dtype, int fill);

typedef struct {
    ts_node_t *n;
    int nn, cap;
} ts_state_t;

void ts_init(ts_state_t *s); /* the empty root dict */
void ts_free(ts_state_t *s);
int ts_dict(ts_state_t *s, int parent, const char *key, int literal); /* returns the new dict's index */
void ts_tensor(ts_state_t *s, int parent, const char *key, int literal, int64_t numel); /* int8 */
void ts_tensor_dt(ts_state_t *s, int parent, const char *key, int literal, int64_t numel, int dtype);
int ts_empty(const ts_state_t *s); /* the root dict holds nothing (DLIO: a falsy state, not saved) */

/* The bytes torch.save writes for the state. */
int64_t ts_file_size(const ts_state_t *s);

typedef struct {
    int64_t writes, bytes;    /* write(2) calls and bytes */
    int64_t reads, rbytes;    /* read(2) calls and bytes (ts_load) */
    int mut_split, mut_short; /* MUTANTS ckpt-split, ckpt-short (mutate.h): the first write in two calls; the file's
                               * last byte not written */
} ts_io_t;

/* Write the file to fd (opened for writing, empty) through a buffer of bufsize bytes (CPython: the file's
 * st_blksize). Tensor bytes are zeros (DLIO 2.0.0: torch.randint(high=1)); they are read from a read-only anonymous
 * mapping, so a tensor of any size costs no memory. Returns 0, or -1 with errno set. */
int ts_save(const ts_state_t *s, int fd, size_t bufsize, ts_io_t *io);
/* The same with the tensors' bytes given by `fill`. TS_ONES and TS_RANDOM come from a periodic view: a memfd of a
 * few MiB (one pattern per dtype) mapped again and again into one contiguous virtual range, so one write(2) of N
 * bytes still touches a bounded amount of memory; the zip CRCs are computed over the bytes written. Random tensors
 * repeat with that period (DLIO's do not): a file system that deduplicates or compresses sees them differently. */
int ts_save_fill(const ts_state_t *s, int fd, size_t bufsize, int fill, ts_io_t *io);
/* torch.load(path) of the file torch.save wrote for this state (torch 2.x, weights_only, mmap off): the calls it
 * makes on the Python file object (measured in the 392621b venv: tell, read(4), seeks, then miniz's readinto of the
 * end of the archive, the end records, the central directory, and per record its local header and its bytes, in
 * the order torch asks for them) through CPython's BufferedReader of bufsize bytes (Modules/_io/bufferedio.c), so
 * the read(2)/lseek(2) calls are torch's. Tensor bytes land in a periodic writable view (bounded memory). Returns 0,
 * or -1 with errno set (EINVAL: file_size, the caller's fstat, is not the size this state's archive has). */
int ts_load(const ts_state_t *s, int fd, int64_t file_size, size_t bufsize, ts_io_t *io);
#endif
