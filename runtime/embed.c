/*
 * embed.c — ltorch runtimes for host applications: create, destroy, run a file or a string,
 * call a function, report errors (the embedding half of ltorch.h).
 *
 * Why: a C or C++ program that wants a model scripted in Lua (load a checkpoint, classify)
 * must be able to drive ltorch without ever being aborted, printed at or longjmp'd through:
 * every failure comes back as a status and a message.
 *
 * What: a runtime is a Lua state made by ltorch_newstate (the same environment the `ltorch`
 * executable gets, minus Ctrl-C handling: signals belong to the host) plus the last error
 * message and a busy flag. Every entry point runs one job inside lua_cpcall:
 *     [message handler] load chunk / resolve function, push args -> lua_pcall -> results
 * so Lua errors, including out-of-memory while pushing a value, unwind only Lua and our
 * own frames and end in the cpcall. A failure stores the message (with a traceback when the
 * error came from running code) and clears the results. The host-visible stack is left as it
 * was (the job runs on the cpcall's own frame).
 *
 * Interrupts: ltorch_interrupt(rt) may come from another thread or a signal handler, so it only
 * sets rt->interrupt and, while a call runs, a count hook (lua_sethook is signal-safe, the way
 * lua.c stops a script on Ctrl-C). The hook, on the runtime's own thread, raises "interrupted!"
 * if the flag is still set, else removes itself: a hook that lands just after the call ended
 * finds the flag cleared by the next call's start and does nothing.
 *
 * How: see ltorch.h; embed_value.c converts values, embed_tensor.c wraps host buffers.
 */
#define _GNU_SOURCE /* dladdr */

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "ltorch.h"
#include "internal.h"
#include "embed_internal.h"
#include "lt.h"

static _Thread_local char thread_error[512];

int ltorch__set_thread_error(int status, const char *msg)
{
    snprintf(thread_error, sizeof thread_error, "%s", status == LTORCH_OK ? "" : msg);
    return status;
}

const char *ltorch_error(const ltorch_runtime *rt)
{
    if (rt == NULL)
        return thread_error;
    return rt->error != NULL ? rt->error : "";
}

static void set_error(ltorch_runtime *rt, const char *msg)
{
    free(rt->error);
    rt->error = msg != NULL ? strdup(msg) : NULL;
    if (msg != NULL && rt->error == NULL)
        rt->error = strdup("not enough memory");
}

void ltorch__set_error(ltorch_runtime *rt, const char *msg)
{
    set_error(rt, msg);
}

lua_State *ltorch_runtime_lua(ltorch_runtime *rt)
{
    return rt != NULL ? rt->L : NULL;
}

/* ------------------------------------------------------------------ create, destroy -- */

/* The path of the object holding this code: libltorch.so, or the host for a static link. */
static const char anchor = 0;

static char *own_path(void)
{
    Dl_info info;
    if (dladdr(&anchor, &info) != 0 && info.dli_fname != NULL &&
        strchr(info.dli_fname, '/') != NULL)
        return realpath(info.dli_fname, NULL);
    return ltorch_exe_path();
}

/* opt->lua_dir and opt->package_path go in front of package.path (package_path first). */
static int setup_paths(lua_State *L)
{
    const ltorch_options *opt = lua_touserdata(L, 1);
    if (opt->lua_dir != NULL) {
        ltorch_prepend_path(L, opt->lua_dir);
        lua_getglobal(L, "_LTORCH");
        lua_pushstring(L, opt->lua_dir);
        lua_setfield(L, -2, "lua_dir");
        lua_pop(L, 1);
    }
    if (opt->package_path != NULL) {
        lua_getglobal(L, "package");
        lua_getfield(L, -1, "path");
        lua_pushfstring(L, "%s;%s", opt->package_path, lua_tostring(L, -1));
        lua_setfield(L, -3, "path");
    }
    return 0;
}

