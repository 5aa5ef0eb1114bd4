/*
 * ltorch.h — the runtime's C API: the `ltorch` executable's state, and the embedding API that
 * lets a host application run ltorch (Lua + libtorch) inside itself.
 *
 * Why: the `ltorch` executable (main.c), data-loader workers and any host application go
 * through the same few calls, so a host gets exactly the state the CLI gets (standard
 * libraries, ltorch's module paths, the `_LTORCH` table).
 *
 * Two levels:
 *
 * 1. Lua states (used by main.c and the workers). ltorch_newstate() opens the LuaJIT
 *    libraries, puts ltorch's Lua directory in front of `package.path` and sets the global
 *     _LTORCH = { lua_dir = "<dir>"|nil, exe = "<path>"|nil, version = "0.1.0",
 *                 interrupt_pending = <lightuserdata>, check_interrupt = <function> }
 *    ltorch_pcall() is lua_pcall with a traceback handler and SIGINT turned into the Lua
 *    error "interrupted!"; ltorch_report() prints a failed call's message to stderr.
 *        lua_State *L = ltorch_newstate(NULL, 0);          // NULL: use /proc/self/exe
 *        int st = luaL_loadstring(L, "print(_LTORCH.version)");
 *        if (st == 0) st = ltorch_pcall(L, 0, 0);
 *        ltorch_report(L, st);
 *        lua_close(L);
 *
 * 2. Runtimes (the embedding API, libltorch; runtime/embed*.c). An ltorch_runtime owns one Lua
 *    state. Every entry point returns a status (LTORCH_OK = 0) and never aborts the host,
 *    touches signal handlers (Ctrl-C stays the host's) or longjmps through host frames: Lua
 *    errors are caught inside and come back as a status plus ltorch_error(rt) (message and Lua
 *    traceback). Nothing is printed, except by Lua code that prints.
 *        ltorch_runtime *rt;
 *        if (ltorch_runtime_new(NULL, &rt) != LTORCH_OK) die(ltorch_error(NULL));
 *        ltorch_run_file(rt, "model.lua", NULL, 0);                 // defines predict()
 *        float x[2][4] = {...};
 *        int64_t shape[2] = {2, 4};
 *        ltorch_tensor *in;
 *        ltorch_tensor_from_buffer(x, LTORCH_FLOAT32, shape, 2, NULL, NULL, &in);  // no copy
 *        ltorch_value arg = ltorch_tensor_value(in), res[2];
 *        if (ltorch_call(rt, "predict", &arg, 1, res, 2) != LTORCH_OK)
 *            fprintf(stderr, "%s\n", ltorch_error(rt));              // the host goes on
 *        ...read res[0].tensor with ltorch_tensor_data(), res[1].number...
 *        ltorch_value_clear(&res[0]); ltorch_value_clear(&res[1]);
 *        ltorch_tensor_free(in);
 *        ltorch_runtime_free(rt);
 *    Threads: a process may hold any number of runtimes; each is used by one thread at a time
 *    (two threads entering one runtime at once get LTORCH_ERR_BUSY). Tensor handles
 *    (ltorch_tensor) are independent of runtimes: they may outlive the runtime that returned
 *    them and move between threads. libtorch's intra-op thread pool is process-wide.
 *
 * Build: find_package(ltorch) then link ltorch::ltorch (or ltorch::ltorch_static), or
 *     cc app.c $(pkg-config --cflags --libs ltorch)
 */
#ifndef LTORCH_H
#define LTORCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include <lua.h>

#define LTORCH_VERSION "0.1.0"
#define LTORCH_PROGNAME "ltorch"

/* Flags for ltorch_newstate. */
#define LTORCH_NOENV 1u /* ignore LUA_PATH, LUA_CPATH and LTORCH_PATH (the -E option) */

