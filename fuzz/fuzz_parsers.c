/*
 * fuzz_parsers.c — libFuzzer harness over the checkpoint parsers that face untrusted bytes:
 * the restricted pickle reader, the safetensors header parser and the zip central-directory
 * reader (lua/torch/serialization/{pickle,safetensors,zipdir}.lua), run inside LuaJIT.
 *
 * The first input byte picks the parser ('p' pickle, 's' safetensors, 'z' zip; anything else
 * pickle); the rest is the data. Coverage: the parsers are Lua, so a line hook maps each
 * (previous line, current line) pair of the executed Lua onto libFuzzer's extra counters,
 * which libFuzzer treats as edges. A "crash" is a signal/ASan report, or any error that is
 * not one of the parsers' own messages (e.g. "attempt to index a nil value" = a parser bug).
 *
 * Build and run: bash fuzz/run.sh [seconds]   (CI runs it bounded from spec/checkpoint).
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOUNTERS (1u << 16)
__attribute__((section("__libfuzzer_extra_counters"))) static uint8_t counters[NCOUNTERS];

static lua_State *L;
static int driver_ref;
static uintptr_t prev_loc;
static unsigned long runs;

static void line_hook(lua_State *l, lua_Debug *ar) {
  if (!lua_getinfo(l, "Sl", ar)) return;
  uintptr_t loc = ((uintptr_t)ar->source * 31u) ^ ((uintptr_t)ar->currentline * 2654435761u);
  counters[(loc ^ prev_loc) & (NCOUNTERS - 1)]++;
  prev_loc = loc >> 1;
}

static const char DRIVER[] =
    "jit.off()\n"
    "local pickle = require 'torch.serialization.pickle'\n"
    "local st = require 'torch.serialization.safetensors'\n"
    "local zipdir = require 'torch.serialization.zipdir'\n"
    "local ok_prefix = { 'pickle: ', 'safetensors: ', 'zip: ', 'invalid JSON' }\n"
    "return function(data)\n"
    "  local sel, body = data:sub(1, 1), data:sub(2)\n"
    "  local ok, err = pcall(function()\n"
    "    if sel == 's' then st.parse_header(body)\n"
    "    elseif sel == 'z' then zipdir.list_string(body)\n"
    "    else pickle.load(body) end\n"
    "  end)\n"
    "  if ok then return true end\n"
    "  if type(err) ~= 'string' then return false, 'non-string error' end\n"
    "  for _, p in ipairs(ok_prefix) do if err:sub(1, #p) == p then return true end end\n"
    "  return false, err\n"
    "end\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *root = getenv("LTORCH_LUA");
  if (!root) root = "lua";
  L = luaL_newstate();
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/?.lua;%s/?/init.lua", root, root);
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
  if (luaL_loadstring(L, DRIVER) != 0 || lua_pcall(L, 0, 1, 0) != 0) {
    fprintf(stderr, "fuzz: cannot load the parsers (set LTORCH_LUA to the repo's lua/): %s\n", lua_tostring(L, -1));
    exit(2);
  }
  driver_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_sethook(L, line_hook, LUA_MASKLINE, 0);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  prev_loc = 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, driver_ref);
  lua_pushlstring(L, (const char *)data, size);
  if (lua_pcall(L, 1, 2, 0) != 0) {
    fprintf(stderr, "fuzz: driver failed: %s\n", lua_tostring(L, -1));
    abort();
  }
  if (!lua_toboolean(L, -2)) {
    fprintf(stderr, "fuzz: unexpected error from a parser: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_settop(L, 0);
  if (++runs % 256 == 0) lua_gc(L, LUA_GCCOLLECT, 0);
  return 0;
}