int ltorch_runtime_new(const ltorch_options *opt, ltorch_runtime **out)
{
    static const ltorch_options defaults = {NULL, NULL, NULL, 0, 0};
    ltorch_runtime *rt;
    char *path;
    if (out == NULL)
        return ltorch__set_thread_error(LTORCH_ERR_ARG, "ltorch_runtime_new: out is NULL");
    *out = NULL;
    if (opt == NULL)
        opt = &defaults;
    if (opt->num_threads > 0 && lt_set_num_threads(opt->num_threads) != 0)
        return ltorch__set_thread_error(LTORCH_ERR_ARG, lt_last_error());
    rt = calloc(1, sizeof *rt);
    if (rt == NULL)
        return ltorch__set_thread_error(LTORCH_ERR_MEMORY, "not enough memory");
    atomic_flag_clear(&rt->busy);
    atomic_init(&rt->running, 0);
    atomic_init(&rt->interrupt, 0);
    path = opt->exe_path == NULL ? own_path() : NULL;
    rt->L = ltorch_newstate(opt->exe_path != NULL ? opt->exe_path : path, opt->flags);
    free(path);
    if (rt->L == NULL) {
        free(rt);
        return ltorch__set_thread_error(LTORCH_ERR_MEMORY, "cannot create a Lua state");
    }
    lua_pushlightuserdata(rt->L, rt);
    lua_setfield(rt->L, LUA_REGISTRYINDEX, "ltorch.runtime");
    if (lua_cpcall(rt->L, setup_paths, (void *)opt) != 0) {
        ltorch_runtime_free(rt);
        return ltorch__set_thread_error(LTORCH_ERR_MEMORY, "not enough memory");
    }
    *out = rt;
    return ltorch__set_thread_error(LTORCH_OK, NULL);
}

void ltorch_runtime_free(ltorch_runtime *rt)
{
    if (rt == NULL)
        return;
    lua_close(rt->L); /* runs the tensors' finalizers */
    free(rt->error);
    free(rt);
}

/* ------------------------------------------------------------------------- interrupt -- */

static void interrupt_hook(lua_State *L, lua_Debug *ar)
{
    ltorch_runtime *rt;
    lua_getfield(L, LUA_REGISTRYINDEX, "ltorch.runtime");
    rt = lua_touserdata(L, -1);
    lua_pop(L, 1);
    lua_sethook(L, NULL, 0, 0);
    if (rt == NULL || !atomic_exchange(&rt->interrupt, 0))
        return;
    if (rt->cell != NULL && !lt_interrupt_take(rt->cell))
        return; /* a tensor op already raised this interrupt (LT_TRY_OP): one raise, not two */
    if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
        lua_pushfstring(L, "%s:%d: interrupted!", ar->short_src, ar->currentline);
    else
        lua_pushliteral(L, "interrupted!");
    lua_error(L);
}