/*
 * A new state with libraries, paths and _LTORCH set up. exe_path names the running
 * executable (its directory locates the Lua library); NULL reads /proc/self/exe.
 * Returns NULL (after printing why) when out of memory or setup fails.
 */
lua_State *ltorch_newstate(const char *exe_path, unsigned flags);

/*
 * lua_pcall(L, narg, nres, <traceback handler>) with Ctrl-C armed for the duration:
 * SIGINT raises "interrupted!" in the running Lua code. Returns the lua_pcall status;
 * on error the message (with traceback) is on the stack top.
 */
int ltorch_pcall(lua_State *L, int narg, int nres);

/*
 * If status is not 0, prints "ltorch: <message>" to stderr and pops the message.
 * Returns status unchanged.
 */
int ltorch_report(lua_State *L, int status);

/* Prints "ltorch: <msg>" to stderr (for errors found outside Lua, e.g. bad options). */
void ltorch_message(const char *msg);

/*
 * Interactive loop: reads lines from stdin (readline when stdin is a terminal), runs
 * them, prints results and errors, until end of input. Leaves the stack as it found it.
 */
void ltorch_repl(lua_State *L);

/* ======================================================================== embedding API ==== */

typedef struct ltorch_runtime ltorch_runtime;

/* A tensor handle: the same object as bindings/lt.h's lt_tensor, so lt_* functions accept it.
 * Each handle the API gives out is released with ltorch_tensor_free() exactly once. */
typedef struct lt_tensor ltorch_tensor;

/* Status codes. The Lua ones have lua.h's values. */
typedef enum ltorch_status {
    LTORCH_OK = 0,
    LTORCH_ERR_RUN = 2,     /* a Lua error while running (message + traceback in ltorch_error) */
    LTORCH_ERR_SYNTAX = 3,  /* the chunk does not compile */
    LTORCH_ERR_MEMORY = 4,  /* out of memory */
    LTORCH_ERR_HANDLER = 5, /* error while handling an error */
    LTORCH_ERR_FILE = 6,    /* cannot read the file */
    LTORCH_ERR_TYPE = 7,    /* a value of the wrong kind (an argument, a result, a tensor) */
    LTORCH_ERR_TENSOR = 8,  /* libtorch refused a tensor operation */
    LTORCH_ERR_BUSY = 9,    /* the runtime is already running a call (another thread) */
    LTORCH_ERR_ARG = 10     /* a bad argument from the host (NULL pointer, bad count) */
} ltorch_status;

/* dtype codes: libtorch's c10::ScalarType numbering. */
enum {
    LTORCH_UINT8 = 0, LTORCH_INT8 = 1, LTORCH_INT16 = 2, LTORCH_INT32 = 3, LTORCH_INT64 = 4,
    LTORCH_FLOAT16 = 5, LTORCH_FLOAT32 = 6, LTORCH_FLOAT64 = 7, LTORCH_BOOL = 11,
    LTORCH_BFLOAT16 = 15
};

/* Options for ltorch_runtime_new; NULL or all-zero means the defaults. */
typedef struct ltorch_options {
    /* ltorch's Lua directory (holding torch/init.lua). NULL: $LTORCH_PATH, then the lua/ or
     * share/ltorch/lua directory beside libltorch (build tree or install prefix), then beside
     * exe_path. */
    const char *lua_dir;
    const char *exe_path; /* reported as _LTORCH.exe; NULL: libltorch's own path */
    /* Put in front of package.path, e.g. "/opt/app/lua/?.lua;/opt/app/lua/?/init.lua"
     * (the host's own modules); NULL: nothing added. */
    const char *package_path;
    int num_threads;      /* > 0: libtorch's intra-op thread count (process-wide); 0: unchanged */
    unsigned flags;       /* LTORCH_NOENV: ignore LUA_PATH, LUA_CPATH, LTORCH_PATH */
} ltorch_options;

