/*
 * workers.c — DataLoader worker threads, each running its own Lua state.
 *
 * Why: decoding and augmenting samples in Lua is CPU work that should overlap the training
 * step. A Lua state is single-threaded and nothing may call into it from a thread that does
 * not own it (DESIGN.md), so each worker thread owns a fresh state made by ltorch_newstate()
 * (so `require "torch"` works there) and talks to the main state only through the queues
 * below. Lua closures cannot cross states: the worker builds its dataset from plain data
 * (a module name plus constructor arguments) carried in `config`, a Lua chunk that returns a
 * plain table (see lua/torch/data/_worker.lua).
 *
 * What (all under one mutex, two condition variables):
 *   - per-worker task queues: the main state pushes (batch index, sample indices) to worker
 *     `batch % num_workers` style round robin chosen by the Lua side; n = -1 asks an
 *     iterable-dataset worker for its next batch;
 *   - one result list: a worker posts (batch index, meta string, lt_tensor* array, flags).
 *     The tensor handles change owner (no copy of tensor data: libtorch tensors may move
 *     between threads). `meta` is the batch's structure as a Lua literal, or an error message
 *     with the worker's traceback;
 *   - ltw_pool_get() waits for one batch index at most timeout_ms, and reports a worker that
 *     exited without posting that batch (found with pthread_tryjoin_np, so a thread that
 *     vanished by any route, even pthread_exit, is seen) instead of waiting forever.
 *   - shutdown: ltw_pool_close() raises the flag, wakes everyone, joins each thread for up
 *     to 5 s and detaches the ones still busy; the pool is reference counted (main + one per
 *     live worker) and freed by the last holder, with unclaimed tensors released.
 * Worker threads block all signals, so Ctrl-C reaches the main thread.
 *
 * How (from Lua through the FFI; the declarations are runtime/ltorch_workers.h, whose cdef
 * region lua/torch/data/_pool.lua reads back with ltw_cdef_source()):
 *     local p = C.ltw_pool_new(2, config_src)              -- NULL: ltw_pool_error() says why
 *     C.ltw_pool_put(p, worker, batch, indices, n)
 *     local st = C.ltw_pool_get(p, batch, worker, 100, result)  -- LTW_OK / TIMEOUT / ERROR / DEAD
 *     C.ltw_result_clear(result); C.ltw_pool_close(p)
 *   worker side (torch.data._worker): ltw_worker_next(), ltw_worker_post().
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lua.h>
#include <lauxlib.h>

#include "ltorch.h"
#include "lt.h"
#include "ltorch_workers.h"

typedef struct ltw_task {
    struct ltw_task *next;
    int64_t batch;
    int n;                  /* -1: next batch of an iterable dataset */
    int64_t indices[];
} ltw_task;

typedef struct ltw_item {
    struct ltw_item *next;
    int64_t batch;
    int worker;
    int flags;
    char *meta;
    lt_tensor **tensors;
    int ntensors;
} ltw_item;

typedef struct ltw_worker {
    pthread_t thread;
    int started, joined, finished; /* finished: left its loop normally */
    ltw_task *head, *tail;
    struct ltw_pool *pool;
    int id;
} ltw_worker;

struct ltw_pool {
    pthread_mutex_t mu;
    pthread_cond_t task_cv, result_cv;
    int refs, shutdown, num_workers;
    char *config;
    ltw_item *results;
    ltw_worker *workers;
};

static __thread char pool_error[256];

const char *ltw_pool_error(void) { return pool_error; }

static void deadline_in(struct timespec *ts, int timeout_ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += timeout_ms / 1000;
    ts->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec += 1;
        ts->tv_nsec -= 1000000000L;
    }
}

static void free_item(ltw_item *it)
{
    for (int i = 0; i < it->ntensors; i++)
        lt_tensor_free(it->tensors[i]);
    free(it->tensors);
    free(it->meta);
    free(it);
}

/* Drops one reference; the last one frees everything still queued. Called unlocked. */
static void pool_release(ltw_pool *p)
{
    pthread_mutex_lock(&p->mu);
    int last = --p->refs == 0;
    pthread_mutex_unlock(&p->mu);
    if (!last)
        return;
    for (int w = 0; w < p->num_workers; w++) {
        ltw_task *t = p->workers[w].head;
        while (t != NULL) {
            ltw_task *next = t->next;
            free(t);
            t = next;
        }
    }
    while (p->results != NULL) {
        ltw_item *next = p->results->next;
        free_item(p->results);
        p->results = next;
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->task_cv);
    pthread_cond_destroy(&p->result_cv);
    free(p->workers);
    free(p->config);
    free(p);
}

static int traceback_handler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    luaL_traceback(L, L, msg != NULL ? msg : "(error object is not a string)", 1);
    return 1;
}

/* Posts a failure that happened outside the Lua loop (state setup, a crash of the loop). */
static void post_fatal(ltw_pool *p, int id, const char *msg)
{
    ltw_item *it = calloc(1, sizeof *it);
    if (it == NULL)
        return;
    it->batch = -1;
    it->worker = id;
    it->flags = LTW_RESULT_ERROR;
    it->meta = strdup(msg);
    pthread_mutex_lock(&p->mu);
    it->next = p->results;
    p->results = it;
    pthread_cond_broadcast(&p->result_cv);
    pthread_mutex_unlock(&p->mu);
}

