/*
 * lt.h — the C ABI over libtorch that every other layer of ltorch calls.
 *
 * What it is: opaque tensor handles plus `lt_*` functions. Every function returns a status
 * (LT_OK = 0, otherwise an lt_status kind) and leaves the message in a per-thread slot read
 * with lt_last_error(). Nothing throws across this boundary. Results come back through
 * out-params (`lt_tensor **out` first). Booleans are ints (0/1). Dimensions and indices are
 * 0-based, as in PyTorch.
 *
 * How to use: from C, include this header and link libltorch_bindings. From Lua, the text
 * between the LT_CDEF markers is handed to ffi.cdef (lt_cdef_source() returns it, embedded at
 * build time), so this header is the single declaration of the ABI: keep the region free of
 * preprocessor lines. Generated op wrappers (the full ATen surface) live in their own header
 * and source files under bindings/gen/ and follow the same conventions.
 *
 * Ownership: every function that returns an lt_tensor* hands the caller one handle that must be
 * released with lt_tensor_free() exactly once. Input handles are borrowed. A NULL input handle
 * is reported as an error ("tensor was freed"), never dereferenced.
 */
#ifndef LT_H
#define LT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* LT_CDEF_BEGIN */
typedef struct lt_tensor lt_tensor;

typedef enum lt_status {
  LT_OK = 0,
  LT_ERR_RUNTIME = 1,   /* libtorch raised an error while running an op */
  LT_ERR_VALUE = 2,     /* a bad value: shape, size, dtype, range */
  LT_ERR_TYPE = 3,      /* a wrong kind of argument */
  LT_ERR_INDEX = 4,     /* an index out of range */
  LT_ERR_MEMORY = 5,    /* allocation failed */
  LT_ERR_NOT_IMPLEMENTED = 6,
  LT_ERR_FREED = 7      /* a NULL/freed handle was passed */
} lt_status;

/* Scalar kinds: how a Lua number is handed to libtorch (PyTorch's Python int/float/bool). */
typedef enum lt_scalar_kind { LT_SCALAR_FLOAT = 0, LT_SCALAR_INT = 1, LT_SCALAR_BOOL = 2 } lt_scalar_kind;

/* Tensor options: dtype is a c10::ScalarType code, device_type a c10::DeviceType code. */
typedef struct lt_options {
  int dtype;
  int device_type;
  int device_index;   /* -1: the current device of that type */
  int requires_grad;
  int pin_memory;     /* CPU tensors in page-locked memory (needs CUDA, as in PyTorch) */
} lt_options;

/* Live tensor memory, counted by the CPU allocator that ltorch installs. Lua reads these fields
 * directly (no call) to decide when to step its collector. GPU memory is not the CPU
 * allocator's: device_bytes_made estimates the device memory made (a running total, never
 * decreased: each fresh storage of a non-CPU result once, views and shared tensors not), and
 * when it has grown enough Lua asks the device allocators what they really hold
 * (lt_device_memory_poll; lua/torch/_memory.lua has the rule). */
typedef struct lt_memory_stats {
  int64_t live_bytes;
  int64_t peak_bytes;
  int64_t allocations;
  int64_t device_bytes_made;
  /* Results handed to Lua that carry an autograd node (requires_grad, not a leaf): a running
   * total. Each holds a graph node and its saved tensors' bookkeeping, ~2 KB of C++ memory
   * that neither live_bytes nor a handle count shows (lua/torch/_memory.lua weighs it). */
  int64_t graph_results;
} lt_memory_stats;

/* Multi-dimensional index items, PyTorch's x[...] grammar. */
typedef enum lt_index_kind {
  LT_INDEX_INT = 0,       /* x[i]: selects, drops the dim */
  LT_INDEX_SLICE = 1,     /* x[a:b:s]; has_start/has_stop say whether a bound was given */
  LT_INDEX_NONE = 2,      /* x[None]: a new axis */
  LT_INDEX_ELLIPSIS = 3,  /* x[...] */
  LT_INDEX_TENSOR = 4,    /* bool mask or integer index tensor */
  LT_INDEX_BOOL = 5       /* x[True] / x[False] */
} lt_index_kind;

typedef struct lt_index {
  int kind;
  int has_start, has_stop;
  int64_t start, stop, step;
  const lt_tensor *tensor;
} lt_index;

/* ---- errors, versions, memory ---- */
const char *lt_last_error(void);
int lt_last_error_kind(void);
const char *lt_version(void);        /* libtorch's version, e.g. "1.13.1" */
const char *lt_cdef_source(void);    /* this header's LT_CDEF region, for ffi.cdef */
lt_memory_stats *lt_memory(void);
/* Allocated bytes held by the device allocators of the non-CPU results so far (-1: one keeps no
 * statistics); starts a new counting window of device_bytes_made. */
int64_t lt_device_memory_poll(void);
/* Empties the caches of those device allocators (after a full collection, on out of memory). */
void lt_device_empty_cache(void);
/* device_bytes_made's counting rule applied to any tensor (spec): the bytes it would add now. */
int64_t lt_debug_count_result(const lt_tensor *t);
/* Freed tensor blocks of 32 KiB and more are kept mapped for reuse (bindings/lt_large_blocks.cpp):
 * the bytes so kept, and a call that unmaps them all (returns the bytes given back). */
int64_t lt_large_blocks_cached(void);
int64_t lt_large_blocks_release(void);
/* Freed tensor blocks of up to 1 KiB are kept on per-thread lists (bindings/lt_small_blocks.cpp):
 * the bytes the calling thread keeps, and a call that gives them back (returns those bytes). */
int64_t lt_small_blocks_cached(void);
int64_t lt_small_blocks_release(void);
/* Hands the malloc heap's free memory back to the kernel (glibc's malloc_trim(0)): 1 if any went. */
int lt_heap_trim(void);
/* The slab of one Lua state's tensor handles (lua/torch/_memory.lua; bindings/lt_slab.cpp).
 * Slot i (1-based) holds handles[i]: NULL when free, (lt_tensor *)1 from its claim until Lua
 * stores the handle. The free slots below `top` form a stack, free_slots[0 .. nfree-1], whose
 * last entry is handed out next; each sweep rebuilds it so that the lowest slot goes first.
 * Lua only reads the counts (numbers: no allocation) and goes through these calls for the rest
 * — never through the array pointers, which a claim or a sweep may move while a finalizer runs
 * — and no call runs Lua: a finalizer can never find the slab half-changed. A zeroed struct is
 * an empty slab (ffi.new). */
