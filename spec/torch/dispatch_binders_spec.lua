--[[
  spec/torch/dispatch_binders_spec.lua — the generated binders (torch._dispatch_binders) bind a
  call's positional arguments exactly as torch._dispatch's general `bind` does: the same overload,
  the same parameter count, the same packed slots, for every op name and many argument forms.

  Why: the generated ops try those binders first on every call without a keyword table, and only
  fall back to `bind` when none binds. A binder that accepts what `bind` refuses, refuses what it
  accepts, or packs a value differently (an int as a double, a boolean as an int, a default
  dropped) would call a different overload or pass a different value: a silent difference.

  Run:  build/ltorch /usr/bin/busted spec/torch/dispatch_binders_spec.lua
]]
local torch = require "torch"
local ffi = require "ffi"
local dispatch = require "torch._dispatch"
local binders = require "torch._dispatch_binders"
local V = require("torch._dispatch_values").V

local ValueArray = ffi.typeof("lt_value[?]")
local t1, t2 = torch.ones(2), torch.zeros(3)

-- Sample values by schema type: a fitting value first, then others that may or may not fit.
local SAMPLES = {
  Tensor = { t1, 2, 1.5, true },
  Scalar = { 3, 0.25, false, t1, 2 ^ 70, 0 / 0 },
  int = { 2, -1, 2.5, true, t1 }, SymInt = { 3, 1.5 },
  float = { 0.5, 4, true },
  bool = { true, false, 1 },
  str = { "mean", 3 },
  ScalarType = { torch.float64, "int32", 7 },
  Device = { "cpu", 5 },
  Layout = { "strided", "bogus" },
  MemoryFormat = { "contiguous_format", 9 },
  Generator = { 1 },
}
local LIST_SAMPLES = {
  Tensor = { { t1, t2 }, t1, {} }, int = { { 1, 2 }, 2, { 1.5 } }, SymInt = { { 2, 3 }, 4 },
  float = { { 0.5, 1 }, 2 }, bool = { { true, false }, true },
}

local function samples_of(p)
  local s = (p.list and LIST_SAMPLES or SAMPLES)[p.type] or { t1 }
  if p.optional or p.has_default then s = { s[1], nil, s[2], s[3], n = 4 } end
  return s
end