/*
 * Creates a runtime: a fresh Lua state with ltorch's libraries and module paths. `require
 * "torch"` happens on first use (or run `torch = require "torch"` yourself). On failure *out
 * is NULL and ltorch_error(NULL) says why.
 */
int ltorch_runtime_new(const ltorch_options *opt, ltorch_runtime **out);

/* Closes the Lua state (running its finalizers) and frees the runtime. NULL is a no-op. Tensor
 * handles the host still holds stay valid. */
void ltorch_runtime_free(ltorch_runtime *rt);

/*
 * Stops the call running on rt: its Lua code raises "interrupted!" at the next instruction it
 * runs in the interpreter, so the call returns LTORCH_ERR_RUN with that message, and rt stays
 * usable. Callable from any thread and from a signal handler (async-signal-safe). With no call
 * running it does nothing. Not seen: code inside a JIT-compiled trace that never exits it
 * (a tight `while true do end`) and waits inside C (a long libtorch op) until they return to the
 * interpreter. A host's own lua_sethook on this state is replaced while an interrupt is pending.
 * Returns LTORCH_OK, or LTORCH_ERR_ARG for a NULL rt.
 */
int ltorch_interrupt(ltorch_runtime *rt);

/* The runtime's Lua state, for hosts that want the Lua C API (same thread rules apply). */
lua_State *ltorch_runtime_lua(ltorch_runtime *rt);

/*
 * The message of the last failed call on rt (with a Lua traceback for Lua errors), "" when the
 * last call succeeded. With rt NULL: the last failure of a runtime-less call on this thread
 * (ltorch_runtime_new, ltorch_tensor_*). Valid until the next call on rt (resp. this thread).
 */
const char *ltorch_error(const ltorch_runtime *rt);

/* Values crossing the boundary. As arguments, strings and tensors are borrowed (a tensor gets
 * a new handle inside Lua). As results they are owned by the caller: ltorch_value_clear. */
typedef enum ltorch_type {
    LTORCH_TNIL = 0, LTORCH_TBOOLEAN = 1, LTORCH_TNUMBER = 2, LTORCH_TSTRING = 3,
    LTORCH_TTENSOR = 4
} ltorch_type;

typedef struct ltorch_value {
    ltorch_type type;
    double number;         /* TNUMBER; TBOOLEAN: 0 or 1 */
    const char *string;    /* TSTRING: NUL-terminated (results: a malloc'd copy) */
    size_t length;         /* TSTRING: byte length (args: 0 means strlen(string)) */
    ltorch_tensor *tensor; /* TTENSOR (results: a new handle, contiguous) */
} ltorch_value;

/* Frees a result's string or tensor handle and sets *v to nil. Safe on any value. */
void ltorch_value_clear(ltorch_value *v);

static inline ltorch_value ltorch_nil_value(void)
{
    ltorch_value v = {LTORCH_TNIL, 0, NULL, 0, NULL};
    return v;
}
static inline ltorch_value ltorch_number_value(double x)
{
    ltorch_value v = {LTORCH_TNUMBER, x, NULL, 0, NULL};
    return v;
}
static inline ltorch_value ltorch_string_value(const char *s)
{
    ltorch_value v = {LTORCH_TSTRING, 0, s, 0, NULL};
    return v;
}
static inline ltorch_value ltorch_tensor_value(ltorch_tensor *t)
{
    ltorch_value v = {LTORCH_TTENSOR, 0, NULL, 0, t};
    return v;
}

/*
 * Runs a Lua file / a string of Lua code in rt. Its first nresults return values are stored in
 * results (missing ones are nil; results may be NULL when nresults is 0). chunkname names the
 * string in messages (NULL: "=embed").
 */
int ltorch_run_file(ltorch_runtime *rt, const char *path, ltorch_value *results, int nresults);
int ltorch_run_string(ltorch_runtime *rt, const char *code, const char *chunkname,
                      ltorch_value *results, int nresults);