typedef struct lt_slab {
  lt_tensor **handles;
  uint8_t *dead;        /* dead[i] = 1: slot i's ref was collected (set by Lua before a sweep) */
  int32_t *free_slots;
  int32_t top, nfree, capacity;
  /* The release queue: dead handles that a deferred sweep took out of their slots, released one
   * per store (each new result's store frees one, so the next op's allocations reuse memory just
   * freed, still in the CPU's cache; two while more than LT_SLAB_QUEUE_SOFT wait), or all at
   * once by a sweep, lt_slab_drain or lt_slab_close. */
  lt_tensor **queue;
  int32_t nqueued, queue_capacity;
} lt_slab;
enum { LT_SLAB_QUEUE_SOFT = 16384 };
/* A slot for a new handle (marked claimed, its dead mark cleared); 0 when out of memory. */
int32_t lt_slab_claim(lt_slab *slab);
/* Stores a claimed slot's handle (once its ref is in Lua's table of live refs), then releases
 * one queued handle (two while more than LT_SLAB_QUEUE_SOFT wait). */
void lt_slab_store(lt_slab *slab, int32_t slot, lt_tensor *handle);
/* Marks a slot whose ref the collector has freed, for the next lt_slab_sweep. */
void lt_slab_mark_dead(lt_slab *slab, int32_t slot);
/* x:free(): releases the handle, and frees its slot if the slot still holds it. */
void lt_slab_release(lt_slab *slab, int32_t slot, lt_tensor *handle);
/* Releases the handles of the slots marked dead and every queued one, clears the marks, lowers
 * `top` to the highest slot in use, rebuilds the free stack, and moves a slab four or more times
 * bigger than what it holds to arrays between two and four times that (at least 1,024 slots).
 * Returns the number of handles released. */
int32_t lt_slab_sweep(lt_slab *slab);
/* The same sweep, except that the handles of the dead slots go to the release queue instead of
 * being released (any the queue has no room for are released at once). Returns the number of
 * handles queued or released. */
int32_t lt_slab_sweep_later(lt_slab *slab);
/* Releases every queued handle; returns how many. */
int32_t lt_slab_drain(lt_slab *slab);
/* Checks the slab's invariants (for tests): 0 when they hold; otherwise 1 counts out of range,
 * 2 a free-stack entry out of range or not free, 3 a slot twice on the stack, 4 a free slot
 * missing from it, 5 a handle above top, 6 out of memory for the check, 7 queue counts out of
 * range or a queued handle NULL. */
int lt_slab_check(const lt_slab *slab);
/* At lua_close: releases every handle still held and the arrays (the slab is empty again). */
void lt_slab_close(lt_slab *slab);
/* Pops up to `capacity` released ids in [lo, hi) — each Lua state owns one such range, so a
 * state never takes (and drops) another state's ids. */
int lt_drain_released_blobs(int64_t lo, int64_t hi, int64_t *ids, int capacity, int *count);
/* 1, 2, 3, ... per call, process-wide: each Lua state numbers its release ids above serial * 2^32,
 * so states sharing the release queue never mistake each other's ids. */
int64_t lt_next_state_serial(void);
/* Interrupt requests (Ctrl-C, ltorch_interrupt), per thread (bindings/lt_interrupt.cpp):
 * cell_here is the calling thread's cell (never freed; NULL only when out of memory); request is
 * async-signal-safe and callable from any thread; take clears the cell and returns 1 if it was
 * set (the taker raises the one "interrupted!"); clear drops an untaken request. While a cell is
 * set, its thread's compute ops fail with "interrupted!" (taking it) and its collective waits end. */
typedef struct lt_interrupt_cell lt_interrupt_cell;
lt_interrupt_cell *lt_interrupt_cell_here(void);
void lt_interrupt_request(lt_interrupt_cell *cell);
int lt_interrupt_take(lt_interrupt_cell *cell);
void lt_interrupt_clear(lt_interrupt_cell *cell);
int lt_manual_seed(uint64_t seed);
/* PyTorch's torch.seed(): seeds the CPU generator and every CUDA one with a fresh
 * non-deterministic seed (53 bits, so a Lua number holds it exactly) and returns it. */
int lt_seed(uint64_t *out);
int lt_initial_seed(uint64_t *out);   /* the CPU generator's current seed (torch.initial_seed) */
int lt_set_num_threads(int n);
int lt_get_num_threads(int *out);
/* libtorch's global context (bindings/lt_context.cpp): torch.use_deterministic_algorithms and
 * torch.set_float32_matmul_precision; a precision is 0 'highest', 1 'high', 2 'medium'. */
int lt_set_deterministic(int on, int warn_only);
int lt_get_deterministic(int *on, int *warn_only);
int lt_set_float32_matmul_precision(const char *name);
int lt_get_float32_matmul_precision(int *out);
/* libtorch's warnings (TORCH_WARN), printed to stderr like Python's default filter (bindings/
 * lt_warnings.cpp). enable installs ltorch's handler on the calling thread: each distinct warning
 * prints once. set_notify (also enables) queues the thread's warnings and calls notify(ctx) after
 * each; the notified host finds the user's call site and calls flush(site) on that thread, which
 * prints each queued warning once per (site, message). forget(ctx) drops every thread's notify
 * with that ctx (at the host's close) and prints what they still queued. warn_always (libtorch's
 * too: TORCH_WARN_ONCE repeats) prints every warning every time. */
int lt_warnings_enable(void);
int lt_warnings_set_notify(void (*notify)(void *ctx), void *ctx);
void lt_warnings_forget(void *ctx);
int lt_warnings_flush(const char *site);
int lt_set_warn_always(int on);
int lt_get_warn_always(int *out);