/* Async-signal-safe: atomics and lua_sethook only. */
int ltorch_interrupt(ltorch_runtime *rt)
{
    if (rt == NULL)
        return LTORCH_ERR_ARG;
    atomic_store(&rt->interrupt, 1);
    if (atomic_load(&rt->running)) {
        lt_interrupt_request(rt->cell); /* tensor ops and collective waits stop too */
        lua_sethook(rt->L, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
    }
    return LTORCH_OK;
}

/* ------------------------------------------------------------------------------ jobs -- */

enum job_kind { JOB_FILE, JOB_STRING, JOB_CALL };

struct job {
    enum job_kind kind;
    const char *text; /* file path, code, or function name */
    const char *chunkname;
    const ltorch_value *args;
    int nargs;
    ltorch_value *results;
    int nresults;
    int status; /* the LTORCH_ERR_* class of a failure in progress; 0: from lua_cpcall */
};

/* Strings get a traceback; other error objects their __tostring or their type. */
static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Pushes the function named by "name", "a.b.c" or "module:fn". */
static void push_function(lua_State *L, const char *func)
{
    const char *colon = strrchr(func, ':');
    const char *p = func;
    if (colon != NULL) {
        lua_getglobal(L, "require");
        lua_pushlstring(L, func, (size_t)(colon - func));
        lua_call(L, 1, 1);
        p = colon + 1;
    } else {
        lua_pushvalue(L, LUA_GLOBALSINDEX);
    }
    for (;;) {
        const char *dot = colon != NULL ? NULL : strchr(p, '.');
        size_t len = dot != NULL ? (size_t)(dot - p) : strlen(p);
        if (!lua_istable(L, -1))
            luaL_error(L, "'%s': cannot index a %s value before '%s'", func,
                       luaL_typename(L, -1), p);
        lua_pushlstring(L, p, len);
        lua_gettable(L, -2);
        lua_remove(L, -2);
        if (dot == NULL)
            break;
        p = dot + 1;
    }
    if (!lua_isfunction(L, -1)) {
        if (!luaL_getmetafield(L, -1, "__call"))
            luaL_error(L, "'%s' is not a function (a %s value)", func, luaL_typename(L, -1));
        lua_pop(L, 1); /* the __call field: the object itself is callable */
    }
}

static int load_chunk(lua_State *L, struct job *j)
{
    if (j->kind == JOB_FILE)
        return luaL_loadfile(L, j->text);
    return luaL_loadbuffer(L, j->text, strlen(j->text),
                           j->chunkname != NULL ? j->chunkname : "=embed");
}

static int run_job(lua_State *L)
{
    struct job *j = lua_touserdata(L, 1);
    int base, i, st;
    lua_settop(L, 0);
    lua_pushcfunction(L, msghandler);
    base = lua_gettop(L);
    if (j->kind == JOB_CALL) {
        j->status = LTORCH_ERR_TYPE;
        push_function(L, j->text);
        luaL_checkstack(L, j->nargs + LUA_MINSTACK, "too many arguments");
        for (i = 0; i < j->nargs; i++)
            ltorch__push_value(L, &j->args[i], i + 1, &j->status);
    } else if ((st = load_chunk(L, j)) != 0) {
        j->status = st == LUA_ERRSYNTAX ? LTORCH_ERR_SYNTAX
                  : st == LUA_ERRMEM    ? LTORCH_ERR_MEMORY : LTORCH_ERR_FILE;
        lua_error(L);
    }
    j->status = 0;
    luaL_checkstack(L, j->nresults + LUA_MINSTACK, "too many results");
    st = lua_pcall(L, j->kind == JOB_CALL ? j->nargs : 0, j->nresults, base);
    if (st != 0) {
        j->status = st;
        lua_error(L);
    }
    for (i = 0; i < j->nresults; i++)
        ltorch__to_value(L, base + 1 + i, &j->results[i], i + 1, &j->status);
    j->status = 0;
    return 0;
}

static int do_job(ltorch_runtime *rt, struct job *j)
{
    int st, i, top;
    if (rt == NULL)
        return ltorch__set_thread_error(LTORCH_ERR_ARG, "ltorch: runtime is NULL");
    if (j->nresults < 0 || (j->nresults > 0 && j->results == NULL))
        return ltorch__set_thread_error(LTORCH_ERR_ARG, "ltorch: bad results array");
    for (i = 0; i < j->nresults; i++)
        j->results[i] = ltorch_nil_value();
    if (atomic_flag_test_and_set(&rt->busy))
        return LTORCH_ERR_BUSY; /* rt->error belongs to the running call: leave it alone */
    if (j->text == NULL || j->nargs < 0 || (j->nargs > 0 && j->args == NULL)) {
        set_error(rt, "ltorch: bad argument (NULL file, code or name, or a bad args array)");
        atomic_flag_clear(&rt->busy);
        return LTORCH_ERR_ARG;
    }
    j->status = 0;
    top = lua_gettop(rt->L);
    atomic_store(&rt->interrupt, 0); /* an interrupt before the call is not for it */
    rt->cell = lt_interrupt_cell_here(); /* this thread's: the runtime may move between threads */
    lt_interrupt_clear(rt->cell);
    atomic_store(&rt->running, 1);
    st = lua_cpcall(rt->L, run_job, j);
    atomic_store(&rt->running, 0);
    if (atomic_exchange(&rt->interrupt, 0))
        lt_interrupt_clear(rt->cell); /* an interrupt the call never raised ends with it */
    if (st != 0) {
        const char *msg = lua_tostring(rt->L, -1);
        set_error(rt, msg != NULL ? msg : "(error object is not a string)");
        st = j->status != 0 ? j->status : st;
        for (i = 0; i < j->nresults; i++)
            ltorch_value_clear(&j->results[i]);
    } else {
        set_error(rt, NULL);
    }
    lua_settop(rt->L, top);
    atomic_flag_clear(&rt->busy);
    return st;
}

int ltorch_run_file(ltorch_runtime *rt, const char *path, ltorch_value *results, int nresults)
{
    struct job j = {JOB_FILE, path, NULL, NULL, 0, results, nresults, 0};
    return do_job(rt, &j);
}

int ltorch_run_string(ltorch_runtime *rt, const char *code, const char *chunkname,
                      ltorch_value *results, int nresults)
{
    struct job j = {JOB_STRING, code, chunkname, NULL, 0, results, nresults, 0};
    return do_job(rt, &j);
}

int ltorch_call(ltorch_runtime *rt, const char *func, const ltorch_value *args, int nargs,
                ltorch_value *results, int nresults)
{
    struct job j = {JOB_CALL, func, NULL, args, nargs, results, nresults, 0};
    return do_job(rt, &j);
}
