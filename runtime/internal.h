/*
 * internal.h — declarations shared between the runtime's own files; not for hosts.
 *
 * Why: ltorch.h is the embedding API and stays small; the pieces state.c and call.c
 * assemble (module paths, the Ctrl-C machinery) are declared here instead.
 *
 * What: paths.c finds the executable and ltorch's Lua directory and edits
 * package.path; interrupt.c arms/disarms the SIGINT handler around protected calls
 * and publishes the pending-interrupt flag in _LTORCH.
 *
 * How: include after ltorch.h, from the runtime's .c files only.
 */
#ifndef LTORCH_INTERNAL_H
#define LTORCH_INTERNAL_H

#include <lua.h>

/* paths.c — returned strings are malloc'd; the caller frees them. */
char *ltorch_exe_path(void);
char *ltorch_find_lua_dir(const char *exe_path, unsigned flags);
void ltorch_prepend_path(lua_State *L, const char *lua_dir);

/* interrupt.c — arm/disarm nest; only the outermost pair touches the handler. */
void ltorch_interrupt_arm(lua_State *L);
void ltorch_interrupt_disarm(lua_State *L);
void ltorch_interrupt_register(lua_State *L, int table_index);

/* guard.c — adds _LTORCH.guard: set a state, lua_pcall a function, restore, re-raise. */
void ltorch_guard_register(lua_State *L, int table_index);

/* warnings.c — adds _LTORCH.watch_warnings: libtorch's warnings once per Lua call site. */
void ltorch_warnings_register(lua_State *L, int table_index);

/* repl.c — the "torch.repl.native" preload (readline, history, completion, Ctrl-C), and
 * ltorch_pcall whose error handler opens the post-mortem debugger before unwinding. */
void ltorch_repl_register(lua_State *L);
int ltorch_debug_pcall(lua_State *L, int narg, int nres);

#endif /* LTORCH_INTERNAL_H */