/* ---- devices and dtypes ---- */
int lt_device_parse(const char *spec, int *device_type, int *device_index);
int lt_device_check(int device_type, int device_index);  /* error naming the build if unusable */
int lt_cuda_device_count(int *out);
/* CUDA device control; index -1 = the current device. Each fails naming the build without CUDA. */
int lt_cuda_synchronize(int index);
int lt_cuda_current_device(int *out);
int lt_cuda_set_device(int index);
int lt_cuda_manual_seed(uint64_t seed, int index, int all);
/* What the CUDA build carries (lt_cuda.cpp): each 0 when absent; no device needed. */
int lt_cuda_build_info(int *built, int64_t *cudart, int64_t *cudnn, int64_t *cudnn_runtime, int64_t *nccl);
/* The CUDA caching allocator (all 0 / no-ops until it has allocated, as in PyTorch): 1 if it
   has, then allocated, reserved, active bytes and allocation count (current, peak each),
   segments, allocation retries, out-of-memory errors. */
enum { LT_CUDA_MEMORY_STATS = 12 };
int lt_cuda_memory_stats(int index, int64_t *out);
int lt_cuda_reset_peak_memory_stats(int index);
int lt_cuda_empty_cache(void);
/* torch.backends switches in libtorch's global context (lt_cuda.cpp): get / set by number. */
enum {
  LT_FLAG_CUDNN_ENABLED, LT_FLAG_CUDNN_BENCHMARK, LT_FLAG_CUDNN_DETERMINISTIC, LT_FLAG_CUDNN_ALLOW_TF32,
  LT_FLAG_CUDNN_BENCHMARK_LIMIT, LT_FLAG_MATMUL_ALLOW_TF32, LT_FLAG_MATMUL_FP16_REDUCTION,
  LT_FLAG_MATMUL_FP16_SPLIT_K, LT_FLAG_MATMUL_BF16_REDUCTION, LT_FLAG_MATMUL_BF16_SPLIT_K,
  LT_FLAG_MATMUL_FP16_ACCUMULATION, LT_FLAG_MKLDNN_ENABLED, LT_FLAG_MKLDNN_DETERMINISTIC,
  LT_FLAG_MKLDNN_ALLOW_TF32, LT_FLAG_SDP_FLASH, LT_FLAG_SDP_MEM_EFFICIENT, LT_FLAG_SDP_MATH,
  LT_FLAG_SDP_CUDNN, LT_FLAG_SDP_FP16_BF16_REDUCTION_MATH, LT_FLAG_LINALG_BACKEND, LT_FLAG_BLAS_BACKEND,
  LT_FLAG_HAS_MKLDNN, LT_FLAG_HAS_OPENMP, LT_FLAG_HAS_MKL   /* the last three read-only */
};
int lt_backend_flag_get(int which, int64_t *out);
int lt_backend_flag_set(int which, int64_t value);
int lt_fp32_precision_get(const char *backend, const char *op, char *out, int out_size);
int lt_fp32_precision_set(const char *backend, const char *op, const char *precision);
/* CUDA streams, packed as (id, device index); events as owned handles (lt_cuda.cpp). */
int lt_cuda_stream_get(int which, int index, int priority, int64_t *id, int *out_index);
int lt_cuda_stream_exchange(int64_t id, int index, int64_t *prev_id, int *prev_index);
int lt_cuda_stream_op(int64_t id, int index, int op, int64_t *out);
int lt_cuda_event_new(int enable_timing, void **out);
void lt_cuda_event_free(void *event);
int lt_cuda_event_op(void *event, int op, int64_t id, int index, void *other, double *out);
/* What needs the CUDA toolkit's headers (lt_cuda_graph.cpp; without them each raises): device
   properties, free/total memory, CUDA graphs. */
typedef struct lt_cuda_props {
  char name[256]; char uuid[40];
  int64_t total_memory, L2_cache_size;
  int major, minor, multi_processor_count, is_integrated, is_multi_gpu_board,
      max_threads_per_multi_processor, warp_size, regs_per_multiprocessor, pci_bus_id, pci_device_id,
      pci_domain_id, shared_memory_per_block, shared_memory_per_block_optin, shared_memory_per_multiprocessor,
      max_threads_per_block, memory_bus_width, clock_rate, memory_clock_rate;
} lt_cuda_props;
int lt_cuda_has_graphs(int *out);   /* 1: compiled with the toolkit */
int lt_cuda_device_properties(int index, lt_cuda_props *out);
int lt_cuda_mem_get_info(int index, int64_t *free_bytes, int64_t *total_bytes);
int lt_cuda_is_current_stream_capturing(int *out);
int lt_cuda_graph_new(int keep_graph, void **out);
void lt_cuda_graph_free(void *graph);
/* op 0 capture_begin(pool, mode), 1 capture_end, 2 replay, 3 reset, 4 pool (out), 5 instantiate,
   6 enable_debug_mode; mode 0 global, 1 thread_local, 2 relaxed. */
int lt_cuda_graph_op(void *graph, int op, uint64_t pool0, uint64_t pool1, int mode, uint64_t *out);
int lt_cuda_graph_pool_handle(uint64_t *out);
int lt_cuda_can_device_access_peer(int index, int peer, int *out);
int lt_cuda_memory_fraction(int index, int set, double fraction, double *out);
int lt_cuda_sync_debug_mode(int mode, int *out);   /* mode -1: read only */
int lt_cuda_reset_accumulated_memory_stats(int index);
int lt_has_backend(int device_type, int *out);
int lt_dtype_is_floating(int dtype, int *out);
int lt_dtype_item_size(int dtype, int *out);
int lt_promote_types(int a, int b, int *out);

