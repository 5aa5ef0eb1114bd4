/*
 * embed_register.c — ltorch_register: host C functions callable from Lua code.
 *
 * Why: a host that embeds ltorch wants its own functions (read a sensor, fetch a batch from its
 * queue, log to its telemetry) callable from Lua. With raw lua_* it must write Lua C functions
 * itself and guard every call that may raise against longjmp through its frames. Here the host
 * writes a plain C function over ltorch_value arrays; it never sees the Lua state.
 *
 * What: ltorch_register(rt, "a.b.f", fn, ud) stores a C closure at that path. The closure:
 *   1. converts its Lua arguments into a call frame (a Lua userdata with a __gc, so a conversion
 *      that raises — a table argument, a freed tensor — leaks nothing): tensors get new handles,
 *      strings are copied;
 *   2. calls fn with no Lua code running and no Lua error possible while its frames are live;
 *   3. on failure (fn returned < 0) raises "<name>: <message>" at the Lua caller's line, only
 *      after fn has returned;
 *   4. pushes the results (strings copied; tensors become Lua Tensors with their own handle and
 *      the host's handle is freed) and releases the frame.
 *
 * How: ltorch_register runs under lua_cpcall and the runtime's busy flag, like the jobs in
 * embed.c; spec/embed/register_host.c checks it from a real host.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "ltorch.h"
#include "embed_internal.h"
#include "lt.h"

#define FRAME_META "ltorch.host_call_frame"
#define HOST_ERROR_SIZE 512

struct host_fn {
    ltorch_host_fn fn;
    void *ud;
};

/* One call's values: args[0..nargs) (owned: fully cleared), then results (only tensor handles
 * are ltorch's to free; strings belong to the host). */
struct call_frame {
    int nargs, nresults;
    ltorch_value values[1];
};

static void release_frame(struct call_frame *f)
{
    int i;
    for (i = 0; i < f->nargs; i++)
        ltorch_value_clear(&f->values[i]);
    for (i = 0; i < f->nresults; i++) {
        ltorch_value *r = &f->values[f->nargs + i];
        if (r->type == LTORCH_TTENSOR && r->tensor != NULL)
            lt_tensor_free(r->tensor);
        *r = ltorch_nil_value();
    }
    f->nargs = f->nresults = 0;
}

static int frame_gc(lua_State *L)
{
    release_frame(lua_touserdata(L, 1));
    return 0;
}