-- The argument lists tried for one overload: its positional parameters given fitting samples,
-- cut at every length, then each position in turn given its other samples, and one extra value.
local function argument_lists(entry, is_method)
  local params = {}
  for _, p in ipairs(entry.args) do
    if not p.kwarg_only and not (is_method and p.name == "self") then params[#params + 1] = p end
  end
  local base = {}
  for i, p in ipairs(params) do base[i] = samples_of(p)[1] end
  local lists = {}
  for n = 0, #params do lists[#lists + 1] = { n = n, unpack(base, 1, n) } end
  for i, p in ipairs(params) do
    local s = samples_of(p)
    for k = 2, s.n or #s do
      local l = { n = #params, unpack(base, 1, #params) }
      l[i] = s[k]
      lists[#lists + 1] = l
    end
  end
  lists[#lists + 1] = { n = #params + 1, unpack(base, 1, #params) }
  lists[#lists][#params + 1] = 1
  return lists
end

-- A slot as comparable text: the fields its tag uses (list contents, not their arrays' addresses).
local ONE_INT = { [V.INT] = true, [V.BOOL] = true, [V.SCALAR_INT] = true, [V.SCALAR_BOOL] = true,
  [V.SCALAR_TYPE] = true, [V.LAYOUT] = true, [V.MEMORY_FORMAT] = true, [V.SYM_INT] = true }
local LIST_TYPES = { [V.INT_LIST] = "int64_t *", [V.SYM_INT_LIST] = "int64_t *", [V.DOUBLE_LIST] = "double *",
  [V.BOOL_LIST] = "int *", [V.TENSOR_LIST] = "void **", [V.OPT_TENSOR_LIST] = "void **" }
local function slot_text(s)
  local tag = tonumber(s.tag)
  if tag == V.TENSOR then return ("tensor %s"):format(tostring(ffi.cast("void *", s.p))) end
  if tag == V.STRING then return ("string %s"):format(ffi.string(s.p)) end
  if tag == V.SCALAR_DOUBLE or tag == V.DOUBLE then return ("%d: %.17g"):format(tag, s.d) end
  if ONE_INT[tag] then return ("%d: %s"):format(tag, tostring(s.i)) end
  if tag == V.DEVICE then return ("device %s %s"):format(tostring(s.i), tostring(s.n)) end
  local list_type = LIST_TYPES[tag]
  if not list_type then return tostring(tag) end
  local parts = { ("list %d of %d:"):format(tag, tonumber(s.n)) }
  local items = ffi.cast(list_type, s.p)
  for j = 0, tonumber(s.n) - 1 do parts[#parts + 1] = tostring(items[j]) end
  return table.concat(parts, " ")
end

-- What binding gives: the chosen overload's position in the list, its count and its slots.
local function outcome(list, entry, n, slots)
  if not entry then return "none" end
  local at
  for k, e in ipairs(list) do if e == entry then at = k end end
  local parts = { ("overload %d, %d arguments"):format(at, n) }
  for i = 0, n - 1 do parts[#parts + 1] = slot_text(slots[i]) end
  return table.concat(parts, " | ")
end

local function general(list, is_method, self_obj, pos, npos, slots)
  for _, entry in ipairs(list) do
    if (is_method and entry.is_method) or (not is_method and entry.is_function) then
      local n = dispatch.bind(entry, self_obj, pos, npos, nil, {}, {}, slots)
      if n then return entry, n end
    end
  end
end

describe("the generated binders", function()
  it("bind every op's positional arguments as the general binder does", function()
    local compared, bound, names = 0, 0, {}
    for name in pairs(dispatch.names()) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local list = dispatch.overloads(name)
      for _, is_method in ipairs({ false, true }) do
        local try = binders.for_overloads(list, is_method, dispatch.bind)
        local self_obj = is_method and t1 or nil
        for _, entry in ipairs(list) do
          if (is_method and entry.is_method) or (not is_method and entry.is_function) then
            for _, l in ipairs(argument_lists(entry, is_method)) do
              local a, b = ValueArray(64), ValueArray(64)
              local ge, gn = general(list, is_method, self_obj, l, l.n, a)
              local fe, fn = try(self_obj, l, l.n, b, {}, {})
              local want, got = outcome(list, ge, gn, a), outcome(list, fe, fn, b)
              if want ~= got then
                error(("%s (%s) with %d arguments: general binder %s, generated %s"):format(
                  name, is_method and "method" or "function", l.n, want, got))
              end
              compared = compared + 1
              if ge then bound = bound + 1 end
            end
          end
        end
      end
    end
    -- the forms must reach both outcomes often: a check that only ever compared "none" says nothing
    assert.is_true(compared > 20000, "compared " .. compared)
    assert.is_true(bound > compared / 4, ("bound %d of %d"):format(bound, compared))
  end)

  it("write the aliased argument of an in-place result back as that same object", function()
    local x = torch.ones(3)
    assert.is_true(rawequal(x, x:add_(1)))
    assert.is_true(rawequal(x, torch.add(torch.ones(3), torch.ones(3), { out = x })))
    assert.is_true(rawequal(x, x:lerp_(torch.zeros(3), 0.5)))
    assert.is_true(rawequal(x, x:addcmul_(x, x)))
    local outs = { torch.zeros(2) }
    torch._foreach_add_(outs, 1)
    assert.are.same({ 1, 1 }, outs[1]:tolist())
  end)

  it("keep a temporary argument alive through the collection of an out-of-memory retry", function()
    -- self is referenced by nothing but the call: the retry's collection must not free it
    -- (a segmentation fault when only the general binder's tables held the arguments)
    -- (ltorch's allocator says "out of memory"; libtorch's own, in the sanitizer build, "can't
    -- allocate memory"; a freed argument gave another error, such as "no tensor arguments")
    local function refused_for_memory(err)
      err = tostring(err)
      return err:find("out of memory", 1, true) or err:find("can't allocate memory", 1, true)
    end
    local ok, err = pcall(function() return torch.zeros(1)["repeat"](torch.zeros(1), 2 ^ 40) end)
    assert.is_false(ok)
    assert.truthy(refused_for_memory(err), err)
    ok, err = pcall(function() return torch.mul(torch.ones(2 ^ 20):expand(2 ^ 20, 2 ^ 20), torch.ones(1)) end)
    assert.is_false(ok)
    assert.truthy(refused_for_memory(err), err)
  end)

  it("leave refused calls to the general binder's message", function()
    local ok, err = pcall(torch.logaddexp, t1, "x")
    assert.is_false(ok)
    assert.truthy(err:find("argument 'other' must be Tensor, got string", 1, true), err)
    ok, err = pcall(torch.logaddexp, t1, t1, t1)
    assert.is_false(ok)
    assert.truthy(err:find("takes 2 positional arguments, got 3", 1, true), err)
  end)

  it("apply PyTorch's varargs rule through the general binder", function()
    assert.are.equal("torch.Size([2, 3])", tostring(torch.ones(6):view(2, 3):size()))
    assert.are.equal("torch.Size([3, 2])", tostring(torch.ones(6):reshape(3, 2):size()))
  end)
end)
