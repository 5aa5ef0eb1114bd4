/*
 * repl.c — the terminal half of the interactive loop (`ltorch`, `ltorch -i`,
 * `ltorch --debug script.lua`, `torch.breakpoint()`).
 *
 * Why: the REPL's logic (evaluation, pretty printing, completion candidates, help, the
 * debugger) is Lua in lua/torch/repl/; what Lua cannot do well lives here: line editing
 * and persistent history (GNU readline), Ctrl-C at the prompt, interruptible protected
 * calls, and the post-mortem hook that runs before an error unwinds the stack.
 *
 * What: the module "torch.repl.native" (a package.preload entry set by
 * ltorch_repl_register):
 *     readline(prompt) -> line | nil (end of input) | false (Ctrl-C at the prompt)
 *     history_open(path)  loads path (kept to 1000 lines); every history_add(line) after
 *                         it is appended to that file at once
 *     set_completer(fn)   fn(word, line, start) -> array of candidates replacing `word`
 *                         (word = the text before the cursor back to a space or bracket;
 *                         dots and colons are part of it: "torch.ma", "x:ad")
 *     xpcall(f, handler, ...)  lua_pcall with Ctrl-C armed (interrupt.c)
 *     isatty(fd), has_readline
 * Readline runs in callback mode only while a line is read, so the terminal is in its
 * normal state while code runs; Ctrl-C at the prompt discards the line. Without a
 * terminal on stdin (pipes) lines come from stdio and no prompt is printed.
 * ltorch_repl(L) runs require("torch.repl").run(); when the Lua library cannot be
 * loaded it falls back to a plain read-eval-print loop. ltorch_debug_pcall is
 * ltorch_pcall whose message handler is the post-mortem debugger
 * (torch.repl.debugger.handler).
 *
 * How: ltorch_repl_register(L) once after ltorch_newstate, then ltorch_repl(L) or
 * ltorch_debug_pcall(L, narg, nres). Built with readline when CMake finds it
 * (LTORCH_USE_READLINE).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>

#include "ltorch.h"
#include "internal.h"

#ifdef LTORCH_USE_READLINE
#include <readline/readline.h>
#include <readline/history.h>
#endif

#define HISTORY_LINES 1000

static volatile sig_atomic_t prompt_sigint; /* Ctrl-C while a line is being read */

static void on_prompt_sigint(int sig)
{
    (void)sig;
    prompt_sigint = 1;
}

/* SIGINT only sets a flag while reading (no SA_RESTART: the read returns EINTR). */
static void catch_sigint(struct sigaction *saved)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prompt_sigint;
    sigemptyset(&sa.sa_mask);
    prompt_sigint = 0;
    sigaction(SIGINT, &sa, saved);
}

/* ---------------------------------------------------------------- plain stdio */

/* Pushes a line (no newline), nil at end of input, false on Ctrl-C. */
static int read_plain(lua_State *L, const char *prompt, int tty)
{
    luaL_Buffer b;
    char chunk[512];
    int got = 0;
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
    if (!got) {
        lua_pop(L, 1);
        if (prompt_sigint) {
            clearerr(stdin);
            fputs("\n", stdout);
            lua_pushboolean(L, 0);
        } else {
            lua_pushnil(L);
        }
    }
    return 1;
}

/* ---------------------------------------------------------------- readline */
#ifdef LTORCH_USE_READLINE

static lua_State *completion_L;  /* the state a completion calls back into */
static int completer_ref = LUA_NOREF;
static char **candidates;        /* the current completion's matches */
static size_t ncandidates, next_candidate;
static char *history_path;
static char *cb_line;
static int cb_done;

static void free_candidates(void)
{
    size_t i;
    for (i = next_candidate; i < ncandidates; i++)
        free(candidates[i]);
    free(candidates);
    candidates = NULL;
    ncandidates = next_candidate = 0;
}

static char *candidate_generator(const char *text, int state)
{
    (void)text;
    (void)state;
    if (next_candidate < ncandidates)
        return candidates[next_candidate++]; /* readline frees it */
    return NULL;
}

