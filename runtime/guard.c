/*
 * guard.c — state changes that no error can leak: set a thread state, run a Lua function, restore.
 *
 * Why: torch.no_grad, inference_mode, autocast, detect_anomaly, a Function's forward (grad off),
 * a Lua backward called by the engine (its grad mode), an RNG fork and a backward job change
 * state, run Lua code, then must put the state back. Written in Lua, a Lua instruction runs
 * between the change and the pcall that protects the call, and between the pcall's return and the
 * restore; a host's count hook (lua_sethook(L, hook, LUA_MASKCOUNT, n) that raises), a memory error
 * from the host's allocator or Ctrl-C can land on it and leave, say, grad mode off for good.
 * PyTorch restores such state in C++ destructors whatever raised. Here one C function sets the
 * state, runs the Lua function with lua_pcall and restores before it re-raises: between the set
 * and the restore no Lua instruction runs outside that pcall, and the restore allocates nothing
 * in Lua (it cannot fail with a memory error).
 *
 * What: ltorch_guard_register(L, t) adds to the table at t (_LTORCH) the table `guard` of
 *     with_grad(enabled, fn, ...)                  grad mode = enabled
 *     with_inference(fn, ...)                      inference mode on (a c10 guard)
 *     with_autocast(code, enabled, dtype, cache, fn, ...)   an autocast region (lt_autocast_enter)
 *     with_anomaly(enabled, jit_was_on, fn, ...)   anomaly mode; turning it on turns the JIT off
 *                                                  (libtorch's backtraces and LuaJIT's traces do
 *                                                  not mix) and leaving turns it back on if
 *                                                  jit_was_on
 *     with_rng(restore, set, fn, ...)              restore, set: lt_tensor* cdata (set may be
 *                                                  nil): the CPU generator gets `set` before fn
 *                                                  and `restore` after
 *     with_fork({type, index, state, ...}, fn, ...)   an RNG fork: each generator named (type
 *                                                  0: the CPU one, else a c10 device type and
 *                                                  index) gets `state` back after fn
 *     with_job(fn, ...)                            an autograd job's service loop: on an error
 *                                                  lt_autograd_unwind answers and ends every job
 *                                                  fn started before it re-raises
 *     failed                                       a light userdata: the first result when the
 *                                                  set itself failed, followed by lt_last_error()
 * Each returns fn's results, or re-raises fn's error (any error object, memory errors included)
 * after the restore. A set that fails changes nothing and runs nothing: the caller raises the
 * message at its user's line (torch._guard).
 *
 * How: lua/torch/_guard.lua is the library's one entry; it falls back to the same operations in
 * Lua (pcall, then restore) on a bare LuaJIT, where no host hook is ltorch's concern.
 */
#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>

#include "internal.h"
#include "lt.h"

#define LUA_TCDATA_LUAJIT 10 /* lua_type() of an FFI cdata in LuaJIT */

static char failed_tag; /* its address is the `failed` sentinel */

/* Runs the function at fn_index with the values above it; returns the lua_pcall status with the
 * results (or the error object) in place of fn and its arguments. */
static int call_at(lua_State *L, int fn_index)
{
    return lua_pcall(L, lua_gettop(L) - fn_index, LUA_MULTRET, 0);
}

/* After the restore: fn's results, or its error raised again. */
static int finish(lua_State *L, int fn_index, int status)
{
    if (status != 0)
        return lua_error(L);
    return lua_gettop(L) - fn_index + 1;
}

/* The set failed: `failed`, lt_last_error(). */
static int set_failed(lua_State *L)
{
    lua_pushlightuserdata(L, &failed_tag);
    lua_pushstring(L, lt_last_error());
    return 2;
}

/* fn may be any callable (a table with __call): lua_pcall reports a value that is not one. */
static void check_fn(lua_State *L, int fn_index)
{
    luaL_checkany(L, fn_index);
}

static int l_with_grad(lua_State *L)
{
    int enabled = lua_toboolean(L, 1), previous = 1, status;
    check_fn(L, 2);
    if (lt_grad_enabled(&previous) != 0 || lt_set_grad_enabled(enabled) != 0)
        return set_failed(L);
    status = call_at(L, 2);
    lt_set_grad_enabled(previous);
    return finish(L, 2, status);
}

static int l_with_inference(lua_State *L)
{
    void *guard = NULL;
    int status;
    check_fn(L, 1);
    if (lt_inference_mode_enter(&guard) != 0)
        return set_failed(L);
    status = call_at(L, 1);
    lt_inference_mode_exit(guard);
    return finish(L, 1, status);
}

