/*
 * state.c — creating the Lua state every ltorch program runs in.
 *
 * Why: the CLI and embedding hosts need the same environment; this is the one place
 * that decides what a fresh ltorch state contains.
 *
 * What: ltorch_newstate(exe_path, flags)
 *   - LUA_NOENV in the registry under LTORCH_NOENV, so luaopen_package ignores
 *     LUA_PATH/LUA_CPATH (LuaJIT's -E mechanism);
 *   - all LuaJIT standard libraries (base, package, table, io, os, string, math,
 *     debug, bit, jit; ffi via require);
 *   - the JIT's loop-unroll limit raised from LuaJIT's 15 to LOOP_UNROLL (tune_jit);
 *   - "<lua_dir>/?.lua;<lua_dir>/?/init.lua;" in front of package.path (paths.c);
 *   - the global _LTORCH = { lua_dir, exe, version, interrupt_pending, check_interrupt,
 *     watch_warnings (warnings.c), guard (guard.c) }.
 * Setup runs inside lua_cpcall, so running out of memory is reported, not a panic.
 *
 * How: see ltorch.h. exe_path NULL means /proc/self/exe.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include "ltorch.h"
#include "internal.h"

struct setup {
    const char *exe;     /* may be NULL */
    const char *lua_dir; /* may be NULL: no Lua library found */
    unsigned flags;
};

static void set_ltorch_table(lua_State *L, const struct setup *s)
{
    lua_createtable(L, 0, 5);
    if (s->lua_dir != NULL) {
        lua_pushstring(L, s->lua_dir);
        lua_setfield(L, -2, "lua_dir");
    }
    if (s->exe != NULL) {
        lua_pushstring(L, s->exe);
        lua_setfield(L, -2, "exe");
    }
    lua_pushliteral(L, LTORCH_VERSION);
    lua_setfield(L, -2, "version");
    ltorch_interrupt_register(L, -1);
    ltorch_warnings_register(L, -1);
    ltorch_guard_register(L, -1);
    lua_setglobal(L, "_LTORCH");
}

/* LuaJIT counts every tail call a trace records against its loop-unroll limit (a chain of tail
 * calls could be a loop). A module call is a handful of them (Module's __call, forward, the op,
 * the wrap of its result), so a loop over three small modules, l2(act(l1(x))), passed the default
 * 15 and never compiled: the recorder aborted ("loop unroll limit reached") on every attempt and
 * the loop ran between smaller traces (docs/PERFORMANCE.md, optimisation 42). 40 keeps the
 * limit's purpose, a bound on how much of a short inner loop a trace copies. */
#define LOOP_UNROLL "loopunroll=40"

static void tune_jit(lua_State *L)
{
    lua_getglobal(L, "jit");
    lua_getfield(L, -1, "opt");
    lua_getfield(L, -1, "start");
    lua_pushliteral(L, LOOP_UNROLL);
    lua_call(L, 1, 0);
    lua_pop(L, 2);
}

static int setup(lua_State *L)
{
    const struct setup *s = lua_touserdata(L, 1);
    if (s->flags & LTORCH_NOENV) {
        lua_pushboolean(L, 1);
        lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
    }
    lua_gc(L, LUA_GCSTOP, 0); /* no collections while the libraries load */
    luaL_openlibs(L);
    lua_gc(L, LUA_GCRESTART, -1);
    tune_jit(L);
    if (s->lua_dir != NULL)
        ltorch_prepend_path(L, s->lua_dir);
    set_ltorch_table(L, s);
    return 0;
}

lua_State *ltorch_newstate(const char *exe_path, unsigned flags)
{
    struct setup s;
    char *own_exe = exe_path == NULL ? ltorch_exe_path() : NULL;
    char *lua_dir;
    lua_State *L;
    int status;

    s.exe = exe_path != NULL ? exe_path : own_exe;
    lua_dir = ltorch_find_lua_dir(s.exe, flags);
    s.lua_dir = lua_dir;
    s.flags = flags;
    L = luaL_newstate();
    if (L == NULL) {
        ltorch_message("cannot create state: not enough memory");
    } else {
        status = ltorch_report(L, lua_cpcall(L, setup, &s));
        if (status != 0) {
            lua_close(L);
            L = NULL;
        }
    }
    free(lua_dir);
    free(own_exe);
    return L;
}
