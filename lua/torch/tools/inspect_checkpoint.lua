--[[
  torch.tools.inspect_checkpoint — `tool.lua inspect-checkpoint FILE`: what a checkpoint holds, more
  digested than `ltorch inspect` (tools/inspect.lua, which lists every tensor):
    * the model weights (the table under model_state_dict / model / state_dict / model_state, or
      the file itself when it is a flat table of tensors): parameter counts per top-level module;
    * every tensor's key, shape and dtype (the first --max-keys), and the ones holding NaN/Inf;
    * the optimizer state (under optimizer_state_dict / optimizer / optim): how many parameters
      have state, the state's fields, the step, and each param group's hyper-parameters;
    * the metadata: every plain value (epoch, step, config, ...).
  Loads through torch.load, so hostile files are refused and no code runs.
  Exit 0 fine, 1 a tensor holds NaN/Inf, 2 usage error or a file that does not load.
]]
local torch = require "torch"
local T = require "torch.tools"

local M = { name = "inspect-checkpoint", summary = "checkpoint keys, shapes, parameters per module, optimizer state, metadata",
  usage = [[usage: ltorch tools/tool.lua inspect-checkpoint CHECKPOINT(.pt | .safetensors) [--max-keys N] [--json]
exit 0 fine, 1 NaN/Inf in a tensor, 2 usage error / unreadable file]] }

local None = torch.serialization.None
local model_keys = { "model_state_dict", "model", "state_dict", "model_state" }
local optim_keys = { "optimizer_state_dict", "optimizer", "optim" }

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

local function is_table(v) return type(v) == "table" and v ~= None end

local function flat_tensors(t)
  if not is_table(t) or next(t) == nil then return false end
  for _, v in pairs(t) do if not torch.is_tensor(v) then return false end end
  return true
end

-- walk(v, key, fn): fn(key, value) for every leaf (tensor or plain value)
local function walk(v, key, fn)
  if is_table(v) and not torch.is_tensor(v) then
    for _, k in ipairs(sorted_keys(v)) do walk(v[k], key == "" and tostring(k) or (key .. "." .. tostring(k)), fn) end
  else
    fn(key, v)
  end
end

local function shape(t) return "[" .. table.concat(t:size(), ", ") .. "]" end