/* ---- handles and metadata ---- */
void lt_tensor_free(lt_tensor *t);
int lt_tensor_shallow_copy(lt_tensor **out, const lt_tensor *t);   /* a second handle, same tensor */
int lt_tensor_dim(const lt_tensor *t, int64_t *out);
int lt_tensor_sizes(const lt_tensor *t, int64_t *sizes, int capacity, int64_t *ndim);
int lt_tensor_strides(const lt_tensor *t, int64_t *strides, int capacity, int64_t *ndim);
int lt_tensor_numel(const lt_tensor *t, int64_t *out);
int lt_tensor_dtype(const lt_tensor *t, int *out);
int lt_tensor_device(const lt_tensor *t, int *device_type, int *device_index);
int lt_tensor_is_contiguous(const lt_tensor *t, int *out);
int lt_tensor_storage_offset(const lt_tensor *t, int64_t *out);
int lt_tensor_data_ptr(const lt_tensor *t, void **out);
int lt_tensor_nbytes(const lt_tensor *t, int64_t *out);
int lt_tensor_same(const lt_tensor *a, const lt_tensor *b, int *out);
int lt_tensor_item_double(const lt_tensor *t, double *out);
int lt_tensor_item_int64(const lt_tensor *t, int64_t *out);
/* Copies all elements, converted to dtype (Double or Long), row-major into buf (numel slots). */
int lt_tensor_copy_to_buffer(const lt_tensor *t, int dtype, void *buf, int64_t numel);

/* ---- creation ---- */
int lt_empty(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt);
int lt_zeros(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt);
int lt_ones(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt);
int lt_full(lt_tensor **out, const int64_t *sizes, int ndim, double value, int kind, const lt_options *opt);
int lt_rand(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt);
int lt_randn(lt_tensor **out, const int64_t *sizes, int ndim, const lt_options *opt);
int lt_randint(lt_tensor **out, int64_t low, int64_t high, const int64_t *sizes, int ndim, const lt_options *opt);
int lt_randperm(lt_tensor **out, int64_t n, const lt_options *opt);
int lt_eye(lt_tensor **out, int64_t n, int64_t m, const lt_options *opt);
int lt_arange(lt_tensor **out, double start, double end, double step, const lt_options *opt);
int lt_linspace(lt_tensor **out, double start, double end, int64_t steps, const lt_options *opt);
int lt_scalar_tensor(lt_tensor **out, double value, int kind, const lt_options *opt);
/* Copies numel values of src_dtype from data into a new tensor of the options' dtype/device. */
int lt_from_data(lt_tensor **out, const void *data, int src_dtype, const int64_t *sizes, int ndim,
                 const lt_options *opt);
/* Wraps memory without copying. strides may be NULL (contiguous). When release_id > 0, the id is
 * queued for lt_drain_released_blobs() once libtorch lets go of the memory, so the owner of the
 * memory (a Lua string, say) can be kept alive exactly as long as needed. */
int lt_from_blob(lt_tensor **out, void *data, const int64_t *sizes, int ndim, const int64_t *strides,
                 int dtype, int64_t release_id);
/* Wraps contiguous CPU memory without copying; release(data, ctx) runs once, from whichever thread
 * drops the last tensor using it. On failure release is not called (the memory stays the
 * caller's). For C hosts (runtime/embed_tensor.c); Lua uses lt_from_blob. */
int lt_from_blob_release(lt_tensor **out, void *data, const int64_t *sizes, int ndim, int dtype,
                         void (*release)(void *data, void *ctx), void *ctx);

/* ---- conversion and copies ---- */
int lt_to(lt_tensor **out, const lt_tensor *t, int dtype, int device_type, int device_index,
          int non_blocking, int copy);
int lt_clone(lt_tensor **out, const lt_tensor *t);
int lt_contiguous(lt_tensor **out, const lt_tensor *t);
int lt_copy_(lt_tensor *dst, const lt_tensor *src);
int lt_detach(lt_tensor **out, const lt_tensor *t);
int lt_fill_(lt_tensor *t, double value, int kind);
int lt_zero_(lt_tensor *t);

/* ---- views ---- */
int lt_view(lt_tensor **out, const lt_tensor *t, const int64_t *sizes, int ndim);
int lt_reshape(lt_tensor **out, const lt_tensor *t, const int64_t *sizes, int ndim);
int lt_expand(lt_tensor **out, const lt_tensor *t, const int64_t *sizes, int ndim);
int lt_permute(lt_tensor **out, const lt_tensor *t, const int64_t *dims, int ndim);
int lt_transpose(lt_tensor **out, const lt_tensor *t, int64_t dim0, int64_t dim1);
int lt_t(lt_tensor **out, const lt_tensor *t);   /* ATen's t (TBackward0), <= 2-D */
int lt_squeeze(lt_tensor **out, const lt_tensor *t, int has_dim, int64_t dim);
int lt_unsqueeze(lt_tensor **out, const lt_tensor *t, int64_t dim);
int lt_narrow(lt_tensor **out, const lt_tensor *t, int64_t dim, int64_t start, int64_t length);
int lt_select(lt_tensor **out, const lt_tensor *t, int64_t dim, int64_t index);
int lt_flatten(lt_tensor **out, const lt_tensor *t, int64_t start_dim, int64_t end_dim);
int lt_index_get(lt_tensor **out, const lt_tensor *t, const lt_index *items, int n);
int lt_index_put_(lt_tensor *t, const lt_index *items, int n, const lt_tensor *value);
int lt_index_put_scalar_(lt_tensor *t, const lt_index *items, int n, double value, int kind);

/* ---- elementwise math (op codes are lt_unary_op / lt_binary_op below) ---- */
typedef enum lt_unary_op {
  LT_NEG, LT_ABS, LT_EXP, LT_LOG, LT_LOG2, LT_LOG10, LT_LOG1P, LT_EXPM1, LT_SQRT, LT_RSQRT,
  LT_SIN, LT_COS, LT_TAN, LT_ASIN, LT_ACOS, LT_ATAN, LT_SINH, LT_COSH, LT_TANH, LT_SIGMOID,
  LT_RELU, LT_FLOOR, LT_CEIL, LT_ROUND, LT_TRUNC, LT_FRAC, LT_SIGN, LT_RECIPROCAL, LT_SQUARE,
  LT_ERF, LT_LOGICAL_NOT, LT_BITWISE_NOT, LT_ISNAN, LT_ISINF, LT_ISFINITE, LT_SILU, LT_GELU,
  LT_UNARY_OP_COUNT
} lt_unary_op;

