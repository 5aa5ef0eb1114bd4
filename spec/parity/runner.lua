--[[
  spec/parity/runner.lua — runs the parity cases in ltorch and in PyTorch on identical inputs.

  Why: the parity suite (spec/parity/parity_spec.lua) compares every case's outputs and input
  gradients between ltorch and PyTorch; this module produces both sides.

  What: for each case (see spec/parity/desc.lua for the format), seeded by the case's name,
    1. builds the inputs in ltorch (torch.manual_seed, randn/rand/randint...), recording each
       base tensor's exact values (float32 values are exact doubles; spec/parity/json.lua
       writes them with %.17g);
    2. calls the op (torch.X, x:X, torch.linalg.X, ...; errors are caught and kept);
    3. if any output requires grad, draws a grad output g_i per such output (randn) and
       backpropagates sum(out_i * g_i), collecting .grad of every float input;
    4. writes all cases' inputs and g_i as one JSON file and runs spec/parity/reference.py once
       through spec/support/pytorch.lua, which does the same in PyTorch.
  Encoded values on both sides: a tensor is {shape, dtype, v = flat values} (complex tensors
  through view_as_real), tuples and Tensor[] are arrays, None/nil is cjson.null.

  Use:  local runner = require "spec.parity.runner"
        local results = runner.run(cases)   -- results[i] = { name =, lua = {...}, py = {...} }
        -- lua/py: { out =, rg =, grads =, err =, gerr = }
]]
local torch = require "torch"
local cjson = require "cjson"
local pytorch = require "spec.support.pytorch"
local desc = require "spec.parity.desc"
local json = require "spec.parity.json"

local M = {}
local NULL = cjson.null
M.NULL = NULL

---------------------------------------------------------------- encoding results
local function enc_tensor(x)
  local dt = x.dtype
  x = x:detach()
  if dt.is_complex then x = torch.view_as_real(x:resolve_conj()) end
  local buf, sizes, n = x:tolist(true)
  local v = {}
  for i = 1, n do
    local e = tonumber(buf[i - 1])
    if dt.name == "bool" then e = e ~= 0 end
    v[i] = e
  end
  return { shape = sizes, dtype = dt.name, v = v }
end
M.enc_tensor = enc_tensor

local function enc(x)
  if torch.is_tensor(x) then return enc_tensor(x) end
  if type(x) == "table" and getmetatable(x) and x.name and x.itemsize then return "dtype:" .. x.name end
  if type(x) == "table" then
    local list = {}
    for i = 1, table.maxn(x) do list[i] = x[i] == nil and NULL or enc(x[i]) end
    return list
  end
  if x == nil then return NULL end
  return x
end

