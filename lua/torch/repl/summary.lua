--[[
  torch.repl.summary — one line per value, for the debugger's :locals and the REPL's :who:
  what it is and how big, never its full contents (`:p name` prints those).

      summary.line(torch.randn(2, 3, {requires_grad = true}))
        --> Tensor[2, 3] float32 cpu requires_grad min=-1.2 max=2.1 mean=0.3 nan=0 inf=0
      summary.line(torch.nn.Linear(4, 2))   --> Linear (nn module): 10 parameters in 2 tensors
      summary.line(torch)                   --> module "torch" (table, 240 fields)
      summary.line(opt)                     --> AdamW (optimizer): 1 param group, lr=0.001
      summary.line({1, 2, 3})               --> { 1, 2, 3 }
      summary.line(big)                     --> table, 5000 fields

  A table is shown inline when it has at most INLINE_FIELDS (10) fields and its one-line form
  (depth 1) fits in `width` (70) columns, else by its field count. Statistics (describe.stats,
  over the finite values) are skipped for tensors over STATS_LIMIT elements, so :locals stays
  quick. Nothing here raises: a value whose summary fails says why, in one line.
]]
local pretty = require "torch.repl.pretty"
local describe = require "torch._describe"

local M = {}

local STATS_LIMIT = 1e7
local INLINE_FIELDS = 10

-- The first line of an error message, cut to 80 columns (libtorch's can run to pages).
local function brief(e)
  local s = pretty.error_text(e):match("^[^\n]*")
  return #s > 80 and (s:sub(1, 77) .. "...") or s
end

local function short_dtype(x) return (tostring(x.dtype):gsub("^torch%.", "")) end

local function tensor_line(x)
  local parts = { "Tensor" .. describe.shape(x), short_dtype(x), tostring(x.device) }
  if x.requires_grad then parts[#parts + 1] = "requires_grad" end
  local grad_fn = x.grad_fn
  if grad_fn ~= nil then parts[#parts + 1] = "grad_fn=" .. tostring(grad_fn) end
  if x:numel() > STATS_LIMIT then
    parts[#parts + 1] = ("(%d elements, no statistics)"):format(x:numel())
  else
    local ok, st = pcall(describe.stats, x)
    local num = describe.num
    if not ok then parts[#parts + 1] = "(no statistics: " .. brief(st) .. ")"; st = nil end
    if st and st.n > 0 then
      parts[#parts + 1] = ("min=%s max=%s mean=%s"):format(num(st.min), num(st.max), num(st.mean))
    end
    if st then parts[#parts + 1] = ("nan=%d inf=%d"):format(st.nan, st.inf) end
  end
  return table.concat(parts, " ")
end

-- An nn module instance (the base class registers _modules on every instance).
local function is_module(v)
  return type(v) == "table" and rawget(v, "_modules") ~= nil and type(rawget(v, "_class")) == "table"
end
M.is_module = is_module

local function module_line(m)
  local class = rawget(rawget(m, "_class"), "__name") or "?"
  local params = m:parameters()
  local count = 0
  for _, p in ipairs(params) do count = count + p:numel() end
  return ("%s (nn module): %d parameters in %d tensor%s"):format(class, count, #params, #params == 1 and "" or "s")
end

-- package.loaded's name for t ("torch", "torch.nn"), if t is a loaded module.
local function module_name(t)
  for name, v in next, package.loaded do
    if v == t and type(name) == "string" then return name end
  end
end

local function count_fields(t)
  local n = 0
  for _ in next, t do n = n + 1 end
  return n
end

-- An instance of a class whose metatable names it (optimizers, schedulers): its class, and
-- for an optimizer its param groups and first learning rate.
local function instance_line(t, class, n)
  local groups = rawget(t, "param_groups")
  if type(groups) == "table" and type(groups[1]) == "table" then
    local lr = groups[1].lr
    return ("%s (optimizer): %d param group%s%s"):format(class, #groups, #groups == 1 and "" or "s",
      type(lr) == "number" and (", lr=" .. describe.num(lr)) or "")
  end
  return ("%s instance (table, %d field%s)"):format(class, n, n == 1 and "" or "s")
end

local function table_line(t, width)
  local name = module_name(t)
  local n = count_fields(t)
  if name then return ('module "%s" (table, %d fields)'):format(name, n) end
  local mt = getmetatable(t)
  local class = type(mt) == "table" and rawget(mt, "__name")
  if type(class) == "string" and rawget(t, "__name") == nil then return instance_line(t, class, n) end
  if type(mt) == "table" and rawget(mt, "__tostring") then
    local s = pretty.format(t)
    if not s:find("\n") and #s <= width then return s end
  elseif n <= INLINE_FIELDS then
    local s = pretty.format(t, { depth = 1, items = INLINE_FIELDS, width = width, nested = true })
    if not s:find("\n") and #s <= width then return s end
  end
  return ("table, %d field%s"):format(n, n == 1 and "" or "s")
end

local function line(v, width)
  if pretty.is_tensor(v) then return tensor_line(v) end
  if is_module(v) then return module_line(v) end
  if type(v) == "table" then return table_line(v, width) end
  local s = pretty.format(v, { depth = 1, items = 10, nested = true }):gsub("\n.*", " ...")
  return s
end

-- One line describing v, at most about `width` (70) columns for tables and text.
function M.line(v, width)
  local ok, s = pcall(line, v, width or 70)
  if ok then return s end
  return pretty.paint("error", ("<%s: no summary: %s>"):format(type(v), brief(s)))
end

return M