typedef enum lt_binary_op {
  LT_ADD, LT_SUB, LT_MUL, LT_DIV, LT_POW, LT_REMAINDER, LT_FMOD, LT_FLOOR_DIVIDE,
  LT_EQ, LT_NE, LT_LT, LT_LE, LT_GT, LT_GE, LT_MAXIMUM, LT_MINIMUM, LT_ATAN2,
  LT_LOGICAL_AND, LT_LOGICAL_OR, LT_LOGICAL_XOR, LT_BITWISE_AND, LT_BITWISE_OR, LT_BITWISE_XOR,
  LT_BINARY_OP_COUNT
} lt_binary_op;

int lt_unary(lt_tensor **out, int op, const lt_tensor *t);
int lt_unary_(int op, lt_tensor *t);
/* alpha scales b for LT_ADD / LT_SUB (PyTorch's alpha=); ignored otherwise. */
int lt_binary(lt_tensor **out, int op, const lt_tensor *a, const lt_tensor *b, double alpha);
int lt_binary_(int op, lt_tensor *a, const lt_tensor *b, double alpha);
int lt_binary_scalar(lt_tensor **out, int op, const lt_tensor *a, double b, int kind);
int lt_binary_scalar_(int op, lt_tensor *a, double b, int kind);
int lt_scalar_binary(lt_tensor **out, int op, double a, int kind, const lt_tensor *b);
int lt_clamp(lt_tensor **out, const lt_tensor *t, int has_min, double min, int has_max, double max);
int lt_clamp_(lt_tensor *t, int has_min, double min, int has_max, double max);
int lt_where(lt_tensor **out, const lt_tensor *cond, const lt_tensor *a, const lt_tensor *b);
int lt_masked_fill(lt_tensor **out, const lt_tensor *t, const lt_tensor *mask, double value, int kind);
int lt_masked_fill_(lt_tensor *t, const lt_tensor *mask, double value, int kind);
int lt_leaky_relu(lt_tensor **out, const lt_tensor *t, double negative_slope);
int lt_lerp(lt_tensor **out, const lt_tensor *a, const lt_tensor *b, double weight);
int lt_allclose(const lt_tensor *a, const lt_tensor *b, double rtol, double atol, int equal_nan, int *out);
int lt_equal(const lt_tensor *a, const lt_tensor *b, int *out);

/* ---- reductions; dims == NULL with ndims == 0 reduces everything ---- */
typedef enum lt_reduce_op {
  LT_SUM, LT_MEAN, LT_PROD, LT_AMAX, LT_AMIN, LT_ALL, LT_ANY, LT_LOGSUMEXP, LT_REDUCE_OP_COUNT
} lt_reduce_op;
int lt_reduce(lt_tensor **out, int op, const lt_tensor *t, const int64_t *dims, int ndims,
              int keepdim, int dtype);   /* dtype -1: libtorch's default */
int lt_max_dim(lt_tensor **values, lt_tensor **indices, const lt_tensor *t, int64_t dim, int keepdim,
               int is_min);
int lt_argmax(lt_tensor **out, const lt_tensor *t, int has_dim, int64_t dim, int keepdim, int is_min);
int lt_var(lt_tensor **out, const lt_tensor *t, const int64_t *dims, int ndims, double correction,
           int keepdim, int is_std);
int lt_norm(lt_tensor **out, const lt_tensor *t, double p, const int64_t *dims, int ndims, int keepdim);
int lt_cumsum(lt_tensor **out, const lt_tensor *t, int64_t dim);
int lt_sort(lt_tensor **values, lt_tensor **indices, const lt_tensor *t, int64_t dim, int descending);
int lt_topk(lt_tensor **values, lt_tensor **indices, const lt_tensor *t, int64_t k, int64_t dim,
            int largest, int sorted);

/* ---- linear algebra, joins, gathers ---- */
int lt_matmul(lt_tensor **out, const lt_tensor *a, const lt_tensor *b);
int lt_mm(lt_tensor **out, const lt_tensor *a, const lt_tensor *b);
int lt_bmm(lt_tensor **out, const lt_tensor *a, const lt_tensor *b);
int lt_addmm(lt_tensor **out, const lt_tensor *bias, const lt_tensor *a, const lt_tensor *b,
             double beta, double alpha);
/* at::linear(input, weight, bias); bias NULL: none. */
int lt_linear(lt_tensor **out, const lt_tensor *input, const lt_tensor *weight, const lt_tensor *bias);
int lt_outer(lt_tensor **out, const lt_tensor *a, const lt_tensor *b);
int lt_dot(lt_tensor **out, const lt_tensor *a, const lt_tensor *b);
int lt_cat(lt_tensor **out, const lt_tensor *const *ts, int n, int64_t dim);
int lt_stack(lt_tensor **out, const lt_tensor *const *ts, int n, int64_t dim);
int lt_index_select(lt_tensor **out, const lt_tensor *t, int64_t dim, const lt_tensor *index);
int lt_gather(lt_tensor **out, const lt_tensor *t, int64_t dim, const lt_tensor *index);
int lt_scatter(lt_tensor **out, const lt_tensor *t, int64_t dim, const lt_tensor *index,
               const lt_tensor *src);
int lt_masked_select(lt_tensor **out, const lt_tensor *t, const lt_tensor *mask);
int lt_nonzero(lt_tensor **out, const lt_tensor *t);
int lt_one_hot(lt_tensor **out, const lt_tensor *t, int64_t num_classes);

/* ---- activations and losses that training loops need from day one ---- */
int lt_softmax(lt_tensor **out, const lt_tensor *t, int64_t dim, int log);
int lt_nll_loss(lt_tensor **out, const lt_tensor *logp, const lt_tensor *target, int reduction,
                int64_t ignore_index);    /* reduction: 0 none, 1 mean, 2 sum */
int lt_cross_entropy(lt_tensor **out, const lt_tensor *logits, const lt_tensor *target, int reduction,
                     int64_t ignore_index, double label_smoothing);
int lt_mse_loss(lt_tensor **out, const lt_tensor *a, const lt_tensor *b, int reduction);

/* ---- optimizers: a whole update in one call (lt_optim.cpp) ---- */
/* Adam/AdamW's multi-tensor step over n parameters, as PyTorch's _multi_tensor_adam without
 * capturable; max_exp_avg_sqs may be NULL unless amsgrad. */
