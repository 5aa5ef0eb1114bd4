/*
 * paths.c — where ltorch's Lua library lives, and putting it on package.path.
 *
 * Why: `require "torch"` must find <repo>/lua/torch/init.lua when running the binary
 * from the build tree (build/ltorch) and <prefix>/share/ltorch/lua/torch/init.lua after
 * an install, without the user setting LUA_PATH.
 *
 * What: the Lua directory is the first existing directory of
 *     $LTORCH_PATH                        (skipped under -E, flag LTORCH_NOENV)
 *     <exe_dir>/../lua                    (build tree at <repo>/build)
 *     <exe_dir>/../share/ltorch/lua       (install prefix, relocated)
 *     LTORCH_INSTALL_LUA_DIR              (the configured prefix's share/ltorch/lua)
 *     LTORCH_SOURCE_LUA_DIR               (the configured source tree's lua/: a build
 *                                          directory anywhere, a host linking libltorch)
 * returned as an absolute, symlink-free path. The last two are compiled in by CMake. "<dir>/?.lua;<dir>/?/init.lua;" is put
 * in front of package.path; LuaJIT's own defaults (and LUA_PATH/LUA_CPATH, which
 * luaopen_package already applied, ";;" meaning the default) stay after it.
 *
 * How: state.c calls ltorch_exe_path(), ltorch_find_lua_dir() and, with the libraries
 * open, ltorch_prepend_path().
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath */

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lua.h>

#include "ltorch.h"
#include "internal.h"

/* Absolute path of the running executable, or NULL when /proc is unavailable. */
char *ltorch_exe_path(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    return strdup(buf);
}

/* realpath(path) when it names a directory, else NULL. */
static char *existing_dir(const char *path)
{
    struct stat st;
    char *real = realpath(path, NULL);
    if (real != NULL && (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))) {
        free(real);
        real = NULL;
    }
    return real;
}

/* existing_dir("<dir><suffix>"), dir given by its first len bytes. */
static char *existing_subdir(const char *dir, size_t len, const char *suffix)
{
    char *path = malloc(len + strlen(suffix) + 1);
    char *found;
    if (path == NULL)
        return NULL;
    memcpy(path, dir, len);
    strcpy(path + len, suffix);
    found = existing_dir(path);
    free(path);
    return found;
}

/* The directories CMake compiled in: the install prefix's, then the source tree's. */
static char *configured_lua_dir(void)
{
    char *found = NULL;
#ifdef LTORCH_INSTALL_LUA_DIR
    found = existing_dir(LTORCH_INSTALL_LUA_DIR);
#endif
#ifdef LTORCH_SOURCE_LUA_DIR
    if (found == NULL)
        found = existing_dir(LTORCH_SOURCE_LUA_DIR);
#endif
    return found;
}

char *ltorch_find_lua_dir(const char *exe_path, unsigned flags)
{
    const char *env = (flags & LTORCH_NOENV) ? NULL : getenv("LTORCH_PATH");
    const char *slash;
    char *found = NULL;
    if (env != NULL && *env != '\0')
        found = existing_dir(env);
    if (found != NULL)
        return found;
    if (exe_path == NULL)
        return configured_lua_dir();
    slash = strrchr(exe_path, '/');
    if (slash == NULL)
        return NULL;
    found = existing_subdir(exe_path, (size_t)(slash - exe_path), "/../lua");
    if (found == NULL)
        found = existing_subdir(exe_path, (size_t)(slash - exe_path),
                                "/../share/ltorch/lua");
    return found != NULL ? found : configured_lua_dir();
}

/* package.path = "<dir>/?.lua;<dir>/?/init.lua;" .. package.path */
void ltorch_prepend_path(lua_State *L, const char *lua_dir)
{
    const char *old;
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "path");
    old = lua_tostring(L, -1);
    lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s", lua_dir, lua_dir,
                    old != NULL ? old : "");
    lua_setfield(L, -3, "path");
    lua_pop(L, 2);
}