/* Asks the Lua completer for the matches of text (rl_line_buffer[start..end)). */
static char **complete(const char *text, int start, int end)
{
    lua_State *L = completion_L;
    size_t n, i;
    (void)end;
    rl_attempted_completion_over = 1; /* never fall back to file names */
    if (L == NULL || completer_ref == LUA_NOREF)
        return NULL;
    free_candidates();
    lua_rawgeti(L, LUA_REGISTRYINDEX, completer_ref);
    lua_pushstring(L, text);
    lua_pushstring(L, rl_line_buffer);
    lua_pushinteger(L, start);
    if (lua_pcall(L, 3, 1, 0) != 0 || !lua_istable(L, -1)) {
        lua_pop(L, 1); /* a broken completer offers nothing */
        return NULL;
    }
    n = lua_objlen(L, -1);
    candidates = calloc(n > 0 ? n : 1, sizeof *candidates);
    for (i = 0; candidates != NULL && i < n; i++) {
        const char *s;
        lua_rawgeti(L, -1, (int)i + 1);
        s = lua_tostring(L, -1);
        if (s != NULL && (candidates[ncandidates] = strdup(s)) != NULL)
            ncandidates++;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (ncandidates == 0)
        return NULL;
    return rl_completion_matches(text, candidate_generator);
}

static void on_line(char *line)
{
    cb_line = line;
    cb_done = 1;
    rl_callback_handler_remove();
}

/* Reads one line in readline's callback mode, watching for Ctrl-C between keys. */
static int read_readline(lua_State *L, const char *prompt)
{
    int cancelled = 0;
    completion_L = L;
    cb_line = NULL;
    cb_done = 0;
    rl_callback_handler_install(prompt, on_line);
    while (!cb_done) {
        fd_set fds;
        int fd = fileno(rl_instream != NULL ? rl_instream : stdin);
        FD_ZERO(&fds);
        FD_SET(fd, &fds);
        if (select(fd + 1, &fds, NULL, NULL, NULL) < 0 && errno != EINTR)
            break; /* treated as end of input */
        if (prompt_sigint) {
            cancelled = 1;
            rl_replace_line("", 0);
            rl_callback_sigcleanup();
            rl_callback_handler_remove();
            fputs("^C\n", rl_outstream != NULL ? rl_outstream : stdout);
            break;
        }
        if (FD_ISSET(fd, &fds))
            rl_callback_read_char();
    }
    if (!cb_done && !cancelled)
        rl_callback_handler_remove();
    completion_L = NULL;
    if (cancelled) {
        lua_pushboolean(L, 0);
    } else if (cb_line == NULL) {
        fputs("\n", stdout);
        lua_pushnil(L);
    } else {
        lua_pushstring(L, cb_line);
        free(cb_line);
    }
    return 1;
}

static int l_history_open(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    int fd;
    free(history_path);
    history_path = strdup(path);
    using_history();
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600); /* append_history needs the file */
    if (fd < 0) {
        lua_pushnil(L);
        lua_pushstring(L, strerror(errno));
        return 2;
    }
    close(fd);
    read_history(path);
    history_truncate_file(path, HISTORY_LINES);
    lua_pushboolean(L, 1);
    return 1;
}

static int l_history_add(lua_State *L)
{
    const char *line = luaL_checkstring(L, 1);
    if (line[0] == '\0')
        return 0;
    add_history(line);
    if (history_path != NULL)
        append_history(1, history_path);
    return 0;
}

static int l_set_completer(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    luaL_unref(L, LUA_REGISTRYINDEX, completer_ref);
    lua_pushvalue(L, 1);
    completer_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

static void setup_readline(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    rl_readline_name = LTORCH_PROGNAME;
    rl_catch_signals = 0; /* Ctrl-C is ours (catch_sigint) */
    rl_attempted_completion_function = complete;
    rl_completer_word_break_characters = " \t\n\"'`<>=;,|&{}()[]+-*/%^~#";
    rl_completion_append_character = '\0';
}

#else /* no readline: stdio, in-memory nothing */

static int l_history_open(lua_State *L)
{
    (void)L;
    return 0;
}
static int l_history_add(lua_State *L)
{
    (void)L;
    return 0;
}
static int l_set_completer(lua_State *L)
{
    (void)L;
    return 0;
}

#endif

static int l_readline(lua_State *L)
{
    const char *prompt = luaL_optstring(L, 1, "> ");
    int tty = isatty(STDIN_FILENO);
    struct sigaction saved;
    int n;
    catch_sigint(&saved);
#ifdef LTORCH_USE_READLINE
    if (tty) {
        setup_readline();
        n = read_readline(L, prompt);
    } else
#endif
        n = read_plain(L, prompt, tty);
    sigaction(SIGINT, &saved, NULL);
    prompt_sigint = 0;
    return n;
}

static int l_isatty(lua_State *L)
{
    lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
    return 1;
}

/* xpcall(f, handler, ...) with Ctrl-C raising "interrupted!" inside f. */
static int l_xpcall(lua_State *L)
{
    int status;
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_replace(L, 1);
    lua_replace(L, 2); /* handler at 1, f at 2, arguments above */
    ltorch_interrupt_arm(L);
    status = lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 1);
    ltorch_interrupt_disarm(L);
    lua_pushboolean(L, status == 0);
    lua_replace(L, 1);
    return lua_gettop(L);
}

