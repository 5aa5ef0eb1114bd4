/*
 * main.c — the `ltorch` command: a Lua-compatible command line over ltorch's state.
 *
 * Why: ltorch scripts, busted and other Lua tools run under `ltorch` exactly as under
 * `lua`/`luajit`, with the torch library already on the module path.
 *
 * What:  ltorch [options] [script [args...]]
 *     -e stat   run the string stat          -l name   require name into global name
 *     -l g=mod  require mod into global g    -i        interactive mode after the rest
 *     -v        print the version line       -E        ignore LUA_PATH, LUA_CPATH,
 *     --        stop handling options                  LTORCH_PATH and LUA_INIT
 *     --debug   on an error in the script, open the debugger REPL at the failing frame
 *               (-i does the same; see lua/torch/repl/debugger.lua)
 *     -         run stdin as the script
 * With no script and no -e/-v: REPL if stdin is a terminal, else stdin is the script.
 * The global `arg` is built as lua.c builds it: arg[0] the script, arg[1..] its
 * arguments, negative indices the interpreter and options (with no script, arg[0] is
 * the interpreter). The script also gets its arguments as `...`. LUA_INIT (a chunk,
 * or @file) runs before the options unless -E. Exit status: 0 on success, 1 when a
 * chunk fails (message and traceback on stderr) or on a bad option; os.exit(n) gives n.
 *
 * How: main() sets glibc's malloc thresholds (tune_malloc below; LTORCH_MALLOC=glibc keeps
 * glibc's defaults), checks the options, creates the state (state.c) and runs pmain() in one
 * protected call, as lua.c does.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
#include <luajit.h>

#include "ltorch.h"
#include "internal.h"

enum { HAS_ERROR = 1, HAS_I = 2, HAS_V = 4, HAS_E = 8, HAS_NOENV = 16, HAS_DEBUG = 32 };

struct cli {
    int argc;
    char **argv;
    int script; /* index of the script in argv; argc when there is none */
    int flags;  /* HAS_* */
    int ok;     /* set by pmain when everything ran */
};

static void print_version(void)
{
    printf("%s %s (%s)\n", LTORCH_PROGNAME, LTORCH_VERSION, LUAJIT_VERSION);
    fflush(stdout);
}

static void print_usage(const char *badoption)
{
    if (badoption[1] == 'e' || badoption[1] == 'l')
        fprintf(stderr, "%s: '%s' needs argument\n", LTORCH_PROGNAME, badoption);
    else
        fprintf(stderr, "%s: unrecognized option '%s'\n", LTORCH_PROGNAME, badoption);
    fprintf(stderr,
            "usage: %s [options] [script [args]]\n"
            "Available options are:\n"
            "  -e stat   execute string 'stat'\n"
            "  -i        enter interactive mode after executing 'script'\n"
            "  -l mod    require library 'mod' into global 'mod'\n"
            "  -l g=mod  require library 'mod' into global 'g'\n"
            "  -v        show version information\n"
            "  -E        ignore environment variables\n"
            "  --debug   debug the script's error in a REPL at the failing frame\n"
            "  --        stop handling options\n"
            "  -         stop handling options and execute stdin\n",
            LTORCH_PROGNAME);
    fflush(stderr);
}

/* Checks the options (lua.c's collectargs); sets c->script, returns HAS_* flags. */
static int collect_args(struct cli *c)
{
    int flags = 0;
    int i;
    char **argv = c->argv;
    for (i = 1; argv[i] != NULL; i++) {
        c->script = i;
        if (argv[i][0] != '-') /* not an option: the script */
            return flags;
        switch (argv[i][1]) {
        case '-': /* "--" */
            if (strcmp(argv[i], "--debug") == 0) {
                flags |= HAS_DEBUG;
                break;
            }
            if (argv[i][2] != '\0')
                return HAS_ERROR;
            c->script = i + 1;
            return flags;
        case '\0': /* "-": stdin is the script */
            return flags;
        case 'E':
            if (argv[i][2] != '\0')
                return HAS_ERROR;
            flags |= HAS_NOENV;
            break;
        case 'i':
            flags |= HAS_I; /* -i implies -v */
            /* fallthrough */
        case 'v':
            if (argv[i][2] != '\0')
                return HAS_ERROR;
            flags |= HAS_V;
            break;
        case 'e':
            flags |= HAS_E;
            /* fallthrough */
        case 'l':
            if (argv[i][2] == '\0') { /* argument is the next word */
                i++;
                if (argv[i] == NULL || argv[i][0] == '-')
                    return HAS_ERROR;
            }
            break;
        default:
            return HAS_ERROR;
        }
    }
    c->script = i;
    return flags;
}

