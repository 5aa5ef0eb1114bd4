-- spec/support/approx.lua — compare tensors with reference values inside specs.
--
-- Why: parity specs get PyTorch's answers as decoded JSON (nested Lua arrays, see
-- spec/support/pytorch.lua) and compare them with ltorch tensors within a stated tolerance.
--
-- What:
--   approx.check(actual, expected, tol)  raises (blaming the caller) with the first differing
--       position when they differ. `actual` is a Tensor (read with :tolist()), a number, a
--       boolean or nested arrays; `expected` the same shape of Lua values. `tol` is a number
--       (absolute) or {atol =, rtol =}; default {atol = 1e-6, rtol = 1e-5} (float32). NaN
--       equals NaN; infinities must match exactly.
--   approx.py(v)  writes a Lua number/boolean/nested array as a Python literal, so a spec
--       states its inputs once and hands the same values to pytorch.run.
--
-- Use:
--   local approx = require "spec.support.approx"
--   approx.check(x:softmax(1), ref.softmax, 1e-6)
--   pytorch.run("x = torch.tensor(" .. approx.py({1, 2.5}) .. ")\n...")

local M = {}

local DEFAULT = { atol = 1e-6, rtol = 1e-5 }

local function describe(v)
  if type(v) == "table" then return "a sequence of length " .. #v end
  return tostring(v)
end

-- nil when equal within tol, else a message naming the first differing position.
local function diff(expected, actual, tol, path)
  if type(expected) == "table" then
    if type(actual) ~= "table" then return ("%s: expected %s, got %s"):format(path, describe(expected), describe(actual)) end
    if #expected ~= #actual then
      return ("%s: expected length %d, got length %d"):format(path, #expected, #actual)
    end
    for i = 1, #expected do
      local m = diff(expected[i], actual[i], tol, path .. "[" .. i .. "]")
      if m then return m end
    end
    return nil
  end
  if type(expected) == "number" and type(actual) == "number" then
    if expected ~= expected and actual ~= actual then return nil end
    if expected == actual then return nil end
    local bound = tol.atol + tol.rtol * math.abs(expected)
    if expected - expected == 0 and math.abs(expected - actual) <= bound then return nil end
    return ("%s: expected %.9g, got %.9g (atol %g, rtol %g)"):format(path, expected, actual, tol.atol, tol.rtol)
  end
  if expected == actual then return nil end
  return ("%s: expected %s, got %s"):format(path, describe(expected), describe(actual))
end

function M.check(actual, expected, tol)
  if type(tol) == "number" then tol = { atol = tol, rtol = 0 } end
  tol = tol or DEFAULT
  if type(actual) == "cdata" then actual = actual:tolist() end
  local m = diff(expected, actual, { atol = tol.atol or 0, rtol = tol.rtol or 0 }, "value")
  if m then error(m, 2) end
  return true
end

function M.py(v)
  local t = type(v)
  if t == "cdata" and v.dtype ~= nil then   -- a tensor (a tensor hyper-parameter such as lr)
    return ("torch.tensor(%s, dtype=torch.%s)"):format(M.py(v:tolist()), (tostring(v.dtype):gsub("^torch%.", "")))
  end
  if t == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = M.py(v[i]) end
    return "[" .. table.concat(parts, ", ") .. "]"
  elseif t == "boolean" then
    return v and "True" or "False"
  elseif t == "number" then
    if v ~= v then return "float('nan')" end
    if v == math.huge then return "float('inf')" end
    if v == -math.huge then return "float('-inf')" end
    if math.floor(v) == v and math.abs(v) < 2 ^ 53 then return ("%d"):format(v) end
    return ("%.17g"):format(v)
  end
  error("approx.py: cannot write a " .. t .. " as Python", 2)
end

return M