int lt_optim_adam_foreach(const lt_tensor *const *params, const lt_tensor *const *grads,
                          const lt_tensor *const *exp_avgs, const lt_tensor *const *exp_avg_sqs,
                          const lt_tensor *const *max_exp_avg_sqs, const lt_tensor *const *steps, int n, double lr,
                          double beta1, double beta2, double eps, double weight_decay, int decoupled, int amsgrad,
                          int maximize);

/* ---- autograd ---- */
int lt_tensor_requires_grad(const lt_tensor *t, int *out);
int lt_tensor_set_requires_grad(lt_tensor *t, int requires_grad);
int lt_tensor_is_leaf(const lt_tensor *t, int *out);
int lt_tensor_grad(lt_tensor **out, const lt_tensor *t);           /* *out = NULL: no grad */
int lt_tensor_set_grad(lt_tensor *t, const lt_tensor *grad);       /* grad NULL clears it */
int lt_tensor_grad_fn_name(const lt_tensor *t, const char **out);  /* NULL: no grad_fn */
int lt_tensor_retain_grad(lt_tensor *t);
/* x.data = y: swaps the tensor's storage/shape/dtype for y's, keeping its identity (parameters
 * stay the same objects for optimizers when a module moves or changes dtype). */
int lt_tensor_set_data(lt_tensor *t, const lt_tensor *data);
int lt_tensor_backward(const lt_tensor *t, const lt_tensor *gradient, int retain_graph, int create_graph);
int lt_autograd_grad(lt_tensor **results, const lt_tensor *const *outputs, int n_outputs,
                     const lt_tensor *const *grad_outputs, const lt_tensor *const *inputs, int n_inputs,
                     int retain_graph, int create_graph, int allow_unused);
int lt_grad_enabled(int *out);
int lt_set_grad_enabled(int enabled);
int lt_inference_mode_enter(void **guard);
int lt_inference_mode_exit(void *guard);
int lt_is_inference_mode(int *out);
int lt_set_anomaly_enabled(int enabled);
int lt_anomaly_enabled(int *out);
/* ---- the autograd graph above a tensor (lt_graph.cpp): x.grad_fn and its next_functions ----
 * An lt_node is an opaque handle that keeps its autograd Node alive (a shared_ptr); free it with
 * lt_node_free. lt_tensor_grad_fn: *out = NULL for a leaf. lt_node_next: edge i of the node;
 * *out = NULL (input_nr 0) for an input that needs no grad, as PyTorch's (None, 0). lt_node_name:
 * the C++ node's name(), as PyTorch's ("torch::autograd::AccumulateGrad" for a leaf). lt_node_variable:
 * the leaf tensor of an AccumulateGrad node (*out = NULL for any other node). lt_node_id: the
 * node's address, for identity (a node shared by two branches has one id). */
typedef struct lt_node lt_node;
int lt_tensor_grad_fn(const lt_tensor *t, lt_node **out);
int lt_node_name(const lt_node *node, const char **out);
int lt_node_num_next(const lt_node *node, int *out);
int lt_node_next(const lt_node *node, int i, lt_node **out, int *input_nr);
int lt_node_variable(const lt_node *node, lt_tensor **out);
int lt_node_same(const lt_node *a, const lt_node *b, int *out);
int lt_node_id(const lt_node *node, uint64_t *out);
int lt_node_free(lt_node *node);
/* ---- generic operator calls: any registered ATen operator through the boxed dispatcher ----
 * The generated op surface (lua/torch/_gen/) uses these: the Lua side knows each overload's
 * schema and packs arguments as tagged values; results come back the same way. */
typedef enum lt_value_tag {
  LT_V_NONE = 0, LT_V_TENSOR = 1, LT_V_INT = 2, LT_V_DOUBLE = 3, LT_V_BOOL = 4,
  LT_V_SCALAR_INT = 5, LT_V_SCALAR_DOUBLE = 6, LT_V_SCALAR_BOOL = 7,
  LT_V_INT_LIST = 8, LT_V_DOUBLE_LIST = 9, LT_V_BOOL_LIST = 10,
  LT_V_TENSOR_LIST = 11, LT_V_OPT_TENSOR_LIST = 12, LT_V_STRING = 13,
  LT_V_DEVICE = 14, LT_V_SCALAR_TYPE = 15, LT_V_LAYOUT = 16, LT_V_MEMORY_FORMAT = 17,
  LT_V_SYM_INT = 18, LT_V_SYM_INT_LIST = 19
} lt_value_tag;

/* One argument or result. Lists: p points at n elements (int64_t, double, int (bools) or
 * lt_tensor* (NULL = None in optional lists)). Strings: p is a NUL-terminated char*. Devices:
 * i = type code, n = index. Result lists are allocated by the bindings: release them with
 * lt_value_release(). */
typedef struct lt_value {
  int tag;
  int64_t i;
  double d;
  const void *p;
  int64_t n;
} lt_value;

typedef struct lt_op lt_op;
/* Finds "aten::name" with overload ("" for the default one); *out = NULL if not registered. */
int lt_op_find(lt_op **out, const char *name, const char *overload);
int lt_op_schema(const lt_op *op, const char **out);   /* the registered schema, as text */
int lt_op_call(const lt_op *op, const lt_value *args, int nargs, lt_value *results, int capacity,
               int *nresults);
void lt_value_release(lt_value *v);
/* ---- automatic mixed precision: libtorch's autocast state (thread-local) ----
 * device_type is a c10::DeviceType code: 0 cpu, 1 cuda. lt_autocast_enter validates first, then
 * saves the previous state into *prev and switches: dtype < 0 keeps the current autocast dtype,
 * cache_enabled < 0 keeps the cache setting. lt_autocast_exit restores *prev and clears the cast
 * cache when the outermost region closes. Enter/exit pair up LIFO on one thread. */
