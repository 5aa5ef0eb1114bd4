--[[
  spec/parity/cases.lua — the parity case table: every case of the cases_*.lua files, named.

  Why: spec/parity/parity_spec.lua runs one `it` per case; the name is also the case's seed
  (spec/parity/runner.lua), so a case's inputs do not change when other cases are added.

  What: returns { cases = {...}, ops = {key -> count}, nops = n } where each case is the table
  written in a cases file (spec/parity/desc.lua documents the format) plus `name`, e.g.
  "add(T[2,3], T[3] e, {alpha=2})". The files by area:
    cases_pointwise.lua  unary math, activations, special functions, NaN/Inf inputs
    cases_binary.lua     arithmetic, comparisons, logical/bitwise, broadcasting, type promotion
    cases_reduce.lua     reductions, scans, sorting, statistics
    cases_linalg.lua     matmul family, decompositions, solvers, norms, torch.linalg
    cases_shape.lua      views, joins/splits, scatter/gather/index_*, creation and seeded random ops
    cases_index.lua      x[...] reads and assignments (ltorch's subscript grammar vs Python's)
    cases_nn.lua         convolution, pooling, normalization, upsampling, padding, embedding
    cases_loss.lua       losses, softmax variants, attention pieces, dropout (p=0), misc nn

  Use:  local parity = require "spec.parity.cases"; print(#parity.cases, parity.nops)
]]
local desc = require "spec.parity.desc"

local FILES = { "pointwise", "binary", "reduce", "linalg", "shape", "index", "nn", "loss" }

local function show(v)
  if desc.is_desc(v) then
    if v.kind == "T" then
      return "T[" .. table.concat(v.shape, ",") .. "]" .. (v.spec ~= "" and (" " .. v.spec) or "")
    elseif v.kind == "V" then return "V" .. (v.dtype ~= "float32" and (" " .. v.dtype) or "")
    elseif v.kind == "L" then
      local parts = {}
      for i, x in ipairs(v.items) do parts[i] = show(x) end
      return "[" .. table.concat(parts, ", ") .. "]"
    elseif v.kind == "D" then return v.name end
    return "None"
  end
  if type(v) == "string" then return "'" .. v .. "'" end
  if type(v) ~= "table" then return tostring(v) end
  if type(next(v)) == "string" then
    local keys, parts = {}, {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. show(v[k]) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  local parts = {}
  for i = 1, table.maxn(v) do parts[i] = show(v[i]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local cases, ops, seen, nops = {}, {}, {}, 0
for _, file in ipairs(FILES) do
  for _, c in ipairs(require("spec.parity.cases_" .. file)) do
    local parts = {}
    for i = 1, table.maxn(c.args) do parts[i] = show(c.args[i]) end
    local name = c.name or (c.op .. "(" .. table.concat(parts, ", ") .. ")")
    if seen[name] then
      seen[name] = seen[name] + 1
      name = name .. " #" .. seen[name]
    else
      seen[name] = 1
    end
    c.name, c.file = name, file
    cases[#cases + 1] = c
    local key = desc.op_key(c.op)
    if not ops[key] then nops = nops + 1 end
    ops[key] = (ops[key] or 0) + 1
  end
end

return { cases = cases, ops = ops, nops = nops }
