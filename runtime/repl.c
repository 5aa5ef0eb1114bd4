/*
 * repl.c — the minimal interactive loop (`ltorch -i`, or `ltorch` on a terminal).
 *
 * Why: trying a line of tensor code without writing a file. A richer REPL (completion,
 * pretty printing, persistent history) is a later issue; this one mirrors lua.c.
 *
 * What: reads a line (GNU readline with in-session history when stdin is a terminal,
 * plain stdio otherwise, e.g. piped input), first tries it as `return <line>` so bare
 * expressions print their values (`=expr` is accepted too), otherwise compiles it as a
 * statement; a statement that ends early ("... near '<eof>'") continues with the next
 * line under the `>>` prompt. Results are printed through the global print; errors are
 * reported with a traceback and the loop goes on. End of input (Ctrl-D) ends it.
 * Prompts ("> ", ">> ", or the globals _PROMPT and _PROMPT2) are shown only when
 * stdin is a terminal, so `printf 'x\n' | ltorch -i` prints just the values.
 * Ctrl-C while a line runs interrupts that line; at the prompt it has its default
 * action (as in lua.c).
 *
 * How: ltorch_repl(L) after the state is set up. Build with -DLTORCH_NO_READLINE to
 * drop the readline dependency.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>

#include "ltorch.h"

#ifndef LTORCH_NO_READLINE
#include <readline/readline.h>
#include <readline/history.h>
#endif

#define PROMPT1 "> "
#define PROMPT2 ">> "
#define CHUNKNAME "=stdin"
#define EOFMARK "'<eof>'" /* how the parser ends the message of an unfinished chunk */

static const char *get_prompt(lua_State *L, int first)
{
    const char *p;
    lua_getglobal(L, first ? "_PROMPT" : "_PROMPT2");
    p = lua_tostring(L, -1);
    lua_pop(L, 1); /* globals keep the string alive */
    return p != NULL ? p : (first ? PROMPT1 : PROMPT2);
}

/* Reads one line into a Lua string (no trailing newline); 0 at end of input. */
static int read_line(lua_State *L, const char *prompt, int tty)
{
    luaL_Buffer b;
    char chunk[512];
    int got = 0;
#ifndef LTORCH_NO_READLINE
    if (tty) {
        char *line = readline(prompt);
        if (line == NULL)
            return 0;
        if (line[0] != '\0')
            add_history(line);
        lua_pushstring(L, line);
        free(line);
        return 1;
    }
#else
    (void)tty;
#endif
    if (tty) {
        fputs(prompt, stdout);
        fflush(stdout);
    }
    luaL_buffinit(L, &b);
    while (fgets(chunk, sizeof chunk, stdin) != NULL) {
        size_t len = strlen(chunk);
        got = 1;
        if (len > 0 && chunk[len - 1] == '\n') {
            luaL_addlstring(&b, chunk, len - 1);
            break;
        }
        luaL_addlstring(&b, chunk, len); /* longer than chunk: keep reading */
    }
    luaL_pushresult(&b);
    if (!got)
        lua_pop(L, 1);
    return got;
}

/* Is the error on top a syntax error only because the chunk is unfinished? */
static int incomplete(lua_State *L, int status)
{
    size_t len;
    const char *msg;
    if (status != LUA_ERRSYNTAX)
        return 0;
    msg = lua_tolstring(L, -1, &len);
    if (len >= sizeof EOFMARK - 1 &&
        strcmp(msg + len - (sizeof EOFMARK - 1), EOFMARK) == 0) {
        lua_pop(L, 1);
        return 1;
    }
    return 0;
}

/* Returns its arguments: called through it, a call on the line is not a tail call,
 * so an error raised there still knows its line ("stdin:1: ..."). */
static int pass_through(lua_State *L)
{
    return lua_gettop(L);
}

/* Line on top. Tries "return <line>": on success replaces the line by the chunk. */
static int try_expression(lua_State *L)
{
    const char *line = lua_tostring(L, -1);
    const char *expr = line[0] == '=' ? line + 1 : line;
    const char *code = lua_pushfstring(L, "local pass = ...; return pass(%s)", expr);
    int status = luaL_loadbuffer(L, code, strlen(code), CHUNKNAME);
    if (status == 0) {
        lua_remove(L, -2); /* code */
        lua_remove(L, -2); /* line */
        lua_pushcfunction(L, pass_through);
    } else {
        lua_pop(L, 2); /* error and code; the line stays */
    }
    return status;
}

/* Line on top. Compiles it, reading more lines while it is unfinished. */
static int load_statement(lua_State *L, int tty)
{
    for (;;) {
        size_t len;
        const char *code = lua_tolstring(L, -1, &len);
        int status = luaL_loadbuffer(L, code, len, CHUNKNAME);
        if (!incomplete(L, status) || !read_line(L, get_prompt(L, 0), tty)) {
            lua_remove(L, -2); /* the code; chunk or error stays */
            return status;
        }
        lua_pushliteral(L, "\n");
        lua_insert(L, -2);
        lua_concat(L, 3); /* code .. "\n" .. next line */
    }
}

/* Pushes a compiled chunk and its *nargs arguments (status 0), or an error; -1 at
 * end of input. */
static int load_line(lua_State *L, int tty, int *nargs)
{
    *nargs = 0;
    if (!read_line(L, get_prompt(L, 1), tty))
        return -1;
    if (try_expression(L) == 0) {
        *nargs = 1;
        return 0;
    }
    return load_statement(L, tty);
}

/* Prints the values above base through the global print. */
static void print_results(lua_State *L, int base)
{
    int n = lua_gettop(L) - base;
    if (n <= 0)
        return;
    luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
    lua_getglobal(L, "print");
    lua_insert(L, base + 1);
    if (lua_pcall(L, n, 0, 0) != 0) {
        ltorch_message(lua_pushfstring(L, "error calling 'print' (%s)",
                                       lua_tostring(L, -1)));
        lua_pop(L, 2);
    }
}

void ltorch_repl(lua_State *L)
{
    int base = lua_gettop(L);
    int tty = isatty(STDIN_FILENO);
    int status, nargs;
#ifndef LTORCH_NO_READLINE
    rl_readline_name = LTORCH_PROGNAME;
    rl_bind_key('\t', rl_insert); /* Tab indents; no filename completion */
#endif
    while ((status = load_line(L, tty, &nargs)) != -1) {
        if (status == 0)
            status = ltorch_pcall(L, nargs, LUA_MULTRET);
        if (status == 0)
            print_results(L, base);
        else
            ltorch_report(L, status);
        lua_settop(L, base);
    }
    lua_settop(L, base);
    if (tty)
        fputs("\n", stdout);
    fflush(stdout);
}
