/*
 * ltorch.h — the runtime's C API: create an ltorch Lua state and run code in it.
 *
 * Why: the `ltorch` executable (main.c) and any host application that embeds ltorch
 * go through the same few calls, so a host gets exactly the state the CLI gets
 * (standard libraries, ltorch's module paths, the `_LTORCH` table, Ctrl-C handling).
 *
 * What: ltorch_newstate() opens the LuaJIT libraries, puts ltorch's Lua directory in
 * front of `package.path` and sets the global
 *     _LTORCH = { lua_dir = "<dir>"|nil, exe = "<path>"|nil, version = "0.1.0",
 *                 interrupt_pending = <lightuserdata>, check_interrupt = <function> }
 * ltorch_pcall() is lua_pcall with a traceback handler and SIGINT turned into the Lua
 * error "interrupted!"; ltorch_report() prints a failed call's message to stderr.
 *
 * How:
 *     lua_State *L = ltorch_newstate(NULL, 0);          // NULL: use /proc/self/exe
 *     if (L == NULL) return 1;                           // reason already on stderr
 *     int st = luaL_loadstring(L, "print(_LTORCH.version)");
 *     if (st == 0) st = ltorch_pcall(L, 0, 0);
 *     ltorch_report(L, st);
 *     lua_close(L);
 */
#ifndef LTORCH_H
#define LTORCH_H

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

#endif /* LTORCH_H */
