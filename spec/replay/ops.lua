--[[
  spec/replay/ops.lua — replays one op_db case through ltorch's public API (issue #36).

  Why: tools/replay/gen_op_db.py records PyTorch's call of each OpInfo sample; this makes the
  same call as a Lua user would write it and says whether ltorch agrees.

  What: run(entry, case) rebuilds the arguments (spec/replay/codec.lua), seeds the generator as
  the generator did (torch.manual_seed(0)), then calls, by the entry's kind:
    fn      torch.nn.functional.relu(x, args..., {kw...})   (the keyword table only when needed)
    method  x:name(args..., {kw...})          attr  x.mT        rop  torch.add(other, x)
    index   x[{items}]                        (__getitem__: the index as ltorch's key table)
  and returns a verdict {cat = nil (pass) | category, detail}:
    missing   ltorch has no such name
    refuses   ltorch raises an argument error for PyTorch's call
    raises    ltorch raises otherwise where PyTorch returns
    no_error  an error input: PyTorch raises, ltorch returns
    differs   a value, dtype or shape differs (a silent difference: never an allowed exception)
    grad      a gradient differs (silent, as differs)
    grad_raises  backward raises where PyTorch's does not
  Use: by spec/replay/child.lua.
]]
local torch = require "torch"
local codec = require "spec.replay.codec"

local M = {}

local REFUSAL = { "bad argument", "unknown keyword", "unexpected keyword", "no overload", "expected",
  "invalid combination", "not supported", "got an unexpected", "takes" }

function M.classify_error(msg)
  msg = tostring(msg)
  local low = msg:lower()
  for _, w in ipairs(REFUSAL) do
    if low:find(w, 1, true) and (low:find("argument", 1, true) or low:find("keyword", 1, true)) then
      return "refuses"
    end
  end
  return "raises"
end

local function is_empty(t)
  return next(t) == nil
end

-- The callable and the argument list for an entry; nil, reason when ltorch lacks the name.
local function target(entry, args, n, kw)
  local kind, name = entry.kind, entry.name
  local list = { unpack(args, 1, n) }
  if not is_empty(kw) then n = n + 1; list[n] = kw end
  if kind == "fn" then
    local f = codec.resolve(name)
    if type(f) ~= "function" and not (type(f) == "table" and getmetatable(f) and getmetatable(f).__call) then
      return nil, name .. " is not in ltorch"
    end
    return function() return f(unpack(list, 1, n)) end
  elseif kind == "rop" then
    local f = torch[name]
    if not f then return nil, "torch." .. name .. " is not in ltorch" end
    return function() return f(list[2], list[1], select(3, unpack(list, 1, n))) end
  end
  local x = list[1]
  if kind == "index" then return function() return x[list[2]] end end
  local ok, m = pcall(function() return x[name] end)
  if not ok or m == nil then return nil, "Tensor." .. name .. " is not in ltorch" end
  if kind == "attr" then return function() return m end end
  return function() return m(unpack(list, 1, n)) end
end

local function grad_check(case, packed, leaves)
  local outs = {}
  for i = 1, packed.n do codec.flatten(packed[i], outs) end
  local diff = {}
  for _, t in ipairs(outs) do
    if torch.is_tensor(t) and t.requires_grad and t.dtype.is_floating_point then diff[#diff + 1] = t end
  end
  if #diff ~= #case.gout then
    return ("%d differentiable outputs, PyTorch %d"):format(#diff, #case.gout)
  end
  local total
  for i, t in ipairs(diff) do
    local term = (t * codec.decode(case.gout[i])):sum()
    total = total and total + term or term
  end
  local ok, err = pcall(function() total:backward() end)
  if not ok then return "backward raised: " .. tostring(err):sub(1, 300), "grad_raises" end
  for i, want in ipairs(case.grads) do
    local leaf = leaves[i]
    local g = leaf and leaf.grad
    if want == codec.NULL then
      if g ~= nil and g:abs():max():item() ~= 0 then return ("gradient %d: PyTorch has none"):format(i) end
    else
      if g == nil then g = torch.zeros_like(leaf) end
      local why = codec.compare(want, g, 10)
      if why then return ("gradient %d: %s"):format(i, why) end
    end
  end
end

-- Collects the decoded tensors that carry "gi" (the inputs PyTorch differentiated), by gi.
local function leaves_of(enc, dec, acc)
  if type(enc) ~= "table" or enc == codec.NULL then return acc end
  if enc.T then
    if enc.gi then acc[enc.gi] = dec end
    return acc
  end
  if enc.D then
    for k, v in pairs(enc.D) do leaves_of(v, dec[k], acc) end
    return acc
  end
  for i = 1, #enc do leaves_of(enc[i], dec and dec[i], acc) end
  return acc
end

function M.run(entry, case)
  local args = {}
  local decoded, err = pcall(function()
    for i = 1, case.n do args[i] = codec.decode(case.args[i]) end
  end)
  -- an input ltorch cannot build (a 65-dimensional tensor) raises, as PyTorch's error input does
  if not decoded then
    if case.error then return {} end
    return { cat = "raises", detail = "building the input raised: " .. tostring(err):sub(1, 200) }
  end
  local kw = codec.decode({ D = case.kw }) or {}
  local call, missing = target(entry, args, case.n, kw)
  if not call then return { cat = "missing", detail = missing } end
  torch.manual_seed(0)
  local packed = codec.pack(pcall(call))
  local ok = table.remove(packed, 1)
  packed.n = packed.n - 1
  if case.error then
    if ok then return { cat = "no_error", detail = "PyTorch raises " .. case.error } end
    return {}
  end
  if not ok then
    local msg = tostring(packed[1]):sub(1, 300)
    return { cat = M.classify_error(msg), detail = msg }
  end
  local read, why = pcall(codec.compare_result, case.out, packed, 1, entry.meta_only)
  if not read then return { cat = "raises", detail = "reading the result raised: " .. tostring(why):sub(1, 200) } end
  if why then return { cat = "differs", detail = why } end
  if case.grads then
    local leaves = {}
    for i = 1, case.n do leaves_of(case.args[i], args[i], leaves) end
    for k, v in pairs(case.kw) do leaves_of(v, kw[k], leaves) end
    local cat
    why, cat = grad_check(case, packed, leaves)
    if why then return { cat = cat or "grad", detail = why } end
  end
  return {}
end

return M