function M.model_summary(sd)
  local modules, order, total = {}, {}, 0
  for _, k in ipairs(sorted_keys(sd)) do
    local top = tostring(k):match("^([^%.]+)%.") or "(top)"
    if not modules[top] then modules[top] = 0; order[#order + 1] = top end
    modules[top] = modules[top] + sd[k]:numel()
    total = total + sd[k]:numel()
  end
  local list = {}
  for _, m in ipairs(order) do list[#list + 1] = { module = m, params = modules[m] } end
  return { total = total, modules = list }
end

function M.optimizer_summary(o)
  local r = { params_with_state = 0, fields = {}, groups = {} }
  local fields = {}
  for _, st in pairs(is_table(o.state) and o.state or {}) do
    r.params_with_state = r.params_with_state + 1
    for f, v in pairs(st) do
      fields[f] = true
      if f == "step" then r.step = torch.is_tensor(v) and v:item() or v end
    end
  end
  r.fields = sorted_keys(fields)
  for i, g in ipairs(is_table(o.param_groups) and o.param_groups or {}) do
    local hp = {}
    for _, k in ipairs(sorted_keys(g)) do
      if k ~= "params" and type(g[k]) ~= "table" then hp[#hp + 1] = ("%s=%s"):format(k, tostring(g[k])) end
    end
    r.groups[i] = { params = is_table(g.params) and #g.params or 0, hyper = table.concat(hp, " ") }
  end
  return r
end

function M.inspect(value)
  local r = { tensors = {}, metadata = {}, nonfinite = {}, elements = 0 }
  local model, optim
  if is_table(value) then
    for _, k in ipairs(model_keys) do if flat_tensors(value[k]) then model = k; break end end
    for _, k in ipairs(optim_keys) do if is_table(value[k]) and value[k].param_groups then optim = k; break end end
    if not model and flat_tensors(value) then model = "" end
  end
  walk(value, "", function(key, v)
    if torch.is_tensor(v) then
      r.tensors[#r.tensors + 1] = { key = key, shape = shape(v), dtype = tostring(v.dtype) }
      r.elements = r.elements + v:numel()
      if v:is_floating_point() and v:numel() > 0 and not v:isfinite():all():item() then r.nonfinite[#r.nonfinite + 1] = key end
    elseif not (optim and key:sub(1, #optim + 1) == optim .. ".") then
      r.metadata[#r.metadata + 1] = { key = key, value = v == None and "None" or (type(v) == "string" and ("%q"):format(v) or tostring(v)) }
    end
  end)
  if model then
    r.model_key = model
    r.model = M.model_summary(model == "" and value or value[model])
  end
  if optim then r.optimizer_key, r.optimizer = optim, M.optimizer_summary(value[optim]) end
  return r
end

local function report(r, path, max_keys, out)
  out(("%s: %d tensors, %d elements"):format(path, #r.tensors, r.elements))
  if r.model then
    out(("model (%s): %d parameters"):format(r.model_key == "" and "the file" or r.model_key, r.model.total))
    for _, m in ipairs(r.model.modules) do out(("  %-24s %12d  %5.1f%%"):format(m.module, m.params, 100 * m.params / math.max(1, r.model.total))) end
  end
  if r.optimizer then
    local o = r.optimizer
    out(("optimizer (%s): state for %d parameters {%s}%s"):format(r.optimizer_key, o.params_with_state,
      table.concat(o.fields, ", "), o.step and (", step " .. tostring(o.step)) or ""))
    for i, g in ipairs(o.groups) do out(("  group %d: %d params  %s"):format(i, g.params, g.hyper)) end
  end
  out("tensors:")
  local width = 0
  for i = 1, math.min(max_keys, #r.tensors) do width = math.max(width, #r.tensors[i].key) end
  for i = 1, math.min(max_keys, #r.tensors) do
    local t = r.tensors[i]
    out(("  %-" .. width .. "s  %-16s %s"):format(t.key, t.shape, t.dtype))
  end
  if #r.tensors > max_keys then out(("  ... %d more (--max-keys)"):format(#r.tensors - max_keys)) end
  if #r.metadata > 0 then
    out("metadata:")
    for _, m in ipairs(r.metadata) do out(("  %s = %s"):format(m.key, m.value)) end
  end
  for i = 1, math.min(5, #r.nonfinite) do out("  non-finite values in " .. r.nonfinite[i]) end
  if #r.nonfinite > 5 then out(("  ... %d more"):format(#r.nonfinite - 5)) end
  if #r.nonfinite > 0 then out(("verdict: %d tensor(s) hold NaN/Inf"):format(#r.nonfinite)) end
end

function M.main(argv, out)
  local o, pos = T.parse(argv, { max_keys = "number", json = "boolean" })
  if o.help then out(M.usage); return 0 end
  if #pos ~= 1 then T.usage_error("one checkpoint file expected") end
  if o.max_keys and not (o.max_keys >= 0 and o.max_keys % 1 == 0) then T.usage_error("--max-keys must be a whole number >= 0") end
  local f = io.open(pos[1], "rb")
  if not f then T.usage_error("cannot read %s", pos[1]) end
  f:close()
  local ok, value = pcall(torch.load, pos[1])
  if not ok then T.usage_error("%s: %s", pos[1], tostring(value)) end
  local r = M.inspect(value)
  local code = #r.nonfinite > 0 and 1 or 0
  if o.json then out(require("torch.serialization.json").encode(r)); return code end
  report(r, pos[1], o.max_keys or 50, out)
  return code
end

return M