typedef struct lt_autocast_state {
  int enabled;
  int dtype;
  int cache_enabled;
} lt_autocast_state;
int lt_autocast_enter(int device_type, int enabled, int dtype, int cache_enabled, lt_autocast_state *prev);
int lt_autocast_exit(int device_type, const lt_autocast_state *prev);
int lt_autocast_is_enabled(int device_type, int *out);
int lt_autocast_get_dtype(int device_type, int *out);
int lt_autocast_is_cache_enabled(int *out);
int lt_autocast_clear_cache(void);
/* ---- checkpoints: PyTorch's zip container, atomic files, RNG state (lt_serialize.cpp) ---- */
typedef struct lt_zip_reader lt_zip_reader;
typedef struct lt_zip_writer lt_zip_writer;
int lt_zip_reader_open(lt_zip_reader **out, const char *path);
void lt_zip_reader_free(lt_zip_reader *r);
int lt_zip_reader_has(lt_zip_reader *r, const char *name, int *out);
int lt_zip_reader_read(lt_tensor **out, lt_zip_reader *r, const char *name);  /* uint8, 1-D */
int lt_zip_writer_open(lt_zip_writer **out, const char *path);
int lt_zip_writer_add(lt_zip_writer *w, const char *name, const void *data, int64_t size);
int lt_zip_writer_finish(lt_zip_writer *w);   /* end of archive, flush, fsync, close */
void lt_zip_writer_free(lt_zip_writer *w);    /* also abandons an unfinished archive */
/* Creates "<path>.tmp.<host>.<pid>.XXXXXX" (capacity: #path + 300 is always enough), first
 * removing those beside it whose writer on this host is gone (a killed save's). */
int lt_file_temp(const char *path, char *buf, int capacity);
int lt_file_sync(const char *path);
int lt_file_commit(const char *tmp, const char *path);        /* rename, fsync the folder */
int lt_rng_get_state(lt_tensor **out);                        /* CPU generator, uint8 */
int lt_rng_set_state(const lt_tensor *state);
/* Any device type's default generator (lt_random.cpp); index -1: the current device. */
int lt_default_generator_get_state(int device_type, int index, lt_tensor **out);
int lt_default_generator_set_state(int device_type, int index, const lt_tensor *state);
int lt_default_generator_initial_seed(int device_type, int index, uint64_t *out);
int lt_default_generator_seed(int device_type, int index, uint64_t *out);
/* ---- torch.Generator (CPU) and the samplers' draws (lt_cpu_generator.cpp); NULL g = the default ---- */
typedef struct lt_cpu_generator lt_cpu_generator;
int lt_cpu_generator_new(lt_cpu_generator **out);
void lt_cpu_generator_free(lt_cpu_generator *g);
int lt_cpu_generator_manual_seed(lt_cpu_generator *g, uint64_t seed);
int lt_cpu_generator_initial_seed(lt_cpu_generator *g, uint64_t *out);
int lt_cpu_generator_get_state(lt_tensor **out, lt_cpu_generator *g);
int lt_cpu_generator_set_state(lt_cpu_generator *g, const lt_tensor *state);
int lt_cpu_generator_randperm(lt_tensor **out, lt_cpu_generator *g, int64_t n);               /* int64 */
int lt_cpu_generator_randint(lt_tensor **out, lt_cpu_generator *g, int64_t high, int64_t size); /* [0, high) */
int lt_cpu_generator_random_int64(lt_cpu_generator *g, int64_t *out);  /* empty((), int64).random_(g) */
int lt_cpu_generator_multinomial(lt_tensor **out, lt_cpu_generator *g, const lt_tensor *weights, int64_t n,
                             int replacement);

/* ---- TorchScript modules (lt_jit.cpp) ---- */
typedef struct lt_jit_module lt_jit_module;
int lt_jit_load(lt_jit_module **out, const char *path);
void lt_jit_free(lt_jit_module *m);
int lt_jit_call(lt_jit_module *m, const char *method, const lt_tensor *const *inputs, int n,
                lt_tensor **outputs, int capacity, int *nout, int *is_tuple);
int lt_jit_train(lt_jit_module *m, int mode);
int lt_jit_is_training(lt_jit_module *m, int *out);
int lt_jit_named_tensors(lt_jit_module *m, int which, int *count);  /* 0 params, 1 buffers */
int lt_jit_named_tensor(lt_jit_module *m, int i, const char **name, lt_tensor **out);
/* ---- distributed: c10d stores and process groups (lt_distributed.cpp) ----
 * Collectives wait for their Work with the group's timeout; a dead or silent peer is an error.
 * Reduce op codes: 0 sum, 1 product, 2 min, 3 max, 4 avg (NCCL only). */
typedef struct lt_store lt_store;
typedef struct lt_process_group lt_process_group;
int lt_dist_has_backend(const char *backend, int *out);
int lt_dist_store_tcp(lt_store **out, const char *host, int port, int is_server, int world_size,
                      int64_t timeout_ms);
int lt_dist_store_file(lt_store **out, const char *path, int world_size, int64_t timeout_ms);
int lt_dist_store_prefix(lt_store **out, const char *prefix, lt_store *base);
void lt_dist_store_free(lt_store *s);
int lt_dist_store_set(lt_store *s, const char *key, const char *value, int64_t len);
int lt_dist_store_get(lt_store *s, const char *key, char **out, int64_t *len);
void lt_dist_buffer_free(char *p);
int lt_dist_store_add(lt_store *s, const char *key, int64_t delta, int64_t *out);
int lt_dist_pg_new(lt_process_group **out, lt_store *s, const char *backend, int rank, int world_size,
                   int64_t timeout_ms, const char *gloo_hostname, const char *gloo_iface);
void lt_dist_pg_free(lt_process_group *g);
int lt_dist_pg_rank(lt_process_group *g, int *rank, int *world_size);
int lt_dist_all_reduce(lt_process_group *g, lt_tensor *t, int op);
int lt_dist_broadcast(lt_process_group *g, lt_tensor *t, int src);
int lt_dist_all_gather(lt_process_group *g, lt_tensor **outs, int n, const lt_tensor *t);
int lt_dist_barrier(lt_process_group *g);
int lt_dist_pg_bind_device(lt_process_group *g, int device_type, int device_index);
/* ---- DistributedDataParallel: c10d's Reducer (lt_ddp.cpp) ----
 * Hooks on the parameters' gradient accumulators all-reduce bucketed gradients during any
 * backward that follows a prepared forward; see lua/torch/nn/parallel.lua for the call order. */