local function flat(x, acc)
  if torch.is_tensor(x) then acc[#acc + 1] = x
  elseif type(x) == "table" and not getmetatable(x) then
    for i = 1, table.maxn(x) do flat(x[i], acc) end
  end
  return acc
end

---------------------------------------------------------------- inputs
local DTYPES = { f32 = "float32", f64 = "float64", i64 = "int64", i32 = "int32", i16 = "int16",
  i8 = "int8", u8 = "uint8" }
local INT_KINDS = { int = true, nat = true, bool = true }

local function parse_spec(spec)
  local s = { kind = "randn", view = nil, grad = true }
  for w in spec:gmatch("%S+") do
    if DTYPES[w] then s.dtype = DTYPES[w]
    elseif w == "t" or w == "s" or w == "e" then s.view = w
    elseif w == "nograd" then s.grad = false
    elseif w:match("^idx%d+$") then s.kind, s.hi = "idx", tonumber(w:sub(4))
    else s.kind = w end
  end
  s.dtype = s.dtype or ((INT_KINDS[s.kind] or s.kind == "idx") and (s.kind == "bool" and "bool" or "int64") or "float32")
  return s
end

local SPECIAL = { math.abs(0 / 0), math.huge, -math.huge, 0, -0.0 }

local function generate(kind, shape, s)
  local o = { dtype = torch[s.dtype] }
  if kind == "randn" then return torch.randn(shape, o)
  elseif kind == "pos" then return torch.rand(shape, o) * 2 + 0.1
  elseif kind == "gt1" then return torch.rand(shape, o) * 2 + 1.1
  elseif kind == "unit" then return torch.rand(shape, o) * 1.8 - 0.9
  elseif kind == "rand" then return torch.rand(shape, o)
  elseif kind == "prob" then return torch.rand(shape, o) * 0.9 + 0.05
  elseif kind == "zero" then return torch.zeros(shape, o)
  elseif kind == "halves" then return torch.randint(-6, 7, shape):to(o.dtype) / 2
  elseif kind == "ints" then return torch.randint(-5, 6, shape):to(o.dtype)
  elseif kind == "int" then return torch.randint(s.dtype == "uint8" and 0 or -5, 6, shape, o)
  elseif kind == "nat" then return torch.randint(1, 6, shape, o)
  elseif kind == "idx" then return torch.randint(0, s.hi, shape, o)
  elseif kind == "bool" then return torch.randint(0, 2, shape):gt(0)
  elseif kind == "sorted" then return (torch.randn(shape, o):sort(-1))
  elseif kind == "special" then
    local v = enc_tensor(torch.randn(shape, o)).v
    for i = 1, math.min(#v, #SPECIAL) do v[i] = SPECIAL[i] end
    return torch.tensor(#v > 0 and v or {}, o):reshape(shape)
  elseif kind == "spd" then
    local a = torch.randn(shape, o)
    return a:matmul(a:transpose(-2, -1)) + torch.eye(shape[#shape], o) * shape[#shape]
  end
  error("runner: unknown tensor kind '" .. kind .. "'")
end

-- Returns the ltorch argument and its JSON form; appends leaves (tensors requiring grad).
local function build(d, leaves, want_grad)
  if not desc.is_desc(d) then
    if type(d) ~= "table" then return d, d end
    local lua, js = {}, {}
    for k, v in pairs(d) do lua[k], js[k] = build(v, leaves, want_grad) end
    return lua, js
  end
  if d.kind == "N" then return nil, NULL end
  if d.kind == "D" then return torch[d.name], { k = "D", name = d.name } end
  if d.kind == "L" then
    local lua, js = {}, {}
    for i, item in ipairs(d.items) do lua[i], js[i] = build(item, leaves, want_grad) end
    return lua, { k = "L", items = js }
  end
  local s, base
  if d.kind == "V" then
    s = { grad = not d.spec:find("nograd"), dtype = d.dtype }
    base = torch.tensor(d.values, { dtype = torch[d.dtype] })
  else
    s = parse_spec(d.spec)
    local shape = {}
    for i, n in ipairs(d.shape) do shape[i] = n end
    local r = #shape
    if s.view == "t" then shape[r - 1], shape[r] = shape[r], shape[r - 1]
    elseif s.view == "s" then shape[r] = 2 * shape[r]
    elseif s.view == "e" then shape[1] = 1 end
    base = generate(s.kind, shape, s)
  end
  local e = enc_tensor(base)
  local js = { k = "T", shape = e.shape, dtype = e.dtype, v = e.v, view = s.view, vshape = d.shape }
  if want_grad and s.grad and base.dtype.is_floating_point then
    base.requires_grad = true
    leaves[#leaves + 1] = base
    js.rg = true
  end
  local x = base
  if s.view == "t" then x = base:transpose(-2, -1)
  elseif s.view == "s" then x = base:slice(-1, 0, nil, 2)
  elseif s.view == "e" then x = base:expand(d.shape) end
  return x, js
end

---------------------------------------------------------------- one case in ltorch
local NAMESPACES = { linalg = true, special = true, fft = true, F = true, nn = true }

local function resolve(op)
  local ns, name = op:match("^(%a+)%.([%w_]+)$")
  if ns and NAMESPACES[ns] then return ns, name end
  if op:sub(1, 1) == ":" then return "m", op:sub(2) end
  return "f", op
end

local function lua_callable(ns, name, first)
  if ns == "m" then return first[name] end
  local mod = ns == "f" and torch or ns == "F" and torch.nn.functional or ns == "nn" and torch._nn or torch[ns]
  local f = mod[name]
  if f == nil then error(("ltorch has no %s.%s"):format(ns == "f" and "torch" or ns, name)) end
  return f
end

local function seed_of(name)
  local h = 5381
  for i = 1, #name do h = (h * 33 + name:byte(i)) % 2147483647 end
  return h
end

-- A case's arguments: ltorch values (keyword table last) and count, JSON forms, grad leaves.
local function build_args(c)
  local pos, js_args, js_kw, leaves = {}, {}, {}, {}
  local want_grad = c.grad ~= false
  local n, last = #c.args, c.args[#c.args]
  local has_kw = n > 0 and type(last) == "table" and not desc.is_desc(last) and type(next(last)) == "string"
  if has_kw then n = n - 1 end
  for i = 1, n do
    pos[i], js_args[i] = build(c.args[i], leaves, want_grad)
    if js_args[i] == nil then js_args[i] = NULL end
  end
  if has_kw then
    local keys, kw = {}, {}
    for k in pairs(last) do keys[#keys + 1] = k end
    table.sort(keys)   -- the order leaves are made in, on both sides
    for _, k in ipairs(keys) do
      local v, js = build(last[k], leaves, want_grad)
      kw[k], js_kw[#js_kw + 1] = v, { k, js }
    end
    n = n + 1
    pos[n] = kw
  end
  return pos, n, js_args, js_kw, leaves
end

-- Backpropagates sum(out_i * g_i) over the outputs requiring grad (g_i drawn here, kept in gout).
local function backward(outs, leaves, r, gout)
  local loss
  r.rg = {}
  for i, o in ipairs(outs) do
    r.rg[i] = o.requires_grad
    if o.requires_grad then
      local ov = o.dtype.is_complex and torch.view_as_real(o:resolve_conj()) or o
      local g = torch.randn(ov:size(), { dtype = ov.dtype })
      gout[#gout + 1] = { i - 1, enc_tensor(g) }
      local term = (ov * g):sum()
      loss = loss and loss + term or term
    end
  end
  if not loss then return end
  loss:backward()
  r.grads = {}
  for i, leaf in ipairs(leaves) do
    local g = leaf.grad
    r.grads[i] = g and enc_tensor(g) or NULL
  end
end

local function pack(...) return { n = select("#", ...), ... } end   -- LuaJIT has no table.pack

local function run_lua(c)
  torch.manual_seed(seed_of(c.name))
  local ns, name = resolve(c.op)
  local pos, n, js_args, js_kw, leaves = build_args(c)
  local r, gout = {}, {}
  local py = { ns = ns, name = name, py = c.py or NULL, args = js_args, kw = js_kw, gout = gout }
  local ok, res = pcall(function()
    local f = c.fn or lua_callable(ns, name, pos[1])
    return pack(f(unpack(pos, 1, n)))
  end)
  if not ok then r.err = tostring(res); return r, py end
  local out = res[1]
  if res.n ~= 1 then out = { unpack(res, 1, res.n) } end
  r.out = enc(out)
  local gok, gerr = pcall(backward, flat(out, {}), leaves, r, gout)
  if not gok then r.gerr = tostring(gerr) end
  return r, py
end

---------------------------------------------------------------- all cases, both sides
local function here()
  return (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or ".")
end

function M.run(cases)
  local results, inputs = {}, {}
  for i, c in ipairs(cases) do
    local ok, r, py = pcall(run_lua, c)
    if not ok then   -- a broken case (bad descriptor): reported by its own `it`
      r, py = { err = "runner: " .. tostring(r) }, { ns = "f", name = "_parity_broken_case", args = {}, kw = {}, gout = {} }
    end
    results[i] = { name = c.name, case = c, lua = r }
    inputs[i] = py
  end
  collectgarbage()
  local data = os.tmpname()
  local f = assert(io.open(data, "wb"))
  f:write(json.encode(inputs))
  f:close()
  local src = assert(io.open(here() .. "/reference.py", "rb"))
  local program = ("DATA = %q\n"):format(data) .. src:read("*a")
  src:close()
  local ok, py = pcall(pytorch.run, program)
  os.remove(data)
  if not ok then error(py, 0) end
  for i, r in ipairs(results) do r.py = py[i] end
  return results
end

return M
