/*
 * embed_value.c — host values (ltorch_value) to Lua values and back, for embed.c's jobs.
 *
 * Why: ltorch_call passes numbers, booleans, strings and tensors; tensors must become real
 * torch Tensors inside Lua (with their own handle and finalizer) and Lua tensors must come
 * back as handles the host owns.
 *
 * What: nil/boolean/number/string map directly (result strings are malloc'd copies). Tensors
 * go through two small Lua functions (the bridge below), loaded on first use into the registry
 * together with `require "torch"`:
 *     to_lua(p)                 a Tensor holding a new handle on the tensor at light userdata p
 *     from_lua(x, slot, what)   a new handle on x (made contiguous) written to *slot
 * A result of another type (a table, a function) is an LTORCH_ERR_TYPE error naming it.
 *
 * How: only from inside embed.c's protected job: everything here may raise a Lua error.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "ltorch.h"
#include "embed_internal.h"
#include "lt.h"

static const char bridge_source[] =
    "local ffi = require 'ffi'\n"
    "local torch = require 'torch'\n"
    "local _C = require 'torch._C'\n"
    "local memory = require 'torch._memory'\n"
    "local C, check = _C.C, _C.check\n"
    "local handle_t, slot_t = ffi.typeof('lt_tensor*'), ffi.typeof('lt_tensor**')\n"
    "local out, flag = _C.TensorOut(), _C.IntOut()\n"
    "local function to_lua(p, what)\n"
    "  check(C.lt_tensor_shallow_copy(out, ffi.cast(handle_t, p)), what, 1)\n"
    "  return memory.wrap(out[0])\n"
    "end\n"
    "local function from_lua(x, slot, what)\n"
    "  if not torch.is_tensor(x) then\n"
    "    error(what .. ' is a ' .. tostring(ffi.typeof(x)) .. ', not a tensor', 0)\n"
    "  end\n"
    "  if x.h == nil then error(what .. ': tensor was freed', 0) end\n"
    "  check(C.lt_tensor_is_contiguous(x.h, flag), what, 1)\n"
    "  if flag[0] == 0 then x = x:contiguous() end\n"
    "  check(C.lt_tensor_shallow_copy(ffi.cast(slot_t, slot), x.h), what, 1)\n"
    "end\n"
    "return to_lua, from_lua\n";

/* Pushes the bridge function `which` (1 to_lua, 2 from_lua), loading it on first use. */
static void push_bridge(lua_State *L, int which)
{
    lua_getfield(L, LUA_REGISTRYINDEX, "ltorch.embed.bridge");
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        if (luaL_loadbuffer(L, bridge_source, sizeof bridge_source - 1, "=ltorch.embed") != 0)
            lua_error(L);
        lua_call(L, 0, 2);
        lua_createtable(L, 2, 0);
        lua_insert(L, -3);
        lua_rawseti(L, -3, 2);
        lua_rawseti(L, -2, 1);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, "ltorch.embed.bridge");
    }
    lua_rawgeti(L, -1, which);
    lua_remove(L, -2);
}

void ltorch__push_value(lua_State *L, const ltorch_value *v, int argno, int *status)
{
    switch (v->type) {
    case LTORCH_TNIL:
        lua_pushnil(L);
        break;
    case LTORCH_TBOOLEAN:
        lua_pushboolean(L, v->number != 0);
        break;
    case LTORCH_TNUMBER:
        lua_pushnumber(L, v->number);
        break;
    case LTORCH_TSTRING:
        if (v->string == NULL)
            luaL_error(L, "argument #%d: NULL string", argno);
        lua_pushlstring(L, v->string, v->length != 0 ? v->length : strlen(v->string));
        break;
    case LTORCH_TTENSOR:
        if (v->tensor == NULL)
            luaL_error(L, "argument #%d: NULL tensor", argno);
        *status = LTORCH_ERR_RUN; /* loading torch can fail like any Lua code */
        push_bridge(L, 1);
        lua_pushlightuserdata(L, v->tensor);
        lua_pushfstring(L, "argument #%d", argno);
        lua_call(L, 2, 1);
        *status = LTORCH_ERR_TYPE;
        break;
    default:
        luaL_error(L, "argument #%d: unknown value type %d", argno, (int)v->type);
    }
}

static void to_string(lua_State *L, int idx, ltorch_value *out, int *status)
{
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        *status = LTORCH_ERR_MEMORY;
        luaL_error(L, "not enough memory");
    }
    memcpy(copy, s, len + 1);
    out->type = LTORCH_TSTRING;
    out->string = copy;
    out->length = len;
}

void ltorch__to_value(lua_State *L, int idx, ltorch_value *out, int resno, int *status)
{
    char what[32];
    snprintf(what, sizeof what, "result #%d", resno);
    ltorch__to_value_named(L, idx, out, what, status);
}

void ltorch__to_value_named(lua_State *L, int idx, ltorch_value *out, const char *what, int *status)
{
    *status = LTORCH_ERR_TYPE;
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        *out = ltorch_nil_value();
        break;
    case LUA_TBOOLEAN:
        *out = ltorch_number_value(lua_toboolean(L, idx));
        out->type = LTORCH_TBOOLEAN;
        break;
    case LUA_TNUMBER:
        *out = ltorch_number_value(lua_tonumber(L, idx));
        break;
    case LUA_TSTRING:
        to_string(L, idx, out, status);
        break;
    default:
        if (lua_type(L, idx) > LUA_TTHREAD) { /* cdata (LuaJIT's type 10): maybe a tensor */
            ltorch_tensor *h = NULL;
            push_bridge(L, 2);
            lua_pushvalue(L, idx);
            lua_pushlightuserdata(L, &h);
            lua_pushstring(L, what);
            lua_call(L, 3, 0);
            *out = ltorch_tensor_value(h);
            break;
        }
        luaL_error(L, "%s is a %s; expected nil, a boolean, a number, a string or a tensor", what,
                   luaL_typename(L, idx));
    }
}

void ltorch_value_clear(ltorch_value *v)
{
    if (v == NULL)
        return;
    if (v->type == LTORCH_TSTRING)
        free((char *)v->string);
    else if (v->type == LTORCH_TTENSOR)
        lt_tensor_free(v->tensor);
    *v = ltorch_nil_value();
}
