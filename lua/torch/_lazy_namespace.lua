--[[
  torch._lazy_namespace — a namespace table (torch.nn, torch.nn.functional, torch.nn.utils,
  torch.optim) whose parts load at the first read of one of their names, as PyTorch's lazy
  submodules do, so that a script's Lua heap holds only the parts it uses.

  Why: each collector cycle marks the whole Lua heap, and the cycles that free a loop's dead
  tensors come every few thousand results; a library heap of 2.4 MB (every layer family, loss,
  optimizer and utility loaded by `require "torch.nn"` and `require "torch.optim"`) no longer
  fits the CPU's cache and made a cycle 3.6x as long as the 1 MB of `require "torch"` alone
  (docs/PERFORMANCE.md, optimisation 33).

      local lazy = require "torch._lazy_namespace"
      lazy.install(nn, {
        name = "torch.nn",
        parts = { { "torch.nn.linear", { "Identity", "Linear" } }, ... },  -- module, the names it defines
        fields = { functional = "torch.nn.functional" },                   -- nn.functional = require(...)
        otherwise = function(t, k) ... end,    -- optional: a name the index does not hold
      })
      nn.Linear          -- loads torch.nn.linear, sets nn.Identity and nn.Linear, returns Linear

  The index is written by hand beside each namespace; spec/torch/lazy_namespace_spec.lua checks
  that it names exactly what each part defines, so a name cannot silently fall through to
  `otherwise` (torch.nn.functional's generated ATen op of the same name). A name already set on
  the table (a user's `nn.Linear = MyLinear`) is never overwritten by a part that loads later.

  Code that walks a namespace with pairs/next sees the loaded parts only: M.load_all(t) loads
  every part (the REPL's name list, doctor's patches), M.materialize(t) copies in the parts that
  some other route already loaded, without loading any (identity search), M.names(t) lists every
  name the table can give (REPL completion), M.indexed(t, name) what the index itself gives.
]]
local M = {}

local state_of = setmetatable({}, { __mode = "k" })   -- namespace table -> its index

-- Sets the names of part `module` that t does not hold yet.
local function fill(t, st, module)
  local exports = require(module)
  for _, name in ipairs(st.names_of[module]) do
    local v = exports[name]
    if v == nil then error(("%s: %s does not define %s, which its index names"):format(st.name, module, name), 3) end
    if rawget(t, name) == nil then rawset(t, name, v) end
  end
end

function M.install(t, spec)
  local st = { name = spec.name, parts = {}, names_of = {}, part_of = {}, fields = spec.fields or {} }
  for _, p in ipairs(spec.parts or {}) do
    local module, names = p[1], p[2]
    st.parts[#st.parts + 1] = module
    st.names_of[module] = names
    for _, name in ipairs(names) do
      if st.part_of[name] then
        error(("%s: %s and %s both define %s"):format(spec.name, st.part_of[name], module, name), 2)
      end
      st.part_of[name] = module
    end
  end
  local otherwise = spec.otherwise
  state_of[t] = st
  return setmetatable(t, {
    __index = function(self, k)
      local module = st.part_of[k]
      if module then
        fill(self, st, module)
        return rawget(self, k)
      end
      module = st.fields[k]
      if module then
        local v = require(module)
        rawset(self, k, v)
        return v
      end
      if otherwise then return otherwise(self, k) end
      return nil
    end,
  })
end

local function state(t, who)
  local st = state_of[t]
  if not st then error(who .. ": not a lazy namespace", 3) end
  return st
end

-- Loads every part and field of t.
function M.load_all(t)
  local st = state(t, "load_all")
  for _, module in ipairs(st.parts) do fill(t, st, module) end
  for k in pairs(st.fields) do local _ = t[k] end
  return t
end

-- Copies into t the names of every part already in package.loaded; loads nothing.
function M.materialize(t)
  local st = state(t, "materialize")
  for _, module in ipairs(st.parts) do
    if package.loaded[module] ~= nil then fill(t, st, module) end
  end
  for k, module in pairs(st.fields) do
    if rawget(t, k) == nil and package.loaded[module] ~= nil then rawset(t, k, package.loaded[module]) end
  end
  return t
end

-- Every name t can give through its index (loaded or not) and its own keys, sorted; nil when t
-- is not a lazy namespace.
function M.names(t)
  local st = state_of[t]
  if not st then return nil end
  local seen, out = {}, {}
  local function add(k) if type(k) == "string" and not seen[k] then seen[k] = true; out[#out + 1] = k end end
  for k in next, t do add(k) end
  for k in pairs(st.part_of) do add(k) end
  for k in pairs(st.fields) do add(k) end
  table.sort(out)
  return out
end

-- The value t's index gives for name (its part loaded), whatever t itself holds now; nil for a
-- name outside the index. Tells a library class from a user's one put under its name.
function M.indexed(t, name)
  local st = state(t, "indexed")
  local module = st.part_of[name]
  return module and require(module)[name] or nil
end

-- The parts of t as { {module, names}, ... } (the spec's check of the index).
function M.parts(t)
  local st = state(t, "parts")
  local out = {}
  for i, module in ipairs(st.parts) do out[i] = { module, st.names_of[module] } end
  return out, st.fields
end

return M
