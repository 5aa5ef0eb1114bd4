/*
 * call.c — protected calls with a traceback, and reporting their failures.
 *
 * Why: every place that runs Lua code (script, -e, -l, the REPL, a host application)
 * must fail the same way: "ltorch: <message>" plus a stack traceback on stderr, and
 * Ctrl-C must be able to interrupt it. One pcall and one report keep that in one place.
 *
 * What: ltorch_pcall() inserts a message handler below the function (non-string error
 * objects go through __tostring or become "(error object is a <type> value)"; strings
 * get luaL_traceback), arms the SIGINT handler for the call's duration, and returns
 * lua_pcall's status. ltorch_report() prints and pops the message when status != 0.
 * A nil error object (`error()`) is reported as nothing at all, as lua.c 5.1 and
 * luajit.c do: busted ends a failing run with error() under Lua 5.1 to get exit 1.
 *
 * How: push function and args, then
 *     int st = ltorch_report(L, ltorch_pcall(L, nargs, nresults));
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>

#include <lua.h>
#include <lauxlib.h>

#include "ltorch.h"
#include "internal.h"

void ltorch_message(const char *msg)
{
    fprintf(stderr, "%s: %s\n", LTORCH_PROGNAME, msg);
    fflush(stderr);
}

int ltorch_report(lua_State *L, int status)
{
    if (status != 0) {
        if (!lua_isnil(L, -1)) { /* error() with no value fails silently */
            const char *msg = lua_tostring(L, -1);
            ltorch_message(msg != NULL ? msg : "(error object is not a string)");
        }
        lua_pop(L, 1);
    }
    return status;
}

static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (lua_isnoneornil(L, 1))
        return 1; /* kept as nil: the silent failure busted relies on */
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1; /* the object's own description, as lua.c does */
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int ltorch_pcall(lua_State *L, int narg, int nres)
{
    int status;
    int base = lua_gettop(L) - narg; /* index of the function */
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    ltorch_interrupt_arm(L);
    status = lua_pcall(L, narg, nres, base);
    ltorch_interrupt_disarm(L);
    lua_remove(L, base);
    return status;
}
