/*
 * interrupt.c — Ctrl-C (SIGINT) becomes the Lua error "interrupted!".
 *
 * Why: a long training script must stop cleanly on Ctrl-C, with a traceback showing
 * where it was, instead of the process dying mid-write.
 *
 * What (lua.c's technique): while a protected call runs (ltorch_pcall arms us), the
 * SIGINT handler only sets a flag and installs a debug hook that fires on the next
 * call, return or instruction the interpreter executes; the hook clears itself and
 * raises "interrupted!". The handler is installed with SA_RESETHAND, so a second
 * Ctrl-C while the first is still pending gets the default action (the process dies):
 * the escape hatch when the hook cannot fire. Once the hook has fired the handler is
 * installed again. Outside protected calls SIGINT has its previous disposition.
 *
 * Limitation (LuaJIT): hooks do not run inside JIT-compiled traces. A loop compiled
 * into one trace that never leaves it (e.g. `while true do x = x + 1 end`, or a loop
 * of FFI calls) is not interrupted by the hook; the first Ctrl-C is noticed only when
 * the code returns to the interpreter (a call to a classic C function such as
 * os.clock or print, a trace exit, the loop ending), and a second Ctrl-C kills the
 * process. Hot loops in the Lua library can poll instead; an FFI call is compiled into
 * the trace and, unlike a load from a flag, is not hoisted out of the loop:
 *     local pending = ffi.cast("int (**)(void)", _LTORCH.interrupt_pending)[0]
 *     ... if pending() ~= 0 then _LTORCH.check_interrupt() end  -- raises "interrupted!"
 * (_LTORCH.interrupt_pending is a light userdata pointing at a function pointer, so
 * no symbol has to be exported from the executable.)
 *
 * State changes: the library sets grad mode, inference mode, autocast and the like in one C call
 * that also runs the user's function under lua_pcall and restores the state (runtime/guard.c), so
 * an interrupt may land on any instruction: no Lua instruction runs between a set and its restore.
 *
 * How: ltorch_interrupt_arm(L) / ltorch_interrupt_disarm(L) around lua_pcall (done by
 * ltorch_pcall); ltorch_interrupt_register(L, idx) adds the two fields to _LTORCH.
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "ltorch.h"
#include "internal.h"
#include "lt.h"

static lua_State *volatile armed_state; /* state the handler hooks */
static lt_interrupt_cell *volatile armed_cell; /* the bindings' request cell of the armed thread */
static volatile sig_atomic_t pending;   /* SIGINT seen, hook not yet fired */
static int depth;                       /* nesting of arm/disarm pairs */
static struct sigaction saved_action;   /* disposition before the outermost arm */

static void on_sigint(int sig);

static void install_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND; /* second Ctrl-C: default action */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

/* Clears the hook and the flag, re-arms the handler, raises with prefix on top. */
static int raise_interrupted(lua_State *L)
{
    lua_sethook(L, NULL, 0, 0);
    pending = 0;
    lt_interrupt_clear(armed_cell);
    install_handler();
    lua_pushliteral(L, "interrupted!");
    lua_concat(L, 2);
    return lua_error(L);
}

static void stop_hook(lua_State *L, lua_Debug *ar)
{
    if (armed_cell != NULL && !lt_interrupt_take(armed_cell)) {
        /* a tensor op already raised this interrupt (LT_TRY_OP): one raise, not two */
        lua_sethook(L, NULL, 0, 0);
        pending = 0;
        install_handler();
        return;
    }
    if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
        lua_pushfstring(L, "%s:%d: ", ar->short_src, ar->currentline);
    else
        luaL_where(L, 1);
    raise_interrupted(L);
}

/* Async-signal context: set the flag and the hook, nothing else (as lua.c does). */
static void on_sigint(int sig)
{
    (void)sig;
    pending = 1;
    lt_interrupt_request(armed_cell); /* tensor ops and collective waits stop too */
    if (armed_state != NULL)
        lua_sethook(armed_state, stop_hook,
                    LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

void ltorch_interrupt_arm(lua_State *L)
{
    if (depth++ > 0)
        return;
    sigaction(SIGINT, NULL, &saved_action);
    armed_state = L;
    armed_cell = lt_interrupt_cell_here();
    install_handler();
}

/* A Ctrl-C that arrives as the call ends is dropped, so no hook outlives the call. */
void ltorch_interrupt_disarm(lua_State *L)
{
    if (--depth > 0)
        return;
    sigaction(SIGINT, &saved_action, NULL);
    armed_state = NULL;
    if (pending) {
        pending = 0;
        lua_sethook(L, NULL, 0, 0);
    }
    lt_interrupt_clear(armed_cell);
    armed_cell = NULL;
}

/* _LTORCH.check_interrupt(): raises "interrupted!" if a Ctrl-C is pending. */
static int l_check_interrupt(lua_State *L)
{
    if (!pending)
        return 0;
    luaL_where(L, 2); /* the Lua code that polled */
    return raise_interrupted(L);
}

/* The poll for FFI callers: 1 while a Ctrl-C is pending. */
static int interrupt_pending(void)
{
    return pending != 0;
}

static int (*const interrupt_pending_cell)(void) = interrupt_pending;

void ltorch_interrupt_register(lua_State *L, int table_index)
{
    if (table_index < 0)
        table_index = lua_gettop(L) + table_index + 1;
    lua_pushlightuserdata(L, (void *)&interrupt_pending_cell);
    lua_setfield(L, table_index, "interrupt_pending");
    lua_pushcfunction(L, l_check_interrupt);
    lua_setfield(L, table_index, "check_interrupt");
}
