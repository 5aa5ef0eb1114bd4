/*
 * warnings.c — libtorch's warnings, once per call site of the user's Lua code.
 *
 * Why: Python's default warning filter prints a PyTorch warning once per line of the user's
 * program; the bindings (bindings/lt_warnings.cpp) can key warnings by message, but only the
 * runtime can read the Lua stack to find that line.
 *
 * What: _LTORCH.watch_warnings() (called by lua/torch/_warnings.lua when the library loads)
 * registers this state with the bindings for the calling thread. A warning libtorch raises on
 * that thread is queued and notify() arms a debug hook (as interrupt.c does for Ctrl-C); the
 * hook fires at the next instruction the interpreter runs, which is still inside the library
 * function that made the FFI call, puts back the hook it displaced (a debugger's, say), walks up
 * to the first Lua frame outside <lua_dir>/torch/ and has the bindings print each queued warning
 * once for that "file:line". A warning raised inside a JIT-compiled trace is printed when the
 * trace exits to the interpreter, with the line running then. At lua_close the registration
 * is dropped and anything still queued is printed without a site.
 *
 * How: ltorch_warnings_register(L, idx) adds watch_warnings to the _LTORCH table at idx.
 */
#define _XOPEN_SOURCE 700 /* realpath */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "ltorch.h"
#include "internal.h"
#include "lt.h"

#define WARNINGS_KEY "ltorch.warnings"

struct watch {
    lua_State *L;
    lua_Hook prev_hook; /* the hook warn_hook displaced, put back when it fires */
    int prev_mask, prev_count;
    size_t prefix_len;
    char prefix[1]; /* "@<lua_dir>/torch/", lua_dir resolved (realpath) */
};

/* Whether a frame's source is a file of the library: "@<lua_dir>/torch/...", or a relative or
 * linked path to one (busted loads modules as "@./lua/torch/..."). */
static int in_library(const struct watch *w, const char *source)
{
    char real[PATH_MAX];
    if (w->prefix_len <= 1 || source[0] != '@')
        return 0;
    if (strncmp(source, w->prefix, w->prefix_len) == 0)
        return 1;
    if (realpath(source + 1, real) == NULL)
        return 0;
    return strncmp(real, w->prefix + 1, w->prefix_len - 1) == 0;
}

/* The first Lua frame outside the library, as "short_src:line", into site; 0 if none. */
static int user_site(lua_State *L, const struct watch *w, char *site, size_t size)
{
    lua_Debug d;
    int level;
    for (level = 0; lua_getstack(L, level, &d); level++) {
        if (!lua_getinfo(L, "Sl", &d) || d.currentline <= 0 || d.source == NULL)
            continue;
        if (in_library(w, d.source))
            continue;
        snprintf(site, size, "%s:%d", d.short_src, d.currentline);
        return 1;
    }
    return 0;
}

static void warn_hook(lua_State *L, lua_Debug *ar)
{
    struct watch *w;
    char site[LUA_IDSIZE + 32];
    (void)ar;
    lua_getfield(L, LUA_REGISTRYINDEX, WARNINGS_KEY);
    w = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (w == NULL) {
        lua_sethook(L, NULL, 0, 0);
        return;
    }
    lua_sethook(L, w->prev_hook, w->prev_mask, w->prev_count);
    lt_warnings_flush(user_site(L, w, site, sizeof site) ? site : NULL);
}

/* Called by the bindings after queueing a warning (inside the FFI call that raised it). */
static void notify(void *ctx)
{
    struct watch *w = ctx;
    lua_State *L = w->L;
    if (lua_gethook(L) == warn_hook)
        return;
    w->prev_hook = lua_gethook(L);
    w->prev_mask = lua_gethookmask(L);
    w->prev_count = lua_gethookcount(L);
    lua_sethook(L, warn_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static int l_forget(lua_State *L)
{
    lt_warnings_forget(lua_touserdata(L, 1));
    return 0;
}

/* _LTORCH.watch_warnings(): this thread's libtorch warnings go through this state's hook. */
static int l_watch(lua_State *L)
{
    struct watch *w;
    size_t dir_len = 0;
    char real[PATH_MAX];
    const char *dir = lua_tolstring(L, lua_upvalueindex(1), &dir_len);
    if (dir != NULL && realpath(dir, real) != NULL) {
        dir = real;
        dir_len = strlen(real);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, WARNINGS_KEY);
    w = lua_touserdata(L, -1);
    if (w == NULL) {
        w = lua_newuserdata(L, sizeof *w + dir_len + 8);
        memset(w, 0, sizeof *w);
        w->L = L;
        if (dir != NULL)
            snprintf(w->prefix, dir_len + 9, "@%s/torch/", dir);
        w->prefix_len = strlen(w->prefix);
        lua_createtable(L, 0, 1);
        lua_pushcfunction(L, l_forget);
        lua_setfield(L, -2, "__gc");
        lua_setmetatable(L, -2);
        lua_setfield(L, LUA_REGISTRYINDEX, WARNINGS_KEY);
    }
    lua_pop(L, 1);
    if (lt_warnings_set_notify(notify, w) != 0)
        return luaL_error(L, "watch_warnings: %s", lt_last_error());
    return 0;
}

void ltorch_warnings_register(lua_State *L, int table_index)
{
    if (table_index < 0)
        table_index = lua_gettop(L) + table_index + 1;
    lua_getfield(L, table_index, "lua_dir");
    lua_pushcclosure(L, l_watch, 1);
    lua_setfield(L, table_index, "watch_warnings");
}
