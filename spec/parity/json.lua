--[[
  spec/parity/json.lua — a JSON writer that keeps every number exact, for the parity inputs.

  Why: spec/parity/runner.lua hands ltorch's input values to PyTorch as JSON; lua-cjson writes
  14 significant digits, which does not round-trip a double (nor every float32 value).

  What: encode(v) writes numbers as integers when integral (below 2^53) and with %.17g
  otherwise (exact for doubles, hence for float32 values held in doubles), NaN / Infinity /
  -Infinity as Python's json module reads them, -0 as -0.0; tables with string keys as objects,
  other tables as arrays (1..maxn, holes as null); cjson.null as null.

  Use:  local json = require "spec.parity.json"; f:write(json.encode({ v = { 0.1, 0 / 0 } }))
]]
local cjson = require "cjson"

local M = {}
local NULL = cjson.null

local function write(v, buf)
  local t = type(v)
  if t == "number" then
    if v ~= v then buf[#buf + 1] = "NaN"
    elseif v == math.huge then buf[#buf + 1] = "Infinity"
    elseif v == -math.huge then buf[#buf + 1] = "-Infinity"
    elseif v == 0 and 1 / v < 0 then buf[#buf + 1] = "-0.0"
    elseif v == math.floor(v) and math.abs(v) < 2 ^ 53 then buf[#buf + 1] = ("%d"):format(v)
    else buf[#buf + 1] = ("%.17g"):format(v) end
  elseif t == "boolean" then buf[#buf + 1] = tostring(v)
  elseif t == "string" then buf[#buf + 1] = cjson.encode(v)
  elseif v == nil or v == NULL then buf[#buf + 1] = "null"
  elseif t == "table" and type(next(v)) == "string" then
    buf[#buf + 1] = "{"
    local first = true
    for k, x in pairs(v) do
      if not first then buf[#buf + 1] = "," end
      first = false
      buf[#buf + 1] = cjson.encode(k) .. ":"
      write(x, buf)
    end
    buf[#buf + 1] = "}"
  elseif t == "table" then
    buf[#buf + 1] = "["
    for i = 1, table.maxn(v) do
      if i > 1 then buf[#buf + 1] = "," end
      write(v[i], buf)
    end
    buf[#buf + 1] = "]"
  else
    error("json.encode: cannot write a " .. t)
  end
  return buf
end

function M.encode(v) return table.concat(write(v, {})) end

return M
