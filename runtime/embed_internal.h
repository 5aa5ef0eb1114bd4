/*
 * embed_internal.h — what the embedding API's files (embed.c, embed_value.c, embed_tensor.c)
 * share; not for hosts.
 *
 * Why: one runtime struct, one per-thread error slot and one value bridge, used by the three
 * files that implement ltorch.h's embedding half.
 *
 * What: struct ltorch_runtime; ltorch__set_thread_error() fills the slot ltorch_error(NULL)
 * reads; embed_value.c pushes host values onto a Lua stack and turns Lua values into host
 * values (both raise Lua errors, so call them inside a protected call only).
 *
 * How: include after ltorch.h, from runtime/embed*.c only.
 */
#ifndef LTORCH_EMBED_INTERNAL_H
#define LTORCH_EMBED_INTERNAL_H

#include <stdatomic.h>

#include <lua.h>

#include "ltorch.h"

struct ltorch_runtime {
    lua_State *L;
    char *error;       /* the last failure's message (malloc'd); NULL: none */
    atomic_flag busy;  /* set while a call runs: a second thread gets LTORCH_ERR_BUSY */
    atomic_int running;   /* 1 while a call runs Lua code (ltorch_interrupt may hook it) */
    atomic_int interrupt; /* ltorch_interrupt was called during the running call */
    struct lt_interrupt_cell *cell; /* the calling thread's request cell (bindings), set per call */
};

/* embed.c: the per-thread message for runtime-less calls; returns status. */
int ltorch__set_thread_error(int status, const char *msg);

/* embed.c: stores msg (NULL: none) as ltorch_error(rt). */
void ltorch__set_error(ltorch_runtime *rt, const char *msg);

/* embed_value.c (raise Lua errors; run inside a protected call). *status is set to the
 * LTORCH_ERR_* class of the failure before anything that may raise. */
void ltorch__push_value(lua_State *L, const ltorch_value *v, int argno, int *status);
void ltorch__to_value(lua_State *L, int idx, ltorch_value *out, int resno, int *status);
/* The same, naming the value `what` in errors ("argument #2 to 'host.scale'"). */
void ltorch__to_value_named(lua_State *L, int idx, ltorch_value *out, const char *what, int *status);

#endif /* LTORCH_EMBED_INTERNAL_H */