static int open_native(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"readline", l_readline},
        {"history_open", l_history_open},
        {"history_add", l_history_add},
        {"set_completer", l_set_completer},
        {"isatty", l_isatty},
        {"xpcall", l_xpcall},
        {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns);
#ifdef LTORCH_USE_READLINE
    lua_pushboolean(L, 1);
#else
    lua_pushboolean(L, 0);
#endif
    lua_setfield(L, -2, "has_readline");
    return 1;
}

void ltorch_repl_register(lua_State *L)
{
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "preload");
    if (lua_istable(L, -1)) {
        lua_pushcfunction(L, open_native);
        lua_setfield(L, -2, "torch.repl.native");
    }
    lua_pop(L, 2);
}

/* ---------------------------------------------------------------- entry points */

/* Pushes require(name)[field]; 0 (nothing pushed) when it cannot be loaded. */
static int push_lua_entry(lua_State *L, const char *name, const char *field)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, name);
    if (lua_pcall(L, 1, 1, 0) != 0 || !lua_istable(L, -1)) {
        ltorch_report(L, 1);
        return 0;
    }
    lua_getfield(L, -1, field);
    lua_remove(L, -2);
    if (!lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

/* The fallback when lua/torch/repl cannot be loaded: read, run, print. */
static void basic_repl(lua_State *L)
{
    int base = lua_gettop(L);
    int tty = isatty(STDIN_FILENO);
    struct sigaction saved;
    for (;;) {
        const char *line;
        int status;
        catch_sigint(&saved);
        read_plain(L, "> ", tty);
        sigaction(SIGINT, &saved, NULL);
        if (lua_isnil(L, -1))
            break;
        line = lua_tostring(L, -1);
        if (line == NULL) {
            lua_settop(L, base);
            continue;
        }
        lua_pushfstring(L, "return %s", line[0] == '=' ? line + 1 : line);
        if (luaL_loadbuffer(L, lua_tostring(L, -1), lua_objlen(L, -1), "=stdin") != 0) {
            lua_pop(L, 2);
            status = luaL_loadbuffer(L, line, strlen(line), "=stdin");
        } else {
            status = 0;
        }
        lua_getglobal(L, "print");
        lua_insert(L, -2);
        if (status == 0)
            status = ltorch_pcall(L, 0, LUA_MULTRET);
        if (status == 0)
            status = lua_pcall(L, lua_gettop(L) - base - 3, 0, 0);
        ltorch_report(L, status);
        lua_settop(L, base);
    }
    lua_settop(L, base);
}

void ltorch_repl(lua_State *L)
{
    int base = lua_gettop(L);
    ltorch_repl_register(L);
    if (push_lua_entry(L, "torch.repl", "run"))
        ltorch_report(L, ltorch_pcall(L, 0, 0));
    else
        basic_repl(L);
    lua_settop(L, base);
    fflush(stdout);
}

int ltorch_debug_pcall(lua_State *L, int narg, int nres)
{
    int base = lua_gettop(L) - narg; /* the function */
    int status;
    ltorch_repl_register(L);
    if (!push_lua_entry(L, "torch.repl.debugger", "handler"))
        return ltorch_pcall(L, narg, nres);
    lua_insert(L, base);
    ltorch_interrupt_arm(L);
    status = lua_pcall(L, narg, nres, base);
    ltorch_interrupt_disarm(L);
    lua_remove(L, base);
    return status;
}
