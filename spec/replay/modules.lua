--[[
  spec/replay/modules.lua — replays one module_db case through ltorch's torch.nn (issue #36).

  Why: tools/replay/gen_module_db.py records how PyTorch builds each module, its state_dict,
  its forward output, gradients and buffers; this does the same as a Lua user would write it.

  What: run(entry, case):
    1. m = torch.nn.X(cargs..., {ckw...}); m:double(); m:train(train)   (missing / refuses)
    2. a Lazy module runs once on the forward input (its parameters then exist)
    3. the state_dict's keys, in order, must be PyTorch's                       (state_dict)
    4. m:load_state_dict(PyTorch's values), torch.manual_seed(0), out = m(fargs..., {fkw...})
    5. the outputs (a tuple and Lua's multiple returns flatten alike)              (differs)
    6. backward of sum(out_i * g_i): each parameter's grad by name, each input's   (grad)
    7. the buffers after the forward (running statistics)                         (differs)
  Verdicts as in spec/replay/ops.lua, plus state_dict (other keys than PyTorch's). An error input
  (case.error) must raise, at construction or forward (else no_error).
  Use: by spec/replay/child.lua.
]]
local torch = require "torch"
local codec = require "spec.replay.codec"
local ops = require "spec.replay.ops"

local M = {}

local function decode_list(list, n)
  local out = {}
  for i = 1, n do out[i] = codec.decode(list[i]) end
  return out
end

local function forward(m, fargs, n, fkw)
  local list = { unpack(fargs, 1, n) }
  if next(fkw) ~= nil then n = n + 1; list[n] = fkw end
  return codec.pack(m(unpack(list, 1, n)))
end

local function check_keys(m, want)
  local got = {}
  for k in m:state_dict() do got[#got + 1] = k end
  if table.concat(got, " ") ~= table.concat(want, " ") then
    return ("state_dict keys [%s], PyTorch [%s]"):format(table.concat(got, ", "), table.concat(want, ", "))
  end
end

local function check_grads(m, case, packed, inputs)
  local outs = {}
  for i = 1, packed.n do codec.flatten(packed[i], outs) end
  local diff = {}
  for _, t in ipairs(outs) do
    if torch.is_tensor(t) and t.requires_grad and t.dtype.is_floating_point then diff[#diff + 1] = t end
  end
  if #diff ~= #case.gout then return ("%d differentiable outputs, PyTorch %d"):format(#diff, #case.gout) end
  local total
  for i, t in ipairs(diff) do
    local term = (t * codec.decode(case.gout[i])):sum()
    total = total and total + term or term
  end
  local ok, err = pcall(function() total:backward() end)
  if not ok then return "backward raised: " .. tostring(err):sub(1, 300), "grad_raises" end
  local params = {}
  for name, p in m:named_parameters() do params[name] = p end
  for name, want in pairs(case.pgrads) do
    local p = params[name]
    if not p then return "no parameter " .. name end
    local why = codec.compare(want, p.grad or torch.zeros_like(p), 10)
    if why then return ("gradient of %s: %s"):format(name, why) end
  end
  for i, want in ipairs(case.grads) do
    if want ~= codec.NULL and inputs[i] then
      local why = codec.compare(want, inputs[i].grad or torch.zeros_like(inputs[i]), 10)
      if why then return ("gradient of input %d: %s"):format(i, why) end
    end
  end
end

local function leaves_of(enc, dec, acc)
  if type(enc) ~= "table" or enc == codec.NULL then return acc end
  if enc.T then
    if enc.gi then acc[enc.gi] = dec end
  elseif not enc.D and not enc.module then
    for i = 1, #enc do leaves_of(enc[i], dec and dec[i], acc) end
  end
  return acc
end

-- An error input: PyTorch raises at construction or forward; so must ltorch (at either).
local function run_error(entry, case)
  local ok = pcall(function()
    local m = codec.construct(entry.name, case.cargs, case.cn, case.ckw)
    m:double()
    forward(m, decode_list(case.fargs, case.fn), case.fn, codec.decode({ D = case.fkw }))
  end)
  if ok then return { cat = "no_error", detail = "PyTorch raises " .. case.error } end
  return {}
end

function M.run(entry, case)
  if torch.nn[entry.name] == nil then return { cat = "missing", detail = "torch.nn." .. entry.name .. " is not in ltorch" } end
  if case.error then return run_error(entry, case) end
  local built, m = pcall(codec.construct, entry.name, case.cargs, case.cn, case.ckw)
  if not built then
    local msg = tostring(m):sub(1, 300)
    return { cat = ops.classify_error(msg), detail = "constructor: " .. msg }
  end
  m:double()
  m:train(case.train)
  local fargs = decode_list(case.fargs, case.fn)
  local fkw = codec.decode({ D = case.fkw })
  if case.lazy then
    local ok, err = pcall(function() torch.no_grad(function() forward(m, fargs, case.fn, fkw) end) end)
    if not ok then return { cat = ops.classify_error(tostring(err)), detail = "first forward: " .. tostring(err):sub(1, 300) } end
  end
  local why = check_keys(m, case.keys)
  if why then return { cat = "state_dict", detail = why } end
  local sd = {}
  for k, v in pairs(case.sd) do sd[k] = codec.decode(v) end
  local loaded, err = pcall(m.load_state_dict, m, sd)
  if not loaded then return { cat = ops.classify_error(tostring(err)), detail = "load_state_dict: " .. tostring(err):sub(1, 300) } end
  torch.manual_seed(0)
  local ok, packed = pcall(forward, m, fargs, case.fn, fkw)
  if not ok then
    local msg = tostring(packed):sub(1, 300)
    return { cat = ops.classify_error(msg), detail = "forward: " .. msg }
  end
  why = codec.compare_result(case.out, packed, 10)
  if why then return { cat = "differs", detail = "forward " .. why } end
  local buffers = {}
  for name, b in m:named_buffers() do buffers[name] = b end
  for name, want in pairs(case.buffers) do
    why = codec.compare(want, buffers[name], 10)
    if why then return { cat = "differs", detail = ("buffer %s after forward: %s"):format(name, why) } end
  end
  if case.pgrads then
    local inputs = {}
    for i = 1, case.fn do leaves_of(case.fargs[i], fargs[i], inputs) end
    for k, v in pairs(case.fkw) do leaves_of(v, fkw[k], inputs) end
    local cat
    why, cat = check_grads(m, case, packed, inputs)
    if why then return { cat = cat or "grad", detail = why } end
  end
  return {}
end

return M
