--[[
  torch.data._serialize — plain Lua data to a Lua literal and back, for crossing Lua states.

  Why: DataLoader workers run in other Lua states (runtime/workers.c); only bytes cross. The
  worker's configuration (dataset factory, seeds, paths) goes over as a literal, and each batch's
  structure comes back as one, with tensors replaced by `T[k]` references to the handles that
  travel beside it (no tensor data is copied).

  What: dump(v [, on_tensor]) accepts nil, booleans, numbers (integers exact, floats with 17
  digits, nan/inf), strings and tables with such keys/values, nested; `on_tensor(t)` (optional)
  returns the index k to write for a tensor. Anything else (functions, userdata, cycles) is an
  error naming the path, e.g. "dataset_factory.args[2]: cannot send a function to a worker".
  load(src [, tensors]) evaluates the literal in an empty environment where T = tensors.

  Use:  local s = ser.dump({1, "a", {x = true}});  local v = ser.load(s)
]]
local M = {}

local function num(v)
  if v ~= v then return "(0/0)" end
  if v == math.huge then return "math.huge" end
  if v == -math.huge then return "-math.huge" end
  if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return string.format("%d", v) end
  return string.format("%.17g", v)
end

local function dump(v, out, path, seen, on_tensor)
  local tv = type(v)
  if tv == "nil" or tv == "boolean" then out[#out + 1] = tostring(v)
  elseif tv == "number" then out[#out + 1] = num(v)
  elseif tv == "string" then out[#out + 1] = string.format("%q", v)
  elseif on_tensor and tv == "cdata" then
    local k = on_tensor(v)
    if not k then error(path .. ": cannot send a cdata value to another Lua state", 0) end
    out[#out + 1] = "T[" .. k .. "]"
  elseif tv == "table" then
    if seen[v] then error(path .. ": cycle in a table sent to another Lua state", 0) end
    seen[v] = true
    out[#out + 1] = "{"
    local n = #v
    for i = 1, n do
      dump(v[i], out, path .. "[" .. i .. "]", seen, on_tensor)
      out[#out + 1] = ","
    end
    for k, x in pairs(v) do
      local tk = type(k)
      if not (tk == "number" and k >= 1 and k <= n and k == math.floor(k)) then
        if tk ~= "string" and tk ~= "number" and tk ~= "boolean" then
          error(path .. ": table key of type " .. tk .. " cannot be sent to another Lua state", 0)
        end
        out[#out + 1] = "["
        dump(k, out, path, seen, nil)
        out[#out + 1] = "]="
        dump(x, out, path .. "." .. tostring(k), seen, on_tensor)
        out[#out + 1] = ","
      end
    end
    out[#out + 1] = "}"
    seen[v] = nil
  else
    error(path .. ": cannot send a " .. tv .. " to another Lua state (only plain data: "
      .. "numbers, strings, booleans, tables" .. (on_tensor and ", tensors" or "") .. ")", 0)
  end
end

function M.dump(v, on_tensor, root)
  local out = { "return " }
  dump(v, out, root or "value", {}, on_tensor)
  return table.concat(out)
end

function M.load(src, tensors)
  local f, err = loadstring(src, "=serialized")
  if not f then error("corrupt serialized data: " .. err, 0) end
  setfenv(f, { T = tensors or {}, math = { huge = math.huge } })
  return f()
end

return M
