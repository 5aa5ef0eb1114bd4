--[[
  torch.repl.describe — x:describe(): a tensor's summary as a string, for the REPL (help(x),
  ?x) and for scripts (print(x:describe())).

      > torch.tensor({{1, 0/0}, {1/0, 4}}):describe()
      Tensor shape=[2, 2] dtype=torch.float32 device=cpu
        min=1 max=4 mean=2.5 std=2.121 (over 2 finite values)
        nan=1 inf=1 requires_grad=false grad_fn=None

  Statistics are computed without autograd on a float64 copy of the finite values (so NaN
  and Inf are counted, not propagated); std is the sample standard deviation (PyTorch's
  default, unbiased). Bool and integer tensors get the same statistics; complex tensors and
  empty tensors report only shape/dtype/device/grad. Loaded by torch/init.lua, which
  registers it as Tensor.describe.
]]
local T = require "torch._tensor"

local M = {}

local function num(v)
  if v ~= v then return "nan" end
  if v == math.floor(v) and math.abs(v) < 1e15 then return ("%d"):format(v) end
  return ("%.4g"):format(v)
end

local function stats(x, torch)
  local d = x:detach():to(torch.float64)
  local nan, inf = d:isnan():sum():item(), d:isinf():sum():item()
  local finite = d:masked_select(d:isfinite())
  local n = finite:numel()
  local line
  if n == 0 then
    line = "  (no finite values)"
  else
    local std = n > 1 and num(finite:std():item()) or "nan"
    line = ("  min=%s max=%s mean=%s std=%s"):format(num(finite:min():item()), num(finite:max():item()),
      num(finite:mean():item()), std)
    if n ~= d:numel() then line = line .. (" (over %d finite values)"):format(n) end
  end
  return line, nan, inf
end

function M.describe(x)
  if not T.is_tensor(x) then error("bad argument #1 to 'describe' (Tensor expected, got " .. type(x) .. ")", 2) end
  local torch = require "torch"
  local shape = tostring(x:size()):match("%[.*%]") or "[]"
  local dtype = x.dtype
  local lines = { ("Tensor shape=%s dtype=%s device=%s"):format(shape, tostring(dtype), tostring(x.device)) }
  local nan, inf = 0, 0
  if x:numel() > 0 and not dtype.is_complex then
    local line
    line, nan, inf = torch.no_grad(function() return stats(x, torch) end)
    lines[#lines + 1] = line
  elseif x:numel() == 0 then
    lines[#lines + 1] = "  (empty)"
  end
  local grad_fn = x.grad_fn
  lines[#lines + 1] = ("  nan=%d inf=%d requires_grad=%s grad_fn=%s"):format(nan, inf, tostring(x.requires_grad),
    grad_fn ~= nil and tostring(grad_fn) or "None")
  return table.concat(lines, "\n")
end

T.Tensor.describe = M.describe

return M
