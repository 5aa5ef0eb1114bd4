--[[
  torch.repl.names — the public names ltorch binds, spelled as PyTorch spells them: what `?`
  should have help for. tools/gen_help.py asks for this list (to know which docstrings to
  extract) and spec/repl/help_spec.lua measures the generated help's coverage of it.

      names.public()  --> { {"torch.matmul", "function"}, {"torch.Tensor.add", "method"},
                            {"torch.nn.Linear", "class"}, {"torch.nn.functional.relu", "function"}, ... }

  Public: the name does not start with `_`. Sources: the hand-written members of torch,
  Tensor, torch.nn (classes), torch.nn.functional, torch.nn.init, torch.optim and
  torch.optim.lr_scheduler (classes), plus every generated op (torch._dispatch's index) under
  the namespace its python module gives (torch, Tensor, nn.functional, linalg, special, fft).
  Dtype constants and submodule tables are not names to document.
]]
local torch = require "torch"
local T = require "torch._tensor"
local dispatch = require "torch._dispatch"

local M = {}

local function public(k) return type(k) == "string" and not k:match("^_") end

local function add(list, seen, name, kind)
  if seen[name] then return end
  seen[name] = true
  list[#list + 1] = { name, kind }
end

-- Whether f is a closure torch._dispatch made (a generated op cached on first use: listed by
-- `generated` under its own namespace, so the list does not depend on what ran before).
local function made_by_dispatch(f)
  return debug.getinfo(f, "S").source == debug.getinfo(dispatch.function_for, "S").source
end

-- Hand-written members of table t whose values are of type `want` (or tables with __name
-- when want is "class").
local function members(list, seen, t, prefix, want, kind)
  for k, v in next, t do
    if public(k) then
      local class = want == "class" and type(v) == "table" and rawget(v, "__name") ~= nil
      local fn = type(v) == want and not (want == "function" and made_by_dispatch(v))
      if class or fn then add(list, seen, prefix .. k, kind) end
    end
  end
end

-- Generated ops: the python module of an entry decides its namespace; variants f / m.
local function generated(list, seen)
  local where = { nn = "torch.nn.functional.", linalg = "torch.linalg.", special = "torch.special.", fft = "torch.fft." }
  for func, variants, module in dispatch.each_entry() do
    local name = func:match("^[%w_]+")
    if public(name) then
      if module == nil and variants:find("f", 1, true) then add(list, seen, "torch." .. name, "function") end
      if module == nil and variants:find("m", 1, true) then add(list, seen, "torch.Tensor." .. name, "method") end
      local prefix = where[module or ""]
      if prefix and variants:find("f", 1, true) then
        local short = module ~= "nn" and name:sub(1, #module + 1) == module .. "_" and name:sub(#module + 2) or name
        add(list, seen, prefix .. short, "function")
      end
    end
  end
end

-- The list, sorted by name: { {name, kind}, ... } with kind "function", "method" or "class".
function M.public()
  local list, seen = {}, {}
  local lazy = require "torch._lazy_namespace"
  for _, t in ipairs({ torch.nn, torch.nn.functional, torch.optim }) do lazy.load_all(t) end
  members(list, seen, torch, "torch.", "function", "function")
  members(list, seen, T.Tensor, "torch.Tensor.", "function", "method")
  members(list, seen, torch.nn, "torch.nn.", "class", "class")
  members(list, seen, torch.nn.functional, "torch.nn.functional.", "function", "function")
  members(list, seen, torch.nn.init, "torch.nn.init.", "function", "function")
  members(list, seen, torch.optim, "torch.optim.", "class", "class")
  members(list, seen, torch.optim.lr_scheduler, "torch.optim.lr_scheduler.", "class", "class")
  generated(list, seen)
  table.sort(list, function(a, b) return a[1] < b[1] end)
  return list
end

return M