typedef struct lt_ddp lt_ddp;
int lt_ddp_new(lt_ddp **out, lt_process_group *g, lt_tensor *const *params, const char *const *names, int n,
               int64_t bucket_cap_bytes, int64_t first_bucket_cap_bytes, int find_unused,
               int gradient_as_bucket_view, int static_graph);
void lt_ddp_free(lt_ddp *d);
int lt_ddp_rebuild_buckets(lt_ddp *d, int *rebuilt);
int lt_ddp_prepare_forward(lt_ddp *d);
int lt_ddp_prepare_backward(lt_ddp *d, lt_tensor *const *outputs, int n);
int lt_ddp_register_comm_hook(lt_ddp *d, const char *name);
int lt_ddp_broadcast_coalesced(lt_process_group *g, lt_tensor *const *ts, int n, int64_t buffer_size, int src);
/* ---- custom autograd: Lua Functions, tensor hooks, backward jobs (lt_function.cpp) ----
 * A job runs the engine off the Lua thread; the Lua thread services Lua calls with
 * lt_autograd_job_next (req NULL: the job is finished) and lt_autograd_reply, then
 * lt_autograd_job_finish (joins; reports the engine's error; frees the job). */
typedef struct lt_autograd_job lt_autograd_job;
typedef struct lt_autograd_request lt_autograd_request;
enum { LT_AUTOGRAD_CALL_FUNCTION = 1, LT_AUTOGRAD_CALL_HOOK = 2 };
enum { LT_FUNCTION_DIRTY = 1, LT_FUNCTION_NON_DIFFERENTIABLE = 2 };
int lt_autograd_backward_start(lt_autograd_job **out, const lt_tensor *const *tensors, int n,
                               const lt_tensor *const *grads, int retain_graph, int create_graph);
int lt_autograd_grad_start(lt_autograd_job **out, const lt_tensor *const *outputs, int n_outputs,
                           const lt_tensor *const *grad_outputs, const lt_tensor *const *inputs, int n_inputs,
                           int retain_graph, int create_graph, int allow_unused);
int lt_autograd_job_next(lt_autograd_job *job, lt_autograd_request **req, int *kind, int64_t *id, int *n,
                         int *grad_mode);
int lt_autograd_request_input(lt_autograd_request *req, int i, lt_tensor **out);
int lt_autograd_reply(lt_autograd_request *req, const lt_tensor *const *grads, int n, const char *error);
int lt_autograd_job_finish(lt_autograd_job *job, lt_tensor **results, int capacity);
/* The number of jobs this thread has started and not finished; after an error (or interrupt) in
 * the service loop, lt_autograd_unwind(depth, error) ends every job above `depth`: requests get
 * `error` as their reply, the engines finish, the jobs are freed, the grad mode is restored. */
int lt_autograd_job_depth(int *depth);
int lt_autograd_unwind(int depth, const char *error);
/* Lua contexts to drop: pops up to `capacity` released ids in [lo, hi) (the Lua state's range). */
int lt_autograd_released(int64_t lo, int64_t hi, int64_t *ids, int capacity, int *n);
int lt_function_attach(lt_tensor **results, const lt_tensor *const *outputs, int n_outputs,
                       const lt_tensor *const *inputs, int n_inputs, const int *flags, int64_t id,
                       const char *name);
int lt_tensor_register_hook(const lt_tensor *t, int64_t id, int *handle);
int lt_tensor_remove_hook(const lt_tensor *t, int handle);
/* x:register_post_accumulate_grad_hook (a leaf that requires grad): after x.grad is accumulated,
 * the engine asks Lua to run hook `id` with x. One per tensor: a tensor that has one keeps it and
 * *current says its id. remove drops it. */
int lt_tensor_post_accumulate_hook(const lt_tensor *t, int64_t id, int64_t *current);
int lt_tensor_remove_post_accumulate_hook(const lt_tensor *t);
/* ---- the profiler: libtorch's autograd profiler over Kineto (lt_profiler.cpp) ----
 * start prepares and enables it on the calling thread (activities: LT_PROFILER_* bits); stop
 * disables it and hands back the result (free with lt_profiler_result_free). Events are read by
 * index; times are absolute ns (count gives the trace's start); an event's name lives as long as
 * the result. record_function: a USER_SCOPE at::RecordFunction range; exit ends and frees it,
 * free (the collector's path) ends it too. */
enum { LT_PROFILER_CPU = 1, LT_PROFILER_CUDA = 2 };
typedef struct lt_profiler_result lt_profiler_result;
typedef struct lt_record_function lt_record_function;
typedef struct lt_profiler_event {
  const char *name;
  uint64_t start_ns, end_ns;
  uint64_t start_thread, end_thread, fwd_thread;
  int64_t sequence_nr;
  uint64_t correlation_id, linked_correlation_id;
  int device_type, device_index;     /* c10::DeviceType code */
  int64_t device_resource_id;
  int64_t nbytes;                    /* "[memory]" events: bytes allocated (negative: freed) */
  int scope;                         /* at::RecordScope: 0 FUNCTION, 1 BACKWARD_FUNCTION, ... 6 USER_SCOPE */
  int activity_type;                 /* libkineto::ActivityType */
  int is_async, is_hidden;
  int n_shapes;                      /* input shapes recorded (record_shapes) */
} lt_profiler_event;
int lt_profiler_start(int activities, int record_shapes, int profile_memory, int with_stack);
int lt_profiler_enabled(int *on);
int lt_profiler_stop(lt_profiler_result **out);
void lt_profiler_result_free(lt_profiler_result *r);
int lt_profiler_result_count(const lt_profiler_result *r, int64_t *n, uint64_t *trace_start_ns);
int lt_profiler_result_event(const lt_profiler_result *r, int64_t i, lt_profiler_event *out);
int lt_profiler_result_shape(const lt_profiler_result *r, int64_t i, int input, const int64_t **dims, int *ndim);
int lt_profiler_result_save(lt_profiler_result *r, const char *path);
int lt_record_function_enter(lt_record_function **out, const char *name);
int lt_record_function_exit(lt_record_function *rf);
void lt_record_function_free(lt_record_function *rf);
/* LT_CDEF_END */

#ifdef __cplusplus
}
#endif

#endif /* LT_H */