/* The global arg: argv[script] at 0, interpreter and options below. */
static void create_arg_table(lua_State *L, const struct cli *c)
{
    int script = c->script < c->argc ? c->script : 0;
    int i;
    lua_createtable(L, c->argc - script - 1 > 0 ? c->argc - script - 1 : 0,
                    script + 1);
    for (i = 0; i < c->argc; i++) {
        lua_pushstring(L, c->argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

static int run_chunk(lua_State *L, int status)
{
    if (status == 0)
        status = ltorch_pcall(L, 0, 0);
    return ltorch_report(L, status);
}

static int run_string(lua_State *L, const char *code, const char *name)
{
    return run_chunk(L, luaL_loadbuffer(L, code, strlen(code), name));
}

/* luaL_loadfile, adding the reason a file cannot be opened. */
static int load_file(lua_State *L, const char *fname)
{
    int status;
    errno = 0;
    status = luaL_loadfile(L, fname);
    if (status == LUA_ERRFILE && errno != 0) {
        const char *reason = strerror(errno);
        const char *msg = lua_tostring(L, -1);
        if (msg != NULL && strstr(msg, reason) == NULL) { /* some LuaJITs omit it */
            lua_pushfstring(L, "%s: %s", msg, reason);
            lua_remove(L, -2);
        }
    }
    return status;
}

/* -l name or -l g=mod: global g = require(mod). */
static int run_library(lua_State *L, const char *spec)
{
    const char *eq = strchr(spec, '=');
    const char *modname = eq != NULL ? eq + 1 : spec;
    size_t globlen = eq != NULL ? (size_t)(eq - spec) : strlen(spec);
    int status;
    lua_getglobal(L, "require");
    lua_pushstring(L, modname);
    status = ltorch_pcall(L, 1, 1);
    if (status == 0) {
        lua_pushlstring(L, spec, globlen);
        lua_insert(L, -2);
        lua_settable(L, LUA_GLOBALSINDEX);
    }
    return ltorch_report(L, status);
}

/* LUA_INIT: a chunk, or @file. */
static int run_init(lua_State *L)
{
    const char *init = getenv("LUA_INIT");
    if (init == NULL)
        return 0;
    if (init[0] == '@')
        return run_chunk(L, load_file(L, init + 1));
    return run_string(L, init, "=LUA_INIT");
}

/* -e and -l, in command-line order; stops at the first failure (returns 0). */
static int run_options(lua_State *L, const struct cli *c)
{
    int i;
    for (i = 1; i < c->script; i++) {
        char option = c->argv[i][1];
        const char *value;
        if (c->argv[i][0] != '-' || (option != 'e' && option != 'l'))
            continue;
        value = c->argv[i][2] != '\0' ? c->argv[i] + 2 : c->argv[++i];
        if ((option == 'e' ? run_string(L, value, "=(command line)")
                           : run_library(L, value)) != 0)
            return 0;
    }
    return 1;
}

/* Subcommands: `ltorch doctor ...`, `ltorch new ...`, `ltorch run ...`, `ltorch tool ...`,
 * `ltorch inspect ...`. When the script names no existing file but is a bare word with a
 * <lua_dir>/torch/cli/<word>.lua, that file runs instead (a file of the same name wins).
 * Pushes the path (or nil) and returns it. */
static const char *subcommand_path(lua_State *L, const char *fname)
{
    size_t i;
    const char *dir = NULL;
    if (access(fname, F_OK) == 0 || fname[0] == '\0' || strlen(fname) > 32)
        return lua_pushnil(L), NULL;
    for (i = 0; fname[i] != '\0'; i++)
        if (!((fname[i] >= 'a' && fname[i] <= 'z') || fname[i] == '-'))
            return lua_pushnil(L), NULL;
    lua_getglobal(L, "_LTORCH");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "lua_dir");
        dir = lua_tostring(L, -1);
        lua_remove(L, -2);
    }
    if (dir == NULL) {
        lua_pop(L, 1);
        return lua_pushnil(L), NULL;
    }
    lua_pushfstring(L, "%s/torch/cli/%s.lua", dir, fname);
    lua_remove(L, -2);
    if (access(lua_tostring(L, -1), R_OK) != 0) {
        lua_pop(L, 1);
        return lua_pushnil(L), NULL;
    }
    return lua_tostring(L, -1);
}

/* The script with its arguments as `...`; "-" (unless after "--") is stdin. With -i or
 * --debug an error opens the post-mortem debugger before the stack unwinds. */
static int run_script(lua_State *L, const struct cli *c)
{
    const char *fname = c->argv[c->script];
    const char *sub;
    int status;
    int i;
    if (strcmp(fname, "-") == 0 && strcmp(c->argv[c->script - 1], "--") != 0)
        fname = NULL;
    sub = fname != NULL ? subcommand_path(L, fname) : (lua_pushnil(L), NULL);
    if (sub != NULL)
        fname = sub;
    status = load_file(L, fname);
    lua_remove(L, -2); /* the subcommand path (or nil), under the chunk or the error */
    if (status == 0) {
        int narg = c->argc - c->script - 1;
        luaL_checkstack(L, narg + LUA_MINSTACK, "too many arguments to script");
        for (i = c->script + 1; i < c->argc; i++)
            lua_pushstring(L, c->argv[i]);
        status = (c->flags & (HAS_I | HAS_DEBUG)) ? ltorch_debug_pcall(L, narg, 0)
                                                   : ltorch_pcall(L, narg, 0);
    }
    return ltorch_report(L, status);
}

static int pmain(lua_State *L)
{
    struct cli *c = lua_touserdata(L, 1);
    int has_script = c->script < c->argc;
    lua_pop(L, 1);
    ltorch_repl_register(L); /* torch.breakpoint() works in any script */
    create_arg_table(L, c);
    if (c->flags & HAS_V)
        print_version();
    if (!(c->flags & HAS_NOENV) && run_init(L) != 0)
        return 0;
    if (!run_options(L, c))
        return 0;
    if (has_script && run_script(L, c) != 0)
        return 0;
    if (c->flags & HAS_I) {
        ltorch_repl(L);
    } else if (!has_script && !(c->flags & (HAS_E | HAS_V))) {
        if (isatty(STDIN_FILENO)) {
            print_version();
            ltorch_repl(L);
        } else if (run_chunk(L, load_file(L, NULL)) != 0) {
            return 0;
        }
    }
    c->ok = 1;
    return 0;
}

/* Tensors die when the Lua collector gets to them, in batches, not at once as under refcounting.
 * With glibc's defaults, every large block freed that way (activations above the dynamic mmap
 * threshold, the heap's top above 128 KiB) goes back to the kernel and comes back as fresh
 * zeroed pages, and page faults become a large share of a training step. Keeping blocks up to
 * 32 MiB on the heap and trimming only above 256 MiB of free top avoids that; RSS then plateaus
 * a few MiB higher instead of oscillating (docs/PERFORMANCE.md, optimisation 5, has the
 * measurements). Tensor blocks of 128 KiB and more no longer use the heap (the bindings map and
 * cache them, bindings/lt_large_blocks.cpp); these thresholds still serve everything else.
 * LTORCH_MALLOC=glibc keeps the defaults (and turns the block cache off). Hosts embedding
 * libltorch choose their own malloc settings. */
static void tune_malloc(void)
{
#ifdef __GLIBC__
    const char *choice = getenv("LTORCH_MALLOC");
    if (choice != NULL && strcmp(choice, "glibc") == 0)
        return;
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
#endif
}

int main(int argc, char **argv)
{
    struct cli c;
    lua_State *L;
    int status;
    c.argc = argc;
    c.argv = argv;
    c.script = argc;
    c.ok = 0;
    if (argv[0] == NULL) /* exec with an empty argv */
        return EXIT_FAILURE;
    tune_malloc();
    c.flags = collect_args(&c);
    if (c.flags & HAS_ERROR) {
        print_usage(argv[c.script]);
        return EXIT_FAILURE;
    }
    L = ltorch_newstate(NULL, (c.flags & HAS_NOENV) ? LTORCH_NOENV : 0);
    if (L == NULL)
        return EXIT_FAILURE;
    status = ltorch_report(L, lua_cpcall(L, pmain, &c));
    lua_close(L);
    return (status == 0 && c.ok) ? EXIT_SUCCESS : EXIT_FAILURE;
}