/*
 * Calls a function with nargs arguments; stores nresults results as ltorch_run_string does.
 * func names it:  "name"         the global `name`
 *                 "a.b.c"        the field path from the global `a`
 *                 "module:fn"    require("module").fn   (module may contain dots)
 * A result that is not nil, a boolean, a number, a string or a tensor is LTORCH_ERR_TYPE.
 * On any failure every results[i] is nil.
 */
int ltorch_call(ltorch_runtime *rt, const char *func, const ltorch_value *args, int nargs,
                ltorch_value *results, int nresults);

/*
 * Tables as results: ltorch_call returns a fixed number of plain values, never a table (a table
 * result is LTORCH_ERR_TYPE, naming it). Return several values instead (`return t.loss,
 * t.logits` or `return unpack(list)` with nresults = the count), or use the Lua C API on
 * ltorch_runtime_lua(rt) for nested data.
 */

/*
 * A host function callable from Lua (see ltorch_register). It receives the Lua arguments as
 * values it borrows for the call (strings and tensors stay valid until it returns) and writes at
 * most max_results results; it returns how many it wrote, or a negative number after writing a
 * NUL-terminated message into error (error_size bytes) to raise a Lua error with it. Result
 * strings are copied after fn returns, so they must outlive the return (a literal, or memory
 * the host keeps, e.g. through ud; never fn's own stack); result tensors are taken over (ltorch
 * frees the handle, e.g. one made by ltorch_tensor_from_buffer). It never sees the Lua state, so it
 * cannot longjmp; it must not call into the same runtime (that call gets LTORCH_ERR_BUSY).
 */
typedef int (*ltorch_host_fn)(void *ud, const ltorch_value *args, int nargs,
                              ltorch_value *results, int max_results, char *error,
                              size_t error_size);

#define LTORCH_HOST_MAX_RESULTS 16 /* max_results a host function gets */

/*
 * Makes fn callable from Lua code in rt as `name` ("name": a global; "a.b.c": a field, the
 * tables on the way made when missing). ud is passed back to fn on every call. Lua arguments
 * that are not nil, booleans, numbers, strings or tensors, and a host failure, are Lua errors
 * raised at the Lua caller's line ("<name>: <message>"). Returns LTORCH_OK, LTORCH_ERR_ARG
 * (NULL rt, name or fn, an empty name), LTORCH_ERR_TYPE (a non-table in the way) or
 * LTORCH_ERR_BUSY.
 */
int ltorch_register(ltorch_runtime *rt, const char *name, ltorch_host_fn fn, void *ud);

/* Called once, from any thread, when libtorch no longer uses a host buffer. */
typedef void (*ltorch_release_fn)(void *data, void *ctx);

/*
 * Wraps the caller's contiguous CPU buffer as a tensor of the given dtype and shape without
 * copying. release(data, ctx) (may be NULL) runs when the last tensor using the memory is gone:
 * after ltorch_tensor_free() of this handle and of every view that Lua code kept. On failure
 * release is not called.
 */
int ltorch_tensor_from_buffer(void *data, int dtype, const int64_t *shape, int ndim,
                              ltorch_release_fn release, void *ctx, ltorch_tensor **out);

/* The tensor's dtype (an LTORCH_* code) and shape: ndim dims, the first `capacity` of them
 * stored in shape (shape may be NULL when capacity is 0). */
int ltorch_tensor_info(const ltorch_tensor *t, int *dtype, int64_t *shape, int capacity,
                       int *ndim);

/* The element data of a contiguous CPU tensor (results of ltorch_call are contiguous) and its
 * size in bytes; LTORCH_ERR_TYPE for another device or layout. Valid while the handle lives. */
int ltorch_tensor_data(const ltorch_tensor *t, void **data, int64_t *nbytes);

/* Releases a handle (NULL is a no-op). */
void ltorch_tensor_free(ltorch_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* LTORCH_H */