static int l_with_autocast(lua_State *L)
{
    lt_autocast_state prev;
    int code = (int)luaL_checkinteger(L, 1), status;
    int enabled = lua_toboolean(L, 2);
    int dtype = (int)luaL_checkinteger(L, 3), cache = (int)luaL_checkinteger(L, 4);
    check_fn(L, 5);
    if (lt_autocast_enter(code, enabled, dtype, cache, &prev) != 0)
        return set_failed(L);
    status = call_at(L, 5);
    lt_autocast_exit(code, &prev);
    return finish(L, 5, status);
}

static int l_with_anomaly(lua_State *L)
{
    int enabled = lua_toboolean(L, 1), jit_was_on = lua_toboolean(L, 2), previous = 0, status;
    int jit_off = 0;
    check_fn(L, 3);
    if (lt_anomaly_enabled(&previous) != 0 || lt_set_anomaly_enabled(enabled) != 0)
        return set_failed(L);
    if (enabled && !previous && jit_was_on) {
        luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_FLUSH);
        luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
        jit_off = 1;
    }
    status = call_at(L, 3);
    lt_set_anomaly_enabled(previous);
    if (jit_off && !previous)
        luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_ON);
    return finish(L, 3, status);
}

/* The lt_tensor* held by an FFI cdata `lt_tensor*` at index i, or NULL for nil. */
static const lt_tensor *tensor_arg(lua_State *L, int i)
{
    const void *p;
    if (lua_isnoneornil(L, i))
        return NULL;
    if (lua_type(L, i) != LUA_TCDATA_LUAJIT)
        luaL_argerror(L, i, "lt_tensor* expected");
    p = lua_topointer(L, i); /* the cdata's payload: the pointer value */
    return p == NULL ? NULL : *(const lt_tensor *const *)p;
}

static int l_with_rng(lua_State *L)
{
    const lt_tensor *restore = tensor_arg(L, 1), *set = tensor_arg(L, 2);
    int status;
    if (restore == NULL)
        luaL_argerror(L, 1, "a generator state is required");
    check_fn(L, 3);
    if (set != NULL && lt_rng_set_state(set) != 0)
        return set_failed(L);
    status = call_at(L, 3);
    lt_rng_set_state(restore);
    return finish(L, 3, status);
}

enum { MAX_FORKED = 64 };

/* with_fork({type, index, state, ...}, fn, ...): every generator named (type 0: the CPU one) gets
 * its state back after fn. The list is read, and the states kept referenced by it, before fn runs. */
static int l_with_fork(lua_State *L)
{
    int types[MAX_FORKED], indices[MAX_FORKED];
    const lt_tensor *states[MAX_FORKED];
    int n = 0, len, i, status;
    luaL_checktype(L, 1, LUA_TTABLE);
    check_fn(L, 2);
    len = (int)lua_objlen(L, 1);
    if (len % 3 != 0 || len / 3 > MAX_FORKED)
        luaL_argerror(L, 1, "at most 64 {type, index, state} triples expected");
    for (i = 1; i <= len; i += 3, n++) {
        lua_rawgeti(L, 1, i);
        lua_rawgeti(L, 1, i + 1);
        lua_rawgeti(L, 1, i + 2);
        types[n] = (int)lua_tointeger(L, -3);
        indices[n] = (int)lua_tointeger(L, -2);
        states[n] = tensor_arg(L, lua_gettop(L));
        if (states[n] == NULL)
            luaL_argerror(L, 1, "a generator state is required");
        lua_pop(L, 3);
    }
    status = call_at(L, 2);
    for (i = 0; i < n; i++) {
        if (types[i] == 0)
            lt_rng_set_state(states[i]);
        else
            lt_default_generator_set_state(types[i], indices[i], states[i]);
    }
    return finish(L, 2, status);
}

static int l_with_job(lua_State *L)
{
    int depth = 0, status;
    check_fn(L, 1);
    if (lt_autograd_job_depth(&depth) != 0)
        return set_failed(L);
    status = call_at(L, 1);
    if (status != 0) {
        const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        lt_autograd_unwind(depth, msg != NULL ? msg : "backward was interrupted");
    }
    return finish(L, 1, status);
}

void ltorch_guard_register(lua_State *L, int table_index)
{
    static const luaL_Reg fns[] = {
        {"with_grad", l_with_grad},       {"with_inference", l_with_inference},
        {"with_autocast", l_with_autocast}, {"with_anomaly", l_with_anomaly},
        {"with_rng", l_with_rng},         {"with_job", l_with_job},
        {"with_fork", l_with_fork},
        {NULL, NULL},
    };
    const luaL_Reg *r;
    if (table_index < 0)
        table_index = lua_gettop(L) + table_index + 1;
    lua_createtable(L, 0, 8);
    for (r = fns; r->name != NULL; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, -2, r->name);
    }
    lua_pushlightuserdata(L, &failed_tag);
    lua_setfield(L, -2, "failed");
    lua_setfield(L, table_index, "guard");
}