static void *worker_main(void *arg)
{
    ltw_worker *w = arg;
    ltw_pool *p = w->pool;
    lua_State *L = ltorch_newstate(NULL, 0);
    if (L == NULL) {
        post_fatal(p, w->id, "cannot create the worker's Lua state");
    } else {
        lua_pushcfunction(L, traceback_handler);
        lua_getglobal(L, "require");
        lua_pushliteral(L, "torch.data._worker");
        int st = lua_pcall(L, 1, 1, 1);
        if (st == 0) {
            lua_getfield(L, -1, "run");
            lua_remove(L, -2);
            lua_pushlightuserdata(L, p);
            lua_pushinteger(L, w->id);
            lua_pushinteger(L, p->num_workers);
            lua_pushstring(L, p->config);
            st = lua_pcall(L, 4, 0, 1);
        }
        if (st != 0) {
            const char *msg = lua_tostring(L, -1);
            post_fatal(p, w->id, msg != NULL ? msg : "worker failed (no message)");
        }
        lua_close(L);
    }
    pthread_mutex_lock(&p->mu);
    w->finished = 1;
    pthread_cond_broadcast(&p->result_cv);
    pthread_mutex_unlock(&p->mu);
    pool_release(p);
    return NULL;
}

ltw_pool *ltw_pool_new(int num_workers, const char *config)
{
    if (num_workers < 1 || config == NULL) {
        snprintf(pool_error, sizeof pool_error, "num_workers must be >= 1 and config given");
        return NULL;
    }
    ltw_pool *p = calloc(1, sizeof *p);
    if (p != NULL) {
        p->workers = calloc((size_t)num_workers, sizeof *p->workers);
        p->config = strdup(config);
    }
    if (p == NULL || p->workers == NULL || p->config == NULL) {
        if (p != NULL) { free(p->workers); free(p->config); free(p); }
        snprintf(pool_error, sizeof pool_error, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->task_cv, NULL);
    pthread_cond_init(&p->result_cv, NULL);
    p->num_workers = num_workers;
    p->refs = 1;

    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* threads inherit this mask */
    for (int i = 0; i < num_workers; i++) {
        ltw_worker *w = &p->workers[i];
        w->pool = p;
        w->id = i;
        pthread_mutex_lock(&p->mu);
        p->refs++;
        pthread_mutex_unlock(&p->mu);
        int rc = pthread_create(&w->thread, NULL, worker_main, w);
        if (rc != 0) {
            pthread_mutex_lock(&p->mu);
            p->refs--;
            pthread_mutex_unlock(&p->mu);
            snprintf(pool_error, sizeof pool_error, "pthread_create: %s", strerror(rc));
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            void ltw_pool_close(ltw_pool *);
            ltw_pool_close(p);
            return NULL;
        }
        w->started = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return p;
}

int ltw_pool_put(ltw_pool *p, int worker, int64_t batch, const int64_t *indices, int n)
{
    if (worker < 0 || worker >= p->num_workers)
        return LTW_ERROR;
    ltw_task *t = malloc(sizeof *t + sizeof(int64_t) * (size_t)(n > 0 ? n : 0));
    if (t == NULL)
        return LTW_ERROR;
    t->next = NULL;
    t->batch = batch;
    t->n = n;
    if (n > 0)
        memcpy(t->indices, indices, sizeof(int64_t) * (size_t)n);
    pthread_mutex_lock(&p->mu);
    ltw_worker *w = &p->workers[worker];
    if (w->tail != NULL)
        w->tail->next = t;
    else
        w->head = t;
    w->tail = t;
    pthread_cond_broadcast(&p->task_cv);
    pthread_mutex_unlock(&p->mu);
    return LTW_OK;
}

/* A worker whose thread has ended (joined here) without a normal finish: it died. */
static int worker_gone(ltw_pool *p, int id)
{
    ltw_worker *w = &p->workers[id];
    if (!w->started)
        return 1;
    if (!w->joined && pthread_tryjoin_np(w->thread, NULL) == 0) {
        w->joined = 1;
        if (!w->finished) { /* vanished without running its epilogue: release its ref */
            w->finished = 1;
            p->refs--;
        }
    }
    return w->joined || w->finished;
}

static void take(ltw_pool *p, ltw_item *it, ltw_item **link, ltw_result *out)
{
    (void)p;
    *link = it->next;
    out->worker = it->worker;
    out->flags = it->flags;
    out->meta = it->meta;
    out->tensors = it->tensors;
    out->ntensors = it->ntensors;
    free(it);
}

/*
 * Waits up to timeout_ms for `batch`, which `worker` was given. LTW_OK/LTW_ERROR fill *out
 * (LTW_ERROR: out->meta is the message with traceback); a setup failure of any worker
 * (batch -1) is returned as LTW_ERROR too. LTW_DEAD: that worker's thread is gone.
 */
int ltw_pool_get(ltw_pool *p, int64_t batch, int worker, int timeout_ms, ltw_result *out)
{
    struct timespec deadline;
    deadline_in(&deadline, timeout_ms);
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        for (ltw_item **link = &p->results; *link != NULL; link = &(*link)->next) {
            ltw_item *it = *link;
            if (it->batch == batch || it->batch == -1) {
                take(p, it, link, out);
                pthread_mutex_unlock(&p->mu);
                return (out->flags & LTW_RESULT_ERROR) ? LTW_ERROR : LTW_OK;
            }
        }
        if (worker >= 0 && worker < p->num_workers && worker_gone(p, worker)) {
            pthread_mutex_unlock(&p->mu);
            return LTW_DEAD;
        }
        if (pthread_cond_timedwait(&p->result_cv, &p->mu, &deadline) == ETIMEDOUT) {
            pthread_mutex_unlock(&p->mu);
            return LTW_TIMEOUT;
        }
    }
}

void ltw_result_clear(ltw_result *r)
{
    for (int i = 0; i < r->ntensors; i++)
        if (r->tensors[i] != NULL)
            lt_tensor_free(r->tensors[i]);
    free(r->tensors);
    free(r->meta);
    memset(r, 0, sizeof *r);
}

/* Stops the workers and drops the main state's reference (idempotence is the caller's). */
void ltw_pool_close(ltw_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->shutdown = 1;
    pthread_cond_broadcast(&p->task_cv);
    pthread_mutex_unlock(&p->mu);
    struct timespec deadline;
    deadline_in(&deadline, 5000);
    for (int i = 0; i < p->num_workers; i++) {
        ltw_worker *w = &p->workers[i];
        pthread_mutex_lock(&p->mu);
        int skip = !w->started || w->joined;
        pthread_mutex_unlock(&p->mu);
        if (skip)
            continue;
        int rc = pthread_timedjoin_np(w->thread, NULL, &deadline);
        pthread_mutex_lock(&p->mu);
        if (rc == 0) {
            w->joined = 1;
            if (!w->finished) { w->finished = 1; p->refs--; }
        } else {
            pthread_detach(w->thread); /* still busy in its dataset: it frees the pool last */
            w->joined = 1;
        }
        pthread_mutex_unlock(&p->mu);
    }
    pool_release(p);
}

/* ---- worker side ---- */

/* Next task for `worker`: LTW_OK fills batch/n and copies up to capacity indices. */
int ltw_worker_next(ltw_pool *p, int worker, int timeout_ms, int64_t *batch, int *n,
                    int64_t *indices, int capacity)
{
    struct timespec deadline;
    deadline_in(&deadline, timeout_ms);
    pthread_mutex_lock(&p->mu);
    ltw_worker *w = &p->workers[worker];
    while (w->head == NULL && !p->shutdown) {
        if (pthread_cond_timedwait(&p->task_cv, &p->mu, &deadline) == ETIMEDOUT) {
            pthread_mutex_unlock(&p->mu);
            return LTW_TIMEOUT;
        }
    }
    if (p->shutdown) {
        pthread_mutex_unlock(&p->mu);
        return LTW_SHUTDOWN;
    }
    ltw_task *t = w->head;
    if (t->n > capacity) { /* the caller grows its buffer and asks again */
        *n = t->n;
        pthread_mutex_unlock(&p->mu);
        return LTW_ERROR;
    }
    w->head = t->next;
    if (w->head == NULL)
        w->tail = NULL;
    pthread_mutex_unlock(&p->mu);
    *batch = t->batch;
    *n = t->n;
    if (t->n > 0)
        memcpy(indices, t->indices, sizeof(int64_t) * (size_t)t->n);
    free(t);
    return LTW_OK;
}

/* Posts a batch: takes ownership of the ntensors handles (they are freed if posting fails). */
int ltw_worker_post(ltw_pool *p, int worker, int64_t batch, int flags, const char *meta,
                    lt_tensor *const *tensors, int ntensors)
{
    ltw_item *it = calloc(1, sizeof *it);
    if (it != NULL) {
        it->meta = strdup(meta != NULL ? meta : "");
        it->tensors = ntensors > 0 ? malloc(sizeof(lt_tensor *) * (size_t)ntensors) : NULL;
    }
    if (it == NULL || it->meta == NULL || (ntensors > 0 && it->tensors == NULL)) {
        if (it != NULL) { free(it->meta); free(it->tensors); free(it); }
        for (int i = 0; i < ntensors; i++)
            lt_tensor_free(tensors[i]);
        return LTW_ERROR;
    }
    it->batch = batch;
    it->worker = worker;
    it->flags = flags;
    it->ntensors = ntensors;
    for (int i = 0; i < ntensors; i++)
        it->tensors[i] = tensors[i];
    pthread_mutex_lock(&p->mu);
    it->next = p->results;
    p->results = it;
    pthread_cond_broadcast(&p->result_cv);
    pthread_mutex_unlock(&p->mu);
    return LTW_OK;
}

/* For tests: ends the calling worker thread at once, as a crash would (no result, no epilogue). */
void ltw_worker_exit_now(void) { pthread_exit(NULL); }