static struct call_frame *new_frame(lua_State *L, int nargs)
{
    int i, n = nargs + LTORCH_HOST_MAX_RESULTS;
    struct call_frame *f = lua_newuserdata(L, sizeof *f + (size_t)n * sizeof(ltorch_value));
    f->nargs = f->nresults = 0;
    for (i = 0; i < n; i++)
        f->values[i] = ltorch_nil_value();
    if (luaL_newmetatable(L, FRAME_META)) {
        lua_pushcfunction(L, frame_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return f;
}

/* Raises "<name>: <msg>" at the Lua caller's line (level 1: the function that called us). */
static int raise_at_caller(lua_State *L, const char *msg)
{
    luaL_where(L, 1);
    lua_pushfstring(L, "%s: %s", lua_tostring(L, lua_upvalueindex(2)), msg);
    lua_concat(L, 2);
    return lua_error(L);
}

struct conversion {
    ltorch_value *out;
    const char *what;
};

/* Under lua_pcall: (conversion*, value) -> *out; errors come back to call_host as messages. */
static int convert_one(lua_State *L)
{
    struct conversion *c = lua_touserdata(L, 1);
    int status;
    ltorch__to_value_named(L, 2, c->out, c->what, &status);
    return 0;
}

static int call_host(lua_State *L)
{
    const struct host_fn *h = lua_touserdata(L, lua_upvalueindex(1));
    int nargs = lua_gettop(L), i, n, status;
    char error[HOST_ERROR_SIZE];
    struct call_frame *f = new_frame(L, nargs); /* on the stack above the arguments */
    luaL_checkstack(L, LUA_MINSTACK, "too many arguments");
    for (i = 0; i < nargs; i++) {
        char what[32];
        struct conversion c = {&f->values[i], what};
        snprintf(what, sizeof what, "argument #%d", i + 1);
        f->nargs = i; /* only the values converted so far are released if this fails */
        lua_pushcfunction(L, convert_one);
        lua_pushlightuserdata(L, &c);
        lua_pushvalue(L, i + 1);
        if (lua_pcall(L, 2, 0, 0) != 0) {
            f->nargs = i + 1; /* a tensor's handle may have been made before the failure */
            return raise_at_caller(L, lua_tostring(L, -1));
        }
    }
    f->nargs = nargs;
    error[0] = '\0';
    n = h->fn(h->ud, f->values, nargs, f->values + nargs, LTORCH_HOST_MAX_RESULTS, error,
              sizeof error);
    error[sizeof error - 1] = '\0';
    f->nresults = n > LTORCH_HOST_MAX_RESULTS ? LTORCH_HOST_MAX_RESULTS : (n > 0 ? n : 0);
    if (n < 0) {
        f->nresults = LTORCH_HOST_MAX_RESULTS; /* whatever it wrote before failing is freed */
        release_frame(f);
        return raise_at_caller(L, error[0] != '\0' ? error : "the host function failed");
    }
    if (n > LTORCH_HOST_MAX_RESULTS) {
        release_frame(f);
        lua_pushfstring(L, "the host function returned %d results; at most %d", n,
                        LTORCH_HOST_MAX_RESULTS);
        return raise_at_caller(L, lua_tostring(L, -1));
    }
    luaL_checkstack(L, n + LUA_MINSTACK, "too many results");
    for (i = 0; i < n; i++)
        ltorch__push_value(L, &f->values[nargs + i], i + 1, &status); /* may raise: __gc frees */
    release_frame(f);
    return n;
}

struct registration {
    const char *name;
    ltorch_host_fn fn;
    void *ud;
    int status;
};

/* Walks "a.b.c" from the globals, making missing tables; leaves the last table on the stack
 * and returns the last component's offset in name. */
static size_t walk_to_parent(lua_State *L, struct registration *r)
{
    const char *name = r->name, *p = name, *dot;
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    while ((dot = strchr(p, '.')) != NULL) {
        lua_pushlstring(L, p, (size_t)(dot - p));
        lua_rawget(L, -2);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushlstring(L, p, (size_t)(dot - p));
            lua_pushvalue(L, -2);
            lua_rawset(L, -4);
        } else if (!lua_istable(L, -1)) {
            r->status = LTORCH_ERR_TYPE;
            lua_pushlstring(L, name, (size_t)(dot - name));
            luaL_error(L, "ltorch_register: '%s': '%s' is a %s, not a table", name,
                       lua_tostring(L, -1), luaL_typename(L, -2));
        }
        lua_remove(L, -2);
        p = dot + 1;
    }
    return (size_t)(p - name);
}

static int do_register(lua_State *L)
{
    struct registration *r = lua_touserdata(L, 1);
    struct host_fn *h;
    size_t last = walk_to_parent(L, r);
    lua_pushstring(L, r->name + last);
    h = lua_newuserdata(L, sizeof *h);
    h->fn = r->fn;
    h->ud = r->ud;
    lua_pushstring(L, r->name);
    lua_pushcclosure(L, call_host, 2);
    lua_settable(L, -3);
    return 0;
}

int ltorch_register(ltorch_runtime *rt, const char *name, ltorch_host_fn fn, void *ud)
{
    struct registration r = {name, fn, ud, LTORCH_ERR_RUN};
    const char *p;
    int st;
    if (rt == NULL)
        return ltorch__set_thread_error(LTORCH_ERR_ARG, "ltorch_register: runtime is NULL");
    if (atomic_flag_test_and_set(&rt->busy))
        return LTORCH_ERR_BUSY;
    if (name == NULL || fn == NULL || name[0] == '\0') {
        ltorch__set_error(rt, "ltorch_register: name and fn must not be NULL or empty");
        atomic_flag_clear(&rt->busy);
        return LTORCH_ERR_ARG;
    }
    for (p = name; *p != '\0'; p++) {
        if (*p == '.' && (p == name || p[1] == '\0' || p[1] == '.')) {
            ltorch__set_error(rt, "ltorch_register: bad name (an empty component)");
            atomic_flag_clear(&rt->busy);
            return LTORCH_ERR_ARG;
        }
    }
    st = lua_cpcall(rt->L, do_register, &r);
    if (st != 0) {
        const char *msg = lua_tostring(rt->L, -1);
        ltorch__set_error(rt, msg != NULL ? msg : "ltorch_register failed");
        lua_pop(rt->L, 1);
        st = r.status;
    } else {
        ltorch__set_error(rt, NULL);
    }
    atomic_flag_clear(&rt->busy);
    return st;
}
