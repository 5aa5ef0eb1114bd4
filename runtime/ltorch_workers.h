/*
 * ltorch_workers.h — the DataLoader worker ABI (`ltw_*`, runtime/workers.c): the one declaration
 * of it, included by workers.c and handed to the Lua side's ffi.cdef.
 *
 * What: a pool of worker threads, each owning its own Lua state. The main state queues index
 * lists (ltw_pool_put) and takes batches back in order (ltw_pool_get); a worker state takes its
 * tasks (ltw_worker_next) and posts results (ltw_worker_post). Tensor handles change owner with a
 * result (no data copy). Statuses are the LTW_* codes below; ltw_pool_new's failure message is
 * read with ltw_pool_error() (per thread).
 *
 * How: the text between the LTW_CDEF markers is embedded at build time
 * (cmake/embed_cdef.cmake -> <build>/gen/ltw_cdef_gen.c) and returned by ltw_cdef_source();
 * lua/torch/data/_pool.lua hands it to ffi.cdef, so neither side writes these declarations again.
 * Keep the region free of preprocessor lines. lt_tensor comes from bindings/lt.h (declared on the
 * Lua side by torch._C first).
 */
#ifndef LTORCH_WORKERS_H
#define LTORCH_WORKERS_H

#include <stdint.h>

#include "lt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LTW_CDEF_BEGIN */
/* Statuses of ltw_pool_get / ltw_worker_next / ltw_worker_post / ltw_pool_put. */
enum { LTW_OK = 0, LTW_TIMEOUT = 1, LTW_ERROR = 2, LTW_DEAD = 3, LTW_SHUTDOWN = 4 };
/* ltw_result.flags / ltw_worker_post's flags: the meta is an error message; the worker's
 * iterable dataset is exhausted. */
enum { LTW_RESULT_ERROR = 1, LTW_RESULT_END = 2 };

typedef struct ltw_pool ltw_pool;

/* What ltw_pool_get hands the main state; release with ltw_result_clear. */
typedef struct ltw_result {
  int worker;
  int flags;
  char *meta;             /* the batch as a Lua literal, or the error message with traceback */
  lt_tensor **tensors;    /* owned by the result until the caller takes (and NULLs) them */
  int ntensors;
} ltw_result;

const char *ltw_cdef_source(void);   /* this header's LTW_CDEF region, for ffi.cdef */
const char *ltw_pool_error(void);
/* NULL on failure (ltw_pool_error says why). config: a Lua chunk returning the worker config. */
ltw_pool *ltw_pool_new(int num_workers, const char *config);
/* n = -1 asks an iterable-dataset worker for its next batch (indices NULL). */
int ltw_pool_put(ltw_pool *p, int worker, int64_t batch, const int64_t *indices, int n);
int ltw_pool_get(ltw_pool *p, int64_t batch, int worker, int timeout_ms, ltw_result *out);
void ltw_result_clear(ltw_result *r);
void ltw_pool_close(ltw_pool *p);
/* Worker side (lua/torch/data/_worker.lua). */
int ltw_worker_next(ltw_pool *p, int worker, int timeout_ms, int64_t *batch, int *n,
                    int64_t *indices, int capacity);
int ltw_worker_post(ltw_pool *p, int worker, int64_t batch, int flags, const char *meta,
                    lt_tensor *const *tensors, int ntensors);
void ltw_worker_exit_now(void);      /* pthread_exit: lets specs kill a worker thread */
/* LTW_CDEF_END */

#ifdef __cplusplus
}
#endif

#endif
